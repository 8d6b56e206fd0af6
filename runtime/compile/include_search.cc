// The include search of an NVRTC option list (include_closure.h, include_search_of).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/compile/include_closure.h"

namespace tmem {

Result<IncludeSearch> include_search_of(std::span<const std::string> nvrtc_options) {
  struct Form {
    std::string_view flag;
    bool joined;  // the value may follow the flag directly (-IDIR)
    int into;     // 0: include dirs, 1: system dirs, 2: pre-includes
  };
  static constexpr Form kForms[] = {
      {"--include-path", false, 0},   {"-I", true, 0},
      {"--system-include", false, 1}, {"-isystem", true, 1},
      {"--pre-include", false, 2},    {"-include", false, 2},
      {"--define-macro", false, 3},   {"-D", true, 3},
  };
  std::vector<std::string> lists[4];
  for (size_t i = 0; i < nvrtc_options.size(); ++i) {
    const std::string& option = nvrtc_options[i];
    for (const Form& form : kForms) {
      if (option.rfind(form.flag, 0) != 0) continue;
      std::string_view rest = std::string_view(option).substr(form.flag.size());
      if (!rest.empty() && rest.front() != '=' && !form.joined) continue;  // another option
      std::string value;
      if (rest.empty()) {
        if (i + 1 == nvrtc_options.size())
          return Error(ErrorCode::kUsage, "nvrtc option '" + option + "' needs a value after it",
                       form.into == 2   ? "a file to pre-include"
                       : form.into == 3 ? "a macro, NAME or NAME=VALUE"
                                        : "an include directory");
        value = nvrtc_options[++i];
      } else {
        if (rest.front() == '=') rest.remove_prefix(1);
        value = std::string(rest);
      }
      if (value.empty())
        return Error(ErrorCode::kUsage, "nvrtc option '" + option + "' has an empty value",
                     form.into == 2   ? "a file to pre-include"
                     : form.into == 3 ? "a macro, NAME or NAME=VALUE"
                                      : "an include directory");
      lists[form.into].push_back(std::move(value));
      break;
    }
  }
  IncludeSearch search;
  search.include_dirs = std::move(lists[0]);
  search.include_dirs.insert(search.include_dirs.end(), lists[1].begin(), lists[1].end());
  search.pre_includes = std::move(lists[2]);
  search.defines = std::move(lists[3]);
  return search;
}

}  // namespace tmem
