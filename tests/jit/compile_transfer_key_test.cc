// Tests of compile_transfer's cache key without compiling: TransferSpec::fingerprint is equal for
// spellings of one transfer and differs for other transfers; the key covers kind, target, backend
// and options; copies keep the memoized fingerprint and equality ignores it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "runtime/compile/backends.h"
#include "runtime/jit/compile_transfer.h"
#include "tmem/opcode.h"
#include "tmem/transfer.h"

namespace tmem {
namespace {

using tmemjit_test::SpecText;

const std::string kSeed = tmemjit_test::kSeedRearrange;

// The seed's Layout B store, spelled as in the seed document.
SpecText seed() { return tmemjit_test::seed_layout_b(true); }

// The same transfer with other spacing and other, equal factorizations of both layouts: the TMEM
// layout written out instead of the datapath factory, and the register layout's last iter split
// in two (32 x 2 fuses back to 64 with stride 1).
SpecText seed_respelled() {
  SpecText text = seed();
  text.op = "  tcgen05.st.sync.aligned.32x32b.x64.b32 ";
  text.tmem = "tensor( (64,128) , S[(64,2,2,32):(1@TLane,64@TLane,32@TCol,1@TCol)] , f32 )" + kSeed;
  text.regs =
      "tensor((64, 128), S[(64,2,2,32) : (1@tid_in_wg, 64@tid_in_wg, 32, 1)], float32)"
      ".rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, wl=2)";
  return text;
}

Key128 key(const TransferSpec& spec, const CompileOptions& options = {},
           KernelKind kind = KernelKind::kRoundtrip) {
  return transfer_cache_key(spec, options, kind).value();
}

TEST(SpecFingerprint, SpellingsOfOneTransferShareIt) {
  const TransferSpec a = seed().make();
  const TransferSpec b = seed_respelled().make();
  ASSERT_FALSE(a == b) << "the respelling should differ structurally, or this test proves nothing";
  ASSERT_NE(a.tmem().to_string(), b.tmem().to_string());
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_EQ(key(a), key(b));
}

TEST(SpecFingerprint, AViewBuiltAnotherWayShareIt) {
  // The 32x32b.x4 identity spec; its register operand once as a (4,32,4) tensor and once as a
  // view of a (128,4) tensor: another base shape and layout, the same map.
  const Opcode op = Opcode::parse("tcgen05.st.sync.aligned.32x32b.x4.b32").value();
  SpecText direct = tmemjit_test::identity_spec(op);
  SpecText viewed = direct;
  viewed.regs = "tensor((128,4), S[(128,4):(1@tid_in_wg,1)], b32).view(4,32,4)";
  const TransferSpec a = direct.make(), b = viewed.make();
  ASSERT_FALSE(a == b);
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
}

TEST(SpecFingerprint, OtherTransfersDiffer) {
  const TransferSpec base = seed().make();
  std::vector<SpecText> others;
  SpecText load = tmemjit_test::seed_layout_b(false);
  others.push_back(load);
  SpecText dtype = seed();  // b32 instead of f32: the same bits, another spec
  dtype.tmem = "tensor((64,128), S[(64,2,64):(1@TLane,64@TLane,1@TCol)], b32)" + kSeed;
  dtype.regs = "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], b32)" + kSeed;
  others.push_back(dtype);
  SpecText swapped = seed();  // the register columns in another order
  swapped.regs =
      "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], f32)"
      ".rearrange(\"(wh r) (wl c) -> (wh wl) r c\", wh=2, r=32, wl=2)";
  others.push_back(swapped);
  SpecText offset = seed();  // one column to the right
  offset.tmem = "tensor((64,128), S[(64,2,64):(1@TLane,64@TLane,1@TCol)] + 1@TCol, f32)" + kSeed;
  others.push_back(offset);
  SpecText stray_axis = seed();  // a unit iter on warpid: the same map, but check() rejects it
  stray_axis.tmem =
      "tensor((64,128), S[(1,64,2,64):(1@warpid,1@TLane,64@TLane,1@TCol)], f32)" + kSeed;
  others.push_back(stray_axis);
  for (const SpecText& text : others) {
    std::optional<std::string_view> t2, im;
    auto other = TransferSpec::from_fields(text.op, text.scope, text.tmem, text.regs, t2, im);
    if (!other.ok()) {
      ADD_FAILURE() << text.tmem << ": " << other.error().full_text();
      continue;
    }
    EXPECT_NE(other->fingerprint(), base.fingerprint()) << text.op << "\n"
                                                        << text.tmem << "\n"
                                                        << text.regs;
  }
  // The 16x32bx2 immediate is part of it.
  EXPECT_NE(tmemjit_test::seed_split(true).make().fingerprint(),
            tmemjit_test::seed_split(true, (16L << 16) + 9).make().fingerprint());
}

TEST(SpecFingerprint, EveryIdentitySpecHasItsOwn) {
  std::vector<SpecFingerprint> seen;
  for (Direction dir : {Direction::kLoad, Direction::kStore})
    for (Shape shape : all_shapes())
      for (int num = 1; num <= 128; num *= 2)
        for (bool pack : {false, true}) {
          auto op = Opcode::make(dir, shape, num, pack);
          if (!op) continue;
          for (int offset : {0, 16}) {
            if (offset && (op->atom_rows() == 32 || op->is_split())) continue;
            const SpecFingerprint print =
                tmemjit_test::identity_spec(*op, offset).make().fingerprint();
            for (const SpecFingerprint& other : seen)
              ASSERT_NE(print, other) << *op << " offset " << offset;
            seen.push_back(print);
          }
        }
  EXPECT_EQ(seen.size(), 148u + 2 * (8 + 7 + 6) * 2);
}

TEST(SpecFingerprint, IsStableAcrossRuns) {
  // A golden value: the fingerprint goes into disk-cache keys shared between processes and
  // builds. If a change of the normal form is intended, update it (old entries just miss).
  const SpecFingerprint print = seed().make().fingerprint();
  const Key128 as_key{print.lo, print.hi};
  EXPECT_EQ(as_key.hex(), "046af35cd5058ec0da3649b7fae102d2")
      << "fingerprint of the seed spec changed";
}

TEST(SpecFingerprint, CopiesKeepItAndEqualityIgnoresIt) {
  const TransferSpec fresh = seed().make();
  const TransferSpec computed = seed().make();
  const SpecFingerprint print = computed.fingerprint();
  EXPECT_TRUE(fresh == computed);      // one has the memo filled, the other not
  const TransferSpec copy = computed;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.fingerprint(), print);
  TransferSpec assigned = tmemjit_test::seed_layout_b(false).make();
  EXPECT_NE(assigned.fingerprint(), print);
  assigned = computed;  // the old memo must not survive the assignment
  EXPECT_EQ(assigned.fingerprint(), print);
  TransferSpec moved = std::move(assigned);
  EXPECT_EQ(moved.fingerprint(), print);
}

TEST(TransferCacheKey, CoversKindTargetBackendAndOptions) {
  const TransferSpec spec = seed().make();
  const Key128 base = key(spec);
  std::vector<std::pair<std::string, Key128>> variants;
  variants.emplace_back("kind store", key(spec, {}, KernelKind::kStore));
  variants.emplace_back("kind load", key(spec, {}, KernelKind::kLoad));
  variants.emplace_back("kind fill", key(spec, {}, KernelKind::kFill));
  auto with = [&](const char* what, auto change) {
    CompileOptions options;
    change(options);
    variants.emplace_back(what, key(spec, options));
  };
  with("target", [](CompileOptions& o) { o.target = Target::kSm100f; });
  with("-O2", [](CompileOptions& o) { o.opt_level = 2; });
  with("lineinfo", [](CompileOptions& o) { o.line_info = true; });
  with("tmem check", [](CompileOptions& o) { o.tmem_access_check = true; });
  with("extra", [](CompileOptions& o) { o.extra_options = {"-maxrregcount=64"}; });
  with("extra split", [](CompileOptions& o) { o.extra_options = {"-maxrregcount=64", "-v"}; });
  with("extra joined", [](CompileOptions& o) { o.extra_options = {"-maxrregcount=64 -v"}; });
  with("ptxas", [](CompileOptions& o) { o.backend = Backend::kPtxas; });
  const Backend other_in_process = resolve_backend(Backend::kAuto) == Backend::kNvJitLink
                                       ? Backend::kNvPtxCompiler
                                       : Backend::kNvJitLink;
  with("other in-process backend", [&](CompileOptions& o) { o.backend = other_in_process; });
  for (size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(variants[i].second, base) << variants[i].first;
    for (size_t j = 0; j < i; ++j)
      EXPECT_NE(variants[i].second, variants[j].second)
          << variants[i].first << " vs " << variants[j].first;
  }

  // The backend is keyed resolved: auto and what it stands for share entries.
  CompileOptions resolved;
  resolved.backend = resolve_backend(Backend::kAuto);
  EXPECT_EQ(key(spec, resolved), base);
  // keep_dir changes no binary.
  CompileOptions keep;
  keep.keep_dir = "/tmp/somewhere";
  EXPECT_EQ(key(spec, keep), base);
  // Switching options back and forth on one thread gives the same keys again.
  EXPECT_EQ(key(spec, {}, KernelKind::kStore), variants[0].second);
}

TEST(TransferCacheKey, NvrtcIsAUsageError) {
  CompileOptions options;
  options.backend = Backend::kNvrtc;
  const Result<Key128> result = transfer_cache_key(seed().make(), options, KernelKind::kRoundtrip);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kUsage);
  EXPECT_NE(result.error().message().find("nvrtc"), std::string::npos) << result.error().message();
}

