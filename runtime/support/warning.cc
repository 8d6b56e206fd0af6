// The warning handler of tmem/warning.h.
#include "runtime/support/warning.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "tmem/warning.h"

namespace tmem {
namespace {

std::mutex g_mutex;
// Shared so a warning in flight keeps its handler alive while another thread replaces it.
std::shared_ptr<const WarningHandler> g_handler;

}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  auto next = handler ? std::make_shared<const WarningHandler>(std::move(handler)) : nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::shared_ptr<const WarningHandler> previous = std::exchange(g_handler, std::move(next));
  return previous ? *previous : WarningHandler();
}

void warn(std::string_view message) {
  std::shared_ptr<const WarningHandler> handler;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    handler = g_handler;
  }
  if (handler) {
    (*handler)(message);
    return;
  }
  const std::string line = "tmemjit: warning: " + std::string(message) + "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace tmem
