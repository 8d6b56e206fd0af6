#!/usr/bin/env bash
# Builds the benchmark targets (Release, in build-bench/), runs them, prints the comparison table
# and rewrites docs/benchmarks.md and docs/benchmarks.png. Every ratio compares medians of one run.
#
#   scripts/bench.sh [--cutlass DIR]
#
# --cutlass DIR (or $TMEMJIT_CUTLASS_DIR) names CUTLASS's headers for the CuTe rows and the full CuTe
# SASS agreement grid; without it they come from the nvidia-cutlass wheel (scripts/common.sh).
# $TMEMJIT_BENCH_BUILD_DIR overrides the build directory. Results (JSON) stay in
# <build dir>/bench-results/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TMEMJIT_BUILD_DIR=${TMEMJIT_BENCH_BUILD_DIR:-$ROOT/build-bench}
source "$ROOT/scripts/common.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --cutlass) export TMEMJIT_CUTLASS_DIR="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) tmemjit_log "unknown argument: $1"; exit 2 ;;
  esac
done

tmemjit_setup

# matplotlib for the plot: PyPI first, then Debian; without it the table is still written.
if ! python3 -c 'import matplotlib' >/dev/null 2>&1; then
  tmemjit_log "installing matplotlib for docs/benchmarks.png"
  python3 -m pip install -q --disable-pip-version-check matplotlib >/dev/null 2>&1 ||
    { sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
      $sudo apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null 2>&1; } ||
    tmemjit_log "could not install matplotlib: the table is written, the plot is not"
fi

BUILD=$TMEMJIT_BUILD_DIR
RESULTS=$BUILD/bench-results
mkdir -p "$BUILD" "$RESULTS"
tmemjit_log "configuring and building the benchmarks in $BUILD"
# Tests are configured only for tests/cute's full grid (cute_test); no other test target is built.
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTMEMJIT_BUILD_BENCH=ON \
  -DTMEMJIT_BUILD_TESTS=ON -DTMEMJIT_CUTE_FULL_GRID=ON >"$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log" >&2; exit 1; }
cmake --build "$BUILD" -j "$TMEMJIT_JOBS" --target jit_bench cache_bench check_bench codegen_report \
  cute_bench kernel_bench tier_bench >"$BUILD/build.log" 2>&1 || { tail -n 60 "$BUILD/build.log" >&2; exit 1; }

# jit_bench: cold JIT by route and size, overhead, warmup, launch. Repetitions are set per
# benchmark; interleaving them spreads load drifts over every route alike.
tmemjit_log "running jit_bench (cold JIT by route, overhead, warmup, launch): a few minutes"
"$BUILD/bench/jit_bench" --benchmark_enable_random_interleaving=true \
  --benchmark_out="$RESULTS/jit.json" --benchmark_out_format=json >"$RESULTS/jit.txt" 2>&1 ||
  { tail -n 40 "$RESULTS/jit.txt" >&2; exit 1; }
tmemjit_log "running cache_bench (memory, disk and fresh-process hits)"
"$BUILD/bench/cache_bench" --benchmark_repetitions=5 --benchmark_min_time=0.2 \
  --benchmark_out="$RESULTS/cache.json" --benchmark_out_format=json >"$RESULTS/cache.txt" 2>&1 ||
  { tail -n 40 "$RESULTS/cache.txt" >&2; exit 1; }
"$BUILD/bench/check_bench" --benchmark_repetitions=5 --benchmark_min_time=0.2 \
  --benchmark_out="$RESULTS/check.json" --benchmark_out_format=json >"$RESULTS/check.txt" 2>&1 ||
  { tail -n 40 "$RESULTS/check.txt" >&2; exit 1; }
# cute_bench: the seed's Layout B written with CuTe through nvcc and NVRTC, and libtmemjit's cold
# JIT in the same run (the CuTe rows; docs/cute-agreement.md).
tmemjit_log "running cute_bench (CuTe through nvcc and NVRTC vs libtmemjit's cold JIT): about 3 minutes"
"$BUILD/bench/cute_bench" --benchmark_out="$RESULTS/cute.json" --benchmark_out_format=json \
  >"$RESULTS/cute.txt" 2>&1 || { tail -n 40 "$RESULTS/cute.txt" >&2; exit 1; }
# The full CuTe SASS agreement grid: all 148 atoms (CI runs a subset; tests/cute/cute_cases.h).
# Compiling CuTe's 152 kernels takes several minutes; a disagreement is reported, not fatal here.
tmemjit_log "building and running the full CuTe SASS agreement grid (148 atoms): several minutes"
if cmake --build "$BUILD" -j "$TMEMJIT_JOBS" --target cute_test >"$BUILD/cute-grid-build.log" 2>&1; then
  "$BUILD/tests/cute/cute_test" --gtest_brief=1 --gtest_output="json:$RESULTS/cute-grid.json" \
    >"$RESULTS/cute-grid.txt" 2>&1 || tmemjit_log "CuTe agreement grid: failures, see $RESULTS/cute-grid.txt"
  tail -n 3 "$RESULTS/cute-grid.txt" >&2
else
  tmemjit_log "the CuTe agreement grid did not build: see $BUILD/cute-grid-build.log"
fi
# kernel_bench: compile_kernel's first and new layout, hits, against NVRTC and nvcc (docs/design.md §Specialization).
tmemjit_log "running kernel_bench (compile_kernel vs NVRTC and nvcc of the same source): a few minutes"
"$BUILD/bench/kernel_bench" >"$RESULTS/kernel.json" 2>"$RESULTS/kernel.err" ||
  { tail -n 40 "$RESULTS/kernel.err" >&2; exit 1; }
# tier_bench: the generic tier, lazy against eager for new layouts, the descriptor build.
tmemjit_log "running tier_bench (compile_kernel's tiers: lazy against eager): about a minute"
"$BUILD/bench/tier_bench" >"$RESULTS/tiers.json" 2>"$RESULTS/tiers.err" ||
  { tail -n 40 "$RESULTS/tiers.err" >&2; exit 1; }
tmemjit_log "running codegen_report (STTM/LDTM, registers, spills, SASS size)"
"$BUILD/bench/codegen_report" >"$RESULTS/codegen.json" 2>"$RESULTS/codegen.err" ||
  { cat "$RESULTS/codegen.err" >&2; exit 1; }

python3 "$ROOT/bench/report.py" --results "$RESULTS" --docs "$ROOT/docs"
