// Lets one kind of write have the API server first. While any holder is inside a Hold (an
// admission cycle writing its statuses), Yield() makes a less urgent writer (a job controller
// worker about to create a Service and pods, an Event writer) wait until the holds end, for at
// most a bound, so a saturated API server answers the urgent writes first. A deferral only
// reorders work the API server must do anyway; it never drops any.
//
//   kube::WriteGate gate;
//   { kube::WriteGate::Hold hold(gate); WriteStatuses(...); }   // urgent
//   gate.Yield(absl::Seconds(5), &stop);                          // before a deferrable write
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "absl/time/time.h"
#include "kube/cancellation.h"

namespace kube {

class WriteGate {
 public:
  class Hold {
   public:
    explicit Hold(WriteGate& gate) : gate_(gate) { gate_.Acquire(); }
    ~Hold() { gate_.Release(); }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    WriteGate& gate_;
  };

  void Acquire();
  void Release();
  // Waits until no Hold is active, or `max` has passed, or `cancel` fires; returns how long it
  // waited (zero when the gate was open).
  absl::Duration Yield(absl::Duration max, const Cancellation* cancel = nullptr);

  bool held() const;
  // Yield() calls waiting now.
  int waiters() const;
  // Yield() calls that had to wait, and their total wait: for metrics and tests.
  int64_t deferrals() const;
  absl::Duration deferred() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int holds_ = 0;
  int waiters_ = 0;
  int64_t deferrals_ = 0;
  absl::Duration deferred_;
};

}  // namespace kube
