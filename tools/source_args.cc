// The source file and compiler flags of specialize, warmup FILE.cu and emulate (source_args.h).
#include "tools/source_args.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tmem/text.h"

namespace tmemjit_cli {

tmem::Result<std::string> read_text(const std::string& path, std::streamsize limit,
                                    const std::string& what) {
  const std::string quoted = "'" + tmem::quote_excerpt(path) + "'";
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer that may never come (issue 39
  // N11). A pipe with its writer (`--spec <(generate)`) is read to its end, blocking again; one
  // without reads as empty at once. A device or a directory is refused, by the fstat of what was
  // opened (no race with a rename).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return tmem::Error(tmem::ErrorCode::kUsage,
                       "cannot read " + what + " " + quoted + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))) {
    ::close(fd);
    return tmem::Error(tmem::ErrorCode::kUsage,
                       what + " " + quoted + " is not a regular file or a pipe");
  }
  if (S_ISFIFO(st.st_mode)) (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return tmem::Error(tmem::ErrorCode::kUsage,
                         "cannot read " + what + " " + quoted + ": " + std::strerror(error));
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
    if (static_cast<std::streamsize>(text.size()) > limit) {
      ::close(fd);
      return tmem::Error(tmem::ErrorCode::kLimit, what + " " + quoted + " is larger than " +
                                                      std::to_string(limit >> 20) + " MiB");
    }
  }
  ::close(fd);
  // Refused, not cut: the compilers read a source up to its first NUL and would drop the rest.
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    return tmem::Error(tmem::ErrorCode::kParse, what + " " + quoted + " has a NUL byte at offset " +
                                                    std::to_string(nul) + "; it is not text");
  return text;
}

tmem::Result<tmem::Language> source_language(const std::string& path) {
  const size_t dot = path.rfind('.');
  const std::string extension = dot == std::string::npos ? "" : path.substr(dot + 1);
  if (extension == "ptx") return tmem::Language::kPtx;
  if (extension == "cu" || extension == "cuh" || extension == "cpp" || extension == "cc")
    return tmem::Language::kCuda;
  return tmem::Error(tmem::ErrorCode::kUsage,
                     "cannot tell the language of '" + tmem::quote_excerpt(path) +
                         "': name it FILE.cu (CUDA C++) or FILE.ptx (PTX)");
}

tmem::Result<tmem::KernelSource> read_source(const std::string& path) {
  tmem::KernelSource source;
  source.path = path;
  auto language = source_language(path);
  if (!language) return language.error();
  source.language = *language;
  auto text = read_text(path, kMaxSourceBytes, "source file");
  if (!text) return text.error();
  source.text = std::move(text).value();
  return source;
}

tmem::Result<CompilerFlags> split_compiler_flags(const std::vector<std::string>& argv,
                                                 const std::string& repeated) {
  CompilerFlags flags;
  auto needs_value = [](const std::string& option) {
    return tmem::Error(tmem::ErrorCode::kUsage, "option '" + option + "' needs a value");
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "-Xnvrtc" || word == "-Xptxas") {
      if (i + 1 == argv.size()) return needs_value(word);
      (word == "-Xnvrtc" ? flags.nvrtc : flags.ptxas).push_back(argv[++i]);
    } else if (word == "--precompile") {
      if (i + 1 == argv.size() || argv[i + 1].empty() || argv[i + 1][0] == '-')
        return needs_value(word);
      flags.precompile.push_back(argv[++i]);
    } else if (word.starts_with("--precompile=") && word.size() > 13) {
      flags.precompile.push_back(word.substr(13));
    } else if (word.starts_with("-Xnvrtc=")) {
      flags.nvrtc.push_back(word.substr(8));
    } else if (word.starts_with("-Xptxas=")) {
      flags.ptxas.push_back(word.substr(8));
    } else if (word.starts_with("-std=") || word.starts_with("--std=") ||
               word == "-default-device" || word == "--device-as-default-execution-space") {
      flags.nvrtc.push_back(word);
    } else if (word == "--default-device") {
      // The spelling nvcc users reach for; NVRTC knows -default-device and refused this one.
      flags.nvrtc.push_back("-default-device");
    } else if (word.starts_with("-default-device=") || word.starts_with("--default-device=")) {
      // Otherwise "unknown option '-default-device'" for an option these commands take (N20).
      return tmem::Error(tmem::ErrorCode::kUsage, "option '" + word.substr(0, word.find('=')) +
                                                      "' takes no value, got '" +
                                                      tmem::quote_excerpt(word) + "'");
    } else if (word == "-I" || word == "-D") {
      // An empty value would pass NVRTC a bare -I or -D, which takes the next option as its value.
      if (i + 1 == argv.size() || argv[i + 1].empty() || argv[i + 1][0] == '-')
        return tmem::Error(
            tmem::ErrorCode::kUsage,
            "option '" + word + "' needs a value" +
                (i + 1 == argv.size() ? std::string()
                                      : ", got '" + tmem::quote_excerpt(argv[i + 1]) + "'"));
      flags.nvrtc.push_back(word + argv[i + 1]);
      ++i;
    } else if (word.size() > 2 && (word.rfind("-I", 0) == 0 || word.rfind("-D", 0) == 0)) {
      flags.nvrtc.push_back(word);
    } else if (!repeated.empty() && word == repeated) {
      if (i + 1 == argv.size()) return needs_value(word);
      flags.repeated.push_back(argv[++i]);
    } else if (!repeated.empty() && word.rfind(repeated + "=", 0) == 0) {
      flags.repeated.push_back(word.substr(repeated.size() + 1));
    } else {
      flags.rest.push_back(word);
    }
  }
  return flags;
}

}  // namespace tmemjit_cli
