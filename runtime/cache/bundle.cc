// Cache bundles: encoding, validation, export from and import into a disk cache, and the public
// tmem::export_cache_bundle / import_cache_bundle.
#include "runtime/cache/bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/cache/atomic_file.h"
#include "runtime/cache/build_id.h"
#include "runtime/cache/module_cache.h"
#include "runtime/compile/backends.h"

namespace tmem {
namespace {

constexpr char kBundleMagic[4] = {'T', 'M', 'J', 'B'};
constexpr size_t kChecksumBytes = 16;
// Larger files are refused rather than read (a bundle of every kernel of an application is MBs).
constexpr uint64_t kMaxBundleBytes = uint64_t{16} << 30;

void put_u32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(value >> (8 * i));
}
void put_u64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>(value >> (8 * i));
}
uint64_t get_le(const char* in, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}

Key128 checksum(std::span<const char> bytes) { return hash128(std::as_bytes(bytes)); }

Error bad_bundle(const std::string& what) {
  return Error(ErrorCode::kIo, "bad cache bundle: " + what);
}

// The whole file, refusing anything that is not a regular file or is too large.
Result<std::vector<char>> read_file(const std::string& path) {
  // O_NONBLOCK: a FIFO at the path is refused below instead of blocking the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return Error(ErrorCode::kIo, "cannot open bundle '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(ErrorCode::kIo, "bundle '" + path + "' is not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxBundleBytes) {
    ::close(fd);
    return Error(ErrorCode::kLimit, "bundle '" + path + "' is larger than 16 GiB");
  }
  std::vector<char> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return Error(ErrorCode::kIo, "cannot read bundle '" + path + "'");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return bytes;
}

Status write_bundle_file(const std::string& path, const std::string& bytes) {
  const AtomicWrite written =
      write_file_atomically(path, std::span<const char>(bytes.data(), bytes.size()), 0644, ".tmp.");
  // Only a regular file is replaced: a rename over /dev/null, a FIFO or a symlink would replace
  // the node itself (issue 30).
  if (written.not_regular)
    return Error(
        ErrorCode::kUsage,
        "bundle destination '" + path + "' exists and is not a regular file; nothing written",
        "name a new file or a regular file to replace");
  if (!written.created)
    return Error(ErrorCode::kIo,
                 "cannot create a file beside '" + path + "': " + std::strerror(written.error));
  if (!written.ok())
    return Error(ErrorCode::kIo,
                 "cannot write bundle '" + path + "': " + std::strerror(written.error));
  return std::monostate{};
}

}  // namespace

std::string BundleIdentity::to_text() const {
  return "library: " + library + "\ntoolkit: " + toolkit +
         "\nentry-format: " + std::to_string(entry_format) +
         "\nkey-format: " + std::to_string(key_format) +
         "\nsigned: " + (signed_entries ? "yes" : "no") + "\n";
}

Result<BundleIdentity> BundleIdentity::parse(std::string_view text) {
  BundleIdentity identity;
  int seen = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) return bad_bundle("identity does not end with a newline");
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    const size_t colon = line.find(": ");
    if (colon == std::string_view::npos) return bad_bundle("identity line without ': '");
    const std::string_view name = line.substr(0, colon);
    const std::string value(line.substr(colon + 2));
    auto number = [&](int64_t* out) {
      if (value.empty() || value.size() > 18) return false;
      int64_t parsed = 0;
      for (char c : value) {
        if (c < '0' || c > '9') return false;
        parsed = parsed * 10 + (c - '0');
      }
      *out = parsed;
      return true;
    };
    int64_t parsed = 0;
    if (name == "library") {
      identity.library = value;
    } else if (name == "toolkit") {
      identity.toolkit = value;
    } else if (name == "entry-format" && number(&parsed) && parsed <= UINT32_MAX) {
      identity.entry_format = static_cast<uint32_t>(parsed);
    } else if (name == "key-format" && number(&parsed)) {
      identity.key_format = parsed;
    } else if (name == "signed" && (value == "yes" || value == "no")) {
      identity.signed_entries = value == "yes";
    } else {
      return bad_bundle("identity line '" + std::string(line.substr(0, 64)) +
                        "' is not understood");
    }
    ++seen;
  }
  if (seen != 5) return bad_bundle("identity has " + std::to_string(seen) + " lines, expected 5");
  return identity;
}

