// Strict mode's probe (python/tests/test_emulate.py, docs/emulation.md §Strict mode): one CTA of
// 128 threads; thread 0 issues one 128 × 64 × 16 tcgen05.mma of all-ones bf16 tiles (every D
// element 16) and, later, the commit that completes it; every warp reads its 32 lanes × 16
// columns of D with tcgen05.ld. `when` says when the first read happens:
//   0  only after the commit's mbarrier completes (the correct kernel): out[1] holds D;
//   1  after the MMA is issued, before its commit (a race on hardware): out[0] holds that read;
//   2  right after the alloc, before the MMA: out[0] holds what a fresh allocation reads as.
// out[1] always holds the read after the wait. out: 2 × 128 × 16 floats, row = TMEM lane.

namespace probe {
using u32 = unsigned int;
using u64 = unsigned long long;
constexpr u32 kABytes = 128 * 64 * 2, kBBytes = 64 * 64 * 2;
// .kind::f16, D f32, A and B bf16, K-major, N = 64, M = 128 (PTX ISA §9.7.16.4.2).
constexpr u32 kInstrDesc =
    (1u << 4) | (1u << 7) | (1u << 10) | (u32(64 >> 3) << 17) | (u32(128 >> 4) << 24);

__device__ __forceinline__ u32 smem_address(const void* pointer) {
  return static_cast<u32>(__cvta_generic_to_shared(pointer));
}
// K-major, 128-byte swizzle, 8-row atoms 1024 bytes apart (PTX ISA §9.7.16.4.1).
__device__ __forceinline__ u64 smem_descriptor(u32 address) {
  return u64((address & 0x3FFFFu) >> 4) | (u64(1) << 16) | (u64(1024 >> 4) << 32) | (u64(1) << 46) |
         (u64(2) << 61);
}
// This warp's 32 lanes × columns 0-15 of D into rows of `out`.
__device__ __forceinline__ void read_d(u32 tmem, float* out) {
  const u32 warp = threadIdx.x / 32;
  u32 r[16];
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
      "%12, %13, %14, %15}, [%16];"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
        "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
        "=r"(r[14]), "=r"(r[15])
      : "r"(tmem + ((warp * 32) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  for (int j = 0; j < 16; ++j) out[threadIdx.x * 16 + j] = __uint_as_float(r[j]);
}
}  // namespace probe

extern "C" __global__ void __launch_bounds__(128) mma_then_read(float* out, int when) {
  using namespace probe;
  extern __shared__ __align__(1024) unsigned char smem[];  // A, B, the barrier, the TMEM address
  u64* barrier = reinterpret_cast<u64*>(smem + kABytes + kBBytes);
  u32* tmem_base_shared = reinterpret_cast<u32*>(barrier + 1);
  for (u32 i = threadIdx.x; i < (kABytes + kBBytes) / 4; i += blockDim.x)
    reinterpret_cast<u32*>(smem)[i] = 0x3F803F80u;  // two bf16 ones: any swizzle reads ones
  // The MMA reads shared memory through the async proxy (PTX ISA §9.7.16.6.2).
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (threadIdx.x == 0)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(barrier)) : "memory");
  if (threadIdx.x / 32 == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 64;" ::"r"(
                     smem_address(tmem_base_shared))
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const u32 tmem = *tmem_base_shared;

  if (when == 2) read_d(tmem, out);
  __syncthreads();
  if (threadIdx.x == 0)
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, 0, 0;\n"
        " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(tmem),
        "l"(smem_descriptor(smem_address(smem))),
        "l"(smem_descriptor(smem_address(smem + kABytes))), "r"(kInstrDesc)
        : "memory");
  __syncthreads();
  if (when == 1) read_d(tmem, out);  // the race: the MMA may still be running
  __syncthreads();
  if (threadIdx.x == 0)
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
            smem_address(barrier))
        : "memory");
  u32 done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(smem_address(barrier))
        : "memory");
  } while (done == 0);
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  read_d(tmem, out + 128 * 16);
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  if (threadIdx.x / 32 == 0)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 64;" ::"r"(tmem) : "memory");
}
