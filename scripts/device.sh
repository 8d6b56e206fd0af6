#!/usr/bin/env bash
# The suites that need a GPU, on a machine that has one (docs/reliability.md "Skips"): the
# emulation's (CTest label emu: the sm_90 emulation of tcgen05 on Hopper, or tcgen05 itself on
# Blackwell), the device ones (tcgen05 itself: Blackwell only) and the Python package's, which
# launch through cuda.core. A skip is a failure here: TMEMJIT_REQUIRE defaults to emu on Hopper
# and to emu,device on Blackwell.
#
# No installs: such hosts often reach no registry. Pass what CMake cannot find in
# TMEMJIT_CMAKE_ARGS (e.g. -DTMEMJIT_XXHASH_ROOT=DIR). Extra arguments go to ctest
# (e.g. scripts/device.sh -R EmulateEmu). TMEMJIT_BUILD_DIR picks the build (default build-device).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TMEMJIT_BUILD_DIR:-$root/build-device}"
jobs="$(nproc)"

capability=""
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader
  capability="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)"
fi
# shellcheck disable=SC2086  # TMEMJIT_CMAKE_ARGS is a list of arguments
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTMEMJIT_BUILD_BENCH=OFF ${TMEMJIT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
case "$capability" in
  1[0-9].*) export TMEMJIT_REQUIRE="${TMEMJIT_REQUIRE:-emu,device}" ;;
  *) export TMEMJIT_REQUIRE="${TMEMJIT_REQUIRE:-emu}" ;;  # the device label needs tcgen05
esac
if [ $# -eq 0 ]; then set -- -L 'emu|device|python'; fi
ctest --output-on-failure -j "$((jobs / 2 > 0 ? jobs / 2 : 1))" "$@"
