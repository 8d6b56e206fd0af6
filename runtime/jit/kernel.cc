// tmem::Kernel: lazy cuLibrary load of a cached cubin and launches on the current context.
#include "tmem/kernel.h"

#include "runtime/jit/kernel_impl.h"

namespace tmem {

Result<void*> Kernel::Impl::kernel() {
  if (void* loaded_kernel = function_.load(std::memory_order_acquire)) return loaded_kernel;
  std::lock_guard lock(load_mutex_);
  if (void* loaded_kernel = function_.load(std::memory_order_acquire)) return loaded_kernel;
  const std::vector<char>& cubin = payload_->blob;
  Result<driver::LoadedLibrary> library = driver::LoadedLibrary::load(cubin, target_);
  if (!library.ok()) return std::move(library).error();
  Result<void*> handle = library->kernel(entry_);
  if (!handle.ok()) return std::move(handle).error();
  library_.emplace(std::move(library).value());
  function_.store(*handle, std::memory_order_release);
  return *handle;
}

Kernel make_kernel(std::string entry, Target target, std::shared_ptr<const Payload> payload) {
  return Kernel(std::make_shared<Kernel::Impl>(std::move(entry), target, std::move(payload)));
}

Kernel::Kernel(std::shared_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

const std::string& Kernel::name() const noexcept {
  static const std::string kEmpty;
  return impl_ ? impl_->entry() : kEmpty;
}

Target Kernel::target() const noexcept { return impl_ ? impl_->target() : Target::kSm100a; }

std::span<const char> Kernel::cubin() const noexcept {
  if (!impl_) return {};
  return impl_->payload().blob;
}

std::string_view Kernel::ptx() const noexcept {
  if (!impl_) return {};
  return impl_->payload().text;
}

bool Kernel::loaded() const noexcept { return impl_ && impl_->loaded(); }

Status Kernel::load() const {
  if (!impl_) return Error(ErrorCode::kUsage, "load of an empty kernel handle");
  Result<void*> handle = impl_->kernel();
  if (!handle.ok()) return std::move(handle).error();
  return std::monostate{};
}

Status Kernel::launch(const LaunchConfig& config, void** args) const {
  if (!impl_) return Error(ErrorCode::kUsage, "launch of an empty kernel handle");
  Result<void*> handle = impl_->kernel();
  if (!handle.ok()) return std::move(handle).error();
  return driver::launch(*handle, impl_->target(), config.grid, config.block, config.shared_bytes,
                        config.stream, args);
}

}  // namespace tmem
