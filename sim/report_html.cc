// The HTML page of `phalanx simulate --report`: the summary table and SVG charts, one file with
// no scripts and no outside resources. Charts scale to the page's width (at most 960 px), so
// the page fits a 1,000-px window.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/counted_noun.h"
#include "operator/admission/types.h"
#include "sim/internal/report_text.h"
#include "sim/internal/time_slices.h"
#include "sim/report.h"

namespace phalanx::sim {

namespace {

using internal::Cells;
using internal::TextCells;

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
// Queues get their own palette, so a queue is never mistaken for a policy.
const char* kQueueColors[] = {"#8dd3c7", "#fdb462", "#bebada", "#fb8072",
                              "#80b1d3", "#b3de69", "#fccde5", "#bc80bd"};

const char* Color(size_t i) { return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))]; }
const char* QueueColor(size_t i) {
  return kQueueColors[i % (sizeof(kQueueColors) / sizeof(kQueueColors[0]))];
}

constexpr double kWidth = 960;  // every chart's viewBox width

// A chart frame: plot area [x0, x1] x [y0, y1] in SVG pixels; the legend sits right of x1.
struct Frame {
  double x0 = 64, x1 = 780, y0 = 20, y1 = 270;
  double W() const { return x1 - x0; }
  double H() const { return y1 - y0; }
};

using Ticks = std::vector<std::pair<double, std::string>>;  // (fraction of the axis, label)

std::string Svg(const std::string& title, const std::string& body, double height = 330,
                const std::string& note = "") {
  return absl::StrCat(
      "<figure><figcaption>", Escape(title), "</figcaption>",
      absl::StrFormat("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
                      "role=\"img\">",
                      kWidth, height),
      body, "</svg>", note.empty() ? "" : absl::StrCat("<p class=\"note\">", note, "</p>"),
      "</figure>\n");
}

std::string Text(double x, double y, const std::string& text, const char* anchor = "middle",
                 int size = 11, const std::string& extra = "") {
  return absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\"%s>%s"
                         "</text>",
                         x, y, size, anchor, extra, Escape(text));
}

std::string Axes(const Frame& f, const Ticks& xticks, const Ticks& yticks,
                 const std::string& xlabel, const std::string& ylabel) {
  std::string s;
  for (const auto& [y, label] : yticks) {
    const double py = f.y1 - y * f.H();
    s += absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>",
                         f.x0, py, f.x1, py);
    s += Text(f.x0 - 6, py + 4, label, "end");
  }
  for (const auto& [x, label] : xticks) {
    const double px = f.x0 + x * f.W();
    s += absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>",
                         px, f.y1, px, f.y1 + 5);
    s += Text(px, f.y1 + 18, label);
  }
  s += absl::StrFormat(
      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>",
      f.x0, f.y0, f.W(), f.H());
  if (!xlabel.empty()) s += Text(f.x0 + f.W() / 2, f.y1 + 36, xlabel, "middle", 12);
  const double mid = f.y0 + f.H() / 2;
  s += Text(14, mid, ylabel, "middle", 12, absl::StrFormat(" transform=\"rotate(-90 14 %.1f)\"", mid));
  return s;
}

std::string LegendEntry(double x, double y, const char* color, const std::string& label) {
  return absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>",
                         x, y, color) +
         Text(x + 18, y + 11, label, "start", 12);
}

std::string Legend(const SimulationReport& report, double x, double y) {
  std::string s;
  for (size_t i = 0; i < report.results.size(); ++i) {
    s += LegendEntry(x, y + i * 18, Color(i), report.results[i].summary.policy);
  }
  return s;
}

// One policy's line: `points` is "x,y x,y ...".
std::string Polyline(const std::string& points, const char* color, const std::string& extra = "") {
  return absl::StrFormat(
      "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s/>", points,
      color, extra);
}

std::string Percent(double v) { return absl::StrFormat("%.0f%%", v * 100); }

