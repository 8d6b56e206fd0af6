// Kernel: a compiled transfer kernel (cubin + PTX) that loads lazily and launches on any GPU.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tmem/dim3.h"
#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/span.h"
#include "tmem/target.h"

TMEMJIT_API_BEGIN
namespace tmem {

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  unsigned shared_bytes = 0;  // dynamic shared memory
  void* stream = nullptr;     // a CUstream / cudaStream_t; null: the default stream
  // CTAs per cluster along x: 2 for a kernel with the CTA pair's lifecycle (cta_group 2, which
  // needs its peer CTA launched in the same cluster); grid.x must be a multiple. 1: no cluster.
  unsigned cluster_ctas = 1;
};

// One kernel argument by value: `size` bytes at `data`, as the kernel's parameter holds it (a
// pointer parameter takes the 8 bytes of the device address, not the memory it points to).
struct KernelArg {
  const void* data = nullptr;
  size_t size = 0;
};

// One global variable of a kernel's module and the bytes a launch writes into it first
// (Kernel::binding): its name as the driver finds it (cuLibraryGetGlobal, cuModuleGetGlobal) and
// its whole value, little-endian as the device holds it.
struct ModuleGlobal {
  std::string symbol;
  std::vector<char> bytes;
};

// What the tier that runs now needs before a launch, for a launcher that loads the cubin itself
// (docs/specialization.md, "Launching with your own launcher"). `cubin`, `entry` and `globals`
// belong to one tier: load that image, write each global into it, then launch `entry`.
struct KernelBinding {
  std::string tier;                   // "generic" or "specialized"
  std::string entry;                  // the kernel's name in `cubin`
  Span<const char> cubin;             // that tier's image; valid while the Kernel lives
  std::vector<ModuleGlobal> globals;  // empty: nothing to write
};

// What Kernel::prepare hands a launcher of one's own: the entry of the tier that runs now, loaded
// and bound in the CUDA context current at the call. Launch it in that context.
struct PreparedKernel {
  void* function = nullptr;  // CUfunction: cuLaunchKernel, cuLaunchKernelEx, cuFuncSetAttribute
  void* kernel = nullptr;    // CUkernel of the same entry: cuda.core's Kernel.from_handle
  std::string tier;          // "generic" or "specialized"
};

// A handle to a compiled kernel. Copies share one module: it is loaded into the process on the
// first load() or launch() (cuLibraryLoadData, context-independent) and launches on the context
// current at each call (the primary context of device 0 when none is current), so one Kernel
// serves several GPUs. Loading and launching need the CUDA driver; everything else works without.
class Kernel {
 public:
  class Impl;  // runtime/jit/kernel_impl.h

  Kernel() = default;  // empty: valid() is false
  explicit Kernel(std::shared_ptr<Impl> impl) noexcept;

  bool valid() const noexcept { return impl_ != nullptr; }
  const std::string& name() const noexcept;  // the entry point
  Target target() const noexcept;
  Span<const char> cubin() const noexcept;
  std::string_view ptx() const noexcept;

  bool loaded() const noexcept;
  // Loads the module now (launch() does it on first use). Fails with kDriver where there is no
  // driver, and kTarget where the current device cannot run the target.
  Status load() const;
  // Writes what the tier that runs now reads before it runs, exactly as launch() does, into this
  // Kernel's module in the current context (loading it first), and returns that tier's entry: for
  // launching with a launcher of one's own (cuda.core, a PyTorch extension, cuLaunchKernel).
  // The generic tier's layout descriptors are written once per device; a lazy kernel's tier can
  // switch after the call, and the returned handles keep running the tier they name, correctly,
  // so call prepare() again before each launch (or at least after tier() changes) to pick up the
  // specialized kernel. An emulated kernel (emulated()) binds emulated TMEM for the launch's grid
  // and clears its records, as launch() does: it needs prepare(grid), once before every launch.
  // What it writes has landed when it returns (it waits for the device when it wrote), so the
  // launch may go on any stream. kUsage for an emulated kernel without a grid, kDriver without a
  // driver, kTarget where the current device cannot run the target.
  Result<PreparedKernel> prepare() const;
  Result<PreparedKernel> prepare(Dim3 grid) const;
  // The same contract for a launcher that loads cubin() itself: the tier that runs now, its image
  // and the globals to write into the module before each launch (empty for a specialized kernel;
  // the generic tier's layout descriptors, tmemjit_desc_NAME). A symbol the loaded module lacks
  // belongs to a transfer the kernel never calls (the compiler dropped it): skip it. Needs no
  // driver, except for an emulated kernel: binding(grid) allocates its emulated TMEM in the
  // current context (kDriver without one) and adds tmemjit::emu_state pointing at it.
  Result<KernelBinding> binding() const;
  Result<KernelBinding> binding(Dim3 grid) const;
  // Launches on config.stream. `args` follows cuLaunchKernel's kernelParams: one pointer to each
  // kernel parameter's value. Asynchronous: errors of the kernel itself show at the next sync.
  // An emulated kernel (emulated()) first binds emulated TMEM for config.grid: one region per CTA,
  // its status words cleared and its cells filled with garbage, as real TMEM after alloc.
  Status launch(const LaunchConfig& config, void** args) const;
  // The same, with each argument's size checked against the kernel's parameters (count and bytes,
  // from the driver's cuKernelGetParamInfo) before anything runs: kUsage names the first
  // mismatch, where the unchecked form would read past or short of what the kernel expects. For
  // bindings and callers whose argument types come from elsewhere (Python's Kernel.launch).
  Status launch(const LaunchConfig& config, Span<const KernelArg> args) const;
  // The size in bytes of each parameter, in order (loads the module). kDriver where the driver
  // is older than CUDA 12.4 (no cuKernelGetParamInfo).
  Result<std::vector<size_t>> parameter_sizes() const;

  // Code compiled elsewhere (nvcc, a previous run): `cubin` (also a fatbin or PTX the driver
  // accepts) is copied; `entry` is the kernel's name in it as the driver knows it (the lowered
  // name for C++ kernels). kUsage for an empty image or entry, or an ELF image without that entry
  // (the message lists the entries found). Loads lazily like every Kernel.
  static Result<Kernel> from_cubin(Span<const char> cubin, std::string entry, Target target);

  // The tier a launch runs now (compile_kernel, docs/specialization.md §Tiers): "generic" (the
  // layout read from constant memory) or "specialized". A lazy kernel switches from generic to
  // specialized once, atomically: each launch runs one whole kernel of either tier. Every other
  // kernel is "specialized".
  std::string_view tier() const noexcept;
  // Blocks until the specialized kernel of a lazy compile_kernel is ready and launches use it;
  // its compile error, if it failed (the kernel then stays generic, which still runs correctly).
  // Returns at once for every other kernel.
  Status wait_specialized() const;

  // Whether this kernel runs the emulated transfers of compile_kernel for Target::kSm90.
  bool emulated() const noexcept;
  // Emulated kernels: waits for the device (cuCtxSynchronize), then reads what the emulation
  // recorded in the last launch (each launch starts with cleared records). An access the hardware
  // refuses (lanes outside the warp's lane slab, columns outside the allocation, a dealloc of
  // another address) is a kRule error naming the instruction, the thread and the rule; a pattern
  // the ISA leaves open and the emulation resolved (a warp-relative lane address: lane 0 or 16 from
  // every warp, emulated in the warp's own slab) is one warning per instruction, naming the first
  // thread. Other kernels: no warnings.
  Result<std::vector<std::string>> emulation_check() const;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace tmem
TMEMJIT_API_END
