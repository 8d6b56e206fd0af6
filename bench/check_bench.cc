// Cost of libtmemjit's front end on the seed's Layout B round trip: parsing the spec, checking and
// planning it, and printing the PTX (DESIGN.md §6: speed goals live in benchmarks, not unit tests).
#include <benchmark/benchmark.h>

#include "kernels/transfer_kernels.h"
#include "runtime/check/by_dims.h"
#include "tmem/check.h"
#include "tmem/select.h"
#include "tmem/transfer.h"

namespace {

const char* kRearrange = ".rearrange(\"(wh r) (wl c) -> (wl wh) r c\", wh=2, r=32, wl=2)";

tmem::Result<tmem::TransferSpec> seed_spec() {
  static const std::string tmem_view =
      std::string("tmem_datapath_layout(\"B\",64,128)") + kRearrange;
  static const std::string regs_view =
      std::string("tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)") +
      kRearrange;
  return tmem::TransferSpec::from_fields("tcgen05.st.sync.aligned.32x32b.x64.b32", "warpgroup",
                                         tmem_view, regs_view);
}

void BM_ParseSpec(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(seed_spec());
}
BENCHMARK(BM_ParseSpec)->Unit(benchmark::kMicrosecond);

void BM_CheckAndPlan(benchmark::State& state) {
  const auto spec = seed_spec().value();
  for (auto _ : state) benchmark::DoNotOptimize(tmem::check(spec));
}
BENCHMARK(BM_CheckAndPlan)->Unit(benchmark::kMicrosecond);

// The per-element reference the fast path must match (runtime/check/by_dims.h): the ratio to
// BM_CheckAndPlan is what the per-dim proof saves.
void BM_CheckEachElement(benchmark::State& state) {
  const auto spec = seed_spec().value();
  for (auto _ : state) benchmark::DoNotOptimize(tmem::check_each_element(spec));
}
BENCHMARK(BM_CheckEachElement)->Unit(benchmark::kMicrosecond);

// --op auto on the seed's tiles: every opcode of the direction is arranged and checked.
void BM_SelectSeedTiles(benchmark::State& state) {
  const auto tmem_tile = tmem::View::parse("tmem_datapath_layout(\"B\",64,128)").value();
  const auto regs_tile =
      tmem::View::parse(
          "tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)")
          .value();
  for (auto _ : state)
    benchmark::DoNotOptimize(
        tmem::select(tmem::Direction::kStore, tmem::Scope::warpgroup(), tmem_tile, regs_tile));
}
BENCHMARK(BM_SelectSeedTiles)->Unit(benchmark::kMicrosecond);

void BM_ParseCheckPlanPrint(benchmark::State& state) {
  for (auto _ : state) {
    auto plan = tmem::check(seed_spec().value()).value();
    auto module = tmem::kernels::build_kernel(plan, tmem::kernels::KernelKind::kRoundtrip).value();
    benchmark::DoNotOptimize(tmem::ptx::print(module));
  }
}
BENCHMARK(BM_ParseCheckPlanPrint)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
