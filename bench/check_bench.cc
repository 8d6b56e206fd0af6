// Cost of libtmemjit's front end on the seed's Layout B round trip: parsing the spec, checking and
// planning it, and printing the PTX (docs/design.md §Tests: speed goals live in benchmarks, not
// unit tests).
#include <benchmark/benchmark.h>

#include "bench/bench_util.h"
#include "kernels/transfer_kernels.h"
#include "runtime/check/by_dims.h"
#include "tmem/check.h"
#include "tmem/select.h"
#include "tmem/transfer.h"

namespace {

void BM_ParseSpec(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(tmem::bench::parse_spec(tmem::bench::seed_text()));
}
BENCHMARK(BM_ParseSpec)->Unit(benchmark::kMicrosecond);

void BM_CheckAndPlan(benchmark::State& state) {
  const auto spec = tmem::bench::seed_spec();
  for (auto _ : state) benchmark::DoNotOptimize(tmem::check(spec));
}
BENCHMARK(BM_CheckAndPlan)->Unit(benchmark::kMicrosecond);

// The per-element reference the fast path must match (runtime/check/by_dims.h): the ratio to
// BM_CheckAndPlan is what the per-dim proof saves.
void BM_CheckEachElement(benchmark::State& state) {
  const auto spec = tmem::bench::seed_spec();
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
    auto plan = tmem::check(tmem::bench::seed_spec()).value();
    auto module = tmem::kernels::build_kernel(plan, tmem::kernels::KernelKind::kRoundtrip).value();
    benchmark::DoNotOptimize(tmem::ptx::print(module));
  }
}
BENCHMARK(BM_ParseCheckPlanPrint)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
