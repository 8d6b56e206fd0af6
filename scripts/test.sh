#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs every test with CTest.
# Extra arguments go to ctest (e.g. scripts/test.sh -L unit); without them the sanitizer and
# fuzz runs follow (scripts/sanitize.sh, scripts/fuzz.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tmemjit_setup
tmemjit_configure_and_build
(cd "$TMEMJIT_BUILD_DIR" && ctest --output-on-failure -j "$TMEMJIT_JOBS" "$@")

# Reliability (docs/reliability.md): the ASan+UBSan and TSan builds, then about 20 s of fuzzing
# per target. Only on a full run (no ctest arguments); TMEMJIT_SANITIZERS=0 or
# TMEMJIT_FUZZ_SECONDS=0 skips a part.
if [ $# -eq 0 ]; then
  [ "${TMEMJIT_SANITIZERS:-1}" = 0 ] || "$TMEMJIT_ROOT/scripts/sanitize.sh"
  [ "${TMEMJIT_FUZZ_SECONDS:-20}" = 0 ] || "$TMEMJIT_ROOT/scripts/fuzz.sh"
fi
