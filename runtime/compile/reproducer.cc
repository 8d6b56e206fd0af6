// What keep_dir writes to rebuild a compile with NVRTC alone (reproducer.h).
#include "runtime/compile/reproducer.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/support/subprocess.h"

namespace tmem {
namespace {

// Reads STEM.nvrtc and STEM.headers/, calls NVRTC as the library did, and writes the cubin. Only
// the standard library and libnvrtc: it runs where the library is not installed.
constexpr const char* kRebuildScript = R"PY(#!/usr/bin/env python3
"""Rebuilds a kernel libtmemjit compiled, with NVRTC alone (written by keep_dir).

Usage: python3 STEM.rebuild.py [OUT.cubin]   (default: STEM.rebuilt.cubin beside this file)
NVRTC is the library named by $TMEMJIT_NVRTC_LIBRARY, else the one libtmemjit used, else
libnvrtc.so.13. Exits 1 with NVRTC's log when the compile fails.
"""
import ctypes
import json
import os
import sys

STEM = __file__[: -len(".rebuild.py")]


def load_nvrtc(recorded):
    for candidate in (os.environ.get("TMEMJIT_NVRTC_LIBRARY"), recorded, "libnvrtc.so.13"):
        if candidate:
            try:
                return ctypes.CDLL(candidate)
            except OSError:
                pass
    sys.exit("rebuild: no NVRTC library could be loaded (set TMEMJIT_NVRTC_LIBRARY)")


def main():
    with open(STEM + ".nvrtc.json", encoding="utf-8") as f:
        recipe = json.load(f)
    with open(STEM + ".cu", "rb") as f:
        source = f.read()
    names, texts = [], []
    for header in recipe["headers"]:
        with open(os.path.join(os.path.dirname(STEM), header["file"]), "rb") as h:
            names.append(header["name"].encode())
            texts.append(h.read())
    options, program_name = recipe["options"], recipe["program_name"]
    recorded = recipe["nvrtc_library"]
    nvrtc = load_nvrtc(recorded)
    program = ctypes.c_void_p()
    strings = lambda items: (ctypes.c_char_p * max(len(items), 1))(*items)
    check = lambda result, what: result == 0 or sys.exit(f"rebuild: {what} failed ({result})")
    check(nvrtc.nvrtcCreateProgram(ctypes.byref(program), source, program_name.encode(),
                                   len(names), strings(texts), strings(names)), "nvrtcCreateProgram")
    for expression in recipe["name_expressions"]:
        check(nvrtc.nvrtcAddNameExpression(program, expression.encode()), "nvrtcAddNameExpression")
    encoded = [o.encode() for o in options]
    compiled = nvrtc.nvrtcCompileProgram(program, len(encoded), strings(encoded))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    if compiled != 0:
        sys.exit("rebuild: NVRTC failed:\n" + log.value.decode(errors="replace"))
    check(nvrtc.nvrtcGetCUBINSize(program, ctypes.byref(size)), "nvrtcGetCUBINSize")
    cubin = ctypes.create_string_buffer(size.value)
    check(nvrtc.nvrtcGetCUBIN(program, cubin), "nvrtcGetCUBIN")
    out = sys.argv[1] if len(sys.argv) > 1 else STEM + ".rebuilt.cubin"
    with open(out, "wb") as f:
        f.write(cubin.raw)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    print(out)


main()
)PY";

}  // namespace

bool is_pch_option(const std::string& option) {
  for (const char* prefix : {"--pch", "-pch", "--create-pch", "-create-pch", "--use-pch",
                             "-use-pch", "--instantiate-templates-in-pch"})
    if (option.starts_with(prefix)) return true;
  return false;
}

Result<bool> write_nvrtc_reproducer(const NvrtcReproducer& reproducer) {
  nlohmann::json recipe;
  recipe["nvrtc_library"] = reproducer.nvrtc_library;
  recipe["program_name"] = reproducer.program_name;
  recipe["options"] = nlohmann::json::array();
  for (const std::string& option : reproducer.options)
    if (!is_pch_option(option)) recipe["options"].push_back(option);
  recipe["name_expressions"] = reproducer.name_expressions;
  recipe["headers"] = nlohmann::json::array();
  const std::string base = std::filesystem::path(reproducer.stem).filename().string();
  for (size_t i = 0; i < reproducer.headers.size(); ++i) {
    // Numbered files: a header's name may hold '/' or '..', which must not pick the path.
    const std::string file = base + ".header" + std::to_string(i) + ".cuh";
    const auto& [name, text] = reproducer.headers[i];
    if (auto written = write_file(reproducer.stem + ".header" + std::to_string(i) + ".cuh", text);
        !written)
      return written;
    recipe["headers"].push_back({{"name", name}, {"file", file}});
  }
  // Names and options are the user's bytes: invalid UTF-8 is replaced, not an exception.
  const std::string json = recipe.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  if (auto written = write_file(reproducer.stem + ".nvrtc.json", json + "\n"); !written)
    return written;
  return write_file(reproducer.stem + ".rebuild.py", kRebuildScript);
}

}  // namespace tmem
