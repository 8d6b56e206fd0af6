// Compilation targets that run tcgen05 (docs/tcgen05-rules.md §Targets) and the PTX ISA version
// each needs.
#pragma once

#include <string>
#include <string_view>

#include "tmem/export.h"
#include "tmem/result.h"
#include "tmem/span.h"

TMEMJIT_API_BEGIN
namespace tmem {

// A PTX ISA version, e.g. {8, 8} for ".version 8.8".
struct PtxVersion {
  int major = 0;
  int minor = 0;
  // Ordered by major, then minor.
  friend bool operator==(const PtxVersion& a, const PtxVersion& b) {
    return a.major == b.major && a.minor == b.minor;
  }
  friend bool operator!=(const PtxVersion& a, const PtxVersion& b) { return !(a == b); }
  friend bool operator<(const PtxVersion& a, const PtxVersion& b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
  friend bool operator>(const PtxVersion& a, const PtxVersion& b) { return b < a; }
  friend bool operator<=(const PtxVersion& a, const PtxVersion& b) { return !(b < a); }
  friend bool operator>=(const PtxVersion& a, const PtxVersion& b) { return !(a < b); }
  std::string to_string() const;  // "8.8"
};

// kSm90 is not a tcgen05 target: only the GPU emulation (kernels/emulation_kernels.h, TMEM in
// global memory) builds for it. It is absent from all_targets(); parse_target("sm_90") gives it
// (the CLI, Python and C++ take the same names), and the PTX IR refuses every tcgen05
// instruction on it.
enum class Target { kSm100a, kSm100f, kSm103a, kSm103f, kSm110a, kSm110f, kSm90 };

// Every target that accepts tcgen05.ld/st, in a fixed order (sm_100a first: the default).
Span<const Target> all_targets() noexcept;

std::string_view to_string(Target target) noexcept;  // "sm_100a"
// Every name of all_targets() and "sm_90" (kSm90, the emulation); kTarget naming the allowed set
// otherwise. A caller that needs tcgen05 (a harness kernel) refuses kSm90 itself.
Result<Target> parse_target(std::string_view text);

// Lowest .version whose PTX this target accepts: 8.6 for sm_100a, 8.8 for sm_100f/sm_103a/sm_103f,
// 9.0 for sm_110a/sm_110f (sm_101a was renamed sm_110a in PTX ISA 9.0); 7.8 for sm_90.
PtxVersion min_ptx_version(Target target) noexcept;

// Compute capability of the devices that can load code for the target, e.g. 100 for sm_100a.
int compute_capability(Target target) noexcept;
// Family targets (sm_100f) run on every device of the family; arch targets need an exact match.
bool is_family_target(Target target) noexcept;
// Whether code for `target` loads on a device of compute capability `cc` (e.g. 103 for 10.3):
// sm_100a needs exactly 100; sm_100f accepts 100 and 103; sm_103f accepts 103
// (docs/tcgen05-rules.md §Targets). sm_90 (emulation) accepts every cc >= 90: its cubin runs
// on 9.x, and on later devices the emulation executor hands the driver the PTX, which it
// JIT-compiles for the device.
bool runs_on(Target target, int cc) noexcept;

}  // namespace tmem
TMEMJIT_API_END
