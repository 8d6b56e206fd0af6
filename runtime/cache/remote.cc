// The Redis tier: URL parsing, a pool of hiredis connections with bounded timeouts, entries in the
// disk format, the compile lock, and the warnings and rest period that keep faults cheap.
#include "runtime/cache/remote.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <random>
#include <span>
#include <vector>

#ifdef TMEMJIT_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#include "runtime/cache/disk.h"
#include "runtime/support/warning.h"

namespace tmem {
namespace {

std::atomic<bool> g_fault_warned{false};
std::atomic<bool> g_rejected_warned{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Digits only, at most `max`; nullopt otherwise.
std::optional<int> parse_decimal(std::string_view text, int max) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > max) return std::nullopt;
  return static_cast<int>(value);
}

// At most 64 bytes of user text in a message (docs/reliability.md).
std::string excerpt(std::string_view text) {
  return text.size() <= 64 ? std::string(text) : std::string(text.substr(0, 64)) + "...";
}

}  // namespace

std::string RedisEndpoint::url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "redis://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/" +
         std::to_string(db);
}

Result<RedisEndpoint> parse_redis_url(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return Error(
        ErrorCode::kUsage, "remote cache URL '" + excerpt(url) + "' " + why,
        "expected redis://HOST:PORT[/DB] (optionally redis://[USER]:PASSWORD@HOST:PORT/DB), "
        "e.g. redis://10.0.0.5:6379/0");
  };
  constexpr std::string_view kScheme = "redis://";
  if (!url.starts_with(kScheme)) return bad("does not start with redis://");
  std::string_view rest = url.substr(kScheme.size());
  RedisEndpoint endpoint;
  std::string_view authority = rest;
  std::optional<std::string_view> path;
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash + 1);
  }
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    const size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos)
      return bad("has credentials without ':' ([USER]:PASSWORD)");
    endpoint.user = std::string(userinfo.substr(0, colon));
    endpoint.password = std::string(userinfo.substr(colon + 1));
    authority = authority.substr(at + 1);
  }
  std::string_view host = authority;
  std::optional<std::string_view> port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("has an IPv6 host without ']'");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("has text after the IPv6 host");
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return bad("has no host");
  endpoint.host = std::string(host);
  if (port) {
    const std::optional<int> number = parse_decimal(*port, 65535);
    if (!number || *number == 0) return bad("has port '" + excerpt(*port) + "' (1 to 65535)");
    endpoint.port = *number;
  }
  if (path && !path->empty()) {
    const std::optional<int> number = parse_decimal(*path, 1 << 20);
    if (!number) return bad("has database '" + excerpt(*path) + "' (a number, e.g. /0)");
    endpoint.db = *number;
  }
  return endpoint;
}

#ifdef TMEMJIT_HAVE_HIREDIS

namespace {

// Blocks SIGPIPE on this thread for one exchange with the server, and swallows the one a write to a
// closed connection raised, so that a server that went away cannot kill the process. Signals the
// thread had pending before are left alone.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    pending_before_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (!pending_before_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const struct timespec zero {};
        while (sigtimedwait(&pipe_, nullptr, &zero) == -1 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool pending_before_ = false;
};

struct timeval to_timeval(uint32_t ms) {
  struct timeval tv {};
  tv.tv_sec = static_cast<time_t>(ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms % 1000) * 1000);
  return tv;
}

using ReplyPtr = std::unique_ptr<redisReply, void (*)(void*)>;
using Deadline = std::chrono::steady_clock::time_point;

Deadline deadline_after(uint32_t ms) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
}

