// The example epilogue's layouts (examples/epilogue/layouts/NAME.json) as the jit tests name
// them: a spec read from its file, and a named transfer of a kernel source.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/files.h"
#include "tmem/specialize.h"

namespace tmem::testing {

inline TransferSpec epilogue_layout(const std::string& name) {
  return TransferSpec::from_json(read_file(std::string(TMEMJIT_SOURCE_DIR) +
                                           "/examples/epilogue/layouts/" + name + ".json"))
      .value();
}

inline NamedTransfer named_transfer(TransferSpec spec, std::string name) {
  DeviceFunctionOptions options;
  options.name = std::move(name);
  return {std::move(spec), options};
}

// Layout D of the roundtrip kernel (32x32b.x32 store and load, 64 registers per thread).
inline std::vector<NamedTransfer> roundtrip_layout_d() {
  return {named_transfer(epilogue_layout("d_x32_st"), "acc_st"),
          named_transfer(epilogue_layout("d_x32_ld"), "acc_ld")};
}

}  // namespace tmem::testing
