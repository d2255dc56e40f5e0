// A one-shot cancellation signal shared between a long-running call (a watch, a leader-election
// loop, an informer) and whoever wants to stop it.
//
//   kube::Cancellation stop;
//   std::thread t([&] { informer.Run(&stop); });
//   ...
//   stop.Cancel();   // Run returns promptly; any in-flight watch connection is closed.
//   t.join();
//
// Blocking code waits on it with WaitFor(); adapters that own sockets register a callback with
// OnCancel() so a cancel interrupts a read that would otherwise block until the server speaks.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>

#include "absl/time/time.h"

namespace kube {

class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Idempotent. Runs registered callbacks (once each) on the calling thread.
  void Cancel();
  bool cancelled() const;

  // Waits up to `timeout` of real time; returns true if cancelled (possibly earlier).
  bool WaitFor(absl::Duration timeout) const;

  // Registers `fn` to run on Cancel(); runs it right away if already cancelled. Returns an id
  // for Unregister(). Callbacks must not call back into this object.
  int OnCancel(std::function<void()> fn) const;
  // After Unregister returns, the callback is not running and will not run.
  void Unregister(int id) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool cancelled_ = false;
  mutable bool running_callbacks_ = false;
  mutable int next_id_ = 0;
  mutable std::map<int, std::function<void()>> callbacks_;
};

}  // namespace kube
