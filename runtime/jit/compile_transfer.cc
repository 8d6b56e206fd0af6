// compile_transfer and warmup: the cache key, the kernel handles kept per entry, the miss path.
#include "runtime/jit/compile_transfer.h"

#ifdef TMEMJIT_HAVE_NVPTXCOMPILER
#include <nvPTXCompiler.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "kernels/emulation_kernels.h"
#include "kernels/transfer_kernels.h"
#include "runtime/compile/backends.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/nvjitlink.h"
#include "runtime/cuda/nvrtc.h"
#include "runtime/jit/kernel_impl.h"
#include "runtime/jit/kernel_table.h"
#include "runtime/ptx/ir.h"
#include "tmem/check.h"

namespace tmem {
namespace {

// The compile context of a key: everything but the spec and the kind. Each thread keeps the
// contexts of the last few options it saw, so a hit with options seen before builds no string.
struct Context {
  bool valid = false;
  CompileOptions options;                 // as given
  Backend backend = Backend::kNvJitLink;  // resolved
  Key128 digest;
};

constexpr size_t kContextsPerThread = 4;
struct ThreadContexts {
  std::array<Context, kContextsPerThread> slots;
  size_t next = 0;  // the slot to replace next (round robin)
};
thread_local ThreadContexts t_contexts;

Result<const Context*> context_of(const CompileOptions& options) {
  ThreadContexts& contexts = t_contexts;
  for (const Context& context : contexts.slots)
    if (context.valid && context.options == options) return &context;
  if (options.backend == Backend::kNvrtc)
    return Error(ErrorCode::kUsage,
                 "compile_transfer compiles the harness kernels as PTX; backend nvrtc compiles "
                 "CUDA C++ (kernels::cuda_device_function)",
                 "use nvjitlink, nvptxcompiler, ptxas, driver or auto");
  CompileOptions resolved = options;
  resolved.backend = resolve_backend(options.backend);
  KeyBuilder key;
  key.str("context", "compile-transfer");
  key.integer("format", kCacheKeyFormatVersion);
  key.str("target", to_string(resolved.target));
  key.str("backend", to_string(resolved.backend));
  key.str("options", to_string(resolved));
  key.integer("extra_options", static_cast<int64_t>(resolved.extra_options.size()));
  for (const std::string& extra : resolved.extra_options) key.str("extra", extra);
  key.integer("nvrtc_options", static_cast<int64_t>(resolved.nvrtc_options.size()));
  for (const std::string& option : resolved.nvrtc_options) key.str("nvrtc", option);
  key.integer("ptx_options", static_cast<int64_t>(resolved.ptx_options.size()));
  for (const std::string& option : resolved.ptx_options) key.str("ptx", option);
  key.str("compiler", compiler_version(resolved.backend));
  key.str("library", library_build_id());
  Context& context = contexts.slots[contexts.next];
  contexts.next = (contexts.next + 1) % kContextsPerThread;
  context.valid = false;  // stays false if the copy below throws
  context.options = options;
  context.backend = resolved.backend;
  context.digest = key.finish();
  context.valid = true;
  return &context;
}

void store_le64(std::byte* out, uint64_t value) noexcept {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}

Key128 key_of(const SpecFingerprint& spec, KernelKind kind, const Key128& context) noexcept {
  static constexpr char kDomain[16] = {'t', 'm', 'e', 'm', 'j', 'i', 't', '/',
                                       't', 'r', 'a', 'n', 's', 'f', 'e', 'r'};
  std::array<std::byte, 16 + 5 * 8> record{};
  for (size_t i = 0; i < 16; ++i) record[i] = static_cast<std::byte>(kDomain[i]);
  store_le64(&record[16], spec.lo);
  store_le64(&record[24], spec.hi);
  store_le64(&record[32], static_cast<uint64_t>(kind));
  store_le64(&record[40], context.lo);
  store_le64(&record[48], context.hi);
  return hash128(record);
}

// What identifies an entry in the table of Kernel handles: the parts the cache key is hashed
// from, compared as they are, so that a hit never computes the key's XXH3 (only a miss does).
struct HitKey {
  SpecFingerprint spec;
  Key128 context;
  KernelKind kind;
  friend bool operator==(const HitKey&, const HitKey&) = default;
};

struct HitKeyHash {
  // The fingerprint and the digest are uniform hashes already: mixing their low halves suffices.
  size_t operator()(const HitKey& key) const noexcept {
    return static_cast<size_t>(key.spec.lo ^ (key.context.lo * 0x9E3779B97F4A7C15ull) ^
                               static_cast<uint64_t>(key.kind));
  }
};

using KernelTable = tmem::KernelTable<HitKey, HitKeyHash>;

KernelTable& kernel_table() {
  static KernelTable table;
  return table;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

constexpr std::string_view kLogMarker = "log:\n";

// The compiler log kept at the end of an entry's metadata.
std::string log_of(const Payload& payload) {
  const size_t at = payload.meta.find(kLogMarker);
  return at == std::string::npos ? std::string() : payload.meta.substr(at + kLogMarker.size());
}

// The miss path: check, build, print, compile.
Result<Payload> compile_payload(const TransferSpec& spec, const CompileOptions& options,
                                Backend backend, KernelKind kind) {
  Result<Plan> plan = check(spec);
  if (!plan.ok()) return std::move(plan).error();
  Result<ptx::Module> module =
      kernels::build_kernel(*plan, kind, options.target, options.cta_group);
  if (!module.ok()) return std::move(module).error();
  Result<std::string> ptx = ptx::print(*module);
  if (!ptx.ok()) return std::move(ptx).error();
  CompileOptions resolved = options;
  resolved.backend = backend;
  Result<CompiledModule> compiled = compile_ptx(*ptx, resolved);
  if (!compiled.ok()) return std::move(compiled).error();
  Payload payload;
  payload.blob = std::move(compiled->cubin);
  payload.text = std::move(ptx).value();
  payload.meta = "entry=" + kernels::kernel_name(kind) +
                 "\nbackend=" + std::string(to_string(backend)) +
                 "\ntarget=" + std::string(to_string(options.target)) + "\n" +
                 std::string(kLogMarker) + compiled->log;
  return payload;
}

Result<Kernel> compile_slow(const TransferSpec& spec, const CompileOptions& options,
                            KernelKind kind, const Context& context, const HitKey& hit_key,
                            const Key128& key, TransferCompileReport* report) {
  ModuleCache& cache = module_cache();
  const uint64_t generation = cache.generation();
  const Backend backend = context.backend;
  double compile_ms = 0;
  ModuleCache::Lookup lookup = ModuleCache::Lookup::kCompiled;
  Result<ModuleCache::Ptr> payload = cache.get_or_compile(
      key,
      [&]() -> Result<Payload> {
        const auto start = std::chrono::steady_clock::now();
        Result<Payload> made = compile_payload(spec, options, backend, kind);
        compile_ms = ms_since(start);
        return made;
      },
      &lookup);
  if (report != nullptr) {
    report->lookup = lookup;
    report->compile_ms = compile_ms;
  }
  if (!payload.ok()) return std::move(payload).error();
  if (report != nullptr) report->log = log_of(**payload);
  auto impl = std::make_shared<Kernel::Impl>(kernels::kernel_name(kind), options.target, *payload);
  if (lookup == ModuleCache::Lookup::kUncached) return Kernel(std::move(impl));
  return Kernel(kernel_table().insert(hit_key, generation, std::move(impl)));
}

std::string version_text(std::string_view backend, std::optional<std::string> version) {
  return std::string(backend) + " " + (version ? *version : std::string("unavailable"));
}

}  // namespace

const std::string& compiler_version(Backend backend) {
  switch (resolve_backend(backend)) {
    case Backend::kNvJitLink: {
      static const std::string version = [] {
        unsigned major = 0, minor = 0;
        auto api = nvjitlink::api();
        return version_text("nvjitlink",
                            api && (*api)->version(&major, &minor) == NVJITLINK_SUCCESS
                                ? std::optional(std::to_string(major) + "." + std::to_string(minor))
                                : std::nullopt);
      }();
      return version;
    }
    case Backend::kNvrtc: {
      static const std::string version = [] {
        int major = 0, minor = 0;
        auto api = nvrtc::api();
        return version_text("nvrtc",
                            api && (*api)->version(&major, &minor) == NVRTC_SUCCESS
                                ? std::optional(std::to_string(major) + "." + std::to_string(minor))
                                : std::nullopt);
      }();
      return version;
    }
    case Backend::kPtxas: {
      static const std::string version = "ptxas " + toolchain_versions().ptxas;
      return version;
    }
    case Backend::kDriver: {
      static const std::string version = [] {
        Result<int> driver = driver::driver_version();
        return version_text("driver",
                            driver.ok() ? std::optional(std::to_string(*driver)) : std::nullopt);
      }();
      return version;
    }
    case Backend::kNvPtxCompiler: {
      static const std::string version = [] {
#ifdef TMEMJIT_HAVE_NVPTXCOMPILER
        unsigned major = 0, minor = 0;
        return version_text("nvptxcompiler",
                            nvPTXCompilerGetVersion(&major, &minor) == NVPTXCOMPILE_SUCCESS
                                ? std::optional(std::to_string(major) + "." + std::to_string(minor))
                                : std::nullopt);
#else
        return version_text("nvptxcompiler", std::nullopt);
#endif
      }();
      return version;
    }
    case Backend::kAuto:
      break;
  }
  static const std::string unknown = "unknown backend";  // resolve_backend never yields kAuto
  return unknown;
}

std::string_view to_string(ModuleCache::Lookup lookup) noexcept {
  switch (lookup) {
    case ModuleCache::Lookup::kMemoryHit:
      return "memory hit";
    case ModuleCache::Lookup::kDiskHit:
      return "disk hit";
    case ModuleCache::Lookup::kRemoteHit:
      return "remote hit";
    case ModuleCache::Lookup::kCompiled:
      return "miss";
    case ModuleCache::Lookup::kUncached:
      return "off";
  }
  return "miss";
}

Result<Key128> transfer_cache_key(const TransferSpec& spec, const CompileOptions& options,
                                  KernelKind kind) {
  Result<const Context*> context = context_of(options);
  if (!context.ok()) return std::move(context).error();
  return key_of(spec.fingerprint(), kind, (*context)->digest);
}

Result<Kernel> compile_transfer_reported(const TransferSpec& spec, const CompileOptions& options,
                                         KernelKind kind, TransferCompileReport* report) {
  Result<const Context*> context = context_of(options);
  if (!context.ok()) return std::move(context).error();
  const HitKey hit_key{spec.fingerprint(), (*context)->digest, kind};
  ModuleCache& cache = module_cache();
  if (cache.enabled()) {
    if (std::shared_ptr<Kernel::Impl> hit = kernel_table().find(hit_key, cache.generation())) {
      cache.count_hit();
      if (report != nullptr) {
        report->key = key_of(hit_key.spec, kind, hit_key.context);
        report->backend = (*context)->backend;
        report->lookup = ModuleCache::Lookup::kMemoryHit;
        report->compile_ms = 0;
        report->log = log_of(hit->payload());
      }
      return Kernel(std::move(hit));
    }
  }
  // The cache key's XXH3 is computed only here: memory and disk caches are keyed by it.
  const Key128 key = key_of(hit_key.spec, kind, hit_key.context);
  if (report != nullptr) {
    report->key = key;
    report->backend = (*context)->backend;
  }
  return compile_slow(spec, options, kind, **context, hit_key, key, report);
}

CacheSource source_of(ModuleCache::Lookup lookup) noexcept {
  // A tier added below disk (the remote cache) is neither memory, disk nor a compile.
  if (lookup == ModuleCache::Lookup::kMemoryHit) return CacheSource::kMemory;
  if (lookup == ModuleCache::Lookup::kDiskHit) return CacheSource::kDisk;
  if (lookup == ModuleCache::Lookup::kCompiled || lookup == ModuleCache::Lookup::kUncached)
    return CacheSource::kCompiled;
  return CacheSource::kRemote;
}

std::string_view to_string(CacheSource source) noexcept {
  switch (source) {
    case CacheSource::kCompiled:
      return "miss";
    case CacheSource::kMemory:
      return "memory";
    case CacheSource::kDisk:
      return "disk";
    case CacheSource::kRemote:
      return "remote";
  }
  return "miss";
}

Result<Kernel> compile_transfer(const TransferSpec& spec, const CompileOptions& options,
                                KernelKind kind, CompileReport* report) {
  TransferCompileReport info;
  Result<Kernel> kernel = compile_transfer_reported(spec, options, kind, &info);
  if (report != nullptr) {
    *report = CompileReport{};
    report->cache = source_of(info.lookup);
    report->cache_enabled = info.lookup != ModuleCache::Lookup::kUncached;
    report->backend = info.backend;
    report->compile_ms = info.compile_ms;
    report->key = info.key.hex();
    report->log = info.log;
    report->entry = kernels::kernel_name(kind);
  }
  return kernel;
}

Result<Kernel> compile_transfer(const TransferSpec& spec, const CompileOptions& options,
                                KernelKind kind) {
  return compile_transfer_reported(spec, options, kind, nullptr);
}

Status warmup(std::span<const TransferSpec> specs, const CompileOptions& options, KernelKind kind) {
  if (specs.empty()) return std::monostate{};
  // Options errors are the same for every spec: report them once, as themselves.
  if (Result<const Context*> context = context_of(options); !context.ok())
    return std::move(context).error();

  std::vector<std::optional<Error>> errors(specs.size());
  std::atomic<size_t> next{0};
  auto work = [&]() noexcept {
    for (size_t i = next.fetch_add(1); i < specs.size(); i = next.fetch_add(1)) {
      try {
        Result<Kernel> kernel = compile_transfer(specs[i], options, kind);
        if (!kernel.ok()) errors[i] = std::move(kernel).error();
      } catch (const Error& error) {
        errors[i] = error;
      } catch (const std::exception& exception) {
        errors[i] =
            Error(ErrorCode::kInternal, std::string("warmup: compile threw: ") + exception.what());
      } catch (...) {
        errors[i] = Error(ErrorCode::kInternal, "warmup: compile threw an unknown exception");
      }
    }
  };
  const size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min(hardware, specs.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads than hoped: the ones running (and this one) do the rest
    }
  }
  work();
  for (std::thread& thread : pool) thread.join();