// Milliseconds left until `deadline`, rounded up; 0 when it has passed.
int ms_left(Deadline deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

// Waits until `fd` is ready for `events`; false when `deadline` passes first. An error on the
// socket counts as ready: the read or write that follows reports it.
bool wait_for(int fd, short events, Deadline deadline) {
  for (;;) {
    const int left = ms_left(deadline);
    if (left == 0) return false;
    pollfd ready{fd, events, 0};
    const int n = ::poll(&ready, 1, left);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;
  }
}

// One command, its send and its whole reply by `deadline` (issue 30: a server that sends a reply
// a byte at a time satisfied a per-read timeout forever). nullptr on a fault: the context's error
// is set, or `timed_out`.
ReplyPtr run(redisContext* context, std::initializer_list<std::string_view> args, Deadline deadline,
             bool* timed_out) {
  *timed_out = false;
  ReplyPtr none(nullptr, freeReplyObject);
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (std::string_view arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  if (redisAppendCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data()) !=
      REDIS_OK)
    return none;
  for (int done = 0; !done;) {
    // The socket's own timeout bounds a write that blocks after poll said it would not.
    const int left = ms_left(deadline);
    if (left == 0 || !wait_for(context->fd, POLLOUT, deadline)) {
      *timed_out = true;
      return none;
    }
    struct timeval tv {};
    tv.tv_sec = left / 1000;
    tv.tv_usec = (left % 1000) * 1000;
    redisSetTimeout(context, tv);
    if (redisBufferWrite(context, &done) != REDIS_OK) return none;
  }
  void* reply = nullptr;
  for (;;) {
    if (redisGetReplyFromReader(context, &reply) != REDIS_OK) return none;
    if (reply != nullptr) break;
    if (!wait_for(context->fd, POLLIN, deadline)) {
      *timed_out = true;
      return none;
    }
    if (redisBufferRead(context) != REDIS_OK) return none;  // readable: the read cannot block
  }
  return ReplyPtr(static_cast<redisReply*>(reply), freeReplyObject);
}

std::string context_error(const redisContext* context) {
  if (context == nullptr) return "out of memory";
  std::string why = context->errstr;
  if (context->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)) why = "timed out";
  return why.empty() ? "connection error" : why;
}

// A reused connection that failed because the server closed it (restart, idle timeout) is worth
// one retry on a fresh connection; a timeout is not (it would only double the wait).
bool closed_by_server(const redisContext* context, int error_number) {
  if (context == nullptr) return false;
  if (context->err == REDIS_ERR_EOF) return true;
  return context->err == REDIS_ERR_IO &&
         (error_number == ECONNRESET || error_number == EPIPE || error_number == ENOTCONN);
}

}  // namespace

struct RemoteCache::Impl {
  // What one command returned, copied out of hiredis.
  struct Reply {
    int type = REDIS_REPLY_NIL;
    std::string text;  // string, status or error
  };

  std::mutex mutex;
  std::vector<redisContext*> idle;
  pid_t owner = ::getpid();  // a forked child must not share its parent's connections
  static constexpr size_t kMaxIdle = 8;

  ~Impl() { drop_idle(); }

  void drop_idle() {
    for (redisContext* context : idle) redisFree(context);
    idle.clear();
  }

  redisContext* take_idle() {
    std::lock_guard lock(mutex);
    if (owner != ::getpid()) {
      drop_idle();  // closes this process's copies of the parent's sockets only
      owner = ::getpid();
    }
    if (idle.empty()) return nullptr;
    redisContext* context = idle.back();
    idle.pop_back();
    return context;
  }

  // A new connection, authenticated and on its database. The TCP connect is bounded by the connect
  // timeout; then `commands` is set to when AUTH, SELECT and the caller's command must be done by
  // (one command timeout later, and no later than `overall`).
  redisContext* connect(const RemoteOptions& options, Deadline overall, Deadline* commands,
                        std::string* why) {
    const RedisEndpoint& at = options.endpoint;
    redisContext* context =
        redisConnectWithTimeout(at.host.c_str(), at.port, to_timeval(options.connect_timeout_ms));
    if (context == nullptr || context->err != 0) {
      *why = "connect to " + at.host + ":" + std::to_string(at.port) + " failed (" +
             context_error(context) + ")";
      if (context != nullptr) redisFree(context);
      return nullptr;
    }
    ::fcntl(context->fd, F_SETFD, FD_CLOEXEC);  // not inherited by programs this process runs
    if (redisSetTimeout(context, to_timeval(options.command_timeout_ms)) != REDIS_OK) {
      *why = "setting the command timeout failed (" + context_error(context) + ")";
      redisFree(context);
      return nullptr;
    }
    *commands = std::min(overall, deadline_after(options.command_timeout_ms));
    const Deadline deadline = *commands;
    auto setup = [&](std::initializer_list<std::string_view> args, const char* what) {
      bool timed_out = false;
      ReplyPtr reply = run(context, args, deadline, &timed_out);
      if (reply && reply->type != REDIS_REPLY_ERROR) return true;
      *why = std::string(what) + " failed (" +
             (reply       ? std::string(reply->str, reply->len)
              : timed_out ? "no reply within " + std::to_string(options.command_timeout_ms) + " ms"
                          : context_error(context)) +
             ")";
      return false;
    };
    const std::string db = std::to_string(at.db);
    const bool ready = (at.password.empty() ||
                        (at.user.empty() ? setup({"AUTH", at.password}, "AUTH")
                                         : setup({"AUTH", at.user, at.password}, "AUTH"))) &&
                       (at.db == 0 || setup({"SELECT", db}, "SELECT"));
    if (!ready) {
      redisFree(context);
      return nullptr;
    }
    return context;
  }

