// Turns SIGTERM / SIGINT into a callback for a long-running binary. The signals are blocked in
// every thread (threads created afterwards inherit the mask) and taken by one thread with
// sigwait, so no handler runs at a random point. Construct it first thing in main, before any
// other thread starts.
//
//   kube::Cancellation stop;
//   SignalWaiter signals([&stop] { stop.Cancel(); });
//   ... stop.WaitFor(...) ...
//   spdlog::info("received {}: draining", signals.received_name());
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <string_view>
#include <thread>

namespace phalanx {

class SignalWaiter {
 public:
  explicit SignalWaiter(std::function<void()> on_signal);
  // Wakes and joins the waiting thread if no signal came.
  ~SignalWaiter();
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

  // The signal number received, 0 if none yet.
  int received() const { return received_.load(); }
  // "SIGTERM", "SIGINT" or "no signal".
  std::string_view received_name() const;

 private:
  sigset_t signals_;
  std::atomic<int> received_{0};
  std::function<void()> on_signal_;
  std::thread thread_;
};

}  // namespace phalanx
