// PLACEHOLDER (being written by a helper; replaced before commit).
#include "runtime/executor.h"

namespace tmem {
Result<std::unique_ptr<Executor>> make_emu_executor() {
  return Error(ErrorCode::kUsage, "the emu executor is not written yet");
}
}  // namespace tmem
