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
#include <variant>
#include <vector>

#include "runtime/cache/payload.h"
#include "runtime/cuda/driver.h"
#include "runtime/jit/entry_meta.h"
#include "runtime/jit/tiers.h"
#include "tmem/kernel.h"

namespace tmem {

class Kernel::Impl {
 public:
  // How launches bind this Impl's module: chosen when it is made, never set afterwards, so the
  // handle's copies and the tier switch read it without a lock.
  // A native kernel: its module as it is.
  struct Native {};
  // An emulated kernel (sm_90, docs/emulation.md): `instructions[id - 1]` describes the
  // emulation's status code id (kernels/emulation_kernels.h); strict is EmulateOptions::strict
  // (docs/emulation.md §Strict mode), bit 0 of emu_state.flags.
  struct Emulated {
    std::vector<std::string> instructions;
    bool strict = false;
  };
  // The generic tier (docs/specialization.md §Tiers): each transfer's descriptor (symbol, words),
  // written into this Impl's own module before its first launch on each device (one Impl per
  // layout, so launches of two layouts never share a descriptor); emulated where the payload is;
  // for a lazy kernel, the switch to the specialized Impl, shared by the handle's copies.
  struct Generic {
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> descriptors;
    std::optional<Emulated> emulation;
    std::shared_ptr<TierSwitch> tiers;
  };
  using Binding = std::variant<Native, Emulated, Generic>;

  // `meta`: the typed entry metadata (compile_kernel's, compile_transfer's), parsed once when the
  // handle is made, so that a memory hit fills its report without parsing JSON (null for other
  // handles). `ptx_fallback`: the payload's text is PTX the driver may compile instead of the
  // cubin: an sm_90 cubin loads only on 9.x, while the emulation runs on any device of compute
  // capability 9.0 or later.
  Impl(std::string entry, Target target, std::shared_ptr<const Payload> payload,
       Binding binding = Native{}, std::shared_ptr<const KernelEntryMeta> meta = nullptr,
       bool ptx_fallback = false)
      : entry_(std::move(entry)),
        target_(target),
        payload_(std::move(payload)),
        meta_(std::move(meta)),
        binding_(std::move(binding)),
        ptx_fallback_(ptx_fallback) {}

  const std::string& entry() const noexcept { return entry_; }
  Target target() const noexcept { return target_; }
  const Payload& payload() const noexcept { return *payload_; }
  bool loaded() const noexcept { return function_.load(std::memory_order_acquire) != nullptr; }

  // The CUkernel, loading the module on first use. A failed load is not remembered: the next call
  // tries again (e.g. after the caller made a suitable device current).
  Result<void*> kernel();
  // The size of each parameter, asked of the driver once (a checked launch needs it every time).
  Result<std::vector<size_t>> parameter_sizes();

  const KernelEntryMeta* meta() const noexcept { return meta_.get(); }

  bool generic() const noexcept { return std::holds_alternative<Generic>(binding_); }
  // Writes the descriptors for the current device unless done (loads the module); `wrote`, when
  // given, is set when this call wrote them.
  Status describe(bool* wrote = nullptr);
  // The descriptors as the bytes describe() writes (Kernel::binding); empty for a specialized Impl.
  std::vector<ModuleGlobal> descriptor_globals() const;

  // A lazy kernel's switch to the specialized Impl; null for any other.
  TierSwitch* tier_switch() const noexcept {
    const Generic* generic = std::get_if<Generic>(&binding_);
    return generic != nullptr ? generic->tiers.get() : nullptr;
  }
  // The Impl launches use now: the specialized one once published, else this one.
  Impl& active() noexcept {
    if (TierSwitch* tiers = tier_switch())
      if (Impl* specialized = tiers->specialized()) return *specialized;
    return *this;
  }

  // The emulation's records, or null for a kernel that is not emulated.
  const Emulated* emulation() const noexcept {
    if (const Emulated* emulated = std::get_if<Emulated>(&binding_)) return emulated;
    const Generic* generic = std::get_if<Generic>(&binding_);
    return generic != nullptr && generic->emulation ? &*generic->emulation : nullptr;
  }
  bool emulated() const noexcept { return emulation() != nullptr; }
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
  bool strict() const noexcept {
    const Emulated* emulated = emulation();
    return emulated != nullptr && emulated->strict;
  }
  // The PTX kernel() hands the driver instead of the cubin where ptx_fallback applies
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
  const Binding binding_;
  std::vector<int> described_devices_;  // guarded by load_mutex_
  const bool ptx_fallback_ = false;
  std::mutex emulation_mutex_;  // guards the buffers below
  std::optional<driver::DeviceBuffer> emu_tmem_, emu_status_;
  size_t emu_capacity_ = 0;              // CTAs the buffers hold
  size_t emu_bound_ = 0;                 // CTAs of the last launch
  std::uint64_t emu_state_written_ = 0;  // the TMEM address this module's emu_state holds
};

// A Kernel over a cached payload: `entry` is the kernel's name in the cubin (payload.blob).
Kernel make_kernel(std::string entry, Target target, std::shared_ptr<const Payload> payload);

}  // namespace tmem