  size_t failed = 0;
  std::optional<size_t> first;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!errors[i]) continue;
    ++failed;
    if (!first) first = i;
  }
  if (!first) return std::monostate{};
  const Error& error = *errors[*first];
  const TransferSpec& spec = specs[*first];
  std::string message = "warmup: spec " + std::to_string(*first) + " of " +
                        std::to_string(specs.size()) + " (" + spec.op().to_string() + " at " +
                        spec.scope().to_string() + "): " + error.message();
  if (failed > 1) message += " (" + std::to_string(failed - 1) + " more specs failed)";
  std::string details = "spec " + std::to_string(*first) + ":\n" + spec.to_string();
  if (!error.details().empty()) details += "\n" + error.details();
  return Error(error.code(), std::move(message), std::move(details));
}

Result<std::string> transfer_ptx(const TransferSpec& spec, KernelKind kind, Target target) {
  CompileOptions options;
  options.target = target;
  return transfer_ptx(spec, kind, options);
}

Result<std::string> transfer_ptx(const TransferSpec& spec, KernelKind kind,
                                 const CompileOptions& options) {
  Result<Plan> plan = check(spec);
  if (!plan.ok()) return std::move(plan).error();
  if (options.target == Target::kSm90) {
    auto kernel = kernels::build_emulation_kernel(*plan, kind, options.cta_group);
    if (!kernel.ok()) return std::move(kernel).error();
    return ptx::print(kernel->module);
  }
  auto module = kernels::build_kernel(*plan, kind, options.target, options.cta_group);
  if (!module.ok()) return std::move(module).error();
  return ptx::print(*module);
}

}  // namespace tmem
