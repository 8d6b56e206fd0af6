// What CompileOptions::keep_dir writes beside a CUDA source NVRTC compiled to a cubin, so that
// the compile can be rebuilt outside the library with NVRTC alone (issue 41 item 8;
// docs/specialization.md "Reproducing a compile").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tmem/result.h"

namespace tmem {

struct NvrtcReproducer {
  std::string stem;          // the kept files' common path: STEM.cu is the source NVRTC got
  std::string program_name;  // the name NVRTC was given for it (diagnostics, __FILE__)
  std::vector<std::pair<std::string, std::string>> headers;  // in-memory headers (name, text)
  std::vector<std::string> options;                          // NVRTC's options, in order
  std::vector<std::string> name_expressions;  // added before the compile (they instantiate)
  std::string nvrtc_library;  // the NVRTC the library loaded (absolute path), or empty
};

// Writes STEM.header<i>.cuh for every in-memory header, STEM.nvrtc.json (the NVRTC library, the
// program name, the options in order, each header's name and file; the precompiled-header options
// are left out: they never change the code) and STEM.rebuild.py, which runs NVRTC through ctypes
// on those files and writes STEM.rebuilt.cubin.
Result<bool> write_nvrtc_reproducer(const NvrtcReproducer& reproducer);

// The options of `options` that only make or use NVRTC precompiled headers.
bool is_pch_option(const std::string& option);

}  // namespace tmem
