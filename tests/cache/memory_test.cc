// Tests of the in-memory module cache: hit/miss, one compute per key under 16 threads, failures
// not cached, and an allocation-free hit path.
#include "runtime/cache/memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/allocation_counter.h"
#include "common/sanitizer_util.h"
#include "runtime/cache/module_cache.h"

using tmemjit_test::t_allocations;

namespace tmem {
namespace {

Key128 key_of(int i) { return KeyBuilder().integer("i", i).finish(); }

Payload payload_of(int i) {
  Payload payload;
  const std::string text = "payload " + std::to_string(i);
  payload.blob.assign(text.begin(), text.end());
  payload.text = "ptx " + std::to_string(i);
  payload.meta = "meta";
  return payload;
}

TEST(MemoryCache, FirstCallComputesSecondHits) {
  MemoryCache cache;
  int calls = 0;
  auto factory = [&]() -> Result<Payload> {
    ++calls;
    return payload_of(1);
  };
  MemoryCache::Outcome outcome{};
  auto first = cache.get_or_compute(key_of(1), factory, &outcome);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(outcome, MemoryCache::Outcome::kComputed);
  auto second = cache.get_or_compute(key_of(1), factory, &outcome);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(outcome, MemoryCache::Outcome::kHit);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(first->get(), second->get());  // one shared object
  EXPECT_EQ(**second, payload_of(1));
  EXPECT_EQ(cache.entries(), 1u);
  EXPECT_EQ(cache.bytes(), payload_of(1).size_bytes());
  EXPECT_EQ(cache.find(key_of(2)), nullptr);
}

TEST(MemoryCache, SixteenThreadsComputeEachOfTwoHundredKeysOnce) {
  constexpr int kThreads = 16;
  constexpr int kKeys = 200;
  MemoryCache cache;
  std::array<std::atomic<int>, kKeys> computed{};
  std::array<std::atomic<const Payload*>, kKeys> seen{};
  std::atomic<int> failures{0};
  std::atomic<int> in_factory{0};
  std::atomic<int> max_in_factory{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int> order(kKeys);
      for (int i = 0; i < kKeys; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(t)));
      for (int i : order) {
        auto result = cache.get_or_compute(key_of(i), [&, i]() -> Result<Payload> {
          const int now = in_factory.fetch_add(1) + 1;
          int max = max_in_factory.load();
          while (now > max && !max_in_factory.compare_exchange_weak(max, now)) {
          }
          computed[i].fetch_add(1);
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          in_factory.fetch_sub(1);
          return payload_of(i);
        });
        if (!result.ok() || **result != payload_of(i)) {
          failures.fetch_add(1);
          continue;
        }
        const Payload* expected = nullptr;
        if (!seen[i].compare_exchange_strong(expected, result->get()) && expected != result->get())
          failures.fetch_add(1);  // two different objects for one key
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  for (int i = 0; i < kKeys; ++i) EXPECT_EQ(computed[i].load(), 1) << "key " << i;
  EXPECT_EQ(cache.entries(), static_cast<size_t>(kKeys));
  // Different keys computed in parallel: no global lock is held across a computation.
  EXPECT_GT(max_in_factory.load(), 1);
}

TEST(MemoryCache, FailuresAreNotCachedAndWaitersShareTheError) {
  MemoryCache cache;
  std::atomic<int> calls{0};
  auto failing = [&]() -> Result<Payload> {
    calls.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return Error(ErrorCode::kToolchain, "ptxas said no");
  };
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::array<MemoryCache::Outcome, kThreads> outcomes{};
  std::array<std::string, kThreads> messages;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto result = cache.get_or_compute(key_of(7), failing, &outcomes[t]);
      messages[t] = result.ok() ? "ok" : result.error().message();
    });
  }
  for (auto& thread : threads) thread.join();
  int computed = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(messages[t], "ptxas said no");
    if (outcomes[t] == MemoryCache::Outcome::kComputed) ++computed;
    EXPECT_NE(outcomes[t], MemoryCache::Outcome::kHit);
  }
  EXPECT_EQ(calls.load(), computed);
  EXPECT_EQ(cache.find(key_of(7)), nullptr);
  EXPECT_EQ(cache.entries(), 0u);

  // The next call retries, and a success is cached.
  MemoryCache::Outcome outcome{};
  auto retry = cache.get_or_compute(
      key_of(7), [] { return Result<Payload>(payload_of(7)); }, &outcome);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(outcome, MemoryCache::Outcome::kComputed);
  EXPECT_NE(cache.find(key_of(7)), nullptr);
}

