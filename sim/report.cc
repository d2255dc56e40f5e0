#include "sim/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/counted_noun.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "sim/csv.h"
#include "sim/internal/report_text.h"
#include "sim/internal/time_slices.h"

namespace phalanx::sim {

namespace {

// Fixed decimals keep the JSON readable and stable.
double Round(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

using internal::Cells;
using internal::TextCells;

}  // namespace

std::vector<double> UtilizationSeries(const RunResult& result, int64_t total_gpus,
                                      double start_s, double end_s, int buckets) {
  std::vector<double> series(std::max(buckets, 0), 0.0);
  if (end_s <= start_s || total_gpus <= 0 || buckets <= 0) return series;
  const double width = (end_s - start_s) / buckets;
  const auto& usage = result.usage;
  for (size_t i = 0; i < usage.size(); ++i) {
    const double to = i + 1 < usage.size() ? usage[i + 1].first : result.summary.horizon_end_s;
    internal::AddToSlices(series, start_s, end_s, usage[i].first, to,
                          static_cast<double>(usage[i].second));
  }
  for (double& v : series) v /= width * static_cast<double>(total_gpus);
  return series;
}

std::string LocalityBucket::label() const {
  if (max_nodes == 0) return absl::StrCat(min_nodes, "+");
  if (max_nodes == min_nodes) return absl::StrCat(min_nodes);
  return absl::StrCat(min_nodes, "-", max_nodes);
}

std::vector<LocalityBucket> LocalityBySize(const RunResult& result) {
  std::vector<LocalityBucket> buckets = {{2, 2},   {3, 4},   {5, 8}, {9, 16},
                                         {17, 32}, {33, 64}, {65, 0}};
  for (const JobOutcome& out : result.outcomes) {
    if (!out.locality_applicable || out.first_start_s < 0 || out.unplaceable) continue;
    for (LocalityBucket& b : buckets) {
      const int32_t n = out.nodes_requested;
      if (n >= b.min_nodes && (b.max_nodes == 0 || n <= b.max_nodes)) {
        ++b.total;
        b.local += out.locality_ok ? 1 : 0;
        break;
      }
    }
  }
  return buckets;
}

namespace {

bool AnyUnplaceable(const SimulationReport& report) {
  for (const RunResult& r : report.results) {
    if (r.summary.jobs_unplaceable > 0) return true;
  }
  return false;
}

}  // namespace

std::string FormatTable(const SimulationReport& report) {
  std::string out = absl::StrFormat("cluster: %s, %d GPUs   trace: %s, %s\n\n",
                                    DescribeCluster(*report.cluster), report.cluster->total_gpus,
                                    report.trace_source, CountedNoun(report.jobs, "job"));
  // The unplaceable column only appears when the run allowed such jobs.
  const bool unplaceable = AnyUnplaceable(report);
  out += absl::StrFormat("%-18s %6s %9s %9s %9s %6s %6s", "policy", "util", "wait p50",
                         "wait p99", "JCT mean", "done", "never");
  if (unplaceable) out += absl::StrFormat(" %6s", "unplc");
  out += absl::StrFormat(" %9s %8s %8s %10s\n", "locality", "comm x", "preempt", "violations");
  for (const RunResult& r : report.results) {
    const Summary& s = r.summary;
    const Cells c = TextCells(s);
    out += absl::StrFormat("%-18s %6s %9s %9s %9s %6d %6d", s.policy, c.util, c.wait_p50,
                           c.wait_p99, c.jct, s.jobs_completed, s.jobs_never_started);
    if (unplaceable) out += absl::StrFormat(" %6d", s.jobs_unplaceable);
    out += absl::StrFormat(" %9s %8s %8d %10d\n", c.locality, c.comm, s.preemptions,
                           s.violations());
  }
  out +=
      "\nutil: busy GPU-seconds / (GPUs x makespan, first submit to last GPU released); never: "
      "jobs\nnever started (not in wait, locality, JCT); locality: multi-node jobs inside one "
      "domain of the\nlowest level that could hold them; comm x: all-reduce slowdown vs ideal "
      "placement; violations:\nrules the engine caught a policy breaking (partial gangs, "
      "over-commit, TP groups, required\nlevels, invalid actions; docs/simulator.md).\n";
  if (unplaceable) {
    out += "unplc: jobs that can never be placed (--allow-unplaceable), in no figure.\n";
  }
  return out;
}

std::string FormatJson(const SimulationReport& report) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  const ClusterModel& cluster = *report.cluster;
  w.StartObject();
  w.Key("cluster");
  w.StartObject();
  w.Key("name");
  w.String(cluster.spec.name.c_str());
  w.Key("source");
  w.String(cluster.spec.source.c_str());
  w.Key("description");
  w.String(DescribeCluster(cluster).c_str());
  w.Key("nodes");
  w.Int64(static_cast<int64_t>(cluster.nodes.size()));
  w.Key("gpus");
  w.Int64(cluster.total_gpus);
  w.Key("queues");
  w.Int64(static_cast<int64_t>(cluster.spec.queues.size()));
  w.EndObject();
  w.Key("trace");
  w.String(report.trace_source.c_str());
  w.Key("seed");
  w.Uint64(report.seed);
  w.Key("jobs");
  w.Int64(report.jobs);
  w.Key("policies");
  w.StartArray();
  for (const RunResult& r : report.results) {
    const Summary& s = r.summary;
    w.StartObject();
    auto number = [&](const char* key, double value, int decimals) {
      w.Key(key);
      w.Double(Round(value, decimals));
    };
    // A figure over an empty set is null, not a number that looks measured.
    auto measured = [&](const char* key, double value, int decimals, bool any) {
      if (any) return number(key, value, decimals);
      w.Key(key);
      w.Null();
    };
    auto count = [&](const char* key, int64_t value) {
      w.Key(key);
      w.Int64(value);
    };
    w.Key("policy");
    w.String(s.policy.c_str());
    measured("gpu_utilization", s.gpu_utilization, 4, s.makespan_s > 0);
    measured("wait_p50_s", s.wait_p50_s, 1, s.jobs_started > 0);
    measured("wait_p99_s", s.wait_p99_s, 1, s.jobs_started > 0);
    measured("jct_mean_s", s.jct_mean_s, 1, s.jobs_measured_completed > 0);
    measured("queued_p50_s", s.queued_p50_s, 1, s.jobs_measured_completed > 0);
    measured("queued_p99_s", s.queued_p99_s, 1, s.jobs_measured_completed > 0);
    count("jobs_completed", s.jobs_completed);
    count("jobs_never_started", s.jobs_never_started);
    count("jobs_unfinished", s.jobs_unfinished);
    count("jobs_running_at_end", s.jobs_running_at_end);
    count("jobs_unplaceable", s.jobs_unplaceable);
    measured("locality_lowest_level", s.locality_lowest_level, 4, s.locality_jobs > 0);
    w.Key("locality_by_size");
    w.StartArray();
    for (const LocalityBucket& b : LocalityBySize(r)) {
      w.StartObject();
      count("min_nodes", b.min_nodes);
      w.Key("max_nodes");
      if (b.max_nodes == 0) {
        w.Null();
      } else {
        w.Int(b.max_nodes);
      }
      count("jobs", b.total);
      count("local", b.local);
      w.EndObject();
    }
    w.EndArray();
    measured("comm_slowdown_mean", s.comm_slowdown_mean, 4, s.multi_node_jobs > 0);
    count("preemptions", s.preemptions);
    count("shrinks", s.shrinks);
    count("grows", s.grows);
    count("node_failures", s.node_failures);
    count("interruptions", s.interruptions);
    number("lost_gpu_hours", s.lost_gpu_hours, 1);
    number("goodput", s.goodput, 4);
    number("horizon_start_s", s.horizon_start_s, 1);
    number("horizon_end_s", s.horizon_end_s, 1);
    number("makespan_s", s.makespan_s, 1);
    w.Key("ended_by");
    w.String(s.ended_by.c_str());
    count("partial_gang_events", s.partial_gang_events);
    count("overcommit_events", s.overcommit_events);
    count("group_violation_events", s.group_violation_events);
    count("required_level_violation_events", s.required_level_violation_events);
    count("invalid_actions", s.invalid_actions);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString()) + "\n";
}

namespace {

// The trace format's short names for the well-known level keys (inverse of ExpandLevel).
std::string ShortLevel(const std::string& level) {
  constexpr std::string_view kLayerPrefix = "topology.k8s.aws/network-node-";
  if (level.empty()) return "cluster";
  if (level.rfind(kLayerPrefix, 0) == 0) return level.substr(kLayerPrefix.size());
  if (level == "nvidia.com/gpu.clique") return "clique";
  if (level == kHostnameLabel) return "hostname";
  return level;
}

std::string Seconds(double seconds) { return absl::StrFormat("%.1f", seconds); }

}  // namespace

void WriteJobsCsv(const SimulationReport& report, const std::vector<TraceJob>& jobs,
                  std::ostream& out) {
  out << "policy,job,queue,submit_s,start_s,end_s,wait_s,pods,nodes,level,domain,local,"
         "preemptions,interruptions,restarts,gpu_seconds,unplaceable,priority,queued_s,"
         "requested_pods,requested_nodes,elastic_min,pending_reason\n";
  for (const RunResult& r : report.results) {
    const std::string policy = CsvField(r.summary.policy);
    for (size_t i = 0; i < r.outcomes.size() && i < jobs.size(); ++i) {
      const JobOutcome& o = r.outcomes[i];
      const bool started = o.first_start_s >= 0;
      std::string local;
      if (started && o.multi_node && o.locality_applicable) local = o.locality_ok ? "yes" : "no";
      out << absl::StrJoin(
                 {policy, CsvField(jobs[i].name), CsvField(jobs[i].queue), Seconds(o.submit_s),
                  started ? Seconds(o.first_start_s) : "", o.finish_s >= 0 ? Seconds(o.finish_s) : "",
                  started ? Seconds(o.first_start_s - o.submit_s) : "",
                  started ? absl::StrCat(o.first_pods) : "",
                  started ? absl::StrCat(o.first_nodes) : "",
                  started ? CsvField(ShortLevel(o.placed_level)) : "",
                  started ? CsvField(o.placed_domain) : "", local, absl::StrCat(o.preemptions),
                  absl::StrCat(o.interruptions), absl::StrCat(o.restarts),
                  Seconds(o.gpu_seconds), CsvField(jobs[i].unplaceable),
                  absl::StrCat(jobs[i].priority), o.finish_s >= 0 ? Seconds(o.queued_s) : "",
                  absl::StrCat(jobs[i].pods), absl::StrCat(o.nodes_requested),
                  jobs[i].elastic_min > 0 ? absl::StrCat(jobs[i].elastic_min) : "",
                  CsvField(o.pending_reason)},
                 ",")
          << "\n";
    }
  }
}

namespace {

// Says what ended the run, since that decides what the unfinished jobs were doing: only the
// safety stop leaves jobs running (their GPUs busy until it); every other end comes with nothing
// running, so the unfinished jobs were evicted and pending, holding nothing.
std::string UnfinishedWarning(const Summary& s) {
  const char* end = "when the run ended with nothing left that could start them";
  if (s.ended_by == "safety_stop") {
    end = "at the safety stop (365 days after the last submission)";
  } else if (s.ended_by == "livelock") {
    end = "when the run ended because the policy only repeated itself (it would never start a "
          "job again)";
  }
  const int32_t evicted = s.jobs_unfinished - s.jobs_running_at_end;
  std::vector<std::string> parts;
  if (s.jobs_running_at_end > 0) {
    parts.push_back(absl::StrCat(s.jobs_running_at_end, " still running, their GPUs busy until "
                                                        "the stop"));
  }
  if (evicted > 0) {
    parts.push_back(absl::StrCat(evicted, " evicted and pending, holding no GPUs"));
  }
  return absl::StrCat(s.jobs_unfinished, " of ", s.jobs, " jobs started under ", s.policy,
                      " had not finished ", end, ": ", absl::StrJoin(parts, "; "),
                      "; they are not in its JCT and queued figures (JSON jobs_unfinished, "
                      "jobs_running_at_end, ended_by)");
}

}  // namespace

std::string RunWarnings(const SimulationReport& report) {
  std::string out;
  if (!report.results.empty() && report.results[0].summary.jobs_unplaceable > 0) {
    absl::StrAppend(&out, report.results[0].summary.jobs_unplaceable, " of ", report.jobs,
                    " jobs can never be placed on this cluster (--allow-unplaceable); they are in "
                    "no figure of any policy (column \"unplc\", JSON jobs_unplaceable)\n");
  }
  for (const RunResult& r : report.results) {
    const Summary& s = r.summary;
    if (s.jobs_never_started > 0) {
      int64_t unplaceable = 0;
      for (const JobOutcome& o : r.outcomes) unplaceable += o.unplaceable && o.first_start_s < 0;
      absl::StrAppend(&out, s.jobs_never_started, " of ", s.jobs, " jobs never started under ",
                      s.policy);
      if (unplaceable > 0) absl::StrAppend(&out, " (", unplaceable, " of them unplaceable)");
      absl::StrAppend(&out,
                      "; they are not in its wait, locality and JCT figures (column \"never\", "
                      "JSON jobs_never_started); --jobs-out's pending_reason says why each "
                      "waited\n");
    }
    if (s.jobs_unfinished > 0) absl::StrAppend(&out, UnfinishedWarning(s), "\n");
    if (s.violations() == 0) continue;
    std::vector<std::string> counts;
    auto add = [&](int64_t n, const char* what) {
      if (n > 0) counts.push_back(absl::StrCat(n, " ", what));
    };
    add(s.partial_gang_events, "partial gang");
    add(s.overcommit_events, "over-commit");
    add(s.group_violation_events, "group");
    add(s.required_level_violation_events, "required level");
    add(s.invalid_actions, "invalid action");
    absl::StrAppend(&out, s.policy, " broke rules the engine checks: ", absl::StrJoin(counts, ", "),
                    " (JSON *_events, invalid_actions)");
    if (!r.violations.empty()) absl::StrAppend(&out, "; first: ", r.violations[0]);
    out += "\n";
  }
  return out;
}

}  // namespace phalanx::sim
