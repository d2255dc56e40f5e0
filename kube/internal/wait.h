// absl::Duration -> a timeout for std::condition_variable::wait_for. wait_for adds it to
// steady_clock::now(): absl::InfiniteDuration() (nanoseconds::max() in chrono) overflowed there,
// undefined behaviour that wraps to a deadline in the past, a wait that returns at once. A
// timeout of a century or more is cut to a century, which no process outlives.
#pragma once

#include <algorithm>
#include <chrono>

#include "absl/time/time.h"

namespace kube::internal {

inline std::chrono::nanoseconds WaitTimeout(absl::Duration timeout) {
  return absl::ToChronoNanoseconds(std::min(timeout, absl::Hours(24 * 365 * 100)));
}

}  // namespace kube::internal
