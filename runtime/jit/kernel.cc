// tmem::Kernel: lazy cuLibrary load of a cached cubin, launches on the current context, kernels
// compiled elsewhere (from_cubin) and the emulated TMEM of emulated user kernels.
#include "tmem/kernel.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <string>

#include "kernels/emulation_kernels.h"
#include "runtime/jit/kernel_impl.h"

namespace tmem {
namespace {

// Entry names in an ELF cubin: the kernels' ".text.NAME" sections, read from the section header
// string table. Empty when the image is not an ELF file (a fatbin or PTX: not checked).
std::optional<std::vector<std::string>> elf_entries(std::span<const char> image) {
  if (image.size() < 64 ||
      std::memcmp(image.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      image[4] != 2)
    return std::nullopt;
  auto read = [&](size_t at, size_t bytes) -> uint64_t {
    uint64_t value = 0;
    if (at + bytes > image.size()) return 0;
    std::memcpy(&value, image.data() + at, bytes);  // ELF64 little-endian, as every cubin
    return value;
  };
  const uint64_t shoff = read(0x28, 8);
  const uint64_t shentsize = read(0x3A, 2), shnum = read(0x3C, 2), shstrndx = read(0x3E, 2);
  if (shoff == 0 || shentsize < 64 || shstrndx >= shnum) return std::nullopt;
  const uint64_t names = read(shoff + shstrndx * shentsize + 0x18, 8);
  const uint64_t names_size = read(shoff + shstrndx * shentsize + 0x20, 8);
  if (names + names_size > image.size()) return std::nullopt;
  std::vector<std::string> entries;
  for (uint64_t i = 0; i < shnum; ++i) {
    const uint64_t name = read(shoff + i * shentsize, 4);
    if (name >= names_size) continue;
    const char* text = image.data() + names + name;
    const size_t length = strnlen(text, names_size - name);
    const std::string section(text, length);
    if (section.rfind(".text.", 0) == 0) entries.push_back(section.substr(6));
  }
  return entries;
}

const char* tier_name(const Kernel::Impl& impl) {
  return impl.generic() ? "generic" : "specialized";
}

// An emulated kernel binds emulated TMEM per CTA, so what writes it must know the grid.
Status needs_grid(const Kernel::Impl& active, const Dim3* grid, const std::string& call) {
  if (!active.emulated() || grid != nullptr) return std::monostate{};
  return Error(ErrorCode::kUsage, call + " of " + active.entry() +
                                      ": an emulated kernel (target sm_90) binds emulated TMEM "
                                      "for each CTA of the launch; pass the launch's grid: " +
                                      call + "(grid)");
}

// What a launch writes into the module of the tier that runs now before it runs: the generic
// tier's descriptors and an emulated kernel's TMEM for `grid`. The tier is read once, so the
// Impl returned is the one whose entry must run. launch() and prepare() both come through here;
// `wrote` is set when this call wrote device memory.
Result<Kernel::Impl*> bind_active(Kernel::Impl& impl, const Dim3* grid, const std::string& call,
                                  bool& wrote) {
  Kernel::Impl& active = impl.active();
  if (Status fits = needs_grid(active, grid, call); !fits.ok()) return std::move(fits).error();
  Result<void*> handle = active.kernel();
  if (!handle.ok()) return std::move(handle).error();
  if (Status described = active.describe(&wrote); !described.ok())
    return std::move(described).error();
  if (active.emulated()) {
    if (Status bound = active.bind_emulation(*grid); !bound.ok()) return std::move(bound).error();
    wrote = true;  // the emulated TMEM's poison and cleared records
  }
  if (TierSwitch* tiers = impl.tier_switch()) tiers->launched(&active);
  return &active;
}

}  // namespace

Result<std::optional<std::vector<char>>> Kernel::Impl::ptx_image() const {
  if (!ptx_fallback_ || target_ != Target::kSm90 || payload_->text.empty())
    return std::optional<std::vector<char>>();
  Result<int> device = driver::current_device();
  if (!device.ok()) return std::move(device).error();
  Result<driver::DeviceInfo> info = driver::device_info(*device);
  if (!info.ok()) return std::move(info).error();
  if (info->compute_capability / 10 == 9) return std::optional<std::vector<char>>();
  std::vector<char> ptx(payload_->text.begin(), payload_->text.end());
  ptx.push_back('\0');  // cuLibraryLoadData takes PTX as a NUL-terminated string
  return std::optional<std::vector<char>>(std::move(ptx));
}

Result<void*> Kernel::Impl::kernel() {
  if (void* loaded_kernel = function_.load(std::memory_order_acquire)) return loaded_kernel;
  std::lock_guard lock(load_mutex_);
  if (void* loaded_kernel = function_.load(std::memory_order_acquire)) return loaded_kernel;
  Result<std::optional<std::vector<char>>> ptx = ptx_image();
  if (!ptx.ok()) return std::move(ptx).error();
  const std::span<const char> image = *ptx ? std::span<const char>(**ptx) : payload_->blob;
  Result<driver::LoadedLibrary> library = driver::LoadedLibrary::load(image, target_);
  if (!library.ok()) return std::move(library).error();
  Result<void*> handle = library->kernel(entry_);
  if (!handle.ok()) return std::move(handle).error();
  library_.emplace(std::move(library).value());
  function_.store(*handle, std::memory_order_release);
  return *handle;
}

Result<std::vector<size_t>> Kernel::Impl::parameter_sizes() {
  Result<void*> loaded = kernel();
  if (!loaded.ok()) return std::move(loaded).error();
  std::lock_guard lock(load_mutex_);
  if (!parameter_sizes_) {
    Result<std::vector<size_t>> sizes = driver::kernel_parameter_sizes(*loaded);
    if (!sizes.ok()) return std::move(sizes).error();
    parameter_sizes_ = std::move(sizes).value();
  }
  return *parameter_sizes_;
}

Status Kernel::Impl::describe(bool* wrote) {
  const Generic* generic = std::get_if<Generic>(&binding_);
  if (generic == nullptr || generic->descriptors.empty()) return std::monostate{};
  Result<void*> loaded = kernel();
  if (!loaded.ok()) return std::move(loaded).error();
  Result<int> device = driver::current_device();
  if (!device.ok()) return std::move(device).error();
  std::lock_guard lock(load_mutex_);
  if (std::find(described_devices_.begin(), described_devices_.end(), *device) !=
      described_devices_.end())
    return std::monostate{};
  for (const auto& [symbol, words] : generic->descriptors) {
    auto global = library_->global(symbol);
    // A transfer the kernel never calls has its descriptor dropped by the compiler.
    if (!global.ok()) continue;
    const size_t bytes = words.size() * sizeof(std::uint32_t);
    if (global->second != bytes)
      return Error(ErrorCode::kInternal,
                   "generic tier: " + symbol + " has " + std::to_string(global->second) +
                       " bytes; the layout's descriptor " + std::to_string(bytes));
    if (Status set = driver::copy_to_device(global->first, words.data(), bytes); !set.ok())
      return set;
    if (wrote != nullptr) *wrote = true;
  }
  described_devices_.push_back(*device);
  return std::monostate{};
}

std::vector<ModuleGlobal> Kernel::Impl::descriptor_globals() const {
  std::vector<ModuleGlobal> globals;
  const Generic* generic = std::get_if<Generic>(&binding_);
  if (generic == nullptr) return globals;
  for (const auto& [symbol, words] : generic->descriptors) {
    const char* bytes = reinterpret_cast<const char*>(words.data());
    globals.push_back({symbol, std::vector<char>(bytes, bytes + words.size() * sizeof(words[0]))});
  }
  return globals;
}

Result<std::array<std::uint64_t, 3>> Kernel::Impl::emulation_state(Dim3 grid) {
  std::lock_guard lock(emulation_mutex_);
  const size_t ctas = size_t{grid.x} * grid.y * grid.z;
  if (ctas == 0) return Error(ErrorCode::kUsage, "launch with an empty grid");
  const size_t tmem_bytes = kernels::kEmuTmemWords * 4,
               status_bytes = kernels::kEmuUserStatusWords * 4;
  if (ctas > emu_capacity_) {
    // The previous buffers may still be in use by a launch in flight.
    if (emu_tmem_) {
      if (Status done = driver::synchronize(); !done.ok()) return std::move(done).error();
    }
    emu_tmem_.reset();
    emu_status_.reset();
    auto tmem = driver::DeviceBuffer::alloc(ctas * tmem_bytes);
    if (!tmem.ok()) return std::move(tmem).error();
    auto status = driver::DeviceBuffer::alloc(ctas * status_bytes);
    if (!status.ok()) return std::move(status).error();
    emu_tmem_.emplace(std::move(tmem).value());
    emu_status_.emplace(std::move(status).value());
    emu_capacity_ = ctas;
  }
  // Real TMEM holds garbage after alloc: poison it, so a read of a cell nothing wrote shows.
  if (Status poisoned = driver::fill_device(emu_tmem_->address(), 0xA5, ctas * tmem_bytes);
      !poisoned.ok())
    return std::move(poisoned).error();
  if (Status cleared = driver::fill_device(emu_status_->address(), 0, ctas * status_bytes);
      !cleared.ok())
    return std::move(cleared).error();
  emu_bound_ = ctas;
  // tmem, status, flags (kernels/device_function_cuda.cc EmuState; flags bit 0: strict mode).
  return std::array<std::uint64_t, 3>{emu_tmem_->address(), emu_status_->address(),
                                      strict() ? std::uint64_t{1} : std::uint64_t{0}};
}

Status Kernel::Impl::bind_emulation(Dim3 grid) {
  Result<void*> loaded = kernel();
  if (!loaded.ok()) return std::move(loaded).error();
  Result<std::array<std::uint64_t, 3>> state = emulation_state(grid);
  if (!state.ok()) return std::move(state).error();
  std::lock_guard lock(emulation_mutex_);
  // Written again only when the buffers moved (a larger grid, or binding() made them first).
  if ((*state)[0] == emu_state_written_) return std::monostate{};
  auto global = library_->global(kernels::kEmuStateSymbol);
  if (!global.ok()) return std::move(global).error();
  // A module built before the flags field (a cache entry of an older release) has two words.
  const size_t bytes = global->second >= sizeof *state ? sizeof *state : 2 * sizeof(std::uint64_t);
  if (global->second < bytes || (strict() && bytes < sizeof *state))
    return Error(ErrorCode::kInternal, "emulation: tmemjit::emu_state has " +
                                           std::to_string(global->second) + " bytes" +
                                           (strict() ? "; strict mode needs 24" : ""));
  if (Status set = driver::copy_to_device(global->first, state->data(), bytes); !set.ok())
    return set;
  emu_state_written_ = (*state)[0];
  return std::monostate{};
}

Result<std::vector<std::string>> Kernel::Impl::emulation_check() {
  std::vector<std::string> warnings;
  const Emulated* emulated = emulation();
  if (emulated == nullptr) return warnings;
  if (Status done = driver::synchronize(); !done.ok()) return std::move(done).error();
  std::lock_guard lock(emulation_mutex_);
  if (!emu_status_ || emu_bound_ == 0) return warnings;
  std::vector<std::uint32_t> status(emu_bound_ * kernels::kEmuUserStatusWords);
  if (Status read = driver::copy_from_device(status.data(), emu_status_->address(),
                                             status.size() * sizeof(std::uint32_t));
      !read.ok())
    return std::move(read).error();
  std::optional<Error> violation;
  for (size_t cta = 0; cta < emu_bound_; ++cta) {
    const std::span<const std::uint32_t> slots(status.data() + cta * kernels::kEmuUserStatusWords,
                                               kernels::kEmuUserStatusWords);
    Status decoded = kernels::decode_user_emulation_status(slots, static_cast<unsigned>(cta),
                                                           emulated->instructions, warnings);
    if (!decoded.ok() && !violation) violation = std::move(decoded).error();
  }
  if (violation) return std::move(*violation);
  return warnings;
}

Kernel make_kernel(std::string entry, Target target, std::shared_ptr<const Payload> payload) {
  return Kernel(std::make_shared<Kernel::Impl>(std::move(entry), target, std::move(payload)));
}

Kernel::Kernel(std::shared_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

Result<Kernel> Kernel::from_cubin(Span<const char> cubin, std::string entry, Target target) {
  if (cubin.empty()) return Error(ErrorCode::kUsage, "Kernel::from_cubin: the image is empty");
  if (entry.empty()) return Error(ErrorCode::kUsage, "Kernel::from_cubin: the entry is empty");
  if (auto entries = elf_entries(cubin)) {
    bool found = false;
    std::string list;
    for (const std::string& name : *entries) {
      found |= name == entry;
      list += (list.empty() ? "" : ", ") + name;
    }
    if (!found)
      return Error(ErrorCode::kUsage,
                   "Kernel::from_cubin: no kernel '" + entry +
                       "' in the cubin; it has: " + (list.empty() ? std::string("none") : list));
  }
  auto payload = std::make_shared<Payload>();
  payload->blob.assign(cubin.begin(), cubin.end());
  payload->meta = "entry=" + entry + "\nfrom_cubin=1\n";
  return make_kernel(std::move(entry), target, std::move(payload));
}

const std::string& Kernel::name() const noexcept {
  static const std::string kEmpty;
  return impl_ ? impl_->active().entry() : kEmpty;
}

Target Kernel::target() const noexcept { return impl_ ? impl_->target() : Target::kSm100a; }

Span<const char> Kernel::cubin() const noexcept {
  if (!impl_) return {};
  return impl_->active().payload().blob;
}

std::string_view Kernel::ptx() const noexcept {
  if (!impl_) return {};
  return impl_->active().payload().text;
}

bool Kernel::loaded() const noexcept { return impl_ && impl_->active().loaded(); }

bool Kernel::emulated() const noexcept { return impl_ && impl_->emulated(); }

std::string_view Kernel::tier() const noexcept {
  if (!impl_) return "specialized";
  return tier_name(impl_->active());
}

Status Kernel::wait_specialized() const {
  if (!impl_ || impl_->tier_switch() == nullptr) return std::monostate{};
  return impl_->tier_switch()->wait();
}

Status Kernel::load() const {
  if (!impl_) return Error(ErrorCode::kUsage, "load of an empty kernel handle");
  Impl& active = impl_->active();
  Result<void*> handle = active.kernel();
  if (!handle.ok()) return std::move(handle).error();
  return active.describe();
}

Status Kernel::launch(const LaunchConfig& config, void** args) const {
  if (!impl_) return Error(ErrorCode::kUsage, "launch of an empty kernel handle");
  if (config.cluster_ctas == 0 || config.grid.x % config.cluster_ctas != 0)
    return Error(ErrorCode::kUsage, "launch of " + std::to_string(config.grid.x) +
                                        " CTAs along x in clusters of " +
                                        std::to_string(config.cluster_ctas) +
                                        ": the grid must be a whole number of clusters");
  // One read of the tier: this launch runs one whole kernel, whichever tier it is.
  bool wrote = false;
  Result<Impl*> bound = bind_active(*impl_, &config.grid, "launch", wrote);
  if (!bound.ok()) return std::move(bound).error();
  Impl& active = **bound;
  Result<void*> handle = active.kernel();  // loaded by bind_active: no driver call
  if (!handle.ok()) return std::move(handle).error();
  if (config.cluster_ctas > 1)
    return driver::launch_cluster(*handle, active.target(), config.grid, config.block,
                                  config.cluster_ctas, config.shared_bytes, config.stream, args);
  return driver::launch(*handle, active.target(), config.grid, config.block, config.shared_bytes,
                        config.stream, args);
}

namespace {

Result<PreparedKernel> prepare_active(Kernel::Impl* impl, const Dim3* grid) {
  if (impl == nullptr) return Error(ErrorCode::kUsage, "prepare of an empty kernel handle");
  bool wrote = false;
  Result<Kernel::Impl*> bound = bind_active(*impl, grid, "prepare", wrote);
  if (!bound.ok()) return std::move(bound).error();
  Kernel::Impl& active = **bound;
  // The writes go through the legacy default stream (cuMemcpyHtoD from pageable memory may return
  // before its DMA lands, cuMemsetD8 is asynchronous), and the user's launch may be on any
  // stream, a non-blocking one included: they are complete before prepare() returns.
  if (wrote) {
    if (Status done = driver::synchronize(); !done.ok()) return std::move(done).error();
  }
  Result<void*> kernel = active.kernel();
  if (!kernel.ok()) return std::move(kernel).error();
  Result<void*> function = driver::function(*kernel, active.target());
  if (!function.ok()) return std::move(function).error();
  return PreparedKernel{*function, *kernel, tier_name(active)};
}

Result<KernelBinding> binding_of(Kernel::Impl* impl, const Dim3* grid) {
  if (impl == nullptr) return Error(ErrorCode::kUsage, "binding of an empty kernel handle");
  Kernel::Impl& active = impl->active();  // one read of the tier, as a launch
  if (Status fits = needs_grid(active, grid, "binding"); !fits.ok()) return std::move(fits).error();
  KernelBinding binding{tier_name(active), active.entry(), active.payload().blob,
                        active.descriptor_globals()};
  if (active.emulated()) {
    Result<std::array<std::uint64_t, 3>> state = active.emulation_state(*grid);
    if (!state.ok()) return std::move(state).error();
    // Its poison and cleared records land before the user's launch, on whatever stream (prepare).
    if (Status done = driver::synchronize(); !done.ok()) return std::move(done).error();
    const char* bytes = reinterpret_cast<const char*>(state->data());
    binding.globals.push_back(
        {kernels::kEmuStateSymbol, std::vector<char>(bytes, bytes + sizeof *state)});
    if (TierSwitch* tiers = impl->tier_switch()) tiers->launched(&active);
  }
  return binding;
}

}  // namespace

Result<PreparedKernel> Kernel::prepare() const { return prepare_active(impl_.get(), nullptr); }

Result<PreparedKernel> Kernel::prepare(Dim3 grid) const {
  return prepare_active(impl_.get(), &grid);
}

Result<KernelBinding> Kernel::binding() const { return binding_of(impl_.get(), nullptr); }

Result<KernelBinding> Kernel::binding(Dim3 grid) const { return binding_of(impl_.get(), &grid); }

Result<std::vector<size_t>> Kernel::parameter_sizes() const {
  if (!impl_) return Error(ErrorCode::kUsage, "parameter_sizes of an empty kernel handle");
  return impl_->active().parameter_sizes();
}

Status Kernel::launch(const LaunchConfig& config, Span<const KernelArg> args) const {
  if (!impl_) return Error(ErrorCode::kUsage, "launch of an empty kernel handle");
  Result<std::vector<size_t>> sizes = parameter_sizes();
  if (!sizes.ok()) return std::move(sizes).error();
  if (args.size() != sizes->size())
    return Error(ErrorCode::kUsage, "launch of " + name() + " with " + std::to_string(args.size()) +
                                        (args.size() == 1 ? " argument" : " arguments") +
                                        "; the kernel takes " + std::to_string(sizes->size()));
  std::vector<void*> pointers;
  pointers.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].data == nullptr)
      return Error(ErrorCode::kUsage, "launch of " + name() + ": argument " + std::to_string(i) +
                                          " has no data (KernelArg::data is null)");
    if (args[i].size != (*sizes)[i])
      return Error(ErrorCode::kUsage, "launch of " + name() + ": argument " + std::to_string(i) +
                                          " is " + std::to_string(args[i].size) +
                                          " bytes; the kernel's parameter " + std::to_string(i) +
                                          " is " + std::to_string((*sizes)[i]) +
                                          " (a pointer or 64-bit integer is 8, a float or int 4)");
    // cuLaunchKernel reads each value through a non-const pointer but never writes it.
    pointers.push_back(const_cast<void*>(args[i].data));
  }
  return launch(config, pointers.data());
}

Result<std::vector<std::string>> Kernel::emulation_check() const {
  if (!impl_) return Error(ErrorCode::kUsage, "emulation_check of an empty kernel handle");
  // A lazy kernel: the tier that ran the last launch holds its records.
  if (TierSwitch* tiers = impl_->tier_switch())
    if (Impl* last = tiers->last_launched()) return last->emulation_check();
  return impl_->emulation_check();
}

}  // namespace tmem