// The span the time charts cover: from the earliest horizon start to the latest end.
std::pair<double, double> TimeSpan(const SimulationReport& report) {
  double start = std::numeric_limits<double>::infinity(), end = 0;
  for (const RunResult& r : report.results) {
    start = std::min(start, r.summary.horizon_start_s);
    end = std::max(end, r.summary.horizon_end_s);
  }
  if (!std::isfinite(start)) start = 0;
  return {start, std::max(end, start + 1)};
}

// Six ticks over [start, end] in the largest unit the span holds three of (days, hours,
// minutes, seconds), with the decimals a step of a fifth of the span needs, so that no two
// ticks read the same and none is rounded a whole step away (a 60 s run once read "0h" six
// times, a 2 h run "0h 0h 1h 1h 2h 2h").
Ticks TimeTicks(double start, double end) {
  const double span = end - start;
  double unit = 1;
  const char* suffix = "s";
  for (const auto& [seconds, name] : {std::pair<double, const char*>{86400, "d"}, {3600, "h"},
                                      {60, "m"}}) {
    if (span > 3 * seconds) {
      unit = seconds;
      suffix = name;
      break;
    }
  }
  const double step = span / 5 / unit;
  int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step))), 0, 3);
  // One more where the step is not whole at that precision: 1.4 days reads 1.4d, not 1d.
  const double scaled = step * std::pow(10.0, decimals);
  if (decimals < 3 && std::abs(scaled - std::round(scaled)) > 1e-6 * scaled) ++decimals;
  Ticks ticks;
  for (int i = 0; i <= 5; ++i) {
    const double t = start + span * i / 5;
    ticks.push_back({i / 5.0, absl::StrFormat("%.*f%s", decimals, t / unit, suffix)});
  }
  return ticks;
}

Ticks PercentTicks() {
  Ticks ticks;
  for (int i = 0; i <= 4; ++i) ticks.push_back({i / 4.0, Percent(i / 4.0)});
  return ticks;
}

std::string UtilizationChart(const SimulationReport& report) {
  const Frame f;
  const auto span = TimeSpan(report);
  const double start = span.first, end = span.second;
  const int buckets = 150;
  std::string body = Axes(f, TimeTicks(start, end), PercentTicks(), "simulated time", "GPUs busy");
  for (size_t p = 0; p < report.results.size(); ++p) {
    // Slices of [start, end] alone: a trace whose times are Unix seconds starts 1.7e9 s after 0.
    const std::vector<double> series =
        UtilizationSeries(report.results[p], report.cluster->total_gpus, start, end, buckets);
    std::string points;
    for (int b = 0; b < buckets; ++b) {
      const double x = f.x0 + (b + 0.5) / buckets * f.W();
      const double y = f.y1 - std::clamp(series[b], 0.0, 1.0) * f.H();
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x, y));
    }
    body += Polyline(points, Color(p));
  }
  body += Legend(report, f.x1 + 14, f.y0);
  return Svg("GPU utilization over time (share of all GPUs busy, averaged per slice)", body);
}

// Phalanx's locality waits on this cluster (ClusterQueue localityWaitSeconds, 300 s unless a
// queue sets it), if Phalanx is in the report.
std::set<int64_t> LocalityWaits(const SimulationReport& report) {
  std::set<int64_t> waits;
  const bool phalanx = std::any_of(report.results.begin(), report.results.end(),
                                   [](const RunResult& r) { return r.summary.policy == "phalanx"; });
  if (!phalanx) return waits;
  for (const QueueSpec& q : report.cluster->spec.queues) {
    const int64_t wait = q.locality_wait_s.value_or(admission::kDefaultLocalityWaitSeconds);
    if (wait > 0) waits.insert(wait);
  }
  return waits;
}

