// code_stats: registers, local memory and instructions from a cubin's ELF (section headers, symbol
// table, .nv.info attributes, .nv.callgraph), LDTM/STTM from the instruction encoding of its code
// or from its disassembly.
#include "tmem/code_stats.h"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "runtime/compile/sass.h"

namespace tmem {
namespace {

// The cubin's own vocabulary, which glibc's <elf.h> does not spell (CUDA Binary Utilities; the
// record layout is the one cuobjdump -elf prints).
constexpr std::uint8_t kStoCudaEntry = 0x10;  // st_other of a __global__ function
// .nv.info records: u8 format, u8 attribute, then u16 in place, except for format EIFMT_SVAL,
// whose u16 is the size of the payload that follows.
constexpr std::uint8_t kFormatSval = 0x04;
// Attributes read here; each payload is u32 function symbol, u32 value.
constexpr std::uint8_t kAttrFrameSize = 0x11;     // EIATTR_FRAME_SIZE: the function's own frame
constexpr std::uint8_t kAttrMinStackSize = 0x12;  // EIATTR_MIN_STACK_SIZE: with its callees
constexpr std::uint8_t kAttrMaxStackSize = 0x23;  // EIATTR_MAX_STACK_SIZE: likewise
constexpr std::uint8_t kAttrRegcount = 0x2f;      // EIATTR_REGCOUNT
// sm_70 and later: 16-byte instructions whose bits 0..11 are the opcode (bits 12..15 are the guard
// predicate, the rest operands and modifiers); NOP is 0x918.
constexpr std::uint64_t kInstructionBytes = 16;
constexpr std::uint64_t kOpcodeMask = 0xfff;
constexpr std::uint64_t kNopOpcode = 0x918;
// sm_100, sm_101, sm_103 and sm_110: the opcodes of STTM (tcgen05.st), LDTM (tcgen05.ld) and
// LDTM.STAT (tcgen05.ld.red; not on sm_100). Bits 0..8 name the operation (0x1ed STTM, 0x1ee LDTM),
// bits 9..11 its operand form (0b100; 0b010 for LDTM.STAT and its extra destination, redval).
// Read off nvdisasm 13.0 -b on these four arches: of the 4096 opcodes under the operand bits of
// real STTM, LDTM and LDTM.STAT instructions (and of neighbours a few flipped bits away) only these
// three decode as STTM or LDTM, and they decode as nothing else; on sm_90 and sm_120 they are
// illegal. code_stats_test compares the counts with nvdisasm's for every tcgen05.ld/st form.
constexpr std::uint64_t kSttmOpcode = 0x9ed;
constexpr std::uint64_t kLdtmOpcode = 0x9ee;
constexpr std::uint64_t kLdtmStatOpcode = 0x5ee;
// The e_flags layout of the CUDA ELF ABI (EI_ABIVERSION), as LLVM's BinaryFormat/ELF.h reads it:
// V1 keeps the SM version in bits 0..7 (EF_CUDA_SM), V2 (CUDA 12.8 and later) in bits 8..15
// (EF_CUDA_SM_MASK, EF_CUDA_SM_OFFSET).
constexpr std::uint8_t kAbiVersionCudaV1 = 7;
constexpr std::uint8_t kAbiVersionCudaV2 = 8;
// Kernels named in the message of a missing entry.
constexpr size_t kNamesShown = 16;

std::string hex_byte(std::uint8_t value) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", static_cast<unsigned>(value));
  return text;
}

Error malformed(const std::string& what) {
  return Error(ErrorCode::kUsage, "not a valid cubin: " + what);
}

// Bounds-checked reads of the image: nothing is read that the checks did not place inside it.
class Image {
 public:
  explicit Image(std::span<const char> bytes) : bytes_(bytes) {}

