// An environment variable set (or unset) for one scope, then restored: the tests that read
// TMEMJIT_* settings use it so that no test leaks its setting into the next.
#pragma once

#include <stdlib.h>

#include <optional>
#include <string>

namespace tmem::testing {

class ScopedEnv {
 public:
  // `value` null unsets the variable.
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace tmem::testing
