// The generic tier against the specialized kernel on a GPU (label emu; the sm_90 emulation on
// Hopper, docs/specialization.md §Tiers): for the native image of every ld/st form the generic
// tier covers, and for the forms select picks for Layouts A-G under each register budget,
// both tiers move every element where NAME_coord says (an oracle computed from the logical index
// in the kernel itself) and agree with each other element for element.
#include <gtest/gtest.h>

#include <cstdio>
#include <future>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/spec_fixtures.h"
#include "emu_where.h"
#include "runtime/cuda/driver.h"
#include "tmem/select.h"
#include "tmem/specialize.h"

namespace tmem {
namespace {

// st_t stores each register's logical index (coded), ld_t loads the same tile back: `out` is what
// each register received, `expect` the code of the index ld_t_coord names (all ones: unused).
const char* kProbe = R"(#include <tmemjit/transfers.cuh>

template <class F> struct RankOf;
template <int R> struct RankOf<void(unsigned int, int, int (&)[R])> {
  static constexpr int value = R;
};
__device__ unsigned int code_of(const int* index, int rank) {
  unsigned int v = 1u;
  for (int d = 0; d < rank; ++d) v = v * 131u + static_cast<unsigned int>(index[d]);
  return v;
}

// The TMEM image cell by cell through the kernel's own 32x32b.x1, independent of the library's
// transfers and of NAME_coord: warps 0-3 each cover their lane quarter (a warp reaches only its
// own 32 lanes). With `dump` null every cell is set to kUnwritten, else each cell is read into
// dump[lane * columns + column].
constexpr unsigned int kUnwritten = 0xFFFFFFFEu;
__device__ void tmem_image(unsigned int base, unsigned int columns, unsigned int* dump) {
  const unsigned int warp = threadIdx.x / 32;
  if (warp >= 4) return;
  const unsigned int lane = warp * 32 + threadIdx.x % 32;
  for (unsigned int c = 0; c < columns; ++c) {
    const unsigned int address = base + ((warp * 32) << 16) + c;
    if (dump == nullptr) {
      asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};"
                   :: "r"(address), "r"(kUnwritten) : "memory");
    } else {
      unsigned int v;
      asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];"
                   : "=r"(v) : "r"(address) : "memory");
      asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
      dump[lane * columns + c] = v;
    }
  }
  if (dump == nullptr) asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
}

// scope_warp: the warp of a warp-scope transfer (-1: every thread of the block is in the scope).
extern "C" __global__ void __launch_bounds__(256)
    probe(unsigned int* out, unsigned int* expect, unsigned int* dump, unsigned int columns,
          int scope_warp) {
  __shared__ unsigned int base_shared;
  const bool in_scope = scope_warp < 0 || threadIdx.x / 32 == static_cast<unsigned int>(scope_warp);
  const unsigned int t = scope_warp < 0 ? threadIdx.x : threadIdx.x % 32;
  if (threadIdx.x / 32 == 0) tmemjit::alloc(&base_shared, columns);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  const unsigned int base = base_shared;
  tmem_image(base, columns, nullptr);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  constexpr int kSt = RankOf<decltype(st_t_coord)>::value;
  constexpr int kLd = RankOf<decltype(ld_t_coord)>::value;
  unsigned int regs[st_t_regs];
#pragma unroll
  for (int s = 0; s < st_t_regs; ++s) {
    int index[kSt];
    st_t_coord(t, s, index);
    regs[s] = index[0] < 0 ? 0u : code_of(index, kSt);
  }
  if (in_scope) st_t(base, regs);
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  tmem_image(base, columns, dump);
  unsigned int back[ld_t_regs];
  if (in_scope) {
    ld_t(base, back);
#pragma unroll
    for (int s = 0; s < ld_t_regs; ++s) {
      int index[kLd];
      ld_t_coord(t, s, index);
      out[t * ld_t_regs + s] = back[s];
      expect[t * ld_t_regs + s] = index[0] < 0 ? 0xFFFFFFFFu : code_of(index, kLd);
    }
  }
  tmemjit::fence_before_sync();
  __syncthreads();
  tmemjit::fence_after_sync();
  if (threadIdx.x / 32 == 0) tmemjit::dealloc(base, columns);
}
)";