  std::uint64_t size() const { return bytes_.size(); }
  bool contains(std::uint64_t offset, std::uint64_t length) const {
    return offset <= bytes_.size() && length <= bytes_.size() - offset;
  }
  template <class T>
  bool load(std::uint64_t offset, T& value) const {
    if (!contains(offset, sizeof(T))) return false;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));  // cubins are little-endian, like hosts
    return true;
  }
  // The NUL-terminated string at `at` of the table [begin, begin + length); nullopt when `at` is
  // outside it or no NUL ends the string inside it.
  std::optional<std::string> string_at(std::uint64_t begin, std::uint64_t length,
                                       std::uint64_t at) const {
    if (at >= length) return std::nullopt;
    const char* first = bytes_.data() + begin + at;
    const char* last = bytes_.data() + begin + length;
    const char* nul = std::find(first, last, '\0');
    if (nul == last) return std::nullopt;
    return std::string(first, nul);
  }

 private:
  std::span<const char> bytes_;
};

struct Section {
  std::string name;
  Elf64_Shdr header{};
};

struct Symbol {
  std::string name;
  Elf64_Sym raw{};
  bool is_function() const { return ELF64_ST_TYPE(raw.st_info) == STT_FUNC; }
};

// What the .nv.info records say of one function.
struct FunctionInfo {
  std::optional<std::uint32_t> registers;
  std::uint64_t frame = 0;  // its own frame
  std::uint64_t stack = 0;  // the cumulative stack the records give (0 when they give none)
};

struct Cubin {
  std::optional<int> sm;  // the SM version of e_flags (100 for sm_100a); nullopt: an unknown ABI
  std::uint8_t abi_version = 0;  // EI_ABIVERSION
  std::vector<Section> sections;
  std::vector<Symbol> symbols;
  std::map<std::uint32_t, FunctionInfo> info;              // by symbol index
  std::map<std::uint32_t, std::set<std::uint32_t>> calls;  // caller symbol -> callee symbols
};

std::string describe(const Section& section, size_t index) {
  return "section " + std::to_string(index) + " '" + section.name + "'";
}

Result<std::vector<Section>> read_sections(const Image& image) {
  Elf64_Ehdr header;
  if (!image.load(0, header))
    return malformed("the image has " + std::to_string(image.size()) +
                     " bytes, fewer than an ELF64 header (" + std::to_string(sizeof(header)) + ")");
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return malformed("no ELF magic");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return malformed("not a 64-bit little-endian ELF");
  if (header.e_machine != EM_CUDA)
    return malformed("e_machine is " + std::to_string(header.e_machine) + ", not EM_CUDA (" +
                     std::to_string(EM_CUDA) + ")");
  if (header.e_shnum == 0) return malformed("no section headers");
  if (header.e_shentsize < sizeof(Elf64_Shdr))
    return malformed("section header entries of " + std::to_string(header.e_shentsize) +
                     " bytes, fewer than " + std::to_string(sizeof(Elf64_Shdr)));
  const std::uint64_t table_bytes = std::uint64_t{header.e_shnum} * header.e_shentsize;
  if (!image.contains(header.e_shoff, table_bytes))
    return malformed("the section header table (offset " + std::to_string(header.e_shoff) + ", " +
                     std::to_string(table_bytes) + " bytes) lies outside the image of " +
                     std::to_string(image.size()) + " bytes");
  if (header.e_shstrndx >= header.e_shnum)
    return malformed("the section name table index " + std::to_string(header.e_shstrndx) +
                     " is not below the section count " + std::to_string(header.e_shnum));
  std::vector<Section> sections(header.e_shnum);
  for (size_t k = 0; k < sections.size(); ++k) {
    (void)image.load(header.e_shoff + k * header.e_shentsize, sections[k].header);
    const Elf64_Shdr& s = sections[k].header;
    if (s.sh_type != SHT_NULL && s.sh_type != SHT_NOBITS && !image.contains(s.sh_offset, s.sh_size))
      return malformed("section " + std::to_string(k) + " (offset " + std::to_string(s.sh_offset) +
                       ", " + std::to_string(s.sh_size) + " bytes) lies outside the image of " +
                       std::to_string(image.size()) + " bytes");
  }
  const Elf64_Shdr& names = sections[header.e_shstrndx].header;
  if (names.sh_type != SHT_STRTAB)
    return malformed("the section name table (section " + std::to_string(header.e_shstrndx) +
                     ") is not a string table");
  for (size_t k = 0; k < sections.size(); ++k) {
    auto name = image.string_at(names.sh_offset, names.sh_size, sections[k].header.sh_name);
    if (!name)
      return malformed("the name of section " + std::to_string(k) +
                       " is not a string of the section name table");
    sections[k].name = std::move(*name);
  }
  return sections;
}

