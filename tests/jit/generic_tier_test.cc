// The tiers of compile_kernel (docs/specialization.md §Tiers): the generic tier, one compile per
// signature that serves every layout through its descriptors, the lazy policy's switch to the
// specialized kernel, and the plans that fall back to eager with the reason. Compile-only (label
// cache); the runs on Hopper emulation are examples/epilogue --specialization lazy (label emu).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/cache_test_util.h"
#include "common/files.h"
#include "common/spec_fixtures.h"
#include "jit/epilogue_layouts.h"
#include "jit/roundtrip_kernel.h"
#include "kernels/device_function.h"
#include "kernels/generic_transfer.h"
#include "kernels/specialized_source.h"
#include "runtime/cache/disk.h"
#include "runtime/cache/module_cache.h"
#include "runtime/compile/sass.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/jit/runtime_state.h"
#include "runtime/jit/tiers.h"
#include "tmem/cache.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {
using testing::kRoundtrip;
using testing::read_file;
using testing::TempDir;

TransferSpec layout(const std::string& name) { return testing::epilogue_layout(name); }
NamedTransfer transfer(TransferSpec spec, std::string name) {
  return testing::named_transfer(std::move(spec), std::move(name));
}

KernelSource roundtrip() { return {Language::kCuda, kRoundtrip, "roundtrip", "roundtrip.cu"}; }

// The same with 32-bit integer registers, for specs whose register view is b32 (no float
// overload).
KernelSource roundtrip_bits() {
  std::string text = kRoundtrip;
  for (const std::string from : {"float regs", "float back"}) {
    const size_t at = text.find(from);
    text.replace(at, 5, "unsigned int");
  }
  text.replace(text.find("0.0f : in["), 10, "0u : (unsigned int)in[");
  return {Language::kCuda, text, "roundtrip", "roundtrip.cu"};
}

// Layout D (32x32b.x32 twice) and Layout F (16x256b.x8 twice): 64 registers per thread each, so
// they share one generic tier.
std::vector<NamedTransfer> layout_d() { return testing::roundtrip_layout_d(); }
std::vector<NamedTransfer> layout_f() {
  return {transfer(layout("f_16x256b_st"), "acc_st"), transfer(layout("f_16x256b_ld"), "acc_ld")};
}

CompileOptions with(Specialization specialization, Target target = Target::kSm100a) {
  CompileOptions options;
  options.target = target;
  options.specialization = specialization;
  return options;
}

// The descriptor words compile_kernel derives for each transfer of `source`, prepared together as
// it prepares them (each one's emulation status ids follow the previous one's).
std::vector<std::vector<std::uint32_t>> descriptors_of(std::span<const NamedTransfer> transfers,
                                                       Target target, const std::string& source) {
  std::vector<std::vector<std::uint32_t>> words;
  auto prepared = kernels::prepare_transfers(transfers, kernels::CoordDetail::kForm);
  EXPECT_TRUE(prepared.ok()) << prepared.error().full_text();
  if (!prepared.ok()) return words;
  for (const kernels::TransferCode& code : prepared->codes) {
    const kernels::GenericForm form = kernels::generic_form(code, target, source);
    EXPECT_TRUE(form.transfer) << form.why_not;
    words.push_back(form.transfer ? form.transfer->descriptor : std::vector<std::uint32_t>{});
  }
  return words;
}

class GenericTier : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    saved_ = cache_options();
    set_cache_dir(dir_.path().string());
    ASSERT_TRUE(clear_cache(false).ok());
  }
  // Background compiles of this test finish before its cache directory goes.
  void TearDown() override {
    background_compiler().drain();
    set_cache_options(saved_);
  }
  TempDir dir_;
  CacheOptions saved_;
};