TEST(CompilerVersion, NamesTheBackendAndAsksOnlyIt) {
  EXPECT_TRUE(compiler_version(Backend::kNvJitLink).starts_with("nvjitlink "))
      << compiler_version(Backend::kNvJitLink);
  EXPECT_NE(compiler_version(Backend::kNvJitLink), "nvjitlink unavailable");
  EXPECT_TRUE(compiler_version(Backend::kNvPtxCompiler).starts_with("nvptxcompiler "));
  if (nvptxcompiler_built_in()) {
    EXPECT_NE(compiler_version(Backend::kNvPtxCompiler), "nvptxcompiler unavailable");
  }
  EXPECT_EQ(compiler_version(Backend::kAuto), compiler_version(resolve_backend(Backend::kAuto)));
}

TEST(LibraryBuildId, IdentifiesThisBuildOfTheLibrary) {
  const std::string& id = library_build_id();
  EXPECT_TRUE(id.starts_with("build-id ") || id.starts_with("file ")) << id;
  if (id.starts_with("build-id ")) {
    EXPECT_GE(id.size(), std::string("build-id ").size() + 16) << id;  // at least 64 bits of digest
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 9), std::string::npos) << id;
  }
  EXPECT_EQ(&library_build_id(), &id);  // computed once
}

}  // namespace
}  // namespace tmem
