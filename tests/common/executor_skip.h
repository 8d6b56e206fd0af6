// The executor a hardware suite runs on, or the precise reason it must skip (never a silent pass):
// a missing driver or an unsuitable GPU skips; any other failure to create the executor fails.
#pragma once

#include <memory>
#include <string>

#include "runtime/exec/executor.h"

namespace tmemjit_test {

struct ExecutorOrReason {
  std::unique_ptr<tmem::Executor> executor;
  std::string skip;     // set: the suite skips with this reason
  std::string failure;  // set: the suite fails with this text
};

inline ExecutorOrReason make_for_suite(tmem::Device device) {
  ExecutorOrReason out;
  auto made = tmem::make_executor(device);
  if (made.ok()) {
    out.executor = std::move(*made);
    return out;
  }
  const tmem::Error& e = made.error();
  if (e.device_fault() == tmem::DeviceFault::kNoDriver)
    out.skip = "no CUDA driver (libcuda.so.1) on this machine";
  else if (e.device_fault() == tmem::DeviceFault::kNoDevice ||
           e.device_fault() == tmem::DeviceFault::kWrongComputeCapability)
    out.skip = e.message();
  else
    out.failure = e.full_text();
  return out;
}

}  // namespace tmemjit_test
