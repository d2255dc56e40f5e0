// Presenting simulation results: a plain-text table for the terminal, the JSON document of
// `phalanx simulate --json`, and a self-contained HTML page with SVG charts (`--report`).
//
//   SimulationReport report{&cluster, jobs.size(), seed, results};
//   std::cout << FormatTable(report);
//   std::string json = FormatJson(report);   // byte-identical for the same inputs
//   std::string html = FormatHtml(report);
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/engine.h"
#include "sim/trace.h"

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
// `--jobs-out`: one CSV row per job and policy, so any figure can be recomputed by hand:
//   policy,job,queue,submit_s,start_s,end_s,wait_s,pods,nodes,level,domain,local,preemptions,
//   interruptions,restarts,gpu_seconds,unplaceable,priority,queued_s,requested_pods,
//   requested_nodes,elastic_min,pending_reason
// `jobs` is the trace the report ran (outcomes are by trace index). Times are seconds; start,
// end and wait are empty for a job that never started or finished; pods, nodes, level (short
// name: layer-3, clique, hostname; "cluster" when the ranks span top-level domains or node
// groups) and domain are of the first placement; local is yes/no for a multi-node gang whose
// locality was judged, else empty; unplaceable is the reason the trace check gave, or empty;
// pending_reason is why a job that never started still waited (JobOutcome), else empty.
void WriteJobsCsv(const SimulationReport& report, const std::vector<TraceJob>& jobs,
                  std::ostream& out);

// What stderr must say about the run, one line each, or "": jobs the trace marked unplaceable;
// for each policy, jobs never started and every rule the engine's checks caught it breaking.
std::string RunWarnings(const SimulationReport& report);

// Chart data, exposed for tests: utilization (0..1) averaged over `buckets` equal slices of
// [start_s, end_s]; and the locality by gang size in nodes, as the HTML chart and the JSON's
// locality_by_size show it: placeable multi-node jobs whose locality was judged, by the nodes
// of their first placement, in buckets 2, 3-4, 5-8, ..., 33-64, 65+ (max_nodes 0 = no bound).
std::vector<double> UtilizationSeries(const RunResult& result, int64_t total_gpus,
                                      double start_s, double end_s, int buckets);
struct LocalityBucket {
  int32_t min_nodes = 0;
  int32_t max_nodes = 0;  // 0 = unbounded
  int64_t local = 0;
  int64_t total = 0;
  std::string label() const;  // "2", "3-4", "65+"
};
std::vector<LocalityBucket> LocalityBySize(const RunResult& result);
// The share of all GPUs each of `queues` queues held, averaged over `buckets` equal slices of
// [start_s, end_s]: [queue][bucket], from RunResult::queue_usage.
std::vector<std::vector<double>> QueueShareSeries(const RunResult& result, size_t queues,
                                                  int64_t total_gpus, double start_s,
                                                  double end_s, int buckets);

}  // namespace phalanx::sim