BundleIdentity local_bundle_identity(bool signed_entries) {
  const ToolchainVersions& versions = toolchain_versions();
  BundleIdentity identity;
  identity.library = library_build_id();
  identity.toolkit = "nvjitlink " + versions.nvjitlink + "; nvptxcompiler " +
                     versions.nvptxcompiler + "; nvrtc " + versions.nvrtc + "; ptxas " +
                     versions.ptxas;
  identity.entry_format = kDiskFormatVersion;
  identity.key_format = kCacheKeyFormatVersion;
  identity.signed_entries = signed_entries;
  return identity;
}

std::string encode_bundle(const BundleIdentity& identity, std::span<const std::string> entries) {
  const std::string text = identity.to_text();
  std::string out(kBundleMagic, 4);
  put_u32(out, kBundleFormatVersion);
  put_u32(out, static_cast<uint32_t>(text.size()));
  out += text;
  put_u64(out, entries.size());
  for (const std::string& entry : entries) {
    put_u64(out, entry.size());
    out += entry;
  }
  unsigned char sum[16];
  checksum(out).to_bytes(sum);
  out.append(reinterpret_cast<const char*>(sum), sizeof sum);
  return out;
}

Result<DecodedBundle> decode_bundle(std::span<const char> bytes) {
  if (bytes.size() < 12 + 8 + kChecksumBytes)
    return bad_bundle("file of " + std::to_string(bytes.size()) + " bytes is too short");
  if (std::memcmp(bytes.data(), kBundleMagic, 4) != 0) return bad_bundle("magic is not TMJB");
  if (const uint64_t version = get_le(bytes.data() + 4, 4); version != kBundleFormatVersion)
    return bad_bundle("bundle format version " + std::to_string(version) + ", expected " +
                      std::to_string(kBundleFormatVersion));
  const std::span<const char> body = bytes.first(bytes.size() - kChecksumBytes);
  const Key128 stored =
      Key128::from_bytes(reinterpret_cast<const unsigned char*>(bytes.data() + body.size()));
  if (stored != checksum(body))
    return bad_bundle("checksum mismatch (the file is truncated or damaged)");
  size_t at = 8;
  auto take = [&](uint64_t size) -> std::optional<std::span<const char>> {
    if (size > body.size() - at) return std::nullopt;
    const std::span<const char> part = body.subspan(at, static_cast<size_t>(size));
    at += static_cast<size_t>(size);
    return part;
  };
  const auto text_size = take(4);
  const auto text = text_size ? take(get_le(text_size->data(), 4)) : std::nullopt;
  if (!text) return bad_bundle("identity runs past the end");
  Result<BundleIdentity> identity =
      BundleIdentity::parse(std::string_view(text->data(), text->size()));
  if (!identity.ok()) return std::move(identity).error();
  const auto count = take(8);
  if (!count) return bad_bundle("entry count runs past the end");
  const uint64_t entries = get_le(count->data(), 8);
  if (entries > (body.size() - at) / 8)
    return bad_bundle("entry count " + std::to_string(entries) + " does not fit the file");
  DecodedBundle decoded;
  decoded.identity = std::move(identity).value();
  decoded.entries.reserve(static_cast<size_t>(entries));
  for (uint64_t i = 0; i < entries; ++i) {
    const auto size = take(8);
    const auto entry = size ? take(get_le(size->data(), 8)) : std::nullopt;
    if (!entry) return bad_bundle("entry " + std::to_string(i) + " runs past the end");
    decoded.entries.push_back(*entry);
  }
  if (at != body.size())
    return bad_bundle(std::to_string(body.size() - at) + " bytes after the last entry");
  return decoded;
}

std::string identity_mismatch(const BundleIdentity& bundle, const BundleIdentity& local) {
  if (bundle.entry_format != local.entry_format || bundle.key_format != local.key_format)
    return "it holds entries of format " + std::to_string(bundle.entry_format) +
           " with keys of format " + std::to_string(bundle.key_format) +
           ", this libtmemjit reads format " + std::to_string(local.entry_format) +
           " and computes keys of format " + std::to_string(local.key_format);
  if (bundle.library != local.library)
    return "it was made by another libtmemjit build (" + bundle.library + "; this is " +
           local.library + "), whose cache keys this build never computes";
  if (bundle.toolkit != local.toolkit)
    return "it was made with another CUDA toolkit (" + bundle.toolkit + "; here: " + local.toolkit +
           "), whose cache keys differ";
  if (bundle.signed_entries && !local.signed_entries)
    return "its entries are signed (exported with TMEMJIT_REMOTE_CACHE_SECRET set) and this "
           "process has no secret; set the same secret to import it";
  if (!bundle.signed_entries && local.signed_entries)
    return "its entries are not signed and TMEMJIT_REMOTE_CACHE_SECRET is set (only signed "
           "entries are trusted); export it with the same secret set";
  return {};
}

