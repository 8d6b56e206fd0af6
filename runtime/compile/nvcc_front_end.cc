// nvcc as compile_kernel's CUDA C++ front end (nvcc_front_end.h).
#include "runtime/compile/nvcc_front_end.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "runtime/support/settings.h"
#include "runtime/support/subprocess.h"

namespace tmem {
namespace {

bool is_file(const std::string& path) {
  struct stat info {};
  return !path.empty() && ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// The file name nvcc's messages use: the path's last component, or kernel.cu.
std::string file_name_of(const std::string& program_name) {
  const std::string name = std::filesystem::path(program_name).filename().string();
  if (name.empty() || name == "." || name == "..") return "kernel.cu";
  return name;
}

// The PTX nvcc kept (--keep) for the compile: the one .ptx file of the keep directory.
std::vector<char> kept_ptx(const std::string& directory) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error))
    if (entry.path().extension() == ".ptx") {
      auto text = read_file(entry.path().string());
      if (text.ok()) return std::vector<char>(text->begin(), text->end());
    }
  return {};
}

// Whether writing `name` under the include directory would leave it: an absolute name discards the
// directory (std::filesystem's operator/), a ".." climbs out of it.
bool escapes(const std::filesystem::path& name) {
  if (name.is_absolute() || name.has_root_path()) return true;
  for (const auto& part : name)
    if (part == "..") return true;
  return false;
}

// Every occurrence of `from` in `text` replaced by `to`.
void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// The headers as written under the include directory, the source's #include directives of them,
// and the directories searched after it.
struct Placed {
  std::vector<std::pair<std::string, std::string>> headers;
  std::string source;
  std::vector<std::string> search;  // -I directories after the include directory, deduplicated
};

// A header whose name is absolute or climbs with ".." (a source's prefix header is named after
// its path, often absolute: kernels/specialized_source.cc) goes to tmemjit-headers/<index>/<its
// file name> under the include directory, never beside the user's file: writing there polluted
// the user's checkout, needed write permission on it, and raced with another process compiling
// the same file. The library's `#include "<name>"` of it is rewritten to the contained name, and
// the original name's directory is searched after the include directory, so the header's own
// `#include "x"` still finds the user's neighbours. The header's #line keeps messages naming the
// user's file.
Placed place_headers(const std::string& source,
                     const std::vector<std::pair<std::string, std::string>>& headers) {
  Placed placed{headers, source, {}};
  for (size_t i = 0; i < headers.size(); ++i) {
    const std::filesystem::path name(headers[i].first);
    if (!escapes(name)) continue;
    std::string file = name.filename().string();
    if (file.empty() || file == "." || file == "..") file = "header.cuh";
    const std::string contained = "tmemjit-headers/" + std::to_string(i) + "/" + file;
    const std::string from = "#include \"" + headers[i].first + "\"";
    const std::string to = "#include \"" + contained + "\"";
    replace_all(placed.source, from, to);
    for (auto& [other, text] : placed.headers) replace_all(text, from, to);
    placed.headers[i].first = contained;
    const std::string directory = name.parent_path().string();
    if (!directory.empty() &&
        std::find(placed.search.begin(), placed.search.end(), directory) == placed.search.end())
      placed.search.push_back(directory);
  }
  return placed;
}

}  // namespace

std::string nvcc_path() {
  const Settings settings = Settings::from_environment();
  if (!settings.nvcc.empty()) return settings.nvcc;
  for (const std::string& home : {settings.cuda_home, settings.cuda_path})
    if (!home.empty() && is_file(home + "/bin/nvcc")) return home + "/bin/nvcc";
#ifdef TMEMJIT_NVCC_PATH
  if (is_file(TMEMJIT_NVCC_PATH)) return TMEMJIT_NVCC_PATH;
#endif
  return "nvcc";
}

const std::string& nvcc_version() {
  static const std::string version = [] {
    auto run = run_process({nvcc_path(), "--version"}, std::chrono::seconds(60));
    if (!run || run->exit_code != 0) return std::string("unavailable");
    std::string last;
    size_t start = 0;
    while (start < run->output.size()) {
      size_t end = run->output.find('\n', start);
      if (end == std::string::npos) end = run->output.size();
      if (end > start) last = run->output.substr(start, end - start);
      start = end + 1;
    }
    return last.empty() ? std::string("unavailable") : last;
  }();
  return version;
}

