// Cache bundles: a disk cache as one versioned, checksummed file that an application ships, so that
// its first calls on another machine are disk hits (`tmemjit cache export|import`, docs/design.md
// §Fleet).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/cache/disk.h"
#include "tmem/cache.h"
#include "tmem/result.h"

namespace tmem {

inline constexpr uint32_t kBundleFormatVersion = 1;

// What a bundle's entries are only good for: entries whose keys this library build and toolkit
// compute, in this entry format, signed or not. A bundle whose identity differs from the importer's
// imports nothing (its entries could never be hit, or not be read).
struct BundleIdentity {
  std::string library;  // library_build_id()
  std::string toolkit;  // the versions of every compiler a key may name
  uint32_t entry_format = kDiskFormatVersion;
  int64_t key_format = 0;  // kCacheKeyFormatVersion
  bool signed_entries = false;

  // "name: value" lines.
  std::string to_text() const;
  static Result<BundleIdentity> parse(std::string_view text);
};

// This process's identity (the toolkit part asks each compiler for its version once).
BundleIdentity local_bundle_identity(bool signed_entries);

// File layout (integers little-endian):
//   "TMJB", u32 bundle format version, u32 identity length, identity text,
//   u64 entry count, then per entry u64 size and the entry in the disk format (disk.h),
//   then 16 bytes: XXH3-128 of every byte before them.
std::string encode_bundle(const BundleIdentity& identity, std::span<const std::string> entries);

struct DecodedBundle {
  BundleIdentity identity;
  std::vector<std::span<const char>> entries;  // into the decoded bytes
};
// Checks the size, magic, version, checksum and structure (kIo naming what failed); entries are
// not decoded here.
Result<DecodedBundle> decode_bundle(std::span<const char> bytes);

// Why `bundle` cannot be imported where `local` holds, or the empty string.
std::string identity_mismatch(const BundleIdentity& bundle, const BundleIdentity& local);

// Every valid entry of `disk` into the bundle file `path` (temp file, then rename).
Result<BundleSummary> export_bundle(const DiskCache& disk, const std::string& path,
                                    const BundleIdentity& identity);
// Validates the bundle at `path` against `local` and every entry (decode_entry with the disk
// cache's signer), then writes them all to `disk`; on any failure writes nothing.
Result<BundleSummary> import_bundle(DiskCache& disk, const std::string& path,
                                    const BundleIdentity& local);

}  // namespace tmem
