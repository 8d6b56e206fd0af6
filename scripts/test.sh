#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs every test with CTest.
# Extra arguments go to ctest (e.g. scripts/test.sh -L unit).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tmemjit_setup
tmemjit_configure_and_build
cd "$TMEMJIT_BUILD_DIR"
ctest --output-on-failure -j "$TMEMJIT_JOBS" "$@"