struct Case {
  std::string name;
  TransferSpec store, load;
  unsigned threads = 128;  // the block
  int scope_warp = -1;     // warp scope: the warp; -1: the block is the scope
};

NamedTransfer named(TransferSpec spec, const char* name) {
  DeviceFunctionOptions options;
  options.name = name;
  return {std::move(spec), options};
}

// Every form of the generic tier's shapes, packed or not, up to 64 registers: its native image.
std::vector<Case> identity_cases() {
  std::vector<Case> cases;
  for (Shape shape : {Shape::k32x32b, Shape::k16x64b, Shape::k16x128b, Shape::k16x256b})
    for (bool pack : {false, true})
      for (int num = 1; num <= 128; num *= 2) {
        auto st = Opcode::make(Direction::kStore, shape, num, pack);
        auto ld = Opcode::make(Direction::kLoad, shape, num, pack);
        if (!st.ok() || !ld.ok() || st->regs_per_thread() > 64) continue;
        cases.push_back({ld->to_string(), tmemjit_test::identity_spec(*st).make(),
                         tmemjit_test::identity_spec(*ld).make()});
      }
  return cases;
}

// select's forms for a tile of each of Layouts A-G under each register budget, and at warp and
// CTA scope: 128-row layouts
// (A, D) a row per thread, 64-row ones (B, C, E, F) a row per two threads, Layout G (32 rows) a
// row per four; and Layout F in 16x256b's register image. A layout and budget select finds no form
// for is left out (counted below).
std::vector<Case> select_cases() {
  struct Tile {
    std::string name, tmem, regs;
  };
  std::vector<Tile> tiles;
  for (char letter : std::string("ABCDEFG")) {
    const std::string l(1, letter);
    const std::string name = "Layout " + l;
    if (letter == 'A' || letter == 'D')
      tiles.push_back({name, "tmem_datapath_layout(\"" + l + "\",128,64)",
                       "tensor((128,64), S[(128,64):(1@tid_in_wg,1)], b32)"});
    else if (letter == 'G')
      tiles.push_back({name, "tmem_datapath_layout(\"" + l + "\",32,256)",
                       "tensor((32,256), S[(32,4,64):(1@tid_in_wg,32@tid_in_wg,1)], b32)"});
    else
      tiles.push_back({name, "tmem_datapath_layout(\"" + l + "\",64,128)",
                       "tensor((64,128), S[(64,2,64):(1@tid_in_wg,64@tid_in_wg,1)], b32)"});
  }
  tiles.push_back(
      {"Layout F (16x256b's image)", "tmem_datapath_layout(\"F\",64,64)",
       "tensor((64,64), S[(4,2,8,8,4,2):(32@tid_in_wg,2,4@tid_in_wg,4,1@tid_in_wg,1)], b32)"});
  std::vector<Case> cases;
  // The other scopes: warp 1 alone (no group strides, its own lane slab) and a CTA of 8 warps
  // (warps w and w + 4 share a slab: the warpgroup column stride).
  struct Scoped {
    const char* name;
    Scope scope;
    const char *tmem, *regs;
    unsigned threads;
    int warp;
  };
  const Scoped scoped[] = {
      {"warp:1", Scope::warp(1).value(),
       "tensor((32,64), S[(32,64):(1@TLane,1@TCol)] + 32@TLane, b32)",
       "tensor((32,64), S[(32,64):(1@laneid,1)], b32)", 128, 1},
      {"cta:8", Scope::cta(8).value(), "tensor((128,128), S[(128,128):(1@TLane,1@TCol)], b32)",
       "tensor((128,128), S[(128,2,64):(1@tx,128@tx,1)], b32)", 256, -1}};
  for (const Scoped& tile : scoped)
    for (int budget : {0, 32, 16, 8}) {
      const View tmem = View::parse(tile.tmem).value(), regs = View::parse(tile.regs).value();
      auto st = select(Direction::kStore, tile.scope, tmem, regs, {budget});
      auto ld = select(Direction::kLoad, tile.scope, tmem, regs, {budget});
      if (!st.ok() || !ld.ok()) continue;
      cases.push_back({std::string(tile.name) + " budget " + std::to_string(budget) + ": " +
                           ld->spec.op().to_string(),
                       st->spec, ld->spec, tile.threads, tile.warp});
    }
  for (const Tile& tile : tiles)
    for (int budget : {0, 32, 16, 8}) {
      auto tmem = View::parse(tile.tmem);
      auto regs = View::parse(tile.regs);
      if (!tmem.ok() || !regs.ok()) continue;
      auto st = select(Direction::kStore, Scope::warpgroup(), *tmem, *regs, {budget});
      auto ld = select(Direction::kLoad, Scope::warpgroup(), *tmem, *regs, {budget});
      if (!st.ok() || !ld.ok()) continue;
      cases.push_back(
          {tile.name + " budget " + std::to_string(budget) + ": " + ld->spec.op().to_string(),
           st->spec, ld->spec});
    }
  return cases;
}

