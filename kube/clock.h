// Time as seen by the Kubernetes client: every timer (watch backoff, lease renewal, work-queue
// delays, token-file refresh) asks a Clock, so tests drive time with a fake one.
//
//   kube::Clock& clock = kube::RealClock();
//   absl::Time start = clock.Now();
//   if (!clock.SleepFor(absl::Seconds(2), &stop)) return;   // cancelled while sleeping
#pragma once

#include "absl/time/time.h"
#include "kube/cancellation.h"

namespace kube {

class Clock {
 public:
  virtual ~Clock() = default;

  // Wall-clock now (Lease and Event timestamps are wall-clock on the wire).
  virtual absl::Time Now() = 0;
  // Sleeps for `duration`, returning early if `cancel` (may be null) fires. Returns false if
  // cancelled, true if the full duration elapsed.
  virtual bool SleepFor(absl::Duration duration, const Cancellation* cancel) = 0;
};

// The process-wide real clock.
Clock& RealClock();

}  // namespace kube
