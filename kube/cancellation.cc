#include "kube/cancellation.h"

#include <utility>
#include <vector>

#include "kube/internal/wait.h"

namespace kube {

void Cancellation::Cancel() {
  std::map<int, std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    running_callbacks_ = true;
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& [id, fn] : callbacks) fn();
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_callbacks_ = false;
  }
  cv_.notify_all();
}

bool Cancellation::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool Cancellation::WaitFor(absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, internal::WaitTimeout(timeout), [this] { return cancelled_; });
}

int Cancellation::OnCancel(std::function<void()> fn) const {
  std::unique_lock<std::mutex> lock(mu_);
  int id = next_id_++;
  if (cancelled_) {
    lock.unlock();
    fn();
    return id;
  }
  callbacks_.emplace(id, std::move(fn));
  return id;
}

void Cancellation::Unregister(int id) const {
  std::unique_lock<std::mutex> lock(mu_);
  callbacks_.erase(id);
  // If Cancel() is mid-way through the callbacks, ours may be running: wait it out so the caller
  // can free what the callback touches.
  cv_.wait(lock, [this] { return !running_callbacks_; });
}

}  // namespace kube
