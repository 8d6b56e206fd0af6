// Argument parsing and error reporting shared by every tmemjit command.
#include "tools/cli.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "tmem/text.h"

namespace tmemjit_cli {

std::optional<std::string> Args::get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> Args::all(std::string_view name) const {
  auto it = values_.find(std::string(name));
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

void Args::add(const OptionSpec& spec, const std::string& value) {
  std::vector<std::string>& values = values_[spec.into.empty() ? spec.name : spec.into];
  if (!spec.repeats) values.clear();
  values.push_back(spec.prefix + value);
}

namespace {

// An option word against a command's options: the spec it names (nullptr: none) and the value
// written in the word ("--at=V", "-IDIR").
struct OptionWord {
  const OptionSpec* spec = nullptr;
  std::optional<std::string> value;
};

// "--name" and "--name=value" first; then an attached spelling ("-IDIR", "-I=DIR": the value is
// the rest of the word).
OptionWord match_option(const std::string& word, const std::vector<OptionSpec>& options) {
  const size_t eq = word.find('=');
  for (const OptionSpec& spec : options) {
    if (spec.name == word) return {&spec, std::nullopt};
    if (!spec.attached && eq != std::string::npos && word.compare(0, eq, spec.name) == 0)
      return {&spec, word.substr(eq + 1)};
  }
  for (const OptionSpec& spec : options)
    if (spec.attached && word.starts_with(spec.name)) return {&spec, word.substr(spec.name.size())};
  return {};
}

tmem::Error usage(const std::string& message) {
  return tmem::Error(tmem::ErrorCode::kUsage, message);
}

tmem::Error unknown_option(std::string_view command, const std::string& word,
                           const std::vector<OptionSpec>& options) {
  std::string allowed;
  for (const OptionSpec& spec : options)
    allowed += (allowed.empty() ? "" : ", ") + spec.name + (spec.equals_only ? "=..." : "");
  return usage("unknown option '" + tmem::quote_excerpt(word.substr(0, word.find('='))) + "' for " +
               std::string(command) + " (allowed: " + (allowed.empty() ? "none" : allowed) + ")");
}

// The value of `spec` written in its word, checked.
tmem::Result<std::string> attached_value(const OptionSpec& spec, const std::string& word,
                                         const std::string& value) {
  if (!spec.takes_value)
    return usage("option '" + spec.name + "' takes no value, got '" + tmem::quote_excerpt(word) +
                 "'");
  if (spec.next == NextWord::kPlain && value.empty())
    return usage("option '" + spec.name + "' needs a value");
  return value;
}

// The value of `spec` given as the word after it (argv[i + 1]), checked; `i` moves onto it.
tmem::Result<std::string> next_value(const OptionSpec& spec, const std::vector<std::string>& argv,
                                     size_t& i, const std::vector<OptionSpec>& options) {
  const std::string& name = spec.name;
  if (spec.equals_only)
    return usage("option '" + name + "' takes its value after '=': " + name + "=VALUE");
  if (i + 1 == argv.size()) return usage("option '" + name + "' needs a value");
  const std::string& next = argv[i + 1];
  if (spec.next == NextWord::kPlain && (next.empty() || next[0] == '-'))
    return usage("option '" + name + "' needs a value, got '" + tmem::quote_excerpt(next) + "'");
  // "--keep --json" would otherwise make "--json" the directory and lose the option; a value that
  // really is such a word goes in as "--keep=--json".
  if (spec.next == NextWord::kNotAnOption && match_option(next, options).spec != nullptr)
    return usage("option '" + tmem::quote_excerpt(name) + "' needs a value, got the option '" +
                 tmem::quote_excerpt(next.substr(0, next.find('='))) + "'");
  return argv[++i];
}

}  // namespace

tmem::Result<Args> parse_args(std::string_view command, const std::vector<std::string>& argv,
                              const std::vector<OptionSpec>& options) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    // Options start with '-' ("--json", "-o"); views, opcodes and paths never do.
    if (word.size() < 2 || word[0] != '-' || (word[1] >= '0' && word[1] <= '9')) {
      args.positional_.push_back(word);
      continue;
    }
    const OptionWord option = match_option(word, options);
    if (option.spec == nullptr) return unknown_option(command, word, options);
    const OptionSpec& spec = *option.spec;
    if (!spec.takes_value && !option.value) {
      args.add(spec, "");
      continue;
    }
    auto value = option.value ? attached_value(spec, word, *option.value)
                              : next_value(spec, argv, i, options);
    if (!value) return value.error();
    args.add(spec, *value);
  }
  return args;
}

