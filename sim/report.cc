#include "sim/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace phalanx::sim {

namespace {

// Fixed decimals keep the JSON readable and stable.
double Round(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

std::string Duration(double seconds) {
  if (seconds < 120) return absl::StrFormat("%.0fs", seconds);
  if (seconds < 7200) return absl::StrFormat("%.1fm", seconds / 60);
  return absl::StrFormat("%.1fh", seconds / 3600);
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                         "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

const char* Color(size_t i) { return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))]; }

// The figures of a summary as text: "-" where nothing was measured.
struct Cells {
  std::string util, wait_p50, wait_p99, jct, locality, comm;
};

Cells TextCells(const Summary& s) {
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

double EndTime(const SimulationReport& report) {
  double end = 0;
  for (const RunResult& r : report.results) end = std::max(end, r.summary.makespan_s);
  return end;
}

}  // namespace

std::vector<double> UtilizationSeries(const RunResult& result, int64_t total_gpus, double end_s,
                                      int buckets) {
  std::vector<double> series(buckets, 0.0);
  if (end_s <= 0 || total_gpus <= 0 || buckets <= 0) return series;
  const double width = end_s / buckets;
  const auto& usage = result.usage;
  for (size_t i = 0; i < usage.size(); ++i) {
    const double from = usage[i].first;
    const double to = i + 1 < usage.size() ? usage[i + 1].first : result.summary.makespan_s;
    if (to <= from) continue;
    const double gpus = static_cast<double>(usage[i].second);
    // Spread this step's GPU-seconds over the buckets it overlaps.
    int b = std::min(buckets - 1, static_cast<int>(from / width));
    for (; b < buckets && b * width < to; ++b) {
      const double lo = std::max(from, b * width);
      const double hi = std::min(to, (b + 1) * width);
      if (hi > lo) series[b] += gpus * (hi - lo);
    }
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
      if (out.nodes_needed >= b.min_nodes && (b.max_nodes == 0 || out.nodes_needed <= b.max_nodes)) {
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
  std::string out = absl::StrFormat("cluster: %s, %d GPUs   trace: %s, %d jobs\n\n",
                                    DescribeCluster(*report.cluster), report.cluster->total_gpus,
                                    report.trace_source, report.jobs);
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
    count("jobs_completed", s.jobs_completed);
    count("jobs_never_started", s.jobs_never_started);
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
    number("horizon_start_s", s.horizon_start_s, 1);
    number("horizon_end_s", s.horizon_end_s, 1);
    number("makespan_s", s.makespan_s, 1);
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

// A chart frame: plot area [x0, x1] x [y0, y1] in SVG pixels.
struct Frame {
  double x0 = 60, x1 = 700, y0 = 20, y1 = 280;
  double W() const { return x1 - x0; }
  double H() const { return y1 - y0; }
};

std::string Svg(const std::string& title, const std::string& body) {
  return absl::StrCat(
      "<figure><figcaption>", Escape(title), "</figcaption>",
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 860 330\" width=\"860\" "
      "height=\"330\" role=\"img\">",
      body, "</svg></figure>\n");
}

std::string Axes(const Frame& f, const std::vector<std::pair<double, std::string>>& xticks,
                 const std::vector<std::pair<double, std::string>>& yticks,
                 const std::string& xlabel, const std::string& ylabel) {
  std::string s;
  for (const auto& [y, label] : yticks) {
    const double py = f.y1 - y * f.H();
    s += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>",
        f.x0, py, f.x1, py, f.x0 - 6, py + 4, Escape(label));
  }
  for (const auto& [x, label] : xticks) {
    const double px = f.x0 + x * f.W();
    s += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>",
        px, f.y1, px, f.y1 + 5, px, f.y1 + 18, Escape(label));
  }
  s += absl::StrFormat(
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>",
      f.x0, f.y0, f.W(), f.H());
  s += absl::StrFormat(
      "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>",
      f.x0 + f.W() / 2, f.y1 + 36, Escape(xlabel));
  s += absl::StrFormat(
      "<text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 14 %.1f)\">%s</text>",
      f.y0 + f.H() / 2, f.y0 + f.H() / 2, Escape(ylabel));
  return s;
}

std::string Legend(const SimulationReport& report, double x, double y) {
  std::string s;
  for (size_t i = 0; i < report.results.size(); ++i) {
    s += absl::StrFormat(
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>",
        x, y + i * 18, Color(i), x + 18, y + i * 18 + 11, Escape(report.results[i].summary.policy));
  }
  return s;
}

// One policy's line: `points` is "x,y x,y ...".
std::string Polyline(const std::string& points, size_t policy) {
  return absl::StrFormat(
      "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"/>", points,
      Color(policy));
}

std::string Percent(double v) { return absl::StrFormat("%.0f%%", v * 100); }

std::string UtilizationChart(const SimulationReport& report) {
  const Frame f;
  const double end = EndTime(report);
  const int buckets = 150;
  std::vector<std::pair<double, std::string>> xt, yt;
  for (int i = 0; i <= 5; ++i)
    xt.push_back({i / 5.0, absl::StrFormat("%.0fh", end * i / 5 / 3600)});
  for (int i = 0; i <= 4; ++i) yt.push_back({i / 4.0, Percent(i / 4.0)});
  std::string body = Axes(f, xt, yt, "simulated time", "GPUs busy");
  for (size_t p = 0; p < report.results.size(); ++p) {
    const std::vector<double> series =
        UtilizationSeries(report.results[p], report.cluster->total_gpus, end, buckets);
    std::string points;
    for (int b = 0; b < buckets; ++b) {
      const double x = f.x0 + (b + 0.5) / buckets * f.W();
      const double y = f.y1 - std::clamp(series[b], 0.0, 1.0) * f.H();
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x, y));
    }
    body += Polyline(points, p);
  }
  body += Legend(report, f.x1 + 14, f.y0);
  return Svg("GPU utilization over time (share of all GPUs busy, averaged per slice)", body);
}

