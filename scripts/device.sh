#!/usr/bin/env bash
# The suites that need a GPU, on a machine that has one (docs/reliability.md "Skips"): the
# emulation's (CTest label emu: the sm_90 emulation of tcgen05 on Hopper, or tcgen05 itself on
# Blackwell), the device ones and the Python package's, which launch through cuda.core. A skip is a
# failure here: TMEMJIT_REQUIRE defaults to emu,device.
#
# No installs: such hosts often reach no registry. Pass what CMake cannot find in
# TMEMJIT_CMAKE_ARGS (e.g. -DTMEMJIT_XXHASH_ROOT=DIR). Extra arguments go to ctest
# (e.g. scripts/device.sh -R EmulateEmu). TMEMJIT_BUILD_DIR picks the build (default build-device).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TMEMJIT_BUILD_DIR:-$root/build-device}"
jobs="$(nproc)"

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader
# shellcheck disable=SC2086  # TMEMJIT_CMAKE_ARGS is a list of arguments
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTMEMJIT_BUILD_BENCH=OFF ${TMEMJIT_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
export TMEMJIT_REQUIRE="${TMEMJIT_REQUIRE:-emu,device}"
if [ $# -eq 0 ]; then set -- -L 'emu|device|python'; fi
ctest --output-on-failure -j "$((jobs / 2 > 0 ? jobs / 2 : 1))" "$@"