TEST_F(GenericTier, OneCompileServesEveryLayoutOfTheSignatureWithoutLocalMemory) {
  CompileReport d_report, f_report;
  auto d = compile_kernel(roundtrip(), layout_d(), with(Specialization::kGeneric), &d_report);
  ASSERT_TRUE(d.ok()) << d.error().full_text();
  EXPECT_EQ(d->tier(), "generic");
  EXPECT_EQ(d_report.tier, "generic");
  EXPECT_EQ(d_report.tier_reason, "");
  EXPECT_EQ(d_report.cache, CacheSource::kCompiled);
  EXPECT_NE(d->ptx().find("tmemjit_desc_acc_ld"), std::string_view::npos);
  // The report names this layout's plan, not the generic tier's.
  ASSERT_EQ(d_report.transfers.size(), 2u);
  EXPECT_EQ(d_report.transfers[1].op, "tcgen05.ld.sync.aligned.32x32b.x32.b32");
  if (!d_report.code.disassembler.empty()) {
    EXPECT_EQ(d_report.code.local_bytes, 0);
    EXPECT_GT(d_report.code.ldtm, 0);
    EXPECT_GT(d_report.code.sttm, 0);
  }
  // Layout F: a new layout of the same signature is the generic tier from memory, no compile.
  auto f = compile_kernel(roundtrip(), layout_f(), with(Specialization::kGeneric), &f_report);
  ASSERT_TRUE(f.ok()) << f.error().full_text();
  EXPECT_EQ(f->tier(), "generic");
  EXPECT_EQ(f_report.cache, CacheSource::kMemory);
  EXPECT_EQ(f_report.key, d_report.key);
  EXPECT_EQ(f_report.transfers[1].op, "tcgen05.ld.sync.aligned.16x256b.x8.b32");
  EXPECT_EQ(std::string(f->cubin().data(), f->cubin().size()),
            std::string(d->cubin().data(), d->cubin().size()));
  // A launcher of one's own (Kernel::binding): the shared cubin, and each layout's descriptors as
  // the bytes of its words, under the symbols the generic kernel defines.
  for (const auto& [kernel, transfers] : {std::pair{&*d, layout_d()}, std::pair{&*f, layout_f()}}) {
    Result<KernelBinding> binding = kernel->binding();
    ASSERT_TRUE(binding.ok()) << binding.error().full_text();
    EXPECT_EQ(binding->tier, "generic");
    EXPECT_EQ(binding->entry, "roundtrip");
    EXPECT_EQ(binding->cubin.data(), kernel->cubin().data());
    ASSERT_EQ(binding->globals.size(), transfers.size());
    const auto descriptors = descriptors_of(transfers, Target::kSm100a, roundtrip().text);
    ASSERT_EQ(descriptors.size(), transfers.size());
    for (size_t i = 0; i < transfers.size(); ++i) {
      const std::vector<std::uint32_t>& words = descriptors[i];
      EXPECT_EQ(binding->globals[i].symbol, "tmemjit_desc_" + transfers[i].options.name);
      EXPECT_NE(kernel->ptx().find(binding->globals[i].symbol), std::string_view::npos);
      ASSERT_EQ(binding->globals[i].bytes.size(), 4 * words.size());
      EXPECT_EQ(std::memcmp(binding->globals[i].bytes.data(), words.data(), 4 * words.size()), 0);
    }
  }
  EXPECT_NE(d->binding()->globals[1].bytes, f->binding()->globals[1].bytes);
}

