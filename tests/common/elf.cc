// ELF64 section headers (<elf.h>) and .nv.info attributes of a cubin, for tests and benches.
#include "common/elf.h"

#include <elf.h>

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
  Elf64_Ehdr header;
  if (!load(image, 0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return truncated("missing ELF magic");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return truncated("not 64-bit little-endian");
  if (header.e_shentsize < sizeof(Elf64_Shdr)) return truncated("section header entries too small");
  std::vector<Elf64_Shdr> raw(header.e_shnum);
  for (std::uint16_t k = 0; k < header.e_shnum; ++k) {
    if (!load(image, header.e_shoff + std::uint64_t{k} * header.e_shentsize, raw[k]))
      return truncated("section header " + std::to_string(k) + " is outside the image");
  }
  if (header.e_shnum != 0 && header.e_shstrndx >= header.e_shnum)
    return truncated("bad section name table index");
  std::vector<Section> sections;
  sections.reserve(raw.size());
  for (const Elf64_Shdr& r : raw) {
    Section s;
    s.type = r.sh_type;
    s.flags = r.sh_flags;
    s.offset = r.sh_offset;
    s.size = r.sh_size;
    const Elf64_Shdr& names = raw[header.e_shstrndx];
    if (names.sh_offset + r.sh_name < image.size()) {
      const char* begin = image.data() + names.sh_offset + r.sh_name;
      const char* end =
          image.data() + std::min<std::uint64_t>(image.size(), names.sh_offset + names.sh_size);
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
  for (const Section& s : *sections) {
    if (s.name != ".nv.info" && s.name.rfind(".nv.info.", 0) != 0) continue;
    if (s.type == SHT_NOBITS || s.offset + s.size > image.size()) continue;
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