Result<std::vector<Symbol>> read_symbols(const Image& image, const std::vector<Section>& sections) {
  const auto table = std::find_if(sections.begin(), sections.end(),
                                  [](const Section& s) { return s.header.sh_type == SHT_SYMTAB; });
  if (table == sections.end()) return malformed("no symbol table");
  const size_t index = static_cast<size_t>(table - sections.begin());
  const Elf64_Shdr& s = table->header;
  if (s.sh_entsize < sizeof(Elf64_Sym))
    return malformed(describe(*table, index) + " has entries of " + std::to_string(s.sh_entsize) +
                     " bytes, fewer than " + std::to_string(sizeof(Elf64_Sym)));
  if (s.sh_link >= sections.size() || sections[s.sh_link].header.sh_type != SHT_STRTAB)
    return malformed(describe(*table, index) + " links to section " + std::to_string(s.sh_link) +
                     ", which is not a string table");
  const Elf64_Shdr& strings = sections[s.sh_link].header;
  std::vector<Symbol> symbols(s.sh_size / s.sh_entsize);
  for (size_t k = 0; k < symbols.size(); ++k) {
    (void)image.load(s.sh_offset + k * s.sh_entsize, symbols[k].raw);
    auto name = image.string_at(strings.sh_offset, strings.sh_size, symbols[k].raw.st_name);
    if (!name)
      return malformed("the name of symbol " + std::to_string(k) +
                       " is not a string of its string table");
    symbols[k].name = std::move(*name);
  }
  return symbols;
}

// The .nv.info attributes of every function: the module-wide ".nv.info" and the per-function
// ".nv.info.NAME" sections (not ".nv.merc.*", the sm_100 capsule's copy).
Status read_info(const Image& image, Cubin& cubin) {
  for (size_t k = 0; k < cubin.sections.size(); ++k) {
    const Section& section = cubin.sections[k];
    if (section.name != ".nv.info" && section.name.rfind(".nv.info.", 0) != 0) continue;
    const std::uint64_t begin = section.header.sh_offset;
    const std::uint64_t end = begin + section.header.sh_size;  // checked by read_sections
    std::uint64_t at = begin;
    while (at < end) {
      std::uint8_t format = 0;
      std::uint8_t attribute = 0;
      std::uint16_t value = 0;
      if (end - at < 4 || !image.load(at, format) || !image.load(at + 1, attribute) ||
          !image.load(at + 2, value))
        return malformed(describe(section, k) + " ends inside a record header at offset " +
                         std::to_string(at - begin));
      if (format != kFormatSval) {
        at += 4;
        continue;
      }
      if (end - at - 4 < value)
        return malformed(describe(section, k) + ": the record at offset " +
                         std::to_string(at - begin) + " (attribute " + hex_byte(attribute) + ", " +
                         std::to_string(value) + " bytes) runs past the section's end");
      const bool per_function = attribute == kAttrFrameSize || attribute == kAttrMinStackSize ||
                                attribute == kAttrMaxStackSize || attribute == kAttrRegcount;
      if (per_function && value >= 8) {
        std::uint32_t symbol = 0;
        std::uint32_t number = 0;
        (void)image.load(at + 4, symbol);
        (void)image.load(at + 8, number);
        FunctionInfo& info = cubin.info[symbol];
        if (attribute == kAttrRegcount) info.registers = number;
        if (attribute == kAttrFrameSize) info.frame = std::max<std::uint64_t>(info.frame, number);
        if (attribute == kAttrMinStackSize || attribute == kAttrMaxStackSize)
          info.stack = std::max<std::uint64_t>(info.stack, number);
      }
      at += 4 + std::uint64_t{value};
    }
  }
  return std::monostate{};
}

