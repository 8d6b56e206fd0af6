// Disassembler discovery and SASS listing parsing.
#include "runtime/compile/sass.h"

#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <sstream>

#include "runtime/support/settings.h"
#include "runtime/support/subprocess.h"

namespace tmem::sass {
namespace {

bool executable(const std::string& path) {
  struct stat info {};
  return !path.empty() && stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

std::string dirname(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::optional<std::string> on_path(const std::string& name) {
  std::stringstream dirs(Settings::from_environment().path);
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && executable(dir + "/" + name)) return dir + "/" + name;
  return std::nullopt;
}

// Directories that hold the `nvidia` namespace package of the Python wheels (one per line).
std::vector<std::string> python_nvidia_dirs() {
  auto out = run_process({"python3", "-c", "import nvidia\nfor p in nvidia.__path__: print(p)"});
  std::vector<std::string> dirs;
  if (!out || out->exit_code != 0) return dirs;
  std::stringstream lines(out->output);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] == '/') dirs.push_back(line);
  return dirs;
}

std::optional<Disassembler> search() {
  if (auto p = on_path("nvdisasm")) return Disassembler{*p, false};
  if (auto p = on_path("cuobjdump")) return Disassembler{*p, true};
#ifdef TMEMJIT_PTXAS_PATH
  const std::string bin = dirname(TMEMJIT_PTXAS_PATH);
  if (executable(bin + "/nvdisasm")) return Disassembler{bin + "/nvdisasm", false};
  if (executable(bin + "/cuobjdump")) return Disassembler{bin + "/cuobjdump", true};
#endif
  for (const std::string& dir : python_nvidia_dirs())
    for (const char* sub :
         {"/cu13/bin/nvdisasm", "/cu12/bin/nvdisasm", "/cuda_nvdisasm/bin/nvdisasm"})
      if (executable(dir + sub)) return Disassembler{dir + sub, false};
  return std::nullopt;
}

}  // namespace

std::optional<Disassembler> find_disassembler() {
  if (const std::string path = Settings::from_environment().nvdisasm; executable(path))
    return Disassembler{path, path.find("cuobjdump") != std::string::npos};
  static std::once_flag once;
  static std::optional<Disassembler> found;
  std::call_once(once, [] { found = search(); });
  return found;
}

std::string search_description() {
  return "no SASS disassembler found: looked at $TMEMJIT_NVDISASM, nvdisasm and cuobjdump on PATH, "
         "the CUDA bin directory and the nvidia-cuda-nvdisasm Python wheel "
         "(pip install nvidia-cuda-nvdisasm)";
}

Result<std::string> disassemble(const Disassembler& tool, std::span<const char> cubin) {
  auto dir = ScratchDir::create("tmemjit-sass-");
  if (!dir) return std::move(dir).error();
  const std::string file = dir->file("module.cubin");
  if (auto written = write_file(file, std::vector<char>(cubin.begin(), cubin.end())); !written)
    return std::move(written).error();
  std::vector<std::string> argv = tool.is_cuobjdump
                                      ? std::vector<std::string>{tool.path, "-sass", file}
                                      : std::vector<std::string>{tool.path, "-c", file};
  auto out = run_process(argv);
  if (!out) return std::move(out).error();
  if (out->exit_code != 0)
    return Error(
        ErrorCode::kToolchain,
        "disassembly failed: " + tool.path + " exited with " + std::to_string(out->exit_code),
        out->output);
  return std::move(out->output);
}

Listing::Listing(const std::string& sass_text) {
  std::stringstream lines(sass_text);
  std::string line;
  while (std::getline(lines, line)) {
    // Instruction lines look like "        /*0040*/  @!P0 ISETP.NE.AND P0, PT, R4, RZ, PT ;".
    const auto open = line.find("/*");
    if (open == std::string::npos) continue;
    const auto close = line.find("*/", open + 2);
    if (close == std::string::npos || close - open - 2 < 4) continue;  // a hex code offset
    const std::string offset = line.substr(open + 2, close - open - 2);
    if (offset.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
    std::stringstream tokens(line.substr(close + 2));
    std::string token;
    if (!(tokens >> token)) continue;
    if (token[0] == '@' && !(tokens >> token)) continue;
    if (token == ";" || token[0] == '.' || token.rfind("/*", 0) == 0) continue;  // data, comments
    if (!token.empty() && token.back() == ';') token.pop_back();
    mnemonics_.push_back(token);
  }
}

std::map<std::string, Listing> listings_by_function(const std::string& sass_text) {
  std::map<std::string, std::string> texts;
  std::string* current = nullptr;
  std::stringstream lines(sass_text);
  std::string line;
  while (std::getline(lines, line)) {
    std::string name;
    if (const auto at = line.find("//--------------------- .text."); at != std::string::npos) {
      std::stringstream rest(line.substr(at + 30));
      rest >> name;
    } else if (const auto fn = line.find("Function : "); fn != std::string::npos) {
      std::stringstream rest(line.substr(fn + 11));
      rest >> name;
    }
    if (!name.empty()) {
      current = &texts[name];
      continue;
    }
    if (current != nullptr) *current += line + "\n";
  }
  std::map<std::string, Listing> listings;
  for (const auto& [name, text] : texts) listings.emplace(name, Listing(text));
  return listings;
}

int Listing::count(const std::string& base) const {
  int n = 0;
  for (const std::string& m : mnemonics_)
    if (m.compare(0, base.size(), base) == 0 && (m.size() == base.size() || m[base.size()] == '.'))
      ++n;
  return n;
}

}  // namespace tmem::sass