std::string WaitCdfChart(const SimulationReport& report) {
  const Frame f;
  // Log-scale x from 1 s to the largest wait.
  double max_wait = 60;
  for (const RunResult& r : report.results) {
    for (const JobOutcome& o : r.outcomes) {
      if (o.first_start_s >= 0) max_wait = std::max(max_wait, o.first_start_s - o.submit_s);
    }
  }
  const double lmax = std::log10(max_wait * 1.2);
  auto px = [&](double seconds) {
    return f.x0 + std::log10(std::max(seconds, 1.0)) / lmax * f.W();
  };
  std::vector<std::pair<double, std::string>> xt, yt;
  const std::vector<std::pair<double, std::string>> ticks = {
      {1, "1s"},    {10, "10s"},    {60, "1m"},    {600, "10m"},
      {3600, "1h"}, {36000, "10h"}, {86400, "1d"}, {864000, "10d"}};
  for (const auto& [s, label] : ticks) {
    if (s <= max_wait * 1.2) xt.push_back({(px(s) - f.x0) / f.W(), label});
  }
  for (int i = 0; i <= 4; ++i) yt.push_back({i / 4.0, Percent(i / 4.0)});
  std::string body =
      Axes(f, xt, yt, "wait from submit to first start (log scale)", "jobs started within");
  for (size_t p = 0; p < report.results.size(); ++p) {
    std::vector<double> waits;
    for (const JobOutcome& o : report.results[p].outcomes) {
      if (o.first_start_s >= 0) waits.push_back(o.first_start_s - o.submit_s);
    }
    std::sort(waits.begin(), waits.end());
    const double n = static_cast<double>(report.results[p].outcomes.size());
    std::string points = absl::StrFormat("%.1f,%.1f ", f.x0, f.y1);
    // At most ~300 steps keeps the page small for 100,000 jobs.
    const size_t stride = std::max<size_t>(1, waits.size() / 300);
    for (size_t i = 0; i < waits.size(); i += stride) {
      const size_t j = std::min(waits.size() - 1, i + stride - 1);
      absl::StrAppend(&points,
                      absl::StrFormat("%.1f,%.1f ", px(waits[j]), f.y1 - (j + 1) / n * f.H()));
    }
    body += Polyline(points, p);
  }
  body += Legend(report, f.x1 + 14, f.y0);
  return Svg("Wait-time CDF (never-started jobs keep the curve below 100%)", body);
}