// .nv.callgraph: (u32 caller, u32 callee) symbol pairs; the pairs whose callee is 0xfffffffc..
// 0xffffffff are list markers, not calls.
Status read_calls(const Image& image, Cubin& cubin) {
  for (size_t k = 0; k < cubin.sections.size(); ++k) {
    const Section& section = cubin.sections[k];
    if (section.name != ".nv.callgraph") continue;
    if (section.header.sh_size % 8 != 0)
      return malformed(describe(section, k) + " has " + std::to_string(section.header.sh_size) +
                       " bytes, not a whole number of 8-byte caller/callee pairs");
    // A SHT_NOBITS section passes read_sections' bounds with any size: without this, a claimed
    // size of terabytes was a loop of as many reads (found by fuzz_code_stats).
    if (!image.contains(section.header.sh_offset, section.header.sh_size))
      return malformed(describe(section, k) + " (" + std::to_string(section.header.sh_size) +
                       " bytes) lies outside the image of " + std::to_string(image.size()) +
                       " bytes");
    for (std::uint64_t at = 0; at < section.header.sh_size; at += 8) {
      std::uint32_t caller = 0;
      std::uint32_t callee = 0;
      (void)image.load(section.header.sh_offset + at, caller);
      (void)image.load(section.header.sh_offset + at + 4, callee);
      if (caller == 0 || caller >= cubin.symbols.size() || callee >= cubin.symbols.size()) continue;
      if (!cubin.symbols[caller].is_function() || !cubin.symbols[callee].is_function()) continue;
      cubin.calls[caller].insert(callee);
    }
  }
  return std::monostate{};
}

// The SM version that e_flags names, by the layout of the header's ABI version.
std::optional<int> sm_version(const Elf64_Ehdr& header) {
  const std::uint8_t abi = header.e_ident[EI_ABIVERSION];
  if (abi == kAbiVersionCudaV1) return static_cast<int>(header.e_flags & 0xff);
  if (abi == kAbiVersionCudaV2) return static_cast<int>((header.e_flags >> 8) & 0xff);
  return std::nullopt;
}

Result<Cubin> read_cubin(const Image& image) {
  Cubin cubin;
  auto sections = read_sections(image);
  if (!sections) return std::move(sections).error();
  cubin.sections = std::move(*sections);
  Elf64_Ehdr header;
  (void)image.load(0, header);  // checked by read_sections
  cubin.sm = sm_version(header);
  cubin.abi_version = header.e_ident[EI_ABIVERSION];
  auto symbols = read_symbols(image, cubin.sections);
  if (!symbols) return std::move(symbols).error();
  cubin.symbols = std::move(*symbols);
  if (Status ok = read_info(image, cubin); !ok) return std::move(ok).error();
  if (Status ok = read_calls(image, cubin); !ok) return std::move(ok).error();
  return cubin;
}

Result<std::uint32_t> find_entry(const Cubin& cubin, std::string_view entry) {
  std::vector<std::string> kernels;
  for (size_t k = 0; k < cubin.symbols.size(); ++k) {
    const Symbol& symbol = cubin.symbols[k];
    if (!symbol.is_function()) continue;
    if (symbol.name == entry) return static_cast<std::uint32_t>(k);
    if (symbol.raw.st_other & kStoCudaEntry) kernels.push_back(symbol.name);
  }
  std::string names;
  for (size_t k = 0; k < kernels.size() && k < kNamesShown; ++k)
    names += (k == 0 ? "" : ", ") + kernels[k];
  if (kernels.size() > kNamesShown)
    names += " and " + std::to_string(kernels.size() - kNamesShown) + " more";
  return Error(ErrorCode::kUsage,
               "no function '" + std::string(entry) + "' in the cubin; " +
                   (kernels.empty() ? std::string("it holds no kernel") : "its kernels: " + names));
}

// The entry and every function it reaches through the call graph, entry first.
std::vector<std::uint32_t> reachable(const Cubin& cubin, std::uint32_t entry) {
  std::vector<std::uint32_t> order = {entry};
  std::set<std::uint32_t> seen = {entry};
  for (size_t k = 0; k < order.size(); ++k) {
    const auto it = cubin.calls.find(order[k]);
    if (it == cubin.calls.end()) continue;
    for (std::uint32_t callee : it->second)
      if (seen.insert(callee).second) order.push_back(callee);
  }
  return order;
}

