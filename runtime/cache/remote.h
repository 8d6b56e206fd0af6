// RemoteCache: the Redis tier behind memory and disk (docs/design.md §Fleet), through hiredis, with
// bounded timeouts, a per-key compile lock (SET NX PX) and a rest period after any fault.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/cache/hmac.h"
#include "runtime/cache/payload.h"
#include "runtime/support/hash.h"
#include "tmem/result.h"

namespace tmem {

// Where the server is: redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (IPv6 hosts in brackets).
struct RedisEndpoint {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string user;      // Redis 6 ACL user; empty: AUTH with the password alone
  std::string password;  // empty: no AUTH

  // redis://HOST:PORT/DB, without the credentials (for messages and `cache stats`).
  std::string url() const;
};

// kUsage naming the text and the accepted form when `url` is not such a URL.
Result<RedisEndpoint> parse_redis_url(std::string_view url);

struct RemoteOptions {
  RedisEndpoint endpoint;
  uint32_t connect_timeout_ms = 100;  // TCP connect (a host name is resolved before, unbounded)
  uint32_t command_timeout_ms = 500;  // a command: its send and its whole reply (with AUTH, SELECT)
  uint32_t lock_ttl_ms = 10000;       // expiry of a compile lock: a dead holder frees it this late
  uint32_t lock_wait_ms = 15000;      // how long a lookup waits for another's compile at most
  uint32_t retry_ms = 30000;          // after a fault the tier is not asked for this long
};

// One Redis server shared by any number of threads (a small pool of connections, one command on
// one connection at a time) and processes.
//
// * Keys: an entry lives under "tmemjit:v<disk format>:<key hex>", its compile lock under the same
//   name plus ":lock". Values are entry files in the disk format (runtime/cache/disk.h), signed
//   when a signer is given, and are validated exactly like disk entries.
// * Faults (refused or timed-out connect, a command past its timeout, a dropped connection, an
//   error reply) never throw or fail: the call reports kFault, the connection is dropped, and the
//   tier rests for retry_ms (calls report kResting without touching the network). The first fault
//   of a process prints one warning; the first rejected entry prints one more.
// * SIGPIPE from a server that went away is blocked and swallowed on the calling thread only.
class RemoteCache {
 public:
  // False when libtmemjit was built without hiredis (TMEMJIT_HAVE_HIREDIS unset): then every call
  // reports kFault and no connection is made.
  static bool built_in() noexcept;

  RemoteCache(RemoteOptions options, std::shared_ptr<const EntrySigner> signer);
  RemoteCache(const RemoteCache&) = delete;
  RemoteCache& operator=(const RemoteCache&) = delete;
  ~RemoteCache();

  enum class Status {
    kHit,       // a valid entry
    kAbsent,    // no entry (or, for store/unlock, done)
    kRejected,  // an entry that failed validation (garbage, truncated, another key's, unsigned or
                // forged): treated as absent, then overwritten by the next store
    kFault,     // the server did not answer properly; the tier now rests
    kResting,   // not asked: a fault happened less than retry_ms ago
  };
  struct Fetched {
    Status status = Status::kAbsent;
    std::optional<Payload> payload;  // with kHit
    std::string why;                 // with kRejected and kFault
  };
  Fetched fetch(const Key128& key);
  Status store(const Key128& key, const Payload& payload);  // kAbsent when stored

  enum class LockStatus { kAcquired, kBusy, kFault, kResting };
  // SET <lock> <token> NX PX lock_ttl_ms. On kAcquired `token` holds this holder's token.
  LockStatus try_lock(const Key128& key, std::string* token);
  // Deletes the lock if it still holds `token` (one EVAL); a lock that expired is left alone.
  void unlock(const Key128& key, const std::string& token);

  // One PING on a fresh connection: the round trip in milliseconds, or why not (kIo).
  Result<double> ping();

  bool resting() const noexcept;
  const RemoteOptions& options() const noexcept { return options_; }
  const EntrySigner* signer() const noexcept { return signer_.get(); }
  std::string entry_name(const Key128& key) const;
  std::string lock_name(const Key128& key) const;

  // The one-warning-per-process latches, for tests that check the warnings.
  static void reset_warnings_for_testing() noexcept;

 private:
  struct Impl;
  void fault(const std::string& what);

  RemoteOptions options_;
  std::shared_ptr<const EntrySigner> signer_;
  std::unique_ptr<Impl> impl_;
  std::atomic<int64_t> rest_until_ns_{0};  // steady clock
};

}  // namespace tmem
