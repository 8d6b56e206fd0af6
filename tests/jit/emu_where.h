// Where a device test of compile_kernel runs (label emu): the sm_90 emulation on compute
// capability 9.x, the device's own tcgen05 target on 10.x/11.x, or why it cannot run.
#pragma once

#include <string>

#include "runtime/cuda/driver.h"
#include "tmem/target.h"

namespace tmem {

// The target to run on, or why not: kSm90 (emulation) on 9.x, the device's own on 10.x/11.x.
struct Where {
  Target target = Target::kSm90;
  std::string skip;
};
inline Where where_to_run() {
  Where where;
  if (Status driver = driver::ensure_driver(); !driver.ok()) {
    where.skip = driver.error().message();
    return where;
  }
  auto count = driver::device_count();
  if (!count.ok() || *count == 0) {
    where.skip = count.ok() ? "no CUDA device" : count.error().message();
    return where;
  }
  auto info = driver::device_info(0);
  if (!info.ok()) {
    where.skip = info.error().message();
    return where;
  }
  if (info->compute_capability < 90) {
    where.skip = "the emulation needs compute capability 9.0 or later, found " +
                 driver::cc_to_string(info->compute_capability);
    return where;
  }
  if (info->compute_capability >= 100) {
    auto real = parse_target("sm_" + std::to_string(info->compute_capability) + "a");
    if (real.ok()) where.target = *real;
  }
  return where;
}

}  // namespace tmem