// The stack `entry` needs: the largest of its records, and its frame plus the deepest of its
// callees' stacks (a relocatable cubin leaves the cumulative records at 0). A recursive call is
// counted once: its depth is not in the cubin. Iterative, so that a long chain of calls in a
// malformed cubin cannot exhaust the host's stack.
std::uint64_t stack_bytes(const Cubin& cubin, std::uint32_t entry) {
  std::map<std::uint32_t, std::uint64_t> done;
  std::set<std::uint32_t> open;
  std::vector<std::pair<std::uint32_t, bool>> todo = {{entry, false}};
  auto info_of = [&](std::uint32_t f) {
    const auto it = cubin.info.find(f);
    return it == cubin.info.end() ? FunctionInfo{} : it->second;
  };
  auto callees_of = [&](std::uint32_t f) {
    const auto it = cubin.calls.find(f);
    return it == cubin.calls.end() ? std::set<std::uint32_t>{} : it->second;
  };
  while (!todo.empty()) {
    const auto [f, expanded] = todo.back();
    todo.pop_back();
    if (done.count(f)) continue;
    if (!expanded) {
      if (!open.insert(f).second) continue;  // a recursive call: already on the chain
      todo.emplace_back(f, true);
      for (std::uint32_t callee : callees_of(f))
        if (!done.count(callee) && !open.count(callee)) todo.emplace_back(callee, false);
      continue;
    }
    const FunctionInfo info = info_of(f);
    std::uint64_t deepest = 0;
    for (std::uint32_t callee : callees_of(f))
      if (const auto it = done.find(callee); it != done.end())
        deepest = std::max(deepest, it->second);
    done[f] = std::max({info.frame, info.stack, info.frame + deepest});
    open.erase(f);
  }
  return done[entry];
}

Result<int> as_int(std::uint64_t value, const std::string& what) {
  if (value > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    return malformed(what + " of " + std::to_string(value) + " is out of range");
  return static_cast<int>(value);
}

// Whether the SASS of an SM version has LDTM/STTM, and which encoding.
enum class TmemCode { kEncodingKnown, kNone, kUnknown };

TmemCode tmem_code(std::optional<int> sm) {
  if (!sm) return TmemCode::kUnknown;
  if (*sm == 100 || *sm == 101 || *sm == 103 || *sm == 110) return TmemCode::kEncodingKnown;
  // tcgen05 needs sm_100a/f, sm_101a, sm_103a/f or sm_110a/f (PTX ISA §9.7.16); sm_12x has no TMEM.
  if (*sm < 100 || *sm == 120 || *sm == 121) return TmemCode::kNone;
  return TmemCode::kUnknown;
}

// LDTM and STTM of `functions` (names of their .text sections) in the disassembly.
void count_with_disassembler(std::span<const char> cubin, const std::vector<std::string>& functions,
                             CodeStats& stats) {
  const auto tool = sass::find_disassembler();
  if (!tool) {
    stats.disassembler = sass::search_description();
    return;
  }
  auto text = sass::disassemble(*tool, cubin);
  if (!text) {
    stats.disassembler = text.error().message();
    return;
  }
  const auto listings = sass::listings_by_function(*text);
  int ldtm = 0;
  int sttm = 0;
  for (const std::string& name : functions) {
    const auto it = listings.find(name);
    if (it == listings.end()) {
      stats.disassembler = tool->path + " listed no function '" + name + "'";
      return;
    }
    ldtm += it->second.count("LDTM");
    sttm += it->second.count("STTM");
  }
  stats.ldtm = ldtm;
  stats.sttm = sttm;
  stats.disassembler = tool->path;
}

}  // namespace