std::string WaitCdfChart(const SimulationReport& report) {
  const Frame f;
  // Log-scale x from 1 s to the largest wait.
  double max_wait = 600;
  for (const RunResult& r : report.results) {
    for (const JobOutcome& o : r.outcomes) {
      if (o.first_start_s >= 0 && !o.unplaceable) {
        max_wait = std::max(max_wait, o.first_start_s - o.submit_s);
      }
    }
  }
  const double lmax = std::log10(max_wait * 1.2);
  auto px = [&](double seconds) {
    return f.x0 + std::log10(std::max(seconds, 1.0)) / lmax * f.W();
  };
  Ticks xt;
  const Ticks ticks = {{1, "1s"},        {10, "10s"},    {60, "1m"},
                       {600, "10m"},     {3600, "1h"},   {36000, "10h"},
                       {86400, "1d"},    {864000, "10d"}, {8640000, "100d"}};
  for (const auto& [s, label] : ticks) {
    if (s <= max_wait * 1.2) xt.push_back({(px(s) - f.x0) / f.W(), label});
  }
  std::string body =
      Axes(f, xt, PercentTicks(), "wait from submit to first start (log scale)",
           "jobs started within");
  const std::set<int64_t> waits = LocalityWaits(report);
  for (int64_t wait : waits) {
    const double x = px(static_cast<double>(wait));
    body += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
        "stroke-dasharray=\"4 3\"/>",
        x, f.y0, x, f.y1);
    body += Text(x + 4, f.y1 - 8, absl::StrCat("Phalanx locality wait ", wait, " s"), "start",
                 11);
  }
  for (size_t p = 0; p < report.results.size(); ++p) {
    std::vector<double> started;
    int64_t placeable = 0;
    for (const JobOutcome& o : report.results[p].outcomes) {
      if (o.unplaceable) continue;
      ++placeable;
      if (o.first_start_s >= 0) started.push_back(o.first_start_s - o.submit_s);
    }
    std::sort(started.begin(), started.end());
    const double n = static_cast<double>(std::max<int64_t>(placeable, 1));
    // A step function: flat until the next wait, then up. At most ~300 steps keeps the page
    // small for 100,000 jobs.
    std::string points = absl::StrFormat("%.1f,%.1f ", f.x0, f.y1);
    double y = f.y1;
    const size_t stride = std::max<size_t>(1, started.size() / 300);
    for (size_t i = 0; i < started.size(); i += stride) {
      const size_t j = std::min(started.size() - 1, i + stride - 1);
      const double x = px(started[j]);
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x, y));
      y = f.y1 - (j + 1) / n * f.H();
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", x, y));
    }
    absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f", f.x1, y));
    body += Polyline(points, Color(p));
  }
  body += Legend(report, f.x1 + 14, f.y0);
  std::string note =
      "Jobs never started keep a curve below 100%; jobs that can never be placed are left out.";
  if (!waits.empty()) {
    absl::StrAppend(
        &note,
        " The dashed line is Phalanx's locality wait: a multi-node gang whose preferred "
        "domain has no room waits up to that long for one before it starts across domains "
        "(docs/admission.md, &ldquo;Locality&rdquo;), so Phalanx's curve can climb there while "
        "the baselines, which start such a gang at once, climb earlier. It buys the locality "
        "in the next chart.");
  }
  return Svg("Wait-time CDF", body, 330, note);
}

