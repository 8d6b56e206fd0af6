#!/usr/bin/env bash
# The main job: the seed document's Layout B round trip through every stage libtmemjit has:
# decode the opcodes, check and plan the transfer, synthesize PTX, compile it for sm_100a, and run
# it on the best device available (a Blackwell GPU, else emulation on another GPU, else the CPU
# simulator), ending with the round trip's PASS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

tmemjit_setup
tmemjit_configure_and_build
tmemjit="$TMEMJIT_BUILD_DIR/tools/tmemjit"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Runs one stage, printing its name and wall time.
stage() {
  local name=$1; shift
  local start end
  start=$(date +%s%N)
  "$@"
  end=$(date +%s%N)
  printf '   [%s: %d.%03d ms]\n\n' "$name" $(((end - start) / 1000000)) $((((end - start) / 1000) % 1000))
}

rearrange='.rearrange("(wh r) (wl c) -> (wl wh) r c", wh=2, r=32, wl=2)'
spec=(--scope warpgroup
      --tmem "tmem_datapath_layout(\"B\",64,128)$rearrange"
      --regs "tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)$rearrange")

echo "== 1. decode the seed's opcodes"
stage describe "$tmemjit" describe tcgen05.st.sync.aligned.32x32b.x64.b32
"$tmemjit" describe tcgen05.ld.sync.aligned.32x32b.x64.b32 | head -n 1
echo
echo "== 2. check and plan the Layout B store and load (warpgroup scope)"
stage "check st" "$tmemjit" check --op tcgen05.st.sync.aligned.32x32b.x64.b32 "${spec[@]}"
stage "plan ld" "$tmemjit" plan --op tcgen05.ld.sync.aligned.32x32b.x64.b32 "${spec[@]}"
echo "   --op auto on the two plain tiles picks the same instruction by itself:"
stage "select" "$tmemjit" check --op auto --scope warpgroup --tmem 'tmem_datapath_layout("B",64,128)' \
  --regs 'tensor((64,128), S[(64, 2, 64) : (1 @ tid_in_wg, 64 @ tid_in_wg, 1)], f32)'
echo "== 3. synthesize the round-trip kernel (alloc -> st -> wait -> ld -> wait -> dealloc -> relinquish)"
stage ptx "$tmemjit" ptx --op tcgen05.st.sync.aligned.32x32b.x64.b32 "${spec[@]}" >"$out/roundtrip.ptx"
grep -E 'tcgen05\.(alloc|st|wait|ld|dealloc|relinquish)' "$out/roundtrip.ptx" | cut -c1-100
echo
echo "== 4. compile for sm_100a in-process (default route), then again from the disk cache"
stage "compile (cold)" "$tmemjit" compile --op tcgen05.st.sync.aligned.32x32b.x64.b32 "${spec[@]}" \
  --cache-dir "$out/cache" -o "$out/roundtrip.cubin"
stage "compile (cached)" "$tmemjit" compile --op tcgen05.st.sync.aligned.32x32b.x64.b32 "${spec[@]}" \
  --cache-dir "$out/cache" -o "$out/roundtrip.cubin"
echo "== 5. run the round trip on the best device here (Blackwell GPU, else emulation on another GPU, else the simulator)"
stage run "$tmemjit" run --op tcgen05.st.sync.aligned.32x32b.x64.b32 "${spec[@]}" --cache-dir "$out/cache" | tee "$out/run.txt"
echo "== 6. a layout that does not match the opcode is refused with the reason"
"$tmemjit" check --op tcgen05.st.sync.aligned.16x256b.x16.b32 "${spec[@]}" || echo "(exit $?: rejected as expected)"
echo
echo "== 7. the other seed examples: pack/unpack and the 16x32bx2 split, checked and run"
pack=(--op tcgen05.st.sync.aligned.32x32b.x64.unpack::16b.b32 --scope warpgroup
      --tmem 'tensor((128,64,2), S[(128,64,2):(1@TLane,4@TCol,2@TCol)], f16).rearrange("(g r) c h -> g r c h", g=4)'
      --regs 'tensor((128,64), S[(128,64):(1@tid_in_wg,1)], b32).rearrange("(g r) c -> g r c", g=4)')
"$tmemjit" check "${pack[@]}"
"$tmemjit" run "${pack[@]}" --cache-dir "$out/cache" | tail -n 1
mem='tensor((128,16), S[(128,16):(1@TLane,1@TCol)], b32).rearrange("(g r) c -> g r c", g=4)'
split=(--op tcgen05.ld.sync.aligned.16x32bx2.x4.b32 --scope warpgroup
       --tmem "$mem[:, :16, :4]" --tmem2 "$mem[:, 16:32, 8:12]" --imm $(((16 << 16) + 8))
       --regs 'tensor((128,4), S[(128,4):(1@tid_in_wg,1)], b32).rearrange("(g a r) c -> g a r c", g=4, a=2)')
"$tmemjit" check "${split[@]}"
"$tmemjit" run "${split[@]}" --cache-dir "$out/cache" | tail -n 1
echo
echo "== 8. specialize a user's own kernel: the GEMM epilogue of examples/epilogue for a layout chosen at"
echo "   run time (Layout D by 32x32b.x32, then Layout F by 16x256b.x8: same registers per thread, so"
echo "   the second reuses the CUDA front end and pays only the back end)"
for layout in d_x32 f_16x256b; do
  stage "specialize $layout" "$tmemjit" specialize "$TMEMJIT_ROOT/examples/epilogue/epilogue.cu" \
    --transfer acc_load="$TMEMJIT_ROOT/examples/epilogue/layouts/${layout}_ld.json" \
    --transfer acc_store="$TMEMJIT_ROOT/examples/epilogue/layouts/${layout}_st.json" \
    --no-wait --column-arg -o "$out/epilogue_$layout.cubin" --cache-dir "$out/cache"
done
echo "   (examples/epilogue runs such kernels: on Blackwell, by emulation on Hopper, else it says why not)"
echo
# The main job's verdict: the Layout B round trip's own PASS line from step 5.
grep '^PASS:' "$out/run.txt" | sed 's/^PASS:/PASS: seed Layout B round trip,/'