int exit_code(const tmem::Error& error) {
  switch (error.code()) {
    case tmem::ErrorCode::kUsage:
      return kExitUsage;
    case tmem::ErrorCode::kToolchain:
    case tmem::ErrorCode::kDriver:
    case tmem::ErrorCode::kIo:
    case tmem::ErrorCode::kInternal:
      return kExitToolchain;
    case tmem::ErrorCode::kWrongData:
      return kExitWrongData;
    default:
      return kExitInvalidInput;
  }
}

int report(const tmem::Error& error, bool json, const nlohmann::json& extra) {
  // Reported text is valid UTF-8 (bytes that are not are written \xNN): a name or a compiler log
  // in Latin-1 once made --json fail with an internal error instead of this one (issue 30).
  const std::string message = tmem::valid_utf8(error.message());
  const std::string details = tmem::valid_utf8(error.details());
  if (json) {
    nlohmann::json object = {
        {"ok", false},
        {"error",
         {{"code", tmem::to_string(error.code())},
          {"message", message},
          {"details", details.empty() ? nlohmann::json() : nlohmann::json(details)}}}};
    if (error.rule() != tmem::Rule::kNone)
      object["error"]["rule"] = std::string(tmem::to_string(error.rule()));
    object.update(extra);
    print_json(object);
  }
  std::cerr << "error: " << message << "\n";
  if (!details.empty()) std::cerr << details << (details.back() == '\n' ? "" : "\n");
  return exit_code(error);
}

namespace {

// `value` with every string, keys included, made valid UTF-8 (nlohmann's dump() throws on
// invalid bytes).
nlohmann::json with_valid_utf8(const nlohmann::json& value) {
  if (value.is_string()) return tmem::valid_utf8(value.get_ref<const std::string&>());
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& item : value) out.push_back(with_valid_utf8(item));
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it)
      out[tmem::valid_utf8(it.key())] = with_valid_utf8(it.value());
    return out;
  }
  return value;
}

}  // namespace

void print_json(const nlohmann::json& object) {
  std::cout << with_valid_utf8(object).dump(2) << "\n";
}

tmem::Status write_output_file(const std::string& path, std::string_view bytes) {
  const std::string quoted = "'" + tmem::quote_excerpt(path) + "'";
  auto failed = [&](const std::string& what, int error_number) {
    return tmem::Error(tmem::ErrorCode::kIo,
                       "cannot write " + quoted + ": " + what + ": " + std::strerror(error_number));
  };
  auto write_all = [&](int fd) {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  };
  std::string target = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      // /dev/stdout, a FIFO: written in place (there is nothing to rename over).
      if (S_ISDIR(st.st_mode)) return failed("it is a directory", EISDIR);
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) return failed("open", errno);
      const bool ok = write_all(fd);
      const int error_number = errno;
      ::close(fd);
      return ok ? tmem::Status(std::monostate{}) : failed("write", error_number);
    }
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) != nullptr) target = resolved;  // through a symlink
  }
  // A temporary file beside the target, renamed over it when whole: a failed write (a full disk)
  // leaves the old file or none, never a truncated cubin (issue 30).
  std::string temp = target + ".tmp.XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return failed("creating a file beside it", errno);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  bool ok = ::fchmod(fd, 0666 & ~mask) == 0 && write_all(fd);
  int error_number = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    error_number = errno;
  }
  if (ok && ::rename(temp.c_str(), target.c_str()) != 0) {
    ok = false;
    error_number = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    return failed("write", error_number != 0 ? error_number : EIO);
  }
  return std::monostate{};
}

}  // namespace tmemjit_cli