TEST_F(GenericTier, TheSwitchIssuesEachShapesGranuleWithCompileTimeRegisters) {
  auto d = compile_kernel(roundtrip(), layout_d(), with(Specialization::kGeneric));
  ASSERT_TRUE(d.ok()) << d.error().full_text();
  const std::string ptx(d->ptx());
  // One case per shape: the granules of 64 registers (32x32b.x1, 16x64b.x1, 16x128b.x1,
  // 16x256b.x1), every register an operand of its own.
  for (const char* granule :
       {"tcgen05.ld.sync.aligned.32x32b.x1.b32", "tcgen05.ld.sync.aligned.16x64b.x1.b32",
        "tcgen05.ld.sync.aligned.16x128b.x1.b32", "tcgen05.ld.sync.aligned.16x256b.x1.b32",
        "tcgen05.st.sync.aligned.32x32b.x1.b32", "tcgen05.st.sync.aligned.16x256b.x1.b32"})
    EXPECT_NE(ptx.find(granule), std::string::npos) << granule;
  EXPECT_EQ(ptx.find("16x32bx2"), std::string::npos);
  EXPECT_EQ(ptx.find(".local"), std::string::npos);
}

TEST_F(GenericTier, LazyStartsOnTheGenericTierAndSwitchesToTheSpecializedKernel) {
  ASSERT_TRUE(compile_kernel(roundtrip(), layout_d(), with(Specialization::kGeneric)).ok());
  CompileReport report;
  auto f = compile_kernel(roundtrip(), layout_f(), with(Specialization::kLazy), &report);
  ASSERT_TRUE(f.ok()) << f.error().full_text();
  EXPECT_EQ(report.tier, "generic");
  const std::string generic_cubin(f->cubin().data(), f->cubin().size());
  ASSERT_TRUE(f->wait_specialized().ok());
  EXPECT_EQ(f->tier(), "specialized");
  EXPECT_NE(std::string(f->cubin().data(), f->cubin().size()), generic_cubin);
  // The specialized kernel is the one eager gives, and lazy now returns it directly.
  CompileReport again;
  auto eager = compile_kernel(roundtrip(), layout_f(), with(Specialization::kEager), &again);
  ASSERT_TRUE(eager.ok());
  EXPECT_EQ(again.cache, CacheSource::kMemory);
  EXPECT_EQ(std::string(eager->cubin().data(), eager->cubin().size()),
            std::string(f->cubin().data(), f->cubin().size()));
  auto lazy = compile_kernel(roundtrip(), layout_f(), with(Specialization::kLazy));
  ASSERT_TRUE(lazy.ok());
  EXPECT_EQ(lazy->tier(), "specialized");
  EXPECT_TRUE(lazy->wait_specialized().ok());  // nothing to wait for
}

// Readers of a lazy kernel during its switch (what a launch reads: the active tier's name and
// module) see one whole tier at a time, never a mix, and tiers only move forward: generic, then
// specialized (run under TSan by scripts/sanitize.sh).
TEST_F(GenericTier, ConcurrentReadersSeeOneWholeTierDuringTheSwitch) {
  ASSERT_TRUE(compile_kernel(roundtrip(), layout_d(), with(Specialization::kGeneric)).ok());
  auto f = compile_kernel(roundtrip(), layout_f(), with(Specialization::kLazy));
  ASSERT_TRUE(f.ok()) << f.error().full_text();
  ASSERT_EQ(f->tier(), "generic");
  // Readers start while the specialized kernel compiles; each records every change it saw.
  using Seen = std::pair<std::string, size_t>;
  std::atomic<bool> done{false};
  std::vector<std::vector<Seen>> seen(3);
  std::vector<std::thread> readers;
  for (auto& mine : seen)
    readers.emplace_back([&done, &f, &mine] {
      while (!done.load()) {
        const Kernel copy = *f;  // copies share the switch
        // tier() and cubin() are two reads: a switch may fall between them. A sample whose
        // module is the same before and after its tier was read is one tier's whole view.
        const size_t before = copy.cubin().size();
        std::string tier(copy.tier());
        if (copy.cubin().size() != before) continue;
        Seen now(std::move(tier), before);
        if (mine.empty() || mine.back() != now) mine.push_back(std::move(now));
      }
    });
  EXPECT_TRUE(f->wait_specialized().ok());
  done = true;
  for (std::thread& reader : readers) reader.join();
  auto specialized = compile_kernel(roundtrip(), layout_f(), with(Specialization::kEager));
  auto generic = compile_kernel(roundtrip(), layout_f(), with(Specialization::kGeneric));
  ASSERT_TRUE(specialized.ok() && generic.ok());
  // The two modules must be told apart by what a reader records, or a mix could not show.
  ASSERT_NE(specialized->cubin().size(), generic->cubin().size());
  const Seen generic_tier("generic", generic->cubin().size());
  const Seen specialized_tier("specialized", specialized->cubin().size());
  for (const auto& mine : seen) {
    ASSERT_FALSE(mine.empty());
    // A prefix of [generic, specialized]: whole tiers, in order.
    const std::vector<std::vector<Seen>> allowed = {
        {generic_tier}, {specialized_tier}, {generic_tier, specialized_tier}};
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), mine), allowed.end())
        << ::testing::PrintToString(mine);
  }
  EXPECT_EQ(seen[0].front(), generic_tier);  // the readers began before the switch
  EXPECT_EQ(f->tier(), "specialized");
  EXPECT_EQ(f->cubin().size(), specialized->cubin().size());
}