Result<CudaFrontEnd> compile_cuda_with_nvcc(
    const std::string& source, const std::string& program_name,
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::vector<std::string>& nvcc_options, const CompileOptions& options,
    FrontEndOutput output) {
  if (output == FrontEndOutput::kRelocatablePtx)
    return Error(ErrorCode::kInternal, "the nvcc front end makes no relocatable PTX");
  if (options.opt_level < 0 || options.opt_level > 3)
    return Error(ErrorCode::kUsage,
                 "opt_level must be 0, 1, 2 or 3, got " + std::to_string(options.opt_level));
  auto scratch = ScratchDir::create("tmemjit-nvcc");
  if (!scratch.ok()) return std::move(scratch).error();
  const std::string include_dir = scratch->file("include"), keep_dir = scratch->file("keep");
  std::error_code made;
  std::filesystem::create_directories(keep_dir, made);
  const Placed placed = place_headers(source, headers);
  for (const auto& [name, text] : placed.headers) {
    const std::filesystem::path path = std::filesystem::path(include_dir) / name;
    std::filesystem::create_directories(path.parent_path(), made);
    if (auto written = write_file(path.string(), text); !written.ok())
      return std::move(written).error();
  }
  const std::string input = scratch->file(file_name_of(program_name));
  if (auto written = write_file(input, placed.source); !written.ok())
    return std::move(written).error();
  const bool cubin = output == FrontEndOutput::kCubin;
  std::string arch(to_string(options.target));
  if (!cubin && arch.starts_with("sm_")) arch = "compute_" + arch.substr(3);
  // The generated headers first: they are the library's, named as the source includes them.
  std::vector<std::string> argv = {nvcc_path(), "-arch=" + arch, cubin ? "-cubin" : "-ptx",
                                   "-I" + include_dir};
  for (const std::string& directory : placed.search) argv.push_back("-I" + directory);
  if (cubin) {
    // nvcc's own default is -O3 and no line table: said only when asked otherwise, so that the
    // command is the one a user would write (the fidelity test compares with exactly that).
    if (options.opt_level != 3) argv.push_back("-Xptxas=-O" + std::to_string(options.opt_level));
    if (options.tmem_access_check) argv.push_back("-Xptxas=-g-tmem-access-check");
    for (const std::string& option : options.ptx_options) argv.push_back("-Xptxas=" + option);
    argv.push_back("--keep");
    argv.push_back("--keep-dir=" + keep_dir);
  }
  if (options.line_info) argv.push_back("-lineinfo");
  argv.insert(argv.end(), nvcc_options.begin(), nvcc_options.end());
  const std::string result = scratch->file(cubin ? "out.cubin" : "out.ptx");
  argv.insert(argv.end(), {"-o", result, input});
  const auto start = std::chrono::steady_clock::now();
  auto run = run_process(argv);
  if (!run.ok()) return std::move(run).error();
  std::string command;
  for (const std::string& word : argv) command += (command.empty() ? "" : " ") + word;
  CudaFrontEnd out;
  out.log = run->output;
  if (run->exit_code != 0) {
    std::string first;
    for (size_t at = 0; at < out.log.size();) {
      size_t end = out.log.find('\n', at);
      if (end == std::string::npos) end = out.log.size();
      const std::string line = out.log.substr(at, end - at);
      if (first.empty() && line.find("error") != std::string::npos) first = line;
      at = end + 1;
    }
    return Error(ErrorCode::kToolchain,
                 "nvcc failed (exit " + std::to_string(run->exit_code) + ")" +
                     (first.empty() ? std::string() : ": " + first),
                 std::vector<ErrorDetail>{{"command", command}, {"log", out.log}});
  }
  auto produced = read_file(result);
  if (!produced.ok()) return std::move(produced).error();
  if (cubin) {
    out.cubin.assign(produced->begin(), produced->end());
    out.output = kept_ptx(keep_dir);
  } else {
    out.output.assign(produced->begin(), produced->end());
  }
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace tmem
