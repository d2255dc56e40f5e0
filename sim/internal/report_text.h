// Text shared by the table (sim/report.cc) and the HTML page (sim/report_html.cc): durations and
// the summary's figures as cells, "-" where nothing was measured.
#pragma once

#include <string>

#include "absl/strings/str_format.h"
#include "sim/engine.h"

namespace phalanx::sim::internal {

inline std::string Duration(double seconds) {
  if (seconds < 120) return absl::StrFormat("%.0fs", seconds);
  if (seconds < 7200) return absl::StrFormat("%.1fm", seconds / 60);
  return absl::StrFormat("%.1fh", seconds / 3600);
}

struct Cells {
  std::string util, wait_p50, wait_p99, jct, locality, comm;
};

inline Cells TextCells(const Summary& s) {
  Cells c{"-", "-", "-", "-", "-", "-"};
  if (s.makespan_s > 0) c.util = absl::StrFormat("%.1f%%", 100 * s.gpu_utilization);
  if (s.jobs_started > 0) {
    c.wait_p50 = Duration(s.wait_p50_s);
    c.wait_p99 = Duration(s.wait_p99_s);
  }
  if (s.jobs_measured_completed > 0) c.jct = Duration(s.jct_mean_s);
  if (s.locality_jobs > 0) c.locality = absl::StrFormat("%.1f%%", 100 * s.locality_lowest_level);
  if (s.multi_node_jobs > 0) c.comm = absl::StrFormat("%.3f", s.comm_slowdown_mean);
  return c;
}

}  // namespace phalanx::sim::internal