  // One command on a pooled connection (or a new one). nullopt on a fault, with `why` set; an error
  // reply is returned as such (the connection stays usable). Bounds (docs/cache.md): the TCP
  // connect takes at most the connect timeout; from then on, AUTH, SELECT, the command's send and
  // its whole reply take at most the command timeout together; and the whole call, a retry on a
  // fresh connection included, at most their sum.
  std::optional<Reply> command(const RemoteOptions& options,
                               std::initializer_list<std::string_view> args, std::string* why) {
    SigpipeGuard guard;
    const Deadline overall =
        deadline_after(options.connect_timeout_ms + options.command_timeout_ms);
    for (int attempt = 0; attempt < 2; ++attempt) {
      redisContext* context = attempt == 0 ? take_idle() : nullptr;
      const bool reused = context != nullptr;
      if (!reused && ms_left(overall) == 0) {
        *why = "no reply within " + std::to_string(options.command_timeout_ms) + " ms";
        return std::nullopt;
      }
      Deadline deadline = std::min(overall, deadline_after(options.command_timeout_ms));
      if (!reused && (context = connect(options, overall, &deadline, why)) == nullptr)
        return std::nullopt;
      errno = 0;
      bool timed_out = false;
      ReplyPtr reply = run(context, args, deadline, &timed_out);
      const int error_number = errno;
      if (!reply) {
        const bool retry = reused && !timed_out && closed_by_server(context, error_number);
        *why = context_error(context);
        if (timed_out || error_number == EAGAIN || error_number == EWOULDBLOCK)
          *why = "no reply within " + std::to_string(options.command_timeout_ms) + " ms";
        redisFree(context);
        if (retry) {
          std::lock_guard lock(mutex);
          drop_idle();  // the server restarted or closed idle connections: the others are stale too
          continue;
        }
        return std::nullopt;
      }
      Reply out;
      out.type = reply->type;
      if (reply->str != nullptr) out.text.assign(reply->str, reply->len);
      {
        std::lock_guard lock(mutex);
        if (idle.size() < kMaxIdle && owner == ::getpid()) {
          idle.push_back(context);
          context = nullptr;
        }
      }
      if (context != nullptr) redisFree(context);
      return out;
    }
    return std::nullopt;
  }
};

bool RemoteCache::built_in() noexcept { return true; }

#else  // !TMEMJIT_HAVE_HIREDIS

struct RemoteCache::Impl {};

bool RemoteCache::built_in() noexcept { return false; }

#endif

RemoteCache::RemoteCache(RemoteOptions options, std::shared_ptr<const EntrySigner> signer)
    : options_(std::move(options)), signer_(std::move(signer)), impl_(std::make_unique<Impl>()) {}

RemoteCache::~RemoteCache() = default;

void RemoteCache::reset_warnings_for_testing() noexcept {
  g_fault_warned.store(false);
  g_rejected_warned.store(false);
}

bool RemoteCache::resting() const noexcept {
  return now_ns() < rest_until_ns_.load(std::memory_order_relaxed);
}

void RemoteCache::fault(const std::string& what) {
  rest_until_ns_.store(now_ns() + int64_t{options_.retry_ms} * 1000000, std::memory_order_relaxed);
  if (!g_fault_warned.exchange(true))
    warn("remote cache " + options_.endpoint.url() + ": " + what +
         "; using the local cache tiers (the remote tier is retried after " +
         std::to_string(options_.retry_ms) + " ms)");
}

std::string RemoteCache::entry_name(const Key128& key) const {
  return "tmemjit:v" + std::to_string(kDiskFormatVersion) + ":" + key.hex();
}

std::string RemoteCache::lock_name(const Key128& key) const { return entry_name(key) + ":lock"; }

#ifdef TMEMJIT_HAVE_HIREDIS

