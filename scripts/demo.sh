#!/usr/bin/env bash
# The main job: decode the seed document's opcodes and print their native images.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tmemjit_setup
tmemjit_configure_and_build
tmemjit="$TMEMJIT_BUILD_DIR/tools/tmemjit"

# The opcodes of seed/tcgen05_ld_st.rst: the Layout B round trip, pack/unpack, the 16x32bx2 split.
seed_opcodes=(
  tcgen05.st.sync.aligned.32x32b.x64.b32
  tcgen05.ld.sync.aligned.32x32b.x64.b32
  tcgen05.st.sync.aligned.16x64b.x2.unpack::16b.b32
  tcgen05.ld.sync.aligned.16x64b.x2.pack::16b.b32
  tcgen05.ld.sync.aligned.16x32bx2.x4.b32
)
for op in "${seed_opcodes[@]}"; do
  echo "== $op"
  "$tmemjit" describe "$op"
done
echo
echo "== native images (cell = lane.register[.half])"
"$tmemjit" image tcgen05.st.sync.aligned.16x64b.x2.unpack::16b.b32
"$tmemjit" image tcgen05.ld.sync.aligned.16x32bx2.x4.b32
echo
echo "== a rejected form"
"$tmemjit" describe tcgen05.ld.sync.aligned.16x256b.x64.b32 || echo "(exit $?: rejected as expected)"
