#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for TMEMJIT_FUZZ_SECONDS (default 20) from its seed
# corpus, tests/fuzz/corpus/<target>. New inputs go to a fresh <build>/fuzz-run/<target>, so a CI run
# costs the same every time; TMEMJIT_FUZZ_CORPUS=DIR keeps them in DIR/<target> and starts from
# there too, so long runs build on each other.
# The build is build-asan (clang, ASan+UBSan and coverage on every target, shared with
# scripts/sanitize.sh so the library is compiled once). A crash, leak, UB, hang (-timeout) or
# out-of-memory input fails the script and is kept in <build>/artifacts/. Figures of each run go
# to <build>/fuzz-summary.txt (docs/reliability.md quotes them).
#   scripts/fuzz.sh                            the CI run (about 20 s per target)
#   TMEMJIT_FUZZ_SECONDS=1800 scripts/fuzz.sh differential   check against the simulator, long
#   TMEMJIT_FUZZ_SECONDS=3600 TMEMJIT_FUZZ_CORPUS=build-asan/corpus scripts/fuzz.sh check spec
#   build-asan/tests/fuzz/fuzz_view build-asan/artifacts/view-crash-...   replay one input
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

FUZZ_SECONDS=${TMEMJIT_FUZZ_SECONDS:-20}
FUZZ_BUILD=${TMEMJIT_ASAN_BUILD_DIR:-$TMEMJIT_ROOT/build-asan}
ALL_TARGETS=(opcode layout view spec check disk_entry differential code_stats text entry_meta
             include_scan cuda_unit lexer)
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL_TARGETS[@]}")

# libFuzzer and the sanitizer runtimes come with clang (Debian: clang, libclang-rt-dev); only
# fuzzing needs them, so they are installed here rather than by tmemjit_setup.
tmemjit_have_libfuzzer() {
  command -v clang++ >/dev/null 2>&1 &&
    [ -f "$(clang++ -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a" ]
}
if ! tmemjit_have_libfuzzer; then
  TMEMJIT_DEBIAN_PACKAGES=(clang libclang-rt-dev)
  tmemjit_install_packages
  tmemjit_have_libfuzzer || { tmemjit_log "clang with libFuzzer is missing (Debian: clang libclang-rt-dev)"; exit 1; }
fi
tmemjit_find_cuda

if [ ! -f "$FUZZ_BUILD/build.ninja" ] || ! grep -q "^TMEMJIT_FUZZ:BOOL=ON$" "$FUZZ_BUILD/CMakeCache.txt"; then
  mkdir -p "$FUZZ_BUILD"
  cmake -S "$TMEMJIT_ROOT" -B "$FUZZ_BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    "-DTMEMJIT_SANITIZE=address;undefined" -DTMEMJIT_FUZZ=ON -DTMEMJIT_BUILD_BENCH=OFF \
    >"$FUZZ_BUILD/configure.log" 2>&1 || { cat "$FUZZ_BUILD/configure.log" >&2; exit 1; }
fi
cmake --build "$FUZZ_BUILD" -j "$TMEMJIT_JOBS" --target fuzzers >"$FUZZ_BUILD/build.log" 2>&1 ||
  { tail -n 60 "$FUZZ_BUILD/build.log" >&2; exit 1; }

# One target: prints "target runs new_units corpus_files seconds status".
run_target() {
  local target=$1 dict=descriptor
  [ "$target" = opcode ] && dict=opcode
  local corpus="$CORPUS_ROOT/$target" log="$FUZZ_BUILD/logs/$target.log"
  mkdir -p "$corpus" "$FUZZ_BUILD/artifacts" "$FUZZ_BUILD/logs"
  local dict_flag=()
  # disk_entry, differential and code_stats take binary inputs (an entry; a generator seed and
  # case index; a cubin); text and lexer read PTX and CUDA text, which the descriptor words do
  # not help.
  case "$target" in
    disk_entry | differential | code_stats | text | lexer) ;;
    *) dict_flag=(-dict="$TMEMJIT_ROOT/tests/fuzz/dict/$dict.dict") ;;
  esac
  local start=$SECONDS status=ok
  # -timeout: one input running longer is a hang; -rss_limit_mb also caps single allocations.
  "$FUZZ_BUILD/tests/fuzz/fuzz_$target" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 "${dict_flag[@]}" \
    -artifact_prefix="$FUZZ_BUILD/artifacts/$target-" \
    "$corpus" "$TMEMJIT_ROOT/tests/fuzz/corpus/$target" >"$log" 2>&1 || status=FAILED
  local runs new
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n1)
  echo "$target ${runs:-0} ${new:-0} $(find "$corpus" -type f | wc -l) $((SECONDS - start)) $status"
}

CORPUS_ROOT=${TMEMJIT_FUZZ_CORPUS:-$FUZZ_BUILD/fuzz-run}
[ -n "${TMEMJIT_FUZZ_CORPUS:-}" ] || rm -rf "$CORPUS_ROOT"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
results="$FUZZ_BUILD/fuzz-summary.txt"
: >"$results.tmp"
# Two targets at a time: each libFuzzer process uses one core.
running=0
for target in "${TARGETS[@]}"; do
  run_target "$target" >>"$results.tmp" &
  running=$((running + 1))
  if [ "$running" -ge "$TMEMJIT_JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) ${FUZZ_SECONDS}s per target; columns: target inputs_run new_units corpus_files seconds status"
  sort "$results.tmp"
} >"$results"
rm -f "$results.tmp"
cat "$results" >&2
if grep -q FAILED "$results"; then
  for target in $(awk '$6 == "FAILED" {print $1}' "$results"); do
    tmemjit_log "fuzz_$target found a problem; its log: $FUZZ_BUILD/logs/$target.log"
    grep -E "ERROR|runtime error|fuzz property failed|Test unit written" "$FUZZ_BUILD/logs/$target.log" | head -n 5 >&2
  done
  exit 1
fi
tmemjit_log "fuzzing clean: ${#TARGETS[@]} targets, ${FUZZ_SECONDS}s each"
