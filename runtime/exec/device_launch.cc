// The device side shared by the emu and gpu executors: module cache, buffers, one launch.
#include "runtime/exec/device_launch.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "kernels/transfer_kernels.h"
#include "runtime/compile/backends.h"
#include "runtime/support/hash.h"

namespace tmem::device_launch {
namespace {

struct Entry {
  std::mutex mutex;  // held while this key builds; other keys build in parallel
  std::optional<driver::LoadedLibrary> library;
  void* kernel = nullptr;
};

struct Cache {
  std::mutex mutex;
  std::unordered_map<Key128, std::shared_ptr<Entry>, Key128Hash> entries;
  std::atomic<std::size_t> hits{0}, misses{0};
};

// Never destroyed: unloading modules during static destruction would race the driver's teardown.
Cache& cache() {
  static Cache* instance = new Cache;
  return *instance;
}

Result<void*> build(Entry& entry, const std::string& ptx, const std::string& entry_name, Build how,
                    const CompileOptions& options) {
  std::vector<char> image;
  if (how == Build::kCompile) {
    auto compiled = compile_ptx(ptx, options);
    if (!compiled) return std::move(compiled).error();
    image = std::move(compiled->cubin);
  } else {
    image.assign(ptx.begin(), ptx.end());
    image.push_back('\0');  // cuLibraryLoadData takes PTX as a NUL-terminated string
  }
  auto library = driver::LoadedLibrary::load(image, options.target);
  if (!library) return std::move(library).error();
  auto kernel = library->kernel(entry_name);
  if (!kernel) return std::move(kernel).error();
  entry.library.emplace(std::move(*library));
  entry.kernel = *kernel;
  return *kernel;
}

std::string words(std::size_t n) { return std::to_string(n) + " u32 words"; }

}  // namespace

Result<driver::DeviceInfo> current_device_info() {
  if (Status ok = driver::ensure_driver(); !ok) return std::move(ok).error();
  auto count = driver::device_count();
  if (!count) return std::move(count).error();
  if (*count == 0)
    return Error(ErrorCode::kDriver, "no CUDA device: the driver reports 0 devices")
        .set_device_fault(DeviceFault::kNoDevice);
  auto ordinal = driver::current_device();
  if (!ordinal) return std::move(ordinal).error();
  return driver::device_info(*ordinal);
}

std::string describe(const driver::DeviceInfo& info) {
  return info.name + " (cc " + driver::cc_to_string(info.compute_capability) + ")";
}

Result<void*> cached_kernel(const std::string& ptx, const std::string& entry_name, Build how,
                            const CompileOptions& options) {
  const Key128 key = KeyBuilder()
                         .str("ptx", ptx)
                         .str("entry", entry_name)
                         .integer("build", static_cast<int>(how))
                         .str("options", to_string(options))
                         .finish();
  Cache& c = cache();
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(c.mutex);
    auto& slot = c.entries[key];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
  }
  std::lock_guard lock(entry->mutex);
  if (entry->kernel != nullptr) {
    c.hits.fetch_add(1, std::memory_order_relaxed);
    return entry->kernel;
  }
  c.misses.fetch_add(1, std::memory_order_relaxed);
  return build(*entry, ptx, entry_name, how, options);
}

CacheStats cache_stats() {
  Cache& c = cache();
  return {c.hits.load(std::memory_order_relaxed), c.misses.load(std::memory_order_relaxed)};
}

Status check_buffers(const Plan& plan, KernelKind kind, std::size_t first, std::size_t second,
                     int cta_group) {
  const kernels::LaunchShape shape = kernels::launch_shape(plan, kind, cta_group);
  const auto ctas = static_cast<std::size_t>(shape.ctas);
  const std::size_t regs =
      ctas * static_cast<std::size_t>(shape.threads) * static_cast<std::size_t>(shape.slots);
  const std::size_t raw = ctas * std::size_t{128} * static_cast<std::size_t>(shape.raw_columns);
  const std::string per_cta = shape.ctas > 1 ? " per CTA, 2 CTAs" : "";
  const bool raw_first = kind == KernelKind::kLoad || kind == KernelKind::kFill;
  const bool raw_second = kind == KernelKind::kStore || kind == KernelKind::kFill;
  const std::size_t want_first = raw_first ? raw : regs, want_second = raw_second ? raw : regs;
  const std::string k(to_string(kind));
  if (first != want_first)
    return Error(ErrorCode::kUsage,
                 "the " + k + " kernel's first buffer (" + (raw_first ? "Raw" : "In") + ") holds " +
                     words(first) + "; it needs " + words(want_first) + " (" +
                     (raw_first ? "128 lanes x " + std::to_string(shape.raw_columns) + " columns"
                                : std::to_string(shape.threads) + " threads x " +
                                      std::to_string(shape.slots) + " slots") +
                     per_cta + ")");
  if (second != want_second)
    return Error(ErrorCode::kUsage,
                 "the " + k + " kernel's second buffer (" + (raw_second ? "Raw" : "Out") +
                     ") holds " + words(second) + "; it needs " + words(want_second) + " (" +
                     (raw_second ? "128 lanes x " + std::to_string(shape.raw_columns) + " columns"
                                 : std::to_string(shape.threads) + " threads x " +
                                       std::to_string(shape.slots) + " slots") +
                     per_cta + ")");
  return std::monostate{};
}

Status run_harness(void* kernel, Target target, int threads, std::span<const std::uint32_t> first,
                   std::span<std::uint32_t> second, driver::DeviceBuffer* extra, int ctas) {
  const std::size_t first_bytes = first.size() * sizeof(std::uint32_t);
  const std::size_t second_bytes = second.size() * sizeof(std::uint32_t);
  auto a = driver::DeviceBuffer::alloc(std::max<std::size_t>(first_bytes, 4));
  if (!a) return std::move(a).error();
  auto b = driver::DeviceBuffer::alloc(std::max<std::size_t>(second_bytes, 4));
  if (!b) return std::move(b).error();
  if (first_bytes)
    if (Status ok = a->upload(first.data(), first_bytes); !ok) return ok;
  if (second_bytes)
    if (Status ok = b->upload(second.data(), second_bytes); !ok) return ok;
  void* args[3] = {a->arg(), b->arg(), extra ? extra->arg() : nullptr};
  const Dim3 grid{static_cast<unsigned>(ctas), 1, 1}, block{static_cast<unsigned>(threads), 1, 1};
  if (Status ok = ctas > 1 ? driver::launch_cluster(kernel, target, grid, block,
                                                    static_cast<unsigned>(ctas), 0, nullptr, args)
                           : driver::launch(kernel, target, grid, block, 0, nullptr, args);
      !ok)
    return ok;
  if (Status ok = driver::synchronize(); !ok) return ok;
  if (second_bytes)
    if (Status ok = b->download(second.data(), second_bytes); !ok) return ok;
  return std::monostate{};
}

}  // namespace tmem::device_launch
