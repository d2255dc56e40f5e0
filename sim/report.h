// Presenting simulation results: a plain-text table for the terminal, the JSON document of
// `phalanx simulate --json`, and a self-contained HTML page with SVG charts (`--report`).
//
//   SimulationReport report{&cluster, jobs.size(), seed, results};
//   std::cout << FormatTable(report);
//   std::string json = FormatJson(report);   // byte-identical for the same inputs
//   std::string html = FormatHtml(report);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/engine.h"

namespace phalanx::sim {

struct SimulationReport {
  const ClusterModel* cluster = nullptr;
  std::string trace_source;  // "generated (seed 1)" or the trace file
  int64_t jobs = 0;
  uint64_t seed = 0;
  std::vector<RunResult> results;  // one per policy, in the order asked for
};

// Per-job figures measured over nothing (no job started, none completed, no gang judged) are
// "-" in the table and HTML and null in the JSON, never a made-up 0 s or 100 %.
std::string FormatTable(const SimulationReport& report);
// Deterministic: no wall-clock times.
std::string FormatJson(const SimulationReport& report);
std::string FormatHtml(const SimulationReport& report);
// One line per policy that left jobs never started (for stderr), or "".
std::string NeverStartedWarning(const SimulationReport& report);

// Chart data, exposed for tests: utilization (0..1) averaged over `buckets` equal slices of
// [0, end_s]; and the locality by gang size in nodes (label, local, total).
std::vector<double> UtilizationSeries(const RunResult& result, int64_t total_gpus, double end_s,
                                      int buckets);
struct LocalityBucket {
  std::string label;
  int64_t local = 0;
  int64_t total = 0;
};
std::vector<LocalityBucket> LocalityBySize(const RunResult& result);

}  // namespace phalanx::sim