struct Launched {
  std::vector<std::uint32_t> out, expect;
  std::vector<std::uint32_t> dump;  // TMEM after st_t: 128 lanes x columns
};

Launched run(const Kernel& kernel, const Case& c, int regs, unsigned columns) {
  Launched result;
  const size_t threads = c.scope_warp >= 0 ? 32 : c.threads;  // the scope's threads
  const size_t words = threads * static_cast<size_t>(regs);
  auto out = driver::DeviceBuffer::alloc(words * 4).value();
  auto expect = driver::DeviceBuffer::alloc(words * 4).value();
  const size_t cells = size_t{128} * columns;
  auto dump = driver::DeviceBuffer::alloc(cells * 4).value();
  EXPECT_TRUE(out.fill(0).ok());
  EXPECT_TRUE(dump.fill(0).ok());
  int scope_warp = c.scope_warp;
  void* args[] = {out.arg(), expect.arg(), dump.arg(), &columns, &scope_warp};
  LaunchConfig config;
  config.block = {c.threads, 1, 1};
  Status launched = kernel.launch(config, args);
  EXPECT_TRUE(launched.ok()) << launched.error().full_text();
  auto checked = kernel.emulation_check();
  EXPECT_TRUE(checked.ok()) << checked.error().full_text();
  result.out.resize(words);
  result.expect.resize(words);
  EXPECT_TRUE(out.download(result.out.data(), words * 4).ok());
  EXPECT_TRUE(expect.download(result.expect.data(), words * 4).ok());
  result.dump.resize(cells);
  EXPECT_TRUE(dump.download(result.dump.data(), cells * 4).ok());
  return result;
}