TEST_F(GenericTier, LazyWithoutAGenericTierIsEagerAndBuildsItForTheNextLayout) {
  CompileReport report;
  auto d = compile_kernel(roundtrip(), layout_d(), with(Specialization::kLazy), &report);
  ASSERT_TRUE(d.ok()) << d.error().full_text();
  EXPECT_EQ(d->tier(), "specialized");
  EXPECT_NE(report.tier_reason.find("no cache holds the generic tier"), std::string::npos)
      << report.tier_reason;
  // The generic tier builds in the background; once that is done, a new layout finds it in
  // memory, built by no call of this thread.
  background_compiler().drain();
  CompileReport probe;
  auto f = compile_kernel(roundtrip(), layout_f(), with(Specialization::kLazy), &probe);
  ASSERT_TRUE(f.ok()) << f.error().full_text();
  EXPECT_EQ(probe.tier, "generic") << probe.tier_reason;
  EXPECT_EQ(probe.cache, CacheSource::kMemory);
  EXPECT_TRUE(f->wait_specialized().ok());
}

// The generic tier's cache entry with metadata that does not parse (issue 42 item 3: one cached
// build for every tier): a generic call compiles it again and replaces it, with a warning, as a
// specialized kernel's; a lazy call takes it for no tier at all, is eager, and its background
// build replaces it, so the next layout finds the tier.
TEST_F(GenericTier, AGenericTierWithDamagedMetadataIsBuiltAgainAndReplaced) {
  CompileReport first;
  ASSERT_TRUE(compile_kernel(roundtrip(), layout_d(), with(Specialization::kGeneric), &first).ok());
  const auto key = Key128::parse_hex(first.key);
  ASSERT_TRUE(key.has_value()) << first.key;
  auto disk = module_cache().disk();
  ASSERT_NE(disk, nullptr);
  const std::optional<Payload> good = disk->read(*key);
  ASSERT_TRUE(good.has_value());
  auto damage = [&] {
    Payload entry = *good;
    const size_t kind = entry.meta.find("\"kind\":\"kernel\"");
    ASSERT_NE(kind, std::string::npos) << entry.meta;
    entry.meta.replace(kind, 15, "\"kind\":\"transfer\"");
    ASSERT_TRUE(disk->write(*key, entry).written);
    ASSERT_TRUE(clear_cache(false).ok());  // memory only: the next call reads the disk entry
  };
  damage();
  CompileReport again;
  auto generic = compile_kernel(roundtrip(), layout_f(), with(Specialization::kGeneric), &again);
  ASSERT_TRUE(generic.ok()) << generic.error().full_text();
  EXPECT_EQ(generic->tier(), "generic");
  EXPECT_EQ(again.cache, CacheSource::kCompiled);
  ASSERT_EQ(again.warnings.size(), 1u) << ::testing::PrintToString(again.warnings);
  EXPECT_NE(again.warnings[0].find("the cache entry of the generic tier of roundtrip.cu had "
                                   "unusable metadata"),
            std::string::npos)
      << again.warnings[0];

  damage();
  CompileReport lazy;
  auto eager = compile_kernel(roundtrip(), layout_d(), with(Specialization::kLazy), &lazy);
  ASSERT_TRUE(eager.ok()) << eager.error().full_text();
  EXPECT_EQ(eager->tier(), "specialized");
  EXPECT_NE(lazy.tier_reason.find("no cache holds the generic tier"), std::string::npos)
      << lazy.tier_reason;
  wait_background_compiles();
  CompileReport probe;
  auto f = compile_kernel(roundtrip(), layout_f(), with(Specialization::kLazy), &probe);
  ASSERT_TRUE(f.ok()) << f.error().full_text();
  EXPECT_EQ(probe.tier, "generic") << probe.tier_reason;
  EXPECT_EQ(probe.cache, CacheSource::kMemory);
  EXPECT_TRUE(f->wait_specialized().ok());
}