std::string LocalityChart(const SimulationReport& report) {
  const Frame f;
  std::vector<std::vector<LocalityBucket>> all;
  for (const RunResult& r : report.results) all.push_back(LocalityBySize(r));
  const size_t groups = all.empty() ? 0 : all[0].size();
  std::vector<std::pair<double, std::string>> xt, yt;
  for (int i = 0; i <= 4; ++i) yt.push_back({i / 4.0, Percent(i / 4.0)});
  std::string body;
  const double slot = f.W() / std::max<size_t>(groups, 1);
  const double bar = slot * 0.8 / std::max<size_t>(report.results.size(), 1);
  for (size_t g = 0; g < groups; ++g) {
    int64_t total = 0;
    for (const auto& buckets : all) total = std::max(total, buckets[g].total);
    xt.push_back({(g + 0.5) / groups, absl::StrCat(all[0][g].label(), " (n=", total, ")")});
    for (size_t p = 0; p < all.size(); ++p) {
      const LocalityBucket& b = all[p][g];
      if (b.total == 0) continue;
      const double v = static_cast<double>(b.local) / b.total;
      const double x = f.x0 + g * slot + slot * 0.1 + p * bar;
      body += absl::StrFormat(
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
          "<title>%s, %s nodes: %d of %d local</title></rect>",
          x, f.y1 - v * f.H(), bar * 0.9, v * f.H(), Color(p),
          Escape(report.results[p].summary.policy), b.label(), b.local, b.total);
    }
  }
  body = Axes(f, xt, yt, "gang size in nodes", "in one lowest-level domain") + body;
  body += Legend(report, f.x1 + 14, f.y0);
  return Svg(
      "Locality by job size (multi-node jobs placed in one domain of the lowest level "
      "that could hold them)",
      body);
}

}  // namespace

std::string FormatHtml(const SimulationReport& report) {
  std::string rows;
  for (size_t i = 0; i < report.results.size(); ++i) {
    const Summary& s = report.results[i].summary;
    const Cells c = TextCells(s);
    rows += absl::StrFormat(
        "<tr><td><span class=\"dot\" style=\"background:%s\"></span>%s</td><td>%s</td>"
        "<td>%s</td><td>%s</td><td>%s</td><td>%d / %d</td><td>%d</td><td>%s</td><td>%s</td>"
        "<td>%d</td><td>%d</td></tr>\n",
        Color(i), Escape(s.policy), c.util, c.wait_p50, c.wait_p99, c.jct, s.jobs_completed,
        s.jobs, s.jobs_never_started, c.locality, c.comm, s.preemptions, s.violations());
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>Phalanx simulation</title><style>"
      "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
      "table{border-collapse:collapse;margin:12px 0;font-size:14px}td,th{padding:4px 8px;"
      "border-bottom:1px solid "
      "#ddd;text-align:right;white-space:nowrap}td:first-child,th:first-child{text-align:left}"
      ".dot{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:6px}"
      "figure{margin:24px 0}figcaption{font-weight:600;margin-bottom:6px}"
      ".note{color:#555;font-size:14px}</style></head><body>\n",
      "<h1>Phalanx simulation</h1>\n<p>Cluster: <b>", Escape(DescribeCluster(*report.cluster)),
      "</b>, ", report.cluster->total_gpus, " GPUs, ", report.cluster->spec.queues.size(),
      " queues. Trace: <b>", Escape(report.trace_source), "</b>, ", report.jobs,
      " jobs. Every policy ran the same trace.</p>\n",
      "<table><tr><th>policy</th><th>GPU util</th><th>wait p50</th><th>wait p99</th>"
      "<th>JCT mean</th><th>done</th><th>never started</th><th>locality</th>"
      "<th>comm &times;</th>"
      "<th>preempted</th><th>violations</th></tr>\n",
      rows, "</table>\n",
      "<p class=\"note\">Never started: jobs that had not started when the run ended; they "
      "are left out of the wait, locality and JCT figures. Locality: multi-node jobs placed inside one domain of the lowest network "
      "level that could hold them. Comm slowdown: modelled all-reduce time against the ideal "
      "placement of the same gang (1.0 = ideal). Partial gangs and over-commit are counted by the "
      "simulator's own checks, independently of the policy.</p>\n",
      UtilizationChart(report), WaitCdfChart(report), LocalityChart(report), "</body></html>\n");
}

namespace {

// RFC 4180: a field holding a comma, a quote or a line break is quoted, quotes doubled.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

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
         "preemptions,interruptions,restarts,gpu_seconds,unplaceable\n";
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
                  Seconds(o.gpu_seconds), CsvField(jobs[i].unplaceable)},
                 ",")
          << "\n";
    }
  }
}

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
                      "JSON jobs_never_started)\n");
    }
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