TEST(GenericTierEmu, EveryFormMovesEachElementAsTheSpecializedKernelDoes) {
  const Where where = where_to_run();
  if (!where.skip.empty()) GTEST_SKIP() << where.skip;
  std::vector<Case> cases = identity_cases();
  const std::vector<Case> selected = select_cases();
  EXPECT_GE(selected.size(), 24u);  // Layouts B, D, F and the warp and CTA scopes, each budget
  for (const Case& c : selected) cases.push_back(c);
  ASSERT_GT(cases.size(), 60u);
  const KernelSource source{Language::kCuda, kProbe, "probe", "probe.cu"};
  struct Compiled {
    Result<Kernel> specialized = Error(ErrorCode::kInternal, "not compiled");
    Result<Kernel> generic = Error(ErrorCode::kInternal, "not compiled");
    CompileReport report;
  };
  // Compiles in parallel (compile_kernel is thread-safe), then runs one case at a time.
  std::vector<std::future<Compiled>> futures;
  for (const Case& c : cases)
    futures.push_back(std::async(std::launch::async, [&source, &c, &where] {
      const std::vector<NamedTransfer> transfers = {named(c.store, "st_t"), named(c.load, "ld_t")};
      Compiled compiled;
      CompileOptions options;
      options.target = where.target;
      compiled.specialized = compile_kernel(source, transfers, options);
      options.specialization = Specialization::kGeneric;
      compiled.generic = compile_kernel(source, transfers, options, &compiled.report);
      return compiled;
    }));
  int generic_cases = 0;
  // The generic cases by their generic module: layouts of one signature share it.
  struct Ran {
    size_t index;
    Result<Kernel> generic;
    int regs;
    unsigned columns;
    Launched launched;
  };
  std::map<std::string, std::vector<Ran>> by_module;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].name);
    Compiled compiled = futures[i].get();
    ASSERT_TRUE(compiled.specialized.ok()) << compiled.specialized.error().full_text();
    ASSERT_TRUE(compiled.generic.ok()) << compiled.generic.error().full_text();
    if (compiled.generic->tier() != "generic") {
      // A plan the generic tier cannot express: specialized, with the reason (counted below).
      EXPECT_FALSE(compiled.report.tier_reason.empty());
      std::printf("eager: %s: %s\n", cases[i].name.c_str(), compiled.report.tier_reason.c_str());
      continue;
    }
    ++generic_cases;
    const int regs = compiled.report.transfers[1].regs_per_thread;
    unsigned columns = 32;
    for (const auto& t : compiled.report.transfers)
      columns = std::max(columns, static_cast<unsigned>(t.alloc_columns));
    const Launched specialized = run(*compiled.specialized, cases[i], regs, columns);
    const Launched generic = run(*compiled.generic, cases[i], regs, columns);
    int used = 0;
    std::set<std::uint32_t> stored(specialized.dump.begin(), specialized.dump.end());
    const bool packed = cases[i].load.op().to_string().find("pack::16b") != std::string::npos;
    for (size_t w = 0; w < specialized.out.size(); ++w) {
      if (specialized.expect[w] == 0xFFFFFFFFu) continue;  // a slot the layout leaves unused
      ++used;
      ASSERT_EQ(specialized.out[w], specialized.expect[w])
          << "specialized: thread " << w / regs << ", slot " << w % regs;
      ASSERT_EQ(generic.out[w], specialized.out[w])
          << "generic: thread " << w / regs << ", slot " << w % regs;
      // The store put the element in TMEM: one cell holds its code. (A 16-bit form unpacks a
      // register into two cells, each with half of it.)
      if (!packed)
        ASSERT_TRUE(stored.count(specialized.expect[w]))
            << "TMEM holds no cell with thread " << w / regs << ", slot " << w % regs << "'s code";
    }
    EXPECT_GT(used, 0);
    // What the store left in TMEM, read by the kernel's own loads: the same cell for cell.
    for (size_t cell = 0; cell < specialized.dump.size(); ++cell)
      ASSERT_EQ(generic.dump[cell], specialized.dump[cell])
          << "TMEM lane " << cell / columns << ", column " << cell % columns;
    const std::span<const char> module = compiled.generic->cubin();
    by_module[std::string(module.data(), module.size())].push_back(
        {i, std::move(compiled.generic), regs, columns, generic});
  }
  // Two layouts of one signature share the generic module and differ only in the descriptor a
  // launch writes: launched interleaved (A, B, A), each gives what it gave alone.
  int interleaved = 0;
  for (auto& [module, ran] : by_module) {
    if (ran.size() < 2 || interleaved >= 4) continue;
    Ran& a = ran[0];
    Ran* b = nullptr;
    for (size_t k = 1; k < ran.size() && b == nullptr; ++k)
      if (ran[k].launched.out != a.launched.out) b = &ran[k];
    if (b == nullptr) continue;
    SCOPED_TRACE(cases[a.index].name + " / " + cases[b->index].name);
    ++interleaved;
    for (Ran* r : {&a, b, &a}) {
      const Launched again = run(*r->generic, cases[r->index], r->regs, r->columns);
      EXPECT_EQ(again.out, r->launched.out) << cases[r->index].name;
      EXPECT_EQ(again.dump, r->launched.dump) << cases[r->index].name;
    }
  }
  EXPECT_GT(interleaved, 0) << "no two layouts shared a generic module";
  // Every native image is data; of select's forms, at most a few are not.
  EXPECT_GE(generic_cases, static_cast<int>(cases.size()) - 4);
}

}  // namespace
}  // namespace tmem
