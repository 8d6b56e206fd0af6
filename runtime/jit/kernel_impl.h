// Kernel::Impl: what a tmem::Kernel handle shares between its copies (payload, lazy module, and
// for emulated user kernels the emulated TMEM bound at each launch).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cache/payload.h"
#include "runtime/cuda/driver.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/tiers.h"
#include "tmem/kernel.h"

namespace tmem {

class Kernel::Impl {
 public:
  Impl(std::string entry, Target target, std::shared_ptr<const Payload> payload)
      : entry_(std::move(entry)), target_(target), payload_(std::move(payload)) {}

  const std::string& entry() const noexcept { return entry_; }
  Target target() const noexcept { return target_; }
  const Payload& payload() const noexcept { return *payload_; }
  bool loaded() const noexcept { return function_.load(std::memory_order_acquire) != nullptr; }

  // The CUkernel, loading the module on first use. A failed load is not remembered: the next call
  // tries again (e.g. after the caller made a suitable device current).
  Result<void*> kernel();
  // The size of each parameter, asked of the driver once (a checked launch needs it every time).
  Result<std::vector<size_t>> parameter_sizes();

  // Emulated user kernels (compile_kernel for sm_90): `instructions[id - 1]` describes the
  // emulation's status code id (kernels/emulation_kernels.h).
  // compile_kernel's typed entry metadata, parsed once when the handle is made, so that a
  // memory hit fills its report without parsing JSON (null for compile_transfer's handles).
  void set_meta(std::shared_ptr<const KernelEntryMeta> meta) { meta_ = std::move(meta); }
  const KernelEntryMeta* meta() const noexcept { return meta_.get(); }

  // The generic tier (docs/specialization.md §Tiers): each transfer's descriptor (symbol, words),
  // written into this Impl's own module before its first launch on each device. One Impl per
  // layout, so launches of two layouts never share a descriptor.
  void set_generic(std::vector<std::pair<std::string, std::vector<std::uint32_t>>> descriptors) {
    generic_ = true;
    descriptors_ = std::move(descriptors);
  }
  bool generic() const noexcept { return generic_; }
  // Writes the descriptors for the current device unless done (loads the module); `wrote`, when
  // given, is set when this call wrote them.
  Status describe(bool* wrote = nullptr);
  // The descriptors as the bytes describe() writes (Kernel::binding); empty for a specialized Impl.
  std::vector<ModuleGlobal> descriptor_globals() const;

  // A lazy kernel: the switch to the specialized Impl, shared by the handle's copies.
  void set_tier_switch(std::shared_ptr<TierSwitch> tiers) { tiers_ = std::move(tiers); }
  TierSwitch* tier_switch() const noexcept { return tiers_.get(); }
  // The Impl launches use now: the specialized one once published, else this one.
  Impl& active() noexcept {
    if (tiers_)
      if (Impl* specialized = tiers_->specialized()) return *specialized;
    return *this;
  }

  // The payload's text is PTX the driver may compile instead of the cubin: an sm_90 cubin loads
  // only on 9.x, while the emulation runs on any device of compute capability 9.0 or later.
  void set_ptx_fallback() noexcept { ptx_fallback_ = true; }

  // strict: EmulateOptions::strict (docs/emulation.md §Strict mode), bit 0 of emu_state.flags.
  void set_emulation(std::vector<std::string> instructions, bool strict = false) {
    emulated_ = true;
    strict_ = strict;
    instructions_ = std::move(instructions);
  }
  bool emulated() const noexcept { return emulated_; }
  // Emulated TMEM for every CTA of `grid` in the current context, status cleared, cells poisoned:
  // the value of tmemjit::emu_state that points at them (the TMEM and status arrays' addresses,
  // then the flags: bit 0 strict mode).
  Result<std::array<std::uint64_t, 3>> emulation_state(Dim3 grid);
  // Before a launch: emulation_state(grid), and tmemjit::emu_state of this Impl's module pointing
  // at it (loads the module).
  Status bind_emulation(Dim3 grid);
  // After launches: the recorded warnings, or the first violation.
  Result<std::vector<std::string>> emulation_check();

 private:
  // The PTX kernel() hands the driver instead of the cubin where set_ptx_fallback() applies
  // (a device past 9.x); nullopt where the cubin loads.
  Result<std::optional<std::vector<char>>> ptx_image() const;

  std::string entry_;
  Target target_;
  std::shared_ptr<const Payload> payload_;

  std::mutex load_mutex_;
  std::optional<driver::LoadedLibrary> library_;
  std::atomic<void*> function_{nullptr};                // the CUkernel once loaded
  std::optional<std::vector<size_t>> parameter_sizes_;  // guarded by load_mutex_

  std::shared_ptr<const KernelEntryMeta> meta_;
  bool generic_ = false;
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> descriptors_;
  std::vector<int> described_devices_;  // guarded by load_mutex_
  std::shared_ptr<TierSwitch> tiers_;
  bool ptx_fallback_ = false;
  bool emulated_ = false;
  bool strict_ = false;
  std::vector<std::string> instructions_;
  std::mutex emulation_mutex_;  // guards the buffers below
  std::optional<driver::DeviceBuffer> emu_tmem_, emu_status_;
  size_t emu_capacity_ = 0;              // CTAs the buffers hold
  size_t emu_bound_ = 0;                 // CTAs of the last launch
  std::uint64_t emu_state_written_ = 0;  // the TMEM address this module's emu_state holds
};

// A Kernel over a cached payload: `entry` is the kernel's name in the cubin (payload.blob).
Kernel make_kernel(std::string entry, Target target, std::shared_ptr<const Payload> payload);

}  // namespace tmem
