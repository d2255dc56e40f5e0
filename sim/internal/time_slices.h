// The time slices the report's charts average over, shared by sim/report.cc (utilization) and
// sim/report_html.cc (per-queue shares).
#pragma once

#include <algorithm>
#include <vector>

namespace phalanx::sim::internal {

// Adds `amount` held over [from, to), as amount x seconds, to the equal slices of
// [start_s, end_s] that `series` divides it into; the part outside [start_s, end_s] is dropped.
inline void AddToSlices(std::vector<double>& series, double start_s, double end_s, double from,
                        double to, double amount) {
  const int slices = static_cast<int>(series.size());
  if (slices == 0 || end_s <= start_s) return;
  const double width = (end_s - start_s) / slices;
  from = std::max(from, start_s);
  to = std::min(to, end_s);
  if (to <= from) return;
  int b = std::clamp(static_cast<int>((from - start_s) / width), 0, slices - 1);
  for (; b < slices && start_s + b * width < to; ++b) {
    const double lo = std::max(from, start_s + b * width);
    const double hi = std::min(to, start_s + (b + 1) * width);
    if (hi > lo) series[b] += amount * (hi - lo);
  }
}

}  // namespace phalanx::sim::internal