// A second new layout asked for while the first one's generic tier builds in the background
// compiles its own specialized kernel at once (issue 39 item 3): it never waits for that build.
// Waiting would have answered with the generic tier (tier "generic", cache "memory").
TEST_F(GenericTier, ASecondLazyLayoutNeverWaitsForTheFirstOnesGenericBuild) {
  auto d = compile_kernel(roundtrip(), layout_d(), with(Specialization::kLazy));
  ASSERT_TRUE(d.ok()) << d.error().full_text();
  ASSERT_EQ(d->tier(), "specialized");
  // The generic build (seconds) has started on the background thread.
  for (int i = 0; i < 10000 && background_compiles().running == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(background_compiles().running, 1);
  CompileReport report;
  auto f = compile_kernel(roundtrip(), layout_f(), with(Specialization::kLazy), &report);
  ASSERT_TRUE(f.ok()) << f.error().full_text();
  EXPECT_EQ(f->tier(), "specialized");
  EXPECT_EQ(report.cache, CacheSource::kCompiled);
  EXPECT_NE(report.tier_reason.find("no cache holds the generic tier"), std::string::npos)
      << report.tier_reason;
  // One build of the generic tier was asked for, not two.
  wait_background_compiles();
  CompileReport probe;
  auto e = compile_kernel(roundtrip(), layout_d(), with(Specialization::kGeneric), &probe);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(probe.cache, CacheSource::kMemory);
}

TEST_F(GenericTier, PlansItCannotExpressAreEagerAndTheReportSaysWhy) {
  // 16x32bx2: the half-split offset is an immediate.
  const std::vector<NamedTransfer> split = {
      transfer(tmemjit_test::seed_split(true).make(), "acc_st"),
      transfer(tmemjit_test::seed_split(false).make(), "acc_ld")};
  CompileReport report;
  auto kernel = compile_kernel(roundtrip_bits(), split, with(Specialization::kGeneric), &report);
  ASSERT_TRUE(kernel.ok()) << kernel.error().full_text();
  EXPECT_EQ(kernel->tier(), "specialized");
  EXPECT_EQ(report.tier, "specialized");
  EXPECT_NE(report.tier_reason.find("transfer 'acc_st'"), std::string::npos) << report.tier_reason;
  EXPECT_NE(report.tier_reason.find("16x32bx2"), std::string::npos) << report.tier_reason;
}

TEST_F(GenericTier, WarmupBuildsTheTierThatABundleCarriesToAnotherCache) {
  ASSERT_TRUE(warmup_kernel(roundtrip(), layout_d(), with(Specialization::kEager)).ok());
  const std::string bundle = (dir_.path() / "tiers.bundle").string();
  auto exported = export_cache_bundle(bundle);
  ASSERT_TRUE(exported.ok()) << exported.error().full_text();
  // Another machine: an empty cache that imports the bundle, then a layout it has never seen.
  TempDir other;
  set_cache_dir(other.path().string());
  ASSERT_TRUE(clear_cache(false).ok());
  auto imported = import_cache_bundle(bundle);
  ASSERT_TRUE(imported.ok()) << imported.error().full_text();
  CompileReport report;
  auto f = compile_kernel(roundtrip(), layout_f(), with(Specialization::kLazy), &report);
  ASSERT_TRUE(f.ok()) << f.error().full_text();
  EXPECT_EQ(report.tier, "generic");
  EXPECT_EQ(report.cache, CacheSource::kDisk);
  EXPECT_TRUE(f->wait_specialized().ok());
  set_cache_dir(dir_.path().string());
  // A plan the generic tier cannot express: warmup says so, naming the transfer.
  const std::vector<NamedTransfer> split = {
      transfer(tmemjit_test::seed_split(true).make(), "acc_st"),
      transfer(tmemjit_test::seed_split(false).make(), "acc_ld")};
  Status refused = warmup_kernel(roundtrip_bits(), split);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::kUsage);
  EXPECT_NE(refused.error().message().find("acc_st"), std::string::npos);
}

