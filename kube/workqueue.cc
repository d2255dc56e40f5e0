#include "kube/workqueue.h"

#include <algorithm>

namespace kube {

WorkQueue::WorkQueue(std::unique_ptr<RateLimiter> limiter, Clock& clock)
    : limiter_(std::move(limiter)), clock_(clock) {}

WorkQueue::~WorkQueue() { ShutDown(); }

void WorkQueue::AddLocked(const std::string& item) {
  if (shutting_down_ || dirty_.count(item) != 0) return;
  dirty_.insert(item);
  // A worker has it: Done() will queue it again, so it is never handed out twice at once.
  if (processing_.count(item) != 0) return;
  queue_.push_back(item);
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& item) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(item);
}

void WorkQueue::AddAfter(const std::string& item, absl::Duration delay) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return;
  if (delay <= absl::ZeroDuration()) {
    AddLocked(item);
    return;
  }
  absl::Time ready = clock_.Now() + delay;
  auto it = waiting_ready_.find(item);
  if (it != waiting_ready_.end() && it->second <= ready) return;  // already due sooner
  waiting_ready_[item] = ready;
  waiting_.push({ready, item});
  cv_.notify_all();  // a Get may need to wake earlier now
}

absl::Time WorkQueue::PromoteDueLocked() {
  absl::Time now = clock_.Now();
  while (!waiting_.empty()) {
    const Waiting& next = waiting_.top();
    auto it = waiting_ready_.find(next.item);
    // A stale heap entry: the item was re-scheduled sooner, or already promoted.
    if (it == waiting_ready_.end() || it->second != next.ready) {
      waiting_.pop();
      continue;
    }
    if (next.ready > now) return next.ready;
    std::string item = next.item;
    waiting_ready_.erase(it);
    waiting_.pop();
    AddLocked(item);
  }
  return absl::InfiniteFuture();
}

std::optional<std::string> WorkQueue::PopLocked() {
  if (queue_.empty()) return std::nullopt;
  std::string item = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(item);
  dirty_.erase(item);
  return item;
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (shutting_down_) return std::nullopt;
    absl::Time next = PromoteDueLocked();
    if (std::optional<std::string> item = PopLocked()) return item;
    if (next == absl::InfiniteFuture()) {
      cv_.wait(lock);
    } else {
      // Never sleep long: the clock may be a fake one that tests advance.
      absl::Duration wait =
          std::clamp(next - clock_.Now(), absl::Milliseconds(1), absl::Seconds(1));
      cv_.wait_for(lock, absl::ToChronoNanoseconds(wait));
    }
  }
}

std::optional<std::string> WorkQueue::TryGet() {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return std::nullopt;
  PromoteDueLocked();
  return PopLocked();
}

void WorkQueue::Done(const std::string& item) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(item);
  if (dirty_.count(item) != 0 && !shutting_down_) {
    queue_.push_back(item);
    cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::shutting_down() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace kube