std::string LocalityChart(const SimulationReport& report) {
  const Frame f;
  std::vector<std::vector<LocalityBucket>> all;
  for (const RunResult& r : report.results) all.push_back(LocalityBySize(r));
  // Buckets no policy has a gang in are left out.
  std::vector<size_t> shown;
  for (size_t g = 0; !all.empty() && g < all[0].size(); ++g) {
    if (std::any_of(all.begin(), all.end(), [&](const auto& b) { return b[g].total > 0; })) {
      shown.push_back(g);
    }
  }
  Ticks xt;
  std::string body;
  const double slot = f.W() / std::max<size_t>(shown.size(), 1);
  const double bar = slot * 0.84 / std::max<size_t>(report.results.size(), 1);
  const bool upright = bar >= 28;  // room for a horizontal "100%"
  for (size_t k = 0; k < shown.size(); ++k) {
    const size_t g = shown[k];
    int64_t total = 0;
    for (const auto& buckets : all) total = std::max(total, buckets[g].total);
    xt.push_back({(k + 0.5) / shown.size(), absl::StrCat(all[0][g].label(), " (n=", total, ")")});
    for (size_t p = 0; p < all.size(); ++p) {
      const LocalityBucket& b = all[p][g];
      if (b.total == 0) continue;
      const double v = static_cast<double>(b.local) / b.total;
      const double x = f.x0 + k * slot + slot * 0.08 + p * bar;
      const double top = f.y1 - v * f.H();
      body += absl::StrFormat(
          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
          "<title>%s, %s nodes: %d of %d local</title></rect>",
          x, top, bar * 0.9, v * f.H(), Color(p), Escape(report.results[p].summary.policy),
          b.label(), b.local, b.total);
      // The value, above the bar (inside it, in white, when the bar reaches the top).
      const double cx = x + bar * 0.45;
      const bool inside = v > 0.88;
      const std::string label = Percent(v);
      if (upright) {
        body += Text(cx, inside ? top + 13 : top - 4, label, "middle", 10,
                     inside ? " fill=\"#fff\"" : "");
      } else {
        const double y = inside ? top + 4 : top - 4;
        body += Text(cx + 3.5, y, label, inside ? "end" : "start", 10,
                     absl::StrFormat(" transform=\"rotate(-90 %.1f %.1f)\"%s", cx + 3.5, y,
                                     inside ? " fill=\"#fff\"" : ""));
      }
    }
  }
  body = Axes(f, xt, PercentTicks(), "gang size in nodes (n = gangs judged)",
              "in one lowest-level domain") +
         body;
  body += Legend(report, f.x1 + 14, f.y0);
  return Svg(
      "Locality by gang size (multi-node jobs placed in one domain of the lowest level "
      "that could hold them)",
      body, 330,
      shown.empty() ? "No multi-node gang was judged."
                    : "A size with no gang judged under any policy is left out. Above each bar: "
                      "the share of that policy&rsquo;s gangs of that size that were local.");
}

// Each policy's total at the end of its line, pushed apart so close totals (61, 60, 57, 53)
// stay readable instead of drawn over each other.
std::string EndLabels(const SimulationReport& report, const Frame& f, double top) {
  constexpr double kLineHeight = 11;
  std::vector<std::pair<double, size_t>> labels;  // (baseline y, policy)
  for (size_t p = 0; p < report.results.size(); ++p) {
    const double last = f.y1 - report.results[p].preemption_times.size() / top * f.H();
    labels.push_back({last - 4, p});
  }
  std::sort(labels.begin(), labels.end());
  for (size_t i = 1; i < labels.size(); ++i) {
    labels[i].first = std::max(labels[i].first, labels[i - 1].first + kLineHeight);
  }
  // Past the bottom of the frame: move the whole column up, keeping the gaps.
  const double overflow = labels.empty() ? 0 : labels.back().first - (f.y1 - 2);
  std::string out;
  for (const auto& [y, p] : labels) {
    out += Text(f.x1 - 4, y - std::max(0.0, overflow),
                absl::StrCat(report.results[p].preemption_times.size()), "end", 10,
                absl::StrFormat(" fill=\"%s\"", Color(p)));
  }
  return out;
}

std::string PreemptionChart(const SimulationReport& report) {
  const Frame f;
  const auto span = TimeSpan(report);
  const double start = span.first, end = span.second;
  size_t most = 0;
  for (const RunResult& r : report.results) most = std::max(most, r.preemption_times.size());
  // Four round steps reaching just past the largest count.
  most = std::max<size_t>(most, 4);  // whole numbers on the axis
  const double raw = static_cast<double>(most) / 4;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0}) {
    step = m * magnitude;
    if (step != std::floor(step)) continue;  // counts are whole
    if (step * 4 >= static_cast<double>(most) * 1.05) break;
  }
  const double top = step * 4;
  Ticks yt;
  for (int i = 0; i <= 4; ++i) {
    yt.push_back({i / 4.0, absl::StrFormat("%.0f", step * i)});
  }
  std::string body = Axes(f, TimeTicks(start, end), yt, "simulated time", "evictions so far");
  auto px = [&](double t) { return f.x0 + (t - start) / (end - start) * f.W(); };
  for (size_t p = 0; p < report.results.size(); ++p) {
    const std::vector<double>& times = report.results[p].preemption_times;
    std::string points = absl::StrFormat("%.1f,%.1f ", f.x0, f.y1);
    // A step per eviction, thinned to ~400 points.
    const size_t stride = std::max<size_t>(1, times.size() / 400);
    for (size_t i = 0; i < times.size(); i += stride) {
      const size_t j = std::min(times.size() - 1, i + stride - 1);
      absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f ", px(times[j]),
                                               f.y1 - (j + 1) / top * f.H()));
    }
    const double last = f.y1 - times.size() / top * f.H();
    absl::StrAppend(&points, absl::StrFormat("%.1f,%.1f", f.x1, last));
    body += Polyline(points, Color(p));
  }
  body += EndLabels(report, f, top);
  body += Legend(report, f.x1 + 14, f.y0);
  return Svg("Preemptions over time (evictions decided by each policy, cumulative)", body);
}