TEST_F(GenericTier, TheEmulatedGenericTierCompilesForSm90) {
  CompileReport report;
  auto d = compile_kernel(roundtrip(), layout_d(), with(Specialization::kGeneric, Target::kSm90),
                          &report);
  ASSERT_TRUE(d.ok()) << d.error().full_text();
  EXPECT_TRUE(d->emulated());
  EXPECT_EQ(d->tier(), "generic");
  EXPECT_NE(d->ptx().find("tmemjit generic emulated transfer acc_ld"), std::string_view::npos);
}

// FNV-1a over the descriptor words: one number pins a whole descriptor.
std::uint64_t words_hash(const std::vector<std::uint32_t>& words) {
  std::uint64_t hash = 14695981039346656037ull;
  for (std::uint32_t word : words)
    for (int byte = 0; byte < 4; ++byte) {
      hash ^= (word >> (8 * byte)) & 0xFFu;
      hash *= 1099511628211ull;
    }
  return hash;
}

kernels::GenericForm generic_form_of(const TransferSpec& spec, Target target) {
  DeviceFunctionOptions options;
  options.name = "acc";
  auto code = kernels::prepare_transfer(spec, options, kernels::CoordDetail::kForm);
  EXPECT_TRUE(code.ok()) << code.error().full_text();
  if (!code.ok()) return {};
  return kernels::generic_form(*code, target, "acc_shape[0] + acc_columns");
}

// The descriptor words of the example layouts and the seed's, both targets, pinned: the generic
// tier's run needs a GPU, so this is the check without one that its descriptors stay as they are
// (the emulation's words too, and a 16-bit view's second half of NAME_coord weights).
TEST(GenericForm, TheDescriptorsArePinned) {
  struct Case {
    std::string what;
    TransferSpec spec;
    Target target;
    size_t words;
    std::uint64_t hash;
  };
  const Case cases[] = {
      {"d_x32_st", layout("d_x32_st"), Target::kSm100a, 303, 0x8faa1c977990dc1dull},
      {"d_x32_ld", layout("d_x32_ld"), Target::kSm100a, 303, 0x8faa1c977990dc1dull},
      {"f_16x256b_st", layout("f_16x256b_st"), Target::kSm100a, 303, 0x8dde62d5dc4777e2ull},
      {"f_16x256b_ld", layout("f_16x256b_ld"), Target::kSm100a, 303, 0x8dde62d5dc4777e2ull},
      {"d_x64_ld", layout("d_x64_ld"), Target::kSm100a, 563, 0x27624c750df1da25ull},
      {"d_x32_st sm_90", layout("d_x32_st"), Target::kSm90, 303, 0x5db1da9888651843ull},
      {"f_16x256b_ld sm_90", layout("f_16x256b_ld"), Target::kSm90, 303, 0xc7fc685406f9a652ull},
      {"seed pack ld", tmemjit_test::seed_pack(false).make(), Target::kSm100a, 303,
       0x91d4a54d5e5414beull},
      {"seed pack st sm_90", tmemjit_test::seed_pack(true).make(), Target::kSm90, 303,
       0x76e5bc1f4a377c62ull},
      {"seed layout B st", tmemjit_test::seed_layout_b(true).make(), Target::kSm100a, 303,
       0x7eb69afccef4b09dull},
      {"seed layout B st sm_90", tmemjit_test::seed_layout_b(true).make(), Target::kSm90, 303,
       0x4b92d40964c67943ull}};
  for (const Case& c : cases) {
    const kernels::GenericForm form = generic_form_of(c.spec, c.target);
    ASSERT_TRUE(form.transfer) << c.what << ": " << form.why_not;
    EXPECT_EQ(form.transfer->descriptor.size(), c.words) << c.what;
    EXPECT_EQ(words_hash(form.transfer->descriptor), c.hash) << c.what;
  }
}