RemoteCache::Fetched RemoteCache::fetch(const Key128& key) {
  if (resting()) return {Status::kResting, std::nullopt, {}};
  std::string why;
  const std::string name = entry_name(key);
  const std::optional<Impl::Reply> reply = impl_->command(options_, {"GET", name}, &why);
  // A key of another type under our name is poison, not a fault: reject it, and SET replaces it.
  const bool wrong_type =
      reply && reply->type == REDIS_REPLY_ERROR && reply->text.starts_with("WRONGTYPE");
  if (!reply || (reply->type == REDIS_REPLY_ERROR && !wrong_type)) {
    if (reply) why = "GET failed (" + reply->text + ")";
    fault(why);
    return {Status::kFault, std::nullopt, why};
  }
  if (reply->type == REDIS_REPLY_NIL) return {Status::kAbsent, std::nullopt, {}};
  Result<Payload> decoded =
      reply->type == REDIS_REPLY_STRING
          ? decode_entry(key, std::span<const char>(reply->text.data(), reply->text.size()),
                         signer_.get())
          : Result<Payload>(Error(ErrorCode::kIo, wrong_type ? "the key holds another type"
                                                             : "the reply is not a string"));
  if (!decoded.ok()) {
    why = decoded.error().message();
    if (!g_rejected_warned.exchange(true))
      warn("remote cache " + options_.endpoint.url() + ": entry " + name + " rejected (" + why +
           "); compiling locally and replacing it");
    return {Status::kRejected, std::nullopt, why};
  }
  return {Status::kHit, std::move(decoded).value(), {}};
}

RemoteCache::Status RemoteCache::store(const Key128& key, const Payload& payload) {
  if (resting()) return Status::kResting;
  const std::string value = encode_entry(key, payload, signer_.get());
  std::string why;
  const std::optional<Impl::Reply> reply =
      impl_->command(options_, {"SET", entry_name(key), value}, &why);
  if (!reply || reply->type == REDIS_REPLY_ERROR) {
    fault(reply ? "SET failed (" + reply->text + ")" : why);
    return Status::kFault;
  }
  return Status::kAbsent;
}

RemoteCache::LockStatus RemoteCache::try_lock(const Key128& key, std::string* token) {
  if (resting()) return LockStatus::kResting;
  // Unique across the fleet: host, process, a per-process random number and a counter.
  static const std::string process = [] {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::random_device device;
    return std::string(host) + ":" + std::to_string(::getpid()) + ":" +
           std::to_string((static_cast<uint64_t>(device()) << 32) ^ device());
  }();
  static std::atomic<uint64_t> counter{0};
  *token = process + ":" + std::to_string(counter.fetch_add(1));
  const std::string ttl = std::to_string(options_.lock_ttl_ms);
  std::string why;
  const std::optional<Impl::Reply> reply =
      impl_->command(options_, {"SET", lock_name(key), *token, "NX", "PX", ttl}, &why);
  if (!reply || reply->type == REDIS_REPLY_ERROR) {
    fault(reply ? "SET NX failed (" + reply->text + ")" : why);
    return LockStatus::kFault;
  }
  return reply->type == REDIS_REPLY_NIL ? LockStatus::kBusy : LockStatus::kAcquired;
}

void RemoteCache::unlock(const Key128& key, const std::string& token) {
  if (resting()) return;  // the lock expires on its own
  static constexpr std::string_view kCompareAndDelete =
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end "
      "return 0";
  std::string why;
  const std::optional<Impl::Reply> reply =
      impl_->command(options_, {"EVAL", kCompareAndDelete, "1", lock_name(key), token}, &why);
  // An error reply (scripting disabled) leaves the lock to its expiry; only silence is a fault.
  if (!reply) fault(why);
}

Result<double> RemoteCache::ping() {
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  const std::optional<Impl::Reply> reply = impl_->command(options_, {"PING"}, &why);
  if (!reply || reply->type == REDIS_REPLY_ERROR)
    return Error(ErrorCode::kIo, "remote cache " + options_.endpoint.url() + ": " +
                                     (reply ? "PING failed (" + reply->text + ")" : why));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

#else  // !TMEMJIT_HAVE_HIREDIS: nothing to talk to

RemoteCache::Fetched RemoteCache::fetch(const Key128&) {
  return {Status::kFault, std::nullopt, "built without hiredis"};
}
RemoteCache::Status RemoteCache::store(const Key128&, const Payload&) { return Status::kFault; }
RemoteCache::LockStatus RemoteCache::try_lock(const Key128&, std::string*) {
  return LockStatus::kFault;
}
void RemoteCache::unlock(const Key128&, const std::string&) {}
Result<double> RemoteCache::ping() {
  return Error(ErrorCode::kUsage,
               "this libtmemjit was built without hiredis: no remote cache tier");
}

#endif

}  // namespace tmem
