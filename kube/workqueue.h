// A rate-limited, de-duplicating work queue of object keys, with client-go's guarantees:
//   * an item added many times before it is processed is processed once;
//   * an item is never processed by two workers at once: if it is re-added while a worker has
//     it, it is queued again only when that worker calls Done(), and then processed once more;
//   * AddRateLimited delays an item by its failure count (kube/rate_limiter.h); Forget resets it.
//
//   kube::WorkQueue queue(kube::DefaultControllerRateLimiter());
//   informer.AddEventHandlers({.on_add = [&](const kube::Pod& p) { queue.Add(p.meta.Key()); }});
//   while (std::optional<std::string> key = queue.Get()) {   // nullopt after ShutDown()
//     if (Reconcile(*key).ok()) queue.Forget(*key); else queue.AddRateLimited(*key);
//     queue.Done(*key);
//   }
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/time/time.h"
#include "kube/clock.h"
#include "kube/rate_limiter.h"

namespace kube {

class WorkQueue {
 public:
  explicit WorkQueue(std::unique_ptr<RateLimiter> limiter, Clock& clock = RealClock());
  ~WorkQueue();

  void Add(const std::string& item);
  // Adds `item` once `delay` has passed on the clock (sooner if already waiting with a shorter
  // delay, or if added directly meanwhile).
  void AddAfter(const std::string& item, absl::Duration delay);
  void AddRateLimited(const std::string& item) { AddAfter(item, limiter_->When(item)); }
  void Forget(const std::string& item) { limiter_->Forget(item); }
  int NumRequeues(const std::string& item) { return limiter_->NumRequeues(item); }

  // Blocks until an item is ready (it is then "processing" until Done) or the queue is shut down
  // (nullopt). Delayed items become ready when the clock reaches their time; Get wakes for them
  // by real-time waits, so with a fake clock use TryGet after advancing it.
  std::optional<std::string> Get();
  // Non-blocking Get.
  std::optional<std::string> TryGet();
  void Done(const std::string& item);

  // Wakes every Get(); items still queued are dropped.
  void ShutDown();
  bool shutting_down() const;
  // Items ready to hand out (not counting delayed or processing ones).
  size_t Len() const;

 private:
  struct Waiting {
    absl::Time ready;
    std::string item;
    bool operator>(const Waiting& other) const { return ready > other.ready; }
  };

  void AddLocked(const std::string& item);
  // Moves waiting items whose time has come into the queue; returns the next ready time.
  absl::Time PromoteDueLocked();
  std::optional<std::string> PopLocked();

  std::unique_ptr<RateLimiter> limiter_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;       // queued or to be re-queued on Done
  std::unordered_set<std::string> processing_;  // handed out by Get, not yet Done
  std::priority_queue<Waiting, std::vector<Waiting>, std::greater<Waiting>> waiting_;
  std::unordered_map<std::string, absl::Time> waiting_ready_;  // earliest time per item
  bool shutting_down_ = false;
};

}  // namespace kube
