// tmem::run_transfer: runs a transfer's harness kernels on random data on some device and checks
// every element against what the tensor views predict (`tmemjit run`, docs/design.md §CLI).
//
// Checks, each with its own seeded data:
//   raw        Raw -> TMEM -> Raw2 through 32x32b only: the raw path the other checks rely on
//   roundtrip  In -> registers -> st -> wait -> ld -> wait -> Out: Out[thread][slot] == In
//   store      In -> st with the opcode, then TMEM dumped through 32x32b: Raw[lane][column] holds
//              the register value the views put there
//   load       Raw filled through 32x32b, then ld with the opcode: Out[thread][slot] holds the
//              TMEM value the views put there
// Expected values come from the views (the register view gives the thread and slot of each
// element, the TMEM view its lane and column, every replica of each), never from the Plan; so a
// planning or code generation bug shows up as wrong data. 16-bit elements compare only their 16
// bits: the upper half of a cell written by unpack::16b is never compared.
//
// A load may read one TMEM cell for several elements (a broadcast: two warps, two repeats, the two
// accesses of 16x32bx2 with imm 0, or a replica on another element's cell). Those elements get one
// value, and roundtrip and store, which would write the cell once per element, are left out
// (RunReport::left_out says why); raw and load still run (docs/checking.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tmem/device.h"
#include "tmem/export.h"
#include "tmem/plan.h"
#include "tmem/result.h"
#include "tmem/rule.h"
#include "tmem/transfer.h"

TMEMJIT_API_BEGIN
namespace tmem {

struct RunOptions {
  Device device = Device::kAuto;
  std::uint64_t seed = 1;  // the same seed gives the same data
  // 1: one CTA allocates TMEM. 2: a CTA pair (cta_group::2, docs/tcgen05-rules.md §Lifecycle)
  // launched as a cluster of 2 CTAs runs every check, CTA 1 on the complement of CTA 0's data, so a
  // CTA that touches its peer's block fails; devices sim and emu run it.
  int cta_group = 1;
};

// The first wrong element of a check.
struct Mismatch {
  std::string check;                  // "raw", "roundtrip", "store", "load"
  std::vector<std::int64_t> element;  // coordinate in the register view (empty for "raw"
                                      // and for a stray write)
  int thread = -1;                    // register side; -1 when the check has none
  int slot = -1;
  int lane = -1;  // TMEM side; -1 when the check has none
  int column = -1;
  int bits = 32;  // compared bits: [shift, shift + bits) of the word
  int shift = 0;
  std::uint32_t expected = 0;
  std::uint32_t got = 0;
  std::string note;  // e.g. "a slot no element uses was written"
  int cta = 0;       // with cta_group 2: the CTA of the pair whose block is wrong
  // "store: element (1, 5, 3): thread 37 slot 3 -> TMEM lane 37 column 3: expected 0x.., got 0x.."
  std::string to_string() const;
};

struct CheckResult {
  std::string name;           // "raw", "roundtrip", "store", "load"
  std::string description;    // what the check runs and compares
  std::int64_t elements = 0;  // elements compared (16-bit halves count one each)
  bool passed = false;
  std::optional<Mismatch> mismatch;  // the first wrong element
  std::string error;                 // or: the rule the run broke (simulator), with details
  Rule rule = Rule::kNone;           // that rule (docs/tcgen05-rules.md id), when the run broke one
};

// A check that did not run, and why ("store": the views put two elements on one TMEM cell).
struct LeftOutCheck {
  std::string name;
  std::string reason;
};

struct RunReport {
  Device device = Device::kSim;
  std::string device_description;
  std::vector<std::string> passed_over;  // one line per device `auto` did not use, and why
  std::uint64_t seed = 1;
  int cta_group = 1;                   // 2: every check ran on a CTA pair (RunOptions::cta_group)
  std::vector<CheckResult> checks;     // the checks that ran, in order
  std::vector<LeftOutCheck> left_out;  // the checks that do not apply to the spec

  bool passed() const noexcept;
  std::int64_t elements() const noexcept;
  const CheckResult* first_failure() const noexcept;
  // Lines for `tmemjit run`: the device, each check, each check left out and why, then
  // "PASS: ..." or "FAIL: ...".
  std::string to_string() const;
  // {"pass": .., "device": .., "description": .., "passed_over": [..], "seed": ..,
  //  "cta_group": ..,
  //  "elements": .., "checks": [{"name", "elements", "pass", "mismatch"?, "error"?, "rule"?}],
  //  "left_out": [{"name", "reason"}]}
  // (the CLI adds its "ok" envelope)
  std::string to_json() const;
};

// Checks the spec (tmem::check), then runs the checks above. A spec that fails the check is
// returned as that Error; a device that cannot run is kDriver ("device gpu: needs compute
// capability 10.x, found 9.0"), or kToolchain when compiling for it failed. Wrong data is not an
// Error: the report's checks say what failed.
Result<RunReport> run_transfer(const TransferSpec& spec, const RunOptions& options = {});
// The same with a given Plan, normally check(spec). Tests pass a deliberately altered plan to
// show that the checks catch it.
Result<RunReport> run_transfer(const TransferSpec& spec, const Plan& plan,
                               const RunOptions& options = {});

}  // namespace tmem
TMEMJIT_API_END
