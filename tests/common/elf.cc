// ELF64 section headers and .nv.info attributes of a cubin, read without any CUDA library.
#include "common/elf.h"

#include <algorithm>
#include <cstring>

namespace tmem::elf {
namespace {

template <class T>
bool load(std::span<const char> image, std::uint64_t offset, T& value) {
  if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
  std::memcpy(&value, image.data() + offset, sizeof(T));  // cubins are little-endian, like hosts
  return true;
}

Error truncated(const std::string& what) {
  return Error(ErrorCode::kParse, "not a valid ELF64 image: " + what);
}

// .nv.info record: u8 format, u8 attribute, then for EIFMT_SVAL (4) a u16 size and `size` bytes of
// payload; the other formats hold a u16 value in place.
constexpr std::uint8_t kFormatSval = 0x04;
constexpr std::uint8_t kAttrFrameSize = 0x11;  // payload: u32 function symbol, u32 bytes

}  // namespace

Result<std::vector<Section>> read_sections(std::span<const char> image) {
  if (image.size() < 64 || std::memcmp(image.data(),
                                       "\x7f"
                                       "ELF",
                                       4) != 0)
    return truncated("missing ELF magic");
  if (image[4] != 2 || image[5] != 1) return truncated("not 64-bit little-endian");
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!load(image, 0x28, shoff) || !load(image, 0x3a, shentsize) || !load(image, 0x3c, shnum) ||
      !load(image, 0x3e, shstrndx))
    return truncated("short header");
  if (shentsize < 64) return truncated("section header entries too small");
  struct Raw {
    std::uint32_t name, type;
    std::uint64_t flags, addr, offset, size;
  };
  std::vector<Raw> raw(shnum);
  for (std::uint16_t k = 0; k < shnum; ++k) {
    const std::uint64_t at = shoff + std::uint64_t{k} * shentsize;
    Raw& r = raw[k];
    if (!load(image, at, r.name) || !load(image, at + 4, r.type) || !load(image, at + 8, r.flags) ||
        !load(image, at + 16, r.addr) || !load(image, at + 24, r.offset) ||
        !load(image, at + 32, r.size))
      return truncated("section header " + std::to_string(k) + " is outside the image");
  }
  if (shnum != 0 && shstrndx >= shnum) return truncated("bad section name table index");
  std::vector<Section> sections;
  sections.reserve(shnum);
  for (const Raw& r : raw) {
    Section s;
    s.type = r.type;
    s.flags = r.flags;
    s.offset = r.offset;
    s.size = r.size;
    const Raw& names = raw[shstrndx];
    if (names.offset + r.name < image.size()) {
      const char* begin = image.data() + names.offset + r.name;
      const char* end =
          image.data() + std::min<std::uint64_t>(image.size(), names.offset + names.size);
      s.name.assign(begin, std::find(begin, end, '\0'));
    }
    sections.push_back(std::move(s));
  }
  return sections;
}

std::uint64_t code_bytes(const std::vector<Section>& sections) {
  std::uint64_t total = 0;
  for (const Section& s : sections)
    if (s.name.rfind(".text.", 0) == 0) total += s.size;
  return total;
}

std::uint64_t section_size(const std::vector<Section>& sections, const std::string& name) {
  for (const Section& s : sections)
    if (s.name == name) return s.size;
  return 0;
}

Result<std::uint32_t> max_frame_size(std::span<const char> image) {
  auto sections = read_sections(image);
  if (!sections) return std::move(sections).error();
  std::uint32_t largest = 0;
  constexpr std::uint32_t kNobits = 8;
  for (const Section& s : *sections) {
    if (s.name != ".nv.info" && s.name.rfind(".nv.info.", 0) != 0) continue;
    if (s.type == kNobits || s.offset + s.size > image.size()) continue;
    std::uint64_t at = s.offset;
    const std::uint64_t end = s.offset + s.size;
    while (at + 4 <= end) {
      const auto format = static_cast<std::uint8_t>(image[at]);
      const auto attribute = static_cast<std::uint8_t>(image[at + 1]);
      std::uint16_t size = 0;
      load(image, at + 2, size);
      if (format != kFormatSval) {
        at += 4;
        continue;
      }
      if (attribute == kAttrFrameSize && size >= 8 && at + 4 + size <= end) {
        std::uint32_t bytes = 0;
        load(image, at + 8, bytes);
        largest = std::max(largest, bytes);
      }
      at += 4 + size;
    }
  }
  return largest;
}

}  // namespace tmem::elf
