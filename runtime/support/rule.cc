// Names of the rules an Error can break (tmem/rule.h).
#include "tmem/rule.h"

#include <array>
#include <string>

namespace tmem {
namespace {

constexpr int kFirstTcgen05 = static_cast<int>(Rule::kLdOrSt);
constexpr int kTcgen05Rules = 31;
static_assert(static_cast<int>(Rule::kWaitBeforeReuse) == kFirstTcgen05 + kTcgen05Rules - 1,
              "the named tcgen05 rules are R1..R31 in id order");

// The words of the rules of docs/transfer-semantics.md §Rules, in enum order from kNone.
constexpr std::array<const char*, kFirstTcgen05> kWords = {
    "none",     "axes", "dtype",   "pack",  "shape",     "imm",    "ownership", "slot",
    "replicas", "slab", "columns", "split", "placement", "bounds", "coverage"};

constexpr std::array<const char*, kTcgen05Rules> kIds = {
    "R1",  "R2",  "R3",  "R4",  "R5",  "R6",  "R7",  "R8",  "R9",  "R10", "R11",
    "R12", "R13", "R14", "R15", "R16", "R17", "R18", "R19", "R20", "R21", "R22",
    "R23", "R24", "R25", "R26", "R27", "R28", "R29", "R30", "R31"};

}  // namespace

const char* to_string(Rule rule) noexcept {
  const int index = static_cast<int>(rule);
  if (index >= 0 && index < kFirstTcgen05) return kWords[static_cast<size_t>(index)];
  if (index >= kFirstTcgen05 && index < kFirstTcgen05 + kTcgen05Rules)
    return kIds[static_cast<size_t>(index - kFirstTcgen05)];
  return "none";
}

std::optional<Rule> parse_rule(std::string_view text) noexcept {
  for (int i = 0; i < kFirstTcgen05 + kTcgen05Rules; ++i)
    if (text == to_string(static_cast<Rule>(i))) return static_cast<Rule>(i);
  return std::nullopt;
}

Rule tcgen05_rule(int id) noexcept {
  if (id < 1 || id > kTcgen05Rules) return Rule::kNone;
  return static_cast<Rule>(kFirstTcgen05 + id - 1);
}

}  // namespace tmem