// Small multiples: per policy, the share of all GPUs each queue holds over time, stacked.
std::string QueueShareChart(const SimulationReport& report) {
  const std::vector<QueueSpec>& queues = report.cluster->spec.queues;
  const auto span = TimeSpan(report);
  const double start = span.first, end = span.second;
  const int buckets = 120;
  const size_t columns = 2;
  const double panel_w = 400, panel_h = 150, gap_x = 56, top = 50;
  const size_t rows = (report.results.size() + columns - 1) / columns;
  const double height = top + rows * (panel_h + 52);
  std::string body;
  for (size_t q = 0; q < queues.size(); ++q) {
    body += LegendEntry(64 + q * 150.0, 4, QueueColor(q), queues[q].name);
  }
  for (size_t p = 0; p < report.results.size(); ++p) {
    Frame f;
    f.x0 = 64 + (p % columns) * (panel_w + gap_x);
    f.x1 = f.x0 + panel_w;
    f.y0 = top + (p / columns) * (panel_h + 52);
    f.y1 = f.y0 + panel_h;
    Ticks xt = TimeTicks(start, end);
    body += Axes(f, xt, PercentTicks(), "", "");
    body += Text(f.x0, f.y0 - 6, report.results[p].summary.policy, "start", 12,
                 absl::StrFormat(" fill=\"%s\" font-weight=\"600\"", Color(p)));
    const std::vector<std::vector<double>> share = QueueShareSeries(
        report.results[p], queues.size(), report.cluster->total_gpus, start, end, buckets);
    std::vector<double> below(buckets, 0.0);
    for (size_t q = 0; q < share.size(); ++q) {
      std::string upper, lower;
      for (int b = 0; b < buckets; ++b) {
        const double x = f.x0 + (b + 0.5) / buckets * f.W();
        absl::StrAppend(&lower, absl::StrFormat("%.1f,%.1f ", x,
                                                f.y1 - std::min(below[b], 1.0) * f.H()));
        below[b] += share[q][b];
        absl::StrAppend(&upper, absl::StrFormat("%.1f,%.1f ", x,
                                                f.y1 - std::min(below[b], 1.0) * f.H()));
      }
      // The band between the queues below and this one: upper edge forward, lower edge back.
      std::vector<std::string> back = absl::StrSplit(lower, ' ', absl::SkipEmpty());
      std::reverse(back.begin(), back.end());
      body += absl::StrFormat("<polygon points=\"%s%s\" fill=\"%s\" stroke=\"none\"/>", upper,
                              absl::StrJoin(back, " "), QueueColor(q));
    }
  }
  return Svg("GPUs held per queue over time (share of all GPUs, stacked), per policy", body,
             height);
}

}  // namespace

std::vector<std::vector<double>> QueueShareSeries(const RunResult& result, size_t queues,
                                                  int64_t total_gpus, double start_s,
                                                  double end_s, int buckets) {
  std::vector<std::vector<double>> share(queues, std::vector<double>(buckets, 0.0));
  if (end_s <= start_s || total_gpus <= 0 || buckets <= 0) return share;
  const double width = (end_s - start_s) / buckets;
  // Each queue's level holds from one change to its next change.
  std::vector<std::pair<double, int64_t>> level(queues, {start_s, 0});
  auto spread = [&](size_t q, double to) {
    internal::AddToSlices(share[q], start_s, end_s, level[q].first, to,
                          static_cast<double>(level[q].second));
  };
  for (const RunResult::QueueUsage& change : result.queue_usage) {
    if (change.queue < 0 || static_cast<size_t>(change.queue) >= queues) continue;
    spread(change.queue, change.t);
    level[change.queue] = {change.t, change.gpus};
  }
  for (size_t q = 0; q < queues; ++q) spread(q, end_s);
  for (auto& series : share) {
    for (double& v : series) v /= width * static_cast<double>(total_gpus);
  }
  return share;
}

