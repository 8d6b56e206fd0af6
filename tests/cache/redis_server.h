// A real redis-server for the remote-tier tests: started on a free loopback port in a private
// directory, paused, resumed, killed and stopped by the test; plus a raw client for planting
// entries.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifdef TMEMJIT_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#include "common/cache_test_util.h"

namespace tmem::testing {

// The redis-server executable: $TMEMJIT_REDIS_SERVER, else the first on PATH, /usr/bin or
// /usr/sbin; empty when there is none.
inline std::string redis_server_binary() {
  if (const char* given = std::getenv("TMEMJIT_REDIS_SERVER"); given != nullptr && *given != 0)
    return ::access(given, X_OK) == 0 ? std::string(given) : std::string();
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/bin:/usr/sbin:/usr/local/bin";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/redis-server";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// A TCP port on 127.0.0.1 that nothing listens on now (bound to port 0, read back, closed).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

class RedisServer {
 public:
  RedisServer() = default;
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer() { stop(); }

  // Starts the server and waits until it answers PING; false with `why` otherwise.
  bool start(std::string* why) {
    const std::string binary = redis_server_binary();
    if (binary.empty()) {
      *why =
          "redis-server not found (install the Debian package redis-server; scripts/common.sh "
          "does)";
      return false;
    }
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = free_loopback_port();
      if (port_ == 0) continue;
      const std::string port = std::to_string(port_);
      const std::string log = (dir_.path() / "redis.log").string();
      pid_ = ::fork();
      if (pid_ == 0) {
        ::execl(binary.c_str(), binary.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir",
                dir_.path().c_str(), "--logfile", log.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      if (pid_ < 0) break;
      for (int i = 0; i < 250; ++i) {  // up to 5 s
        if (ping()) return true;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          break;  // exited: the port was taken meanwhile, or the server cannot start
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      stop();
    }
    std::ifstream in(dir_.path() / "redis.log");
    *why = "redis-server did not start: " + std::string(std::istreambuf_iterator<char>(in), {});
    return false;
  }

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  void pause() { signal(SIGSTOP); }
  void resume() { signal(SIGCONT); }
  // SIGKILL, as a crash would.
  void kill() {
    signal(SIGCONT);
    signal(SIGKILL);
    reap();
  }
  void stop() {
    if (pid_ <= 0) return;
    signal(SIGCONT);
    signal(SIGTERM);
    for (int i = 0; i < 100 && pid_ > 0; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_)
        pid_ = -1;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill();
  }

#ifdef TMEMJIT_HAVE_HIREDIS
  // One command on a fresh connection; the reply as text (a string, status, error or number),
  // "(nil)" for nil, nullopt when the server does not answer.
  std::optional<std::string> command(const std::vector<std::string>& args) const {
    struct timeval timeout {
      1, 0
    };
    redisContext* context = redisConnectWithTimeout("127.0.0.1", port_, timeout);
    if (context == nullptr || context->err != 0) {
      if (context != nullptr) redisFree(context);
      return std::nullopt;
    }
    redisSetTimeout(context, timeout);
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& arg : args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    auto* reply = static_cast<redisReply*>(
        redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data()));
    std::optional<std::string> out;
    if (reply != nullptr) {
      if (reply->type == REDIS_REPLY_NIL)
        out = "(nil)";
      else if (reply->type == REDIS_REPLY_INTEGER)
        out = std::to_string(reply->integer);
      else if (reply->str != nullptr)
        out = std::string(reply->str, reply->len);
      else
        out = "";
      freeReplyObject(reply);
    }
    redisFree(context);
    return out;
  }
  bool ping() const { return command({"PING"}) == std::optional<std::string>("PONG"); }
#else
  std::optional<std::string> command(const std::vector<std::string>&) const { return {}; }
  bool ping() const { return false; }
#endif

 private:
  void signal(int number) {
    if (pid_ > 0) ::kill(pid_, number);
  }
  void reap() {
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  TempDir dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// A fake server that accepts connections, reads whatever is sent, and answers every command with a
// bulk string header and then one byte every `gap`: each read gets a byte well within any per-read
// timeout, but the reply does not complete; after 4 s it closes the connection (so that a client
// without a whole-reply deadline fails the test in time instead of hanging it; issue 30 item 5).
// One connection at a time.
class DribblingServer {
 public:
  explicit DribblingServer(std::chrono::milliseconds gap) : gap_(gap) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (listener_ < 0 ||
        ::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
      return;
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~DribblingServer() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (listener_ >= 0) ::close(listener_);
  }
  DribblingServer(const DribblingServer&) = delete;
  DribblingServer& operator=(const DribblingServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  int bytes_sent() const { return sent_.load(); }

 private:
  void serve() {
    while (!stop_.load()) {
      pollfd listening{listener_, POLLIN, 0};
      if (::poll(&listening, 1, 20) <= 0) continue;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      char buffer[4096];
      pollfd readable{client, POLLIN, 0};
      if (::poll(&readable, 1, 1000) > 0) ::recv(client, buffer, sizeof buffer, 0);
      const std::string header = "$100000\r\n";
      ::send(client, header.data(), header.size(), MSG_NOSIGNAL);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(4);
      while (!stop_.load() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(gap_);
        if (::send(client, "x", 1, MSG_NOSIGNAL) != 1) break;
        sent_.fetch_add(1);
        // A client that gave up closes the socket: the next send fails and the loop ends.
        pollfd closed{client, POLLIN, 0};
        if (::poll(&closed, 1, 0) > 0 && ::recv(client, buffer, sizeof buffer, MSG_DONTWAIT) == 0)
          break;
      }
      ::close(client);
    }
  }

  std::chrono::milliseconds gap_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> sent_{0};
  std::thread thread_;
};

}  // namespace tmem::testing
