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

std::vector<OptionSpec> compiler_flag_options() {
  // Everything NVRTC gets goes into one list, in the order given: -I's order is the search order.
  auto nvrtc_flag = [](std::string name, std::string as) {
    return OptionSpec{.name = std::move(name), .repeats = true, .into = "-Xnvrtc", .prefix = as};
  };
  auto nvrtc_value = [](std::string name, bool attached) {
    return OptionSpec{.name = name,
                      .takes_value = true,
                      .repeats = true,
                      .next = attached ? NextWord::kPlain : NextWord::kNotAnOption,
                      .attached = attached,
                      .equals_only = !attached,
                      .into = "-Xnvrtc",
                      .prefix = attached ? name : name + "="};
  };
  return {
      nvrtc_value("-I", true),
      nvrtc_value("-D", true),
      nvrtc_value("-std", false),
      nvrtc_value("--std", false),
      nvrtc_flag("-default-device", "-default-device"),
      // The spelling nvcc users reach for; NVRTC knows -default-device and refused this one.
      nvrtc_flag("--default-device", "-default-device"),
      nvrtc_flag("--device-as-default-execution-space", "--device-as-default-execution-space"),
      {.name = "-Xnvrtc", .takes_value = true, .repeats = true, .next = NextWord::kAnything},
      {.name = "-Xptxas", .takes_value = true, .repeats = true, .next = NextWord::kAnything},
      {.name = "--precompile", .takes_value = true, .repeats = true, .next = NextWord::kPlain},
  };
}

std::vector<OptionSpec> with_compiler_flag_options(std::vector<OptionSpec> options) {
  for (OptionSpec& spec : compiler_flag_options()) options.push_back(std::move(spec));
  return options;
}

}  // namespace tmemjit_cli