TEST(MemoryCache, ExceptionsBecomeErrors) {
  MemoryCache cache;
  auto thrown = cache.get_or_compute(
      key_of(3), []() -> Result<Payload> { throw Error(ErrorCode::kIo, "disk on fire"); });
  ASSERT_FALSE(thrown.ok());
  EXPECT_EQ(thrown.error().code(), ErrorCode::kIo);
  auto other = cache.get_or_compute(key_of(3),
                                    []() -> Result<Payload> { throw std::runtime_error("boom"); });
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code(), ErrorCode::kInternal);
  EXPECT_NE(other.error().message().find("boom"), std::string::npos);
}

TEST(MemoryCache, InsertAndClear) {
  MemoryCache cache;
  auto stored = cache.insert(key_of(1), payload_of(1));
  EXPECT_EQ(cache.insert(key_of(1), payload_of(2)), stored);  // first value wins
  EXPECT_EQ(cache.find(key_of(1)), stored);
  cache.clear();
  EXPECT_EQ(cache.find(key_of(1)), nullptr);
  EXPECT_EQ(cache.entries(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
}

TEST(MemoryCache, HitDoesNotAllocate) {
#ifdef TMEMJIT_TSAN
  GTEST_SKIP()
      << "built with TSan, whose runtime defines operator new: allocations are not counted";
#endif
  MemoryCache cache;
  const Key128 key = key_of(9);
  ASSERT_TRUE(cache.get_or_compute(key, [] { return Result<Payload>(payload_of(9)); }).ok());
  // A capture too big for std::function's small buffer, copied without allocating.
  const std::array<char, 100> captured{};
  const size_t before = t_allocations;
  for (int i = 0; i < 100; ++i) {
    auto hit = cache.get_or_compute(key, [captured]() -> Result<Payload> {
      return Payload{{captured[0]}, "", ""};
    });
    ASSERT_TRUE(hit.ok());
  }
  EXPECT_EQ(t_allocations, before);
  // The counter does see allocations: a miss stores a new shared payload.
  ASSERT_TRUE(
      cache.get_or_compute(key_of(10), [] { return Result<Payload>(payload_of(10)); }).ok());
  EXPECT_GT(t_allocations, before);
}

TEST(ModuleCache, HitDoesNotAllocate) {
#ifdef TMEMJIT_TSAN
  GTEST_SKIP()
      << "built with TSan, whose runtime defines operator new: allocations are not counted";
#endif
  CacheOptions options;
  options.disk = false;
  ModuleCache cache(options);
  const Key128 key = key_of(10);
  ASSERT_TRUE(cache.get_or_compile(key, [] { return Result<Payload>(payload_of(10)); }).ok());
  const std::array<char, 100> captured{};
  const size_t before = t_allocations;
  for (int i = 0; i < 100; ++i) {
    auto hit = cache.get_or_compile(key, [captured]() -> Result<Payload> {
      return Payload{{captured[0]}, "", ""};
    });
    ASSERT_TRUE(hit.ok());
  }
  EXPECT_EQ(t_allocations, before);
  EXPECT_EQ(cache.stats().hits, 100u);
  EXPECT_EQ(cache.stats().misses, 1u);
}

}  // namespace
}  // namespace tmem
