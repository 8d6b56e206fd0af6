#!/usr/bin/env bash
# Sanitizer runs (docs/reliability.md), each in its own clang build with TMEMJIT_SANITIZE:
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer) on every target;
#               runs the CTest labels unit, compile and sim (device and emu skip without a GPU).
#               Configured with TMEMJIT_FUZZ=ON too, so scripts/fuzz.sh reuses its library.
#   build-tsan  ThreadSanitizer; builds the library and the cache suites only and runs the
#               concurrency tests (names with Concurren, Thread or Parallel, and the Runtime suite:
#               a background thread per runtime, a current runtime per thread).
# Any report fails the test that triggers it (halt_on_error, -fno-sanitize-recover=all).
#   scripts/sanitize.sh            both
#   scripts/sanitize.sh asan|tsan  one
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RUNS=("$@")
[ ${#RUNS[@]} -gt 0 ] || RUNS=(asan tsan)
SUPP="$TMEMJIT_ROOT/tests/sanitizers"

if ! command -v clang++ >/dev/null 2>&1 ||
   [ ! -f "$(clang++ -print-resource-dir)/lib/linux/libclang_rt.asan-x86_64.a" ]; then
  TMEMJIT_DEBIAN_PACKAGES=(clang libclang-rt-dev)
  tmemjit_install_packages
fi
tmemjit_find_cuda

# sanitized_build DIR SANITIZERS FUZZ TARGET...: configure once, then build the targets (all if
# none). FUZZ (ON/OFF) adds libFuzzer coverage (cmake/TmemjitSanitize.cmake).
sanitized_build() {
  local dir=$1 sanitizers=$2 fuzz=$3
  shift 3
  mkdir -p "$dir"
  if [ ! -f "$dir/build.ninja" ] || ! grep -q "^TMEMJIT_FUZZ:BOOL=$fuzz\$" "$dir/CMakeCache.txt"; then
    cmake -S "$TMEMJIT_ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
      -DTMEMJIT_SANITIZE="$sanitizers" -DTMEMJIT_FUZZ="$fuzz" -DTMEMJIT_BUILD_BENCH=OFF \
      -DTMEMJIT_BUILD_CUTE_TESTS=OFF \
      >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; return 1; }
  fi
  local targets=()
  for target in "$@"; do targets+=(--target "$target"); done
  cmake --build "$dir" -j "$TMEMJIT_JOBS" "${targets[@]}" >"$dir/build.log" 2>&1 ||
    { tail -n 60 "$dir/build.log" >&2; return 1; }
}

run_asan() {
  local dir=${TMEMJIT_ASAN_BUILD_DIR:-$TMEMJIT_ROOT/build-asan}
  tmemjit_log "ASan+UBSan: building $dir"
  sanitized_build "$dir" "address;undefined" ON
  tmemjit_log "ASan+UBSan: running the unit, compile and sim labels"
  # InstallAndFindPackage and DocsCodeBlocks build uninstrumented programs against the
  # instrumented library, which cannot link; the plain build runs them, and HeadersCompileAlone
  # (the headers alone, a minute, nothing instrumented). UserEmulationCompile is
  # NVRTC and ptxas over every lowered form (a minute, none of it instrumented code): the lowering
  # itself runs here through the UserEmulation suite, and the plain build runs the oracle. The
  # differential test runs 1000 of its 4000 cases here (the plain build runs all; 4000 took 2 of
  # the run's 5 minutes): instrumented, the same code paths need no more cases.
  # Nvrtc.RepresentativeOpcodesCompileAsCudaCxx passes, then LeakSanitizer's own tracer crashes at
  # its exit (SIGSEGV at 0xda8 while it scans the main thread's TLS) whenever ctest runs it here
  # (2026-12-07, every run; the same command passes outside ctest). The plain build runs it, and
  # its NVRTC route runs here in the other Nvrtc.* tests. The same tracer crash (SIGSEGV at 0xac0)
  # ends the `tmemjit emulate ... -o lowered.ptx` child of
  # Emulate.TheCliReportsWhatItLoweredAndWritesTheCubin under ctest here (2026-12-07, every run;
  # the test passes run directly, and in the plain build): the other Emulate.* tests run the same
  # lowering and CLI here. PchDegrade.SettingsThatDoNotParseWarnNamingTheVariable passes, then the
  # tracer crashes at its exit (SIGSEGV at 0x1498) the same way, under ctest only (2026-12-07,
  # every run since that day's PCH changes; the binary run directly passes): the other PchDegrade
  # tests run here. CliSignals.SigintWhileNvrtcCompilesExits130 exited 0 without "interrupted" once
  # in nine runs here, on a loaded machine (a SIGINT that reached a thread while NVRTC's own handler
  # was installed, is the likely race; it passed 3 of 3 run alone): the plain build runs it, and
  # the SIGTERM twin runs here.
  (cd "$dir" &&
    TMEMJIT_DIFF_CASES=${TMEMJIT_DIFF_CASES:-1000} \
    ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    LSAN_OPTIONS=suppressions="$SUPP/lsan.supp":print_suppressions=0 \
    ctest --output-on-failure -j "$TMEMJIT_JOBS" -L 'unit|compile|sim' -E '^(InstallAndFindPackage|DocsCodeBlocks|UserEmulationCompile\..*|HeadersCompileAlone\..*|Nvrtc\.RepresentativeOpcodesCompileAsCudaCxx|Emulate\.TheCliReportsWhatItLoweredAndWritesTheCubin|PchDegrade\.SettingsThatDoNotParseWarnNamingTheVariable|CliSignals\.SigintWhileNvrtcCompilesExits130)$')
}

run_tsan() {
  local dir=${TMEMJIT_TSAN_BUILD_DIR:-$TMEMJIT_ROOT/build-tsan}
  # A suite that replaces operator new must guard it with tests/common/sanitizer_util.h to build here.
  local suites=(cache_test jit_test)
  tmemjit_log "TSan: building $dir (${suites[*]})"
  sanitized_build "$dir" thread OFF tmemjit tmemjit_cli "${suites[@]}"
  tmemjit_log "TSan: running the concurrency tests"
  (cd "$dir" &&
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions="$SUPP/tsan.supp" \
    ctest --output-on-failure -j "$TMEMJIT_JOBS" -R 'Concurren|Thread|Parallel|^Runtime\.' \
      --no-tests=error -E '_NOT_BUILT$')
}

for run in "${RUNS[@]}"; do
  case "$run" in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) tmemjit_log "unknown run '$run' (asan or tsan)"; exit 2 ;;
  esac
done
tmemjit_log "sanitizers clean: ${RUNS[*]}"
