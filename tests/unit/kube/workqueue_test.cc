#include "kube/workqueue.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/mocks/kube/mock_clock.h"

namespace kube {
namespace {

using ::testing::Optional;

std::unique_ptr<RateLimiter> NoDelay() {
  return std::make_unique<ItemExponentialRateLimiter>(absl::ZeroDuration(), absl::ZeroDuration());
}

TEST(WorkQueueTest, DuplicatesBeforeProcessingCollapse) {
  FakeClock clock;
  WorkQueue queue(NoDelay(), clock);
  queue.Add("a");
  queue.Add("b");
  queue.Add("a");
  EXPECT_EQ(queue.Len(), 2u);
  EXPECT_THAT(queue.TryGet(), Optional(std::string("a")));
  EXPECT_THAT(queue.TryGet(), Optional(std::string("b")));
  EXPECT_EQ(queue.TryGet(), std::nullopt);
}

TEST(WorkQueueTest, ReAddWhileProcessingRunsOnceMoreAfterDone) {
  FakeClock clock;
  WorkQueue queue(NoDelay(), clock);
  queue.Add("a");
  ASSERT_THAT(queue.TryGet(), Optional(std::string("a")));
  queue.Add("a");
  queue.Add("a");
  // Not handed to a second worker while the first still has it.
  EXPECT_EQ(queue.TryGet(), std::nullopt);
  queue.Done("a");
  EXPECT_THAT(queue.TryGet(), Optional(std::string("a")));
  queue.Done("a");
  EXPECT_EQ(queue.TryGet(), std::nullopt);
}

TEST(WorkQueueTest, AddAfterWaitsForTheClock) {
  FakeClock clock;
  WorkQueue queue(NoDelay(), clock);
  queue.AddAfter("late", absl::Seconds(10));
  queue.AddAfter("later", absl::Seconds(20));
  queue.AddAfter("late", absl::Seconds(30));  // an earlier schedule wins
  EXPECT_EQ(queue.TryGet(), std::nullopt);
  clock.Advance(absl::Seconds(10));
  EXPECT_THAT(queue.TryGet(), Optional(std::string("late")));
  EXPECT_EQ(queue.TryGet(), std::nullopt);
  clock.Advance(absl::Seconds(25));
  EXPECT_THAT(queue.TryGet(), Optional(std::string("later")));
  queue.Done("late");
  queue.Done("later");
  clock.Advance(absl::Seconds(60));
  EXPECT_EQ(queue.TryGet(), std::nullopt);  // "late" was not scheduled twice
}

TEST(WorkQueueTest, RateLimitedRetriesBackOffPerItemUntilForgotten) {
  FakeClock clock;
  WorkQueue queue(std::make_unique<ItemExponentialRateLimiter>(absl::Seconds(1), absl::Seconds(3)),
                  clock);
  queue.AddRateLimited("x");  // 1 s
  EXPECT_EQ(queue.NumRequeues("x"), 1);
  clock.Advance(absl::Milliseconds(999));
  EXPECT_EQ(queue.TryGet(), std::nullopt);
  clock.Advance(absl::Milliseconds(1));
  ASSERT_THAT(queue.TryGet(), Optional(std::string("x")));
  queue.AddRateLimited("x");  // 2 s
  queue.Done("x");
  clock.Advance(absl::Seconds(2));
  ASSERT_THAT(queue.TryGet(), Optional(std::string("x")));
  queue.Done("x");
  queue.Forget("x");
  EXPECT_EQ(queue.NumRequeues("x"), 0);
}

TEST(RateLimiterTest, ExponentialCapsAtMax) {
  ItemExponentialRateLimiter limiter(absl::Milliseconds(5), absl::Seconds(1000));
  EXPECT_EQ(limiter.When("a"), absl::Milliseconds(5));
  EXPECT_EQ(limiter.When("a"), absl::Milliseconds(10));
  EXPECT_EQ(limiter.When("a"), absl::Milliseconds(20));
  EXPECT_EQ(limiter.When("b"), absl::Milliseconds(5));  // per item
  for (int i = 0; i < 100; ++i) limiter.When("a");
  EXPECT_EQ(limiter.When("a"), absl::Seconds(1000));
  limiter.Forget("a");
  EXPECT_EQ(limiter.When("a"), absl::Milliseconds(5));
}

TEST(RateLimiterTest, TokenBucketAllowsBurstThenPaces) {
  FakeClock clock;
  TokenBucketRateLimiter bucket(clock, /*qps=*/10, /*burst=*/3);
  EXPECT_EQ(bucket.When("a"), absl::ZeroDuration());
  EXPECT_EQ(bucket.When("b"), absl::ZeroDuration());
  EXPECT_EQ(bucket.When("c"), absl::ZeroDuration());
  EXPECT_EQ(bucket.When("d"), absl::Milliseconds(100));
  EXPECT_EQ(bucket.When("e"), absl::Milliseconds(200));  // queued behind d
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(bucket.When("f"), absl::ZeroDuration());  // refilled, capped at burst
}

TEST(RateLimiterTest, DefaultControllerTakesTheLongerOfBoth) {
  FakeClock clock;
  std::unique_ptr<RateLimiter> limiter = DefaultControllerRateLimiter(clock);
  EXPECT_EQ(limiter->When("a"), absl::Milliseconds(5));
  for (int i = 0; i < 200; ++i) limiter->When(absl::StrCat("item-", i));
  // The 100-token bucket is spent: a fresh item waits for a token, not 5 ms.
  EXPECT_GT(limiter->When("fresh"), absl::Seconds(9));
}

// Several workers hammer a small key space: no key is ever processed by two at once, and every
// Add is followed by at least one processing of that key.
TEST(WorkQueueTest, ConcurrentWorkersNeverShareAnItem) {
  WorkQueue queue(NoDelay());
  constexpr int kKeys = 8;
  std::atomic<int> in_flight[kKeys] = {};
  std::atomic<bool> overlap{false};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (std::optional<std::string> key = queue.Get()) {
        int k = key->back() - '0';
        if (in_flight[k].fetch_add(1) != 0) overlap = true;
        std::this_thread::yield();
        in_flight[k].fetch_sub(1);
        ++processed;
        queue.Done(*key);
      }
    });
  }
  for (int i = 0; i < 4000; ++i) queue.Add("k" + std::to_string(i % kKeys));
  // Drain: the last Add of each key is processed after it was made.
  while (queue.Len() > 0) std::this_thread::yield();
  queue.ShutDown();
  for (std::thread& t : workers) t.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_GE(processed.load(), kKeys);
  EXPECT_LE(processed.load(), 4000);
}

TEST(WorkQueueTest, ShutDownWakesBlockedGet) {
  WorkQueue queue(NoDelay());
  std::optional<std::string> got = "unset";
  std::thread worker([&] { got = queue.Get(); });
  queue.ShutDown();
  worker.join();
  EXPECT_EQ(got, std::nullopt);
}

}  // namespace
}  // namespace kube