std::string FormatHtml(const SimulationReport& report) {
  bool unplaceable = false;
  for (const RunResult& r : report.results) unplaceable |= r.summary.jobs_unplaceable > 0;
  std::string rows;
  for (size_t i = 0; i < report.results.size(); ++i) {
    const Summary& s = report.results[i].summary;
    const Cells c = TextCells(s);
    rows += absl::StrFormat(
        "<tr><td><span class=\"dot\" style=\"background:%s\"></span>%s</td><td>%s</td>"
        "<td>%s</td><td>%s</td><td>%s</td><td>%d / %d</td><td>%d</td>",
        Color(i), Escape(s.policy), c.util, c.wait_p50, c.wait_p99, c.jct, s.jobs_completed,
        s.jobs, s.jobs_never_started);
    if (unplaceable) rows += absl::StrFormat("<td>%d</td>", s.jobs_unplaceable);
    rows += absl::StrFormat("<td>%s</td><td>%s</td><td>%d</td><td%s>%d</td></tr>\n", c.locality,
                            c.comm, s.preemptions, s.violations() > 0 ? " class=\"bad\"" : "",
                            s.violations());
  }
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Phalanx simulation</title><style>"
      "body{font-family:system-ui,sans-serif;margin:16px;color:#222;max-width:960px}"
      "h1{font-size:22px}p{font-size:14px}"
      "table{border-collapse:collapse;margin:12px 0;font-size:13px}td,th{padding:3px 6px;"
      "border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}"
      "th{white-space:normal;vertical-align:bottom}"
      "td:first-child,th:first-child{text-align:left}.bad{color:#b00;font-weight:600}"
      ".dot{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:6px}"
      "figure{margin:24px 0}figcaption{font-weight:600;margin-bottom:6px}"
      "svg{width:100%;height:auto;display:block}"
      ".note{color:#555;font-size:13px;margin:4px 0}</style></head><body>\n",
      "<h1>Phalanx simulation</h1>\n<p>Cluster: <b>", Escape(DescribeCluster(*report.cluster)),
      "</b>, ", report.cluster->total_gpus, " GPUs, ", report.cluster->spec.queues.size(),
      " queues. Trace: <b>", Escape(report.trace_source), "</b>, ",
      CountedNoun(report.jobs, "job"), ". Every policy ran the same trace.</p>\n",
      "<table><tr><th>policy</th><th>GPU util</th><th>wait p50</th><th>wait p99</th>"
      "<th>JCT mean</th><th>done</th><th>never started</th>",
      unplaceable ? "<th>unplaceable</th>" : "",
      "<th>locality</th><th>comm &times;</th><th>preempted</th><th>violations</th></tr>\n", rows,
      "</table>\n",
      "<p class=\"note\">GPU util: busy GPU-seconds over the horizon, first submit to last GPU "
      "released. Never started: jobs that had not started when the run ended; they are left "
      "out of the wait, locality and JCT figures",
      unplaceable ? ", as are unplaceable jobs (they can never fit this cluster)" : "",
      ". Locality: multi-node jobs placed inside one domain of the lowest network level that "
      "could hold them. Comm &times;: modelled all-reduce time against the ideal placement of the "
      "same gang (1.0 = ideal). Violations: rules the simulator's own checks caught a policy "
      "breaking &mdash; partial gangs, over-commit, tensor-parallel groups split across their "
      "domain, required levels, invalid actions (docs/simulator.md).</p>\n",
      UtilizationChart(report), WaitCdfChart(report), LocalityChart(report),
      PreemptionChart(report), QueueShareChart(report), "</body></html>\n");
}

}  // namespace phalanx::sim