Result<CodeStats> code_stats(Span<const char> cubin_bytes, std::string_view entry,
                             Disassembly disassembly) {
  const Image image(cubin_bytes);
  auto cubin = read_cubin(image);
  if (!cubin) return std::move(cubin).error();
  auto entry_symbol = find_entry(*cubin, entry);
  if (!entry_symbol) return std::move(entry_symbol).error();

  std::uint64_t registers = 0;
  std::uint64_t instructions = 0;
  std::uint64_t ldtm = 0;  // by opcode, meaningful for TmemCode::kEncodingKnown only
  std::uint64_t sttm = 0;
  std::set<std::uint16_t> counted;  // text sections, once each (symbols may share one)
  std::vector<std::string> listed;  // their names as the disassembler prints them
  for (std::uint32_t f : reachable(*cubin, *entry_symbol)) {
    const Symbol& symbol = cubin->symbols[f];
    const std::uint16_t index = symbol.raw.st_shndx;
    // An external function the driver resolves at load (vprintf, malloc: a kernel that prints)
    // has no code in the cubin to count.
    if (index == SHN_UNDEF) continue;
    if (index >= cubin->sections.size())
      return malformed("function '" + symbol.name + "' has no section (index " +
                       std::to_string(index) + ")");
    const Section& text = cubin->sections[index];
    if (text.header.sh_type != SHT_PROGBITS || !(text.header.sh_flags & SHF_EXECINSTR))
      return malformed("function '" + symbol.name + "' lies in " + describe(text, index) +
                       ", which is not code");
    if (text.header.sh_size % kInstructionBytes != 0)
      return malformed(describe(text, index) + " has " + std::to_string(text.header.sh_size) +
                       " bytes, not a whole number of " + std::to_string(kInstructionBytes) +
                       "-byte instructions");
    const auto info = cubin->info.find(f);
    if (info != cubin->info.end() && info->second.registers)
      registers = std::max<std::uint64_t>(registers, *info->second.registers);
    else if (f == *entry_symbol)
      registers = std::max<std::uint64_t>(registers, text.header.sh_info >> 24);  // older ABIs
    if (!counted.insert(index).second) continue;
    // Whole instructions only (the size is checked above; a partial one is never read).
    for (std::uint64_t at = 0; text.header.sh_size - at >= kInstructionBytes;
         at += kInstructionBytes) {
      std::uint64_t low = 0;  // the first 64-bit word: opcode, guard, operands
      (void)image.load(text.header.sh_offset + at, low);
      const std::uint64_t opcode = low & kOpcodeMask;
      if (opcode != kNopOpcode) ++instructions;
      if (opcode == kLdtmOpcode || opcode == kLdtmStatOpcode) ++ldtm;
      if (opcode == kSttmOpcode) ++sttm;
    }
    listed.push_back(text.name.rfind(".text.", 0) == 0 ? text.name.substr(6) : symbol.name);
  }

  CodeStats stats;
  auto as_registers = as_int(registers, "a register count");
  if (!as_registers) return std::move(as_registers).error();
  stats.registers = *as_registers;
  auto as_local = as_int(stack_bytes(*cubin, *entry_symbol), "a stack size");
  if (!as_local) return std::move(as_local).error();
  stats.local_bytes = *as_local;
  auto as_instructions = as_int(instructions, "an instruction count");
  if (!as_instructions) return std::move(as_instructions).error();
  stats.instructions = *as_instructions;
  switch (disassembly) {
    case Disassembly::kSkip:
      stats.disassembler = "not asked";
      break;
    case Disassembly::kTool:
      count_with_disassembler(cubin_bytes, listed, stats);
      break;
    case Disassembly::kEncoding:
      switch (tmem_code(cubin->sm)) {
        case TmemCode::kEncodingKnown:
          // Not above `instructions`, which passed as_int.
          stats.ldtm = static_cast<int>(ldtm);
          stats.sttm = static_cast<int>(sttm);
          stats.disassembler = "sass encoding (sm_100 family)";
          break;
        case TmemCode::kNone:
          stats.ldtm = 0;
          stats.sttm = 0;
          stats.disassembler = "none on sm_" + std::to_string(*cubin->sm) +
                               ": tcgen05 exists only on sm_100, sm_101, sm_103 and sm_110";
          break;
        case TmemCode::kUnknown:
          stats.disassembler =
              (cubin->sm
                   ? "the LDTM/STTM encoding of sm_" + std::to_string(*cubin->sm)
                   : "the SM version of ELF ABI version " + std::to_string(cubin->abi_version)) +
              " is not known here; Disassembly::kTool reads the code";
          break;
      }
      break;
  }
  return stats;
}

std::string to_string(const CodeStats& stats) {
  std::string out = "registers=" + std::to_string(stats.registers) +
                    " local_bytes=" + std::to_string(stats.local_bytes) +
                    " instructions=" + std::to_string(stats.instructions);
  if (stats.ldtm < 0 || stats.sttm < 0) return out + " ldtm=? sttm=? (" + stats.disassembler + ")";
  return out + " ldtm=" + std::to_string(stats.ldtm) + " sttm=" + std::to_string(stats.sttm);
}

}  // namespace tmem
