// SASS listing parsing and address tracing for the CuTe agreement tests.
#include "cute/sass_trace.h"

#include <cctype>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tmemjit_cute {
namespace {

struct Instruction {
  std::string mnemonic;               // with modifiers, without the guard predicate
  std::vector<std::string> operands;  // trimmed, ".reuse" removed
  std::string text;
};

std::string trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

// "/*00d0*/  @P0 LDTM.x2 R4, tmem[UR4+0x10] ;" -> mnemonic and operands; nullopt for other lines.
std::optional<Instruction> parse_instruction(const std::string& line) {
  const size_t open = line.find("/*");
  const size_t close = line.find("*/", open == std::string::npos ? 0 : open);
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  const size_t semicolon = line.find(';', close);
  if (semicolon == std::string::npos) return std::nullopt;
  std::string body = trim(line.substr(close + 2, semicolon - close - 2));
  if (body.empty()) return std::nullopt;
  if (body[0] == '@') body = trim(body.substr(body.find_first_of(" \t")));
  Instruction out;
  out.text = body;
  const size_t space = body.find_first_of(" \t");
  out.mnemonic = body.substr(0, space);
  if (space != std::string::npos) {
    std::stringstream operands(body.substr(space));
    for (std::string operand; std::getline(operands, operand, ',');) {
      operand = trim(operand);
      if (const size_t reuse = operand.find(".reuse"); reuse != std::string::npos)
        operand.erase(reuse, 6);
      out.operands.push_back(operand);
    }
  }
  return out;
}

std::string base_of(const std::string& mnemonic) { return mnemonic.substr(0, mnemonic.find('.')); }

std::optional<std::int64_t> immediate(const std::string& operand) {
  if (operand.empty()) return std::nullopt;
  const bool negative = operand[0] == '-';
  const std::string digits = negative ? operand.substr(1) : operand;
  if (digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0]))) return std::nullopt;
  try {
    size_t used = 0;
    const std::int64_t value = std::stoll(digits, &used, 0);
    if (used != digits.size()) return std::nullopt;
    return negative ? -value : value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool is_zero_or_true(const std::string& operand) {
  return operand == "RZ" || operand == "URZ" || operand == "PT" || operand == "UPT" ||
         operand == "!PT" || operand == "!UPT";
}

struct Value {
  std::string root;
  std::int64_t offset = 0;
};

Value value_of(const std::vector<Instruction>& code, size_t before, const std::string& reg) {
  for (size_t j = before; j-- > 0;) {
    const Instruction& in = code[j];
    if (in.operands.empty() || in.operands[0] != reg) continue;
    const std::string base = base_of(in.mnemonic);
    if ((base == "R2UR" || base == "MOV" || base == "UMOV") && in.operands.size() == 2) {
      if (std::optional<std::int64_t> constant = immediate(in.operands[1])) return {"0", *constant};
      return value_of(code, j, in.operands[1]);
    }
    if (base == "IADD3" || base == "UIADD3" || base == "VIADD" || base == "IADD") {
      std::vector<std::string> regs;
      std::int64_t constant = 0;
      int constants = 0;
      for (size_t k = 1; k < in.operands.size(); ++k) {
        if (is_zero_or_true(in.operands[k])) continue;
        if (std::optional<std::int64_t> c = immediate(in.operands[k])) {
          constant += *c;
          ++constants;
        } else {
          regs.push_back(in.operands[k]);
        }
      }
      if (regs.size() == 1 && constants >= 1) {
        Value v = value_of(code, j, regs[0]);
        v.offset += constant;
        return v;
      }
    }
    return {reg + "@" + std::to_string(j), 0};
  }
  return {reg + "@entry", 0};
}

}  // namespace

std::map<std::string, std::string> split_functions(const std::string& sass) {
  std::map<std::string, std::string> out;
  std::string* current = nullptr;
  std::stringstream lines(sass);
  for (std::string line; std::getline(lines, line);) {
    std::string name;
    if (line.rfind("//----", 0) == 0 && line.find(".text.") != std::string::npos) {
      name = line.substr(line.find(".text.") + 6);
    } else if (const size_t at = line.find("Function : "); at != std::string::npos) {
      name = line.substr(at + 11);
    }
    if (!name.empty()) {
      name = name.substr(0, name.find_first_of(" \t-"));
      current = &out[name];
      continue;
    }
    if (current != nullptr) *current += line + "\n";
  }
  return out;
}

std::vector<TmemInstruction> trace_tmem(const std::string& function_sass, const std::string& base) {
  std::vector<Instruction> code;
  std::stringstream lines(function_sass);
  for (std::string line; std::getline(lines, line);)
    if (std::optional<Instruction> in = parse_instruction(line)) code.push_back(std::move(*in));
  std::vector<TmemInstruction> out;
  for (size_t i = 0; i < code.size(); ++i) {
    if (base_of(code[i].mnemonic) != base) continue;
    for (const std::string& operand : code[i].operands) {
      if (operand.rfind("tmem[", 0) != 0) continue;
      // tmem[URx] or tmem[URx+0x...]
      const std::string inside = operand.substr(5, operand.find(']') - 5);
      const size_t plus = inside.find('+');
      const std::string reg = inside.substr(0, plus);
      Value v = value_of(code, i, reg);
      if (plus != std::string::npos) v.offset += immediate(inside.substr(plus + 1)).value_or(0);
      out.push_back({code[i].mnemonic, v.root, v.offset, code[i].text});
    }
  }
  return out;
}

}  // namespace tmemjit_cute