// Why a plan stays specialized, word for word (CompileReport::tier_reason quotes it).
TEST(GenericForm, ThePlansItCannotExpressSayWhy) {
  EXPECT_EQ(generic_form_of(tmemjit_test::seed_split(true).make(), Target::kSm100a).why_not,
            "tcgen05.st.sync.aligned.16x32bx2.x4.b32: 16x32bx2's half-split offset is an "
            "immediate operand (PTX takes no register there)");
  const TransferSpec red =
      tmemjit_test::ld_red_accumulator("tcgen05.ld.red.sync.aligned.32x32b.x8.min.f32").make();
  EXPECT_EQ(generic_form_of(red, Target::kSm100a).why_not,
            "tcgen05.ld.red.sync.aligned.32x32b.x8.min.f32 writes its reduction results to slots "
            "after the register view; the generic tier compiles no reductions");
}

TEST(Specialization, NamesRoundTripAndABadNameListsTheAllowedSet) {
  for (Specialization s : {Specialization::kEager, Specialization::kLazy, Specialization::kGeneric})
    EXPECT_EQ(parse_specialization(to_string(s)).value(), s);
  auto bad = parse_specialization("fast");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), ErrorCode::kUsage);
  EXPECT_NE(bad.error().message().find("eager, lazy, generic"), std::string::npos);
  EXPECT_EQ(CompileOptions{}.specialization, Specialization::kEager);
  EXPECT_EQ(Kernel().tier(), "specialized");
  EXPECT_TRUE(Kernel().wait_specialized().ok());
}

// The switch is published once: readers see null or the final Impl, never anything else, and
// every waiter returns once it is set (run under TSan by scripts/sanitize.sh).
TEST(TierSwitch, PublishesOnceToConcurrentReadersAndWaiters) {
  auto tiers = std::make_shared<TierSwitch>();
  auto payload = std::make_shared<Payload>();
  auto specialized = std::make_shared<Kernel::Impl>("k", Target::kSm100a, payload);
  Kernel::Impl* const expected = specialized.get();
  std::atomic<bool> bad{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 20000; ++k) {
        Kernel::Impl* seen = tiers->specialized();
        if (seen != nullptr && seen != expected) bad = true;
        if (seen != nullptr) break;
      }
    });
  threads.emplace_back([&] { EXPECT_TRUE(tiers->wait().ok()); });
  tiers->finish(std::shared_ptr<Kernel::Impl>(specialized));
  tiers->finish(Error(ErrorCode::kInternal, "a second finish is ignored"));
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(bad);
  EXPECT_EQ(tiers->specialized(), expected);
  EXPECT_TRUE(tiers->wait().ok());
}

}  // namespace
}  // namespace tmem