Result<BundleSummary> export_bundle(const DiskCache& disk, const std::string& path,
                                    const BundleIdentity& identity) {
  std::vector<Key128> keys = disk.keys();
  std::sort(keys.begin(), keys.end(), [](const Key128& a, const Key128& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  });
  BundleSummary summary;
  summary.path = path;
  std::vector<std::string> entries;
  for (const Key128& key : keys) {
    Result<Payload> payload = disk.peek(key);
    if (!payload.ok()) {
      ++summary.skipped;  // damaged, planted or evicted meanwhile: not worth shipping
      continue;
    }
    entries.push_back(encode_entry(key, *payload, disk.signer()));
  }
  const std::string bytes = encode_bundle(identity, entries);
  if (Status written = write_bundle_file(path, bytes); !written.ok())
    return std::move(written).error();
  summary.entries = entries.size();
  summary.bytes = bytes.size();
  return summary;
}

Result<BundleSummary> import_bundle(DiskCache& disk, const std::string& path,
                                    const BundleIdentity& local) {
  Result<std::vector<char>> bytes = read_file(path);
  if (!bytes.ok()) return std::move(bytes).error();
  Result<DecodedBundle> bundle = decode_bundle(*bytes);
  if (!bundle.ok())
    return Error(bundle.error().code(),
                 "bundle '" + path + "' imports nothing: " + bundle.error().message());
  if (const std::string why = identity_mismatch(bundle->identity, local); !why.empty())
    return Error(ErrorCode::kUsage, "bundle '" + path + "' imports nothing: " + why);
  // Every entry must decode before any is written: a bundle is trusted whole or not at all.
  std::vector<std::pair<Key128, Payload>> entries;
  entries.reserve(bundle->entries.size());
  for (size_t i = 0; i < bundle->entries.size(); ++i) {
    const std::span<const char> entry = bundle->entries[i];
    const Key128 key =
        entry.size() >= kDiskHeaderBytes
            ? Key128::from_bytes(reinterpret_cast<const unsigned char*>(entry.data() + 8))
            : Key128{};
    Result<Payload> payload = decode_entry(key, entry, disk.signer());
    if (!payload.ok())
      return Error(ErrorCode::kIo,
                   "bundle '" + path + "' imports nothing: entry " + std::to_string(i) + " of " +
                       std::to_string(bundle->entries.size()) + ": " + payload.error().message());
    entries.emplace_back(key, std::move(payload).value());
  }
  BundleSummary summary;
  summary.path = path;
  summary.bytes = bytes->size();
  for (const auto& [key, payload] : entries) {
    if (!disk.write(key, payload).written)
      return Error(ErrorCode::kIo, "bundle '" + path + "': writing entry " + key.hex() + " to " +
                                       disk.version_dir().string() + " failed after " +
                                       std::to_string(summary.entries) + " entries");
    ++summary.entries;
  }
  return summary;
}

Result<BundleSummary> export_cache_bundle(const std::string& path) {
  const std::shared_ptr<DiskCache> disk = module_cache().disk();
  if (!disk) {
    const Result<DiskCacheUsage> usage = disk_cache_usage();  // says why the disk cache is off
    return usage.ok() ? Error(ErrorCode::kInternal, "the disk cache is off") : usage.error();
  }
  return export_bundle(*disk, path, local_bundle_identity(disk->signer() != nullptr));
}

Result<BundleSummary> import_cache_bundle(const std::string& path) {
  const std::shared_ptr<DiskCache> disk = module_cache().disk();
  if (!disk) {
    const Result<DiskCacheUsage> usage = disk_cache_usage();
    return usage.ok() ? Error(ErrorCode::kInternal, "the disk cache is off") : usage.error();
  }
  return import_bundle(*disk, path, local_bundle_identity(disk->signer() != nullptr));
}

}  // namespace tmem
