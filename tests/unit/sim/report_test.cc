#include "sim/report.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>

#include "absl/strings/str_split.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "sim/csv.h"
#include "sim/progress.h"
#include "sim/scenario.h"
#include "tests/unit/sim/sim_test_util.h"

namespace phalanx::sim {
namespace {

using ::testing::HasSubstr;

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SimulateOptions options;
    options.nodes = 32;
    options.jobs = 300;
    options.policies = {"phalanx", "first-fit"};
    ASSERT_OK_AND_ASSIGN(scenario_, LoadScenario(options));
    ASSERT_OK_AND_ASSIGN(report_, RunScenario(scenario_, options));
  }
  Scenario scenario_;
  SimulationReport report_;
};

TEST_F(ReportTest, JsonHasTheDocumentedShape) {
  rapidjson::Document doc;
  doc.Parse(FormatJson(report_).c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_EQ(doc["jobs"].GetInt(), 300);
  EXPECT_EQ(doc["cluster"]["gpus"].GetInt(), 256);
  ASSERT_EQ(doc["policies"].Size(), 2u);
  const auto& p = doc["policies"][0];
  EXPECT_STREQ(p["policy"].GetString(), "phalanx");
  for (const char* key : {"gpu_utilization", "wait_p50_s", "wait_p99_s", "jct_mean_s",
                          "queued_p50_s", "queued_p99_s",
                          "jobs_completed", "locality_lowest_level", "comm_slowdown_mean",
                          "preemptions", "partial_gang_events", "overcommit_events",
                          "group_violation_events", "required_level_violation_events",
                          "invalid_actions", "jobs_never_started", "jobs_unplaceable",
                          "makespan_s", "horizon_start_s", "horizon_end_s", "jobs_unfinished",
                          "jobs_running_at_end", "ended_by"}) {
    EXPECT_TRUE(p.HasMember(key)) << key;
  }
  EXPECT_GT(p["gpu_utilization"].GetDouble(), 0.0);
  EXPECT_LE(p["gpu_utilization"].GetDouble(), 1.0);
  // locality_by_size: the HTML chart's buckets, from the same function, adding up to the jobs
  // whose locality was judged.
  const std::vector<LocalityBucket> buckets = LocalityBySize(report_.results[0]);
  const auto& by_size = p["locality_by_size"];
  ASSERT_TRUE(by_size.IsArray());
  ASSERT_EQ(by_size.Size(), buckets.size());
  int64_t jobs = 0, local = 0;
  for (rapidjson::SizeType i = 0; i < by_size.Size(); ++i) {
    const auto& b = by_size[i];
    EXPECT_EQ(b["min_nodes"].GetInt(), buckets[i].min_nodes);
    if (buckets[i].max_nodes == 0) {
      EXPECT_TRUE(b["max_nodes"].IsNull());
    } else {
      EXPECT_EQ(b["max_nodes"].GetInt(), buckets[i].max_nodes);
    }
    EXPECT_EQ(b["jobs"].GetInt64(), buckets[i].total);
    EXPECT_LE(b["local"].GetInt64(), b["jobs"].GetInt64());
    jobs += b["jobs"].GetInt64();
    local += b["local"].GetInt64();
  }
  EXPECT_EQ(by_size[0]["max_nodes"].GetInt(), 2);
  const Summary& s = report_.results[0].summary;
  EXPECT_EQ(jobs, s.locality_jobs);
  EXPECT_NEAR(static_cast<double>(local) / jobs, s.locality_lowest_level, 1e-9);
}

// --jobs-out is there so anyone can audit a figure: recomputing the summary's figures from the
// CSV rows alone gives the same numbers.
TEST_F(ReportTest, JobsCsvRecomputesTheSummaryFigures) {
  std::ostringstream out;
  WriteJobsCsv(report_, scenario_.jobs, out);
  std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1 + 2 * scenario_.jobs.size());
  EXPECT_EQ(lines[0],
            "policy,job,queue,submit_s,start_s,end_s,wait_s,pods,nodes,level,domain,local,"
            "preemptions,interruptions,restarts,gpu_seconds,unplaceable,priority,queued_s,"
            "requested_pods,requested_nodes,elastic_min,pending_reason");
  // Read as any CSV reader would (a reason may hold commas, quoted).
  ASSERT_OK_AND_ASSIGN(std::vector<CsvRecord> records, ReadCsv(out.str(), "jobs.csv"));
  ASSERT_EQ(records.size(), lines.size());
  for (const RunResult& r : report_.results) {
    std::vector<double> waits, queued;
    double jct = 0, gpu_seconds = 0;
    int64_t completed = 0, judged = 0, local = 0, preemptions = 0;
    std::vector<LocalityBucket> buckets = LocalityBySize(r);
    for (LocalityBucket& b : buckets) b.total = b.local = 0;  // recounted from the rows
    for (size_t i = 1; i < records.size(); ++i) {
      const std::vector<std::string>& f = records[i].cells;
      ASSERT_EQ(f.size(), 23u) << lines[i];
      if (f[0] != r.summary.policy) continue;
      // A reason for each job that never started, none for one that did.
      EXPECT_EQ(f[4].empty(), !f[22].empty()) << lines[i];
      // The locality buckets are by the requested size, the same jobs for every policy.
      const int nodes = std::stoi(f[20]);
      for (LocalityBucket& b : buckets) {
        if (f[11].empty() || nodes < b.min_nodes || (b.max_nodes > 0 && nodes > b.max_nodes)) {
          continue;
        }
        ++b.total;
        b.local += f[11] == "yes";
      }
      if (!f[6].empty()) waits.push_back(std::stod(f[6]));
      if (!f[5].empty()) {
        ++completed;
        jct += std::stod(f[5]) - std::stod(f[3]);
        // Queued time: at least the first wait, at most the whole time to completion.
        const double q = std::stod(f[18]);
        EXPECT_GE(q, std::stod(f[6]) - 0.05) << lines[i];
        EXPECT_LE(q, std::stod(f[5]) - std::stod(f[3]) + 0.05) << lines[i];
        queued.push_back(q);
      } else {
        EXPECT_EQ(f[18], "") << lines[i];
      }
      judged += !f[11].empty();
      local += f[11] == "yes";
      preemptions += std::stoi(f[12]);
      gpu_seconds += std::stod(f[15]);
    }
    const Summary& s = r.summary;
    // Nearest-rank p99 of a non-empty list.
    auto p99 = [](std::vector<double> values) {
      std::sort(values.begin(), values.end());
      return values[static_cast<size_t>(std::ceil(0.99 * values.size())) - 1];
    };
    ASSERT_EQ(static_cast<int64_t>(waits.size()), s.jobs_started);
    EXPECT_NEAR(p99(waits), s.wait_p99_s, 0.05) << s.policy;
    ASSERT_FALSE(queued.empty());
    EXPECT_NEAR(p99(queued), s.queued_p99_s, 0.05) << s.policy;
    EXPECT_EQ(completed, s.jobs_completed);
    EXPECT_NEAR(jct / completed, s.jct_mean_s, 0.05) << s.policy;
    EXPECT_EQ(judged, s.locality_jobs);
    EXPECT_NEAR(static_cast<double>(local) / judged, s.locality_lowest_level, 1e-9);
    EXPECT_EQ(preemptions, s.preemptions);
    const std::vector<LocalityBucket> reported = LocalityBySize(r);
    for (size_t k = 0; k < buckets.size(); ++k) {
      EXPECT_EQ(buckets[k].total, reported[k].total) << s.policy << " " << buckets[k].label();
      EXPECT_EQ(buckets[k].local, reported[k].local) << s.policy << " " << buckets[k].label();
    }
    // Utilization: every GPU-second of the ledger belongs to a job row (0.05 s rounding each).
    EXPECT_NEAR(gpu_seconds / (s.makespan_s * report_.cluster->total_gpus), s.gpu_utilization,
                1e-6);
  }
}

// A report of trace "t.csv" with `jobs` jobs on `cluster`, results to be added by the test.
SimulationReport HandMadeReport(const ClusterModel& cluster, int64_t jobs) {
  SimulationReport report;
  report.cluster = &cluster;
  report.trace_source = "t.csv";
  report.jobs = jobs;
  return report;
}

TEST(ViolationReportTest, EveryBrokenRuleIsNamedOnStderrPerPolicy) {
  ClusterModel cluster = testing::SmallCluster(16);
  SimulationReport report = HandMadeReport(cluster, 3);
  RunResult clean, broken;
  clean.summary.policy = "phalanx";
  clean.summary.jobs = 3;
  broken.summary.policy = "first-fit";
  broken.summary.jobs = 3;
  broken.summary.group_violation_events = 2;
  broken.summary.required_level_violation_events = 5;
  broken.violations = {"t=0s a: 2 ranks span more than one layer-3 domain (required)"};
  report.results = {clean, broken};
  EXPECT_EQ(RunWarnings(report),
            "first-fit broke rules the engine checks: 2 group, 5 required level (JSON *_events, "
            "invalid_actions); first: t=0s a: 2 ranks span more than one layer-3 domain "
            "(required)\n");
  EXPECT_THAT(FormatTable(report), ::testing::ContainsRegex("first-fit .* 7\n"));
  report.results = {clean};
  EXPECT_EQ(RunWarnings(report), "");
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(ReportTest, HtmlIsSelfContainedWithFiveCharts) {
  const std::string html = FormatHtml(report_);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_EQ(Count(html, "<svg"), 5u);
  EXPECT_THAT(html, HasSubstr("GPU utilization over time"));
  EXPECT_THAT(html, HasSubstr("Wait-time CDF"));
  EXPECT_THAT(html, HasSubstr("Locality by gang size"));
  EXPECT_THAT(html, HasSubstr("Preemptions over time"));
  EXPECT_THAT(html, HasSubstr("GPUs held per queue over time"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
  // Charts scale to the page (at most 960 px wide, so a 1,000-px window holds the page).
  EXPECT_THAT(html, HasSubstr("max-width:960px"));
  EXPECT_THAT(html, HasSubstr("svg{width:100%"));
  EXPECT_EQ(html.find("width=\"860\""), std::string::npos);
}

// Each bar carries its value; sizes no policy has a gang of get no bucket at all.
TEST_F(ReportTest, LocalityBarsAreLabelledAndEmptyBucketsHidden) {
  const std::string html = FormatHtml(report_);
  int64_t bars = 0;
  bool empty_bucket = false;
  for (const RunResult& r : report_.results) {
    for (const LocalityBucket& b : LocalityBySize(r)) {
      bars += b.total > 0;
      if (b.total == 0 && r.summary.policy == report_.results[0].summary.policy) {
        bool any = false;
        for (const RunResult& other : report_.results) {
          for (const LocalityBucket& o : LocalityBySize(other)) {
            any |= o.min_nodes == b.min_nodes && o.total > 0;
          }
        }
        if (!any) {
          empty_bucket = true;
          EXPECT_EQ(html.find(">" + b.label() + " (n="), std::string::npos) << b.label();
        }
      }
    }
  }
  ASSERT_GT(bars, 0);
  EXPECT_TRUE(empty_bucket);  // 32 nodes: no gang of 65+, so the check above ran
  EXPECT_EQ(static_cast<int64_t>(Count(html, " local</title></rect><text ")), bars);
}

// The locality wait is marked where the wait CDF shows it, and explained, when Phalanx ran.
TEST_F(ReportTest, WaitCdfMarksPhalanxsLocalityWait) {
  const std::string html = FormatHtml(report_);
  EXPECT_THAT(html, HasSubstr("Phalanx locality wait 300 s"));
  EXPECT_THAT(html, HasSubstr("The dashed line is Phalanx's locality wait"));
  SimulationReport baselines_only = report_;
  baselines_only.results.erase(baselines_only.results.begin());  // phalanx
  ASSERT_EQ(baselines_only.results[0].summary.policy, "first-fit");
  EXPECT_THAT(FormatHtml(baselines_only), ::testing::Not(HasSubstr("locality wait")));
}

TEST_F(ReportTest, UtilizationSeriesAveragesTheLedger) {
  const RunResult& r = report_.results[0];
  const std::vector<double> series =
      UtilizationSeries(r, report_.cluster->total_gpus, 0, r.summary.makespan_s, 50);
  double mean = 0;
  for (double v : series) {
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 1.0 + 1e-9);
    mean += v / series.size();
  }
  EXPECT_NEAR(mean, r.summary.gpu_utilization, 1e-6);
}

// The per-queue shares add up to the utilization of the same slices: every GPU of the ledger
// belongs to one queue. Evictions are recorded one by one, as the policy decided them.
TEST_F(ReportTest, QueueSharesAddUpToTheUtilization) {
  for (const RunResult& r : report_.results) {
    const int buckets = 40;
    const std::vector<double> total = UtilizationSeries(r, report_.cluster->total_gpus, 0,
                                                        r.summary.horizon_end_s, buckets);
    const std::vector<std::vector<double>> share =
        QueueShareSeries(r, report_.cluster->spec.queues.size(), report_.cluster->total_gpus, 0,
                         r.summary.horizon_end_s, buckets);
    ASSERT_EQ(share.size(), 3u);
    for (int b = 0; b < buckets; ++b) {
      EXPECT_NEAR(share[0][b] + share[1][b] + share[2][b], total[b], 1e-9) << b;
    }
    EXPECT_EQ(static_cast<int64_t>(r.preemption_times.size()), r.summary.preemptions);
    EXPECT_TRUE(std::is_sorted(r.preemption_times.begin(), r.preemption_times.end()));
  }
}

TEST_F(ReportTest, TableListsEveryPolicy) {
  const std::string table = FormatTable(report_);
  EXPECT_THAT(table, HasSubstr("phalanx"));
  EXPECT_THAT(table, HasSubstr("first-fit"));
  EXPECT_THAT(table, HasSubstr("32 x p5.48xlarge"));
}

// Counts read as English: "1 job", not "1 jobs".
TEST(HtmlAxesTest, OneJobIsOneJob) {
  ClusterModel cluster = testing::SmallCluster(16);
  SimulationReport report = HandMadeReport(cluster, 1);
  EXPECT_THAT(FormatTable(report), HasSubstr("trace: t.csv, 1 job\n"));
  EXPECT_THAT(FormatHtml(report), HasSubstr("</b>, 1 job. Every policy"));
  report.jobs = 2;
  EXPECT_THAT(FormatTable(report), HasSubstr("trace: t.csv, 2 jobs\n"));
}

// The y of the coloured end-of-line label `label` in `html` (not an axis tick), or -1.
double EndLabelY(const std::string& html, const std::string& label) {
  const std::regex pattern("<text x=\"[0-9.]+\" y=\"([0-9.]+)\" font-size=\"10\" "
                           "text-anchor=\"end\" fill=\"[^\"]*\">" + label + "</text>");
  std::smatch match;
  return std::regex_search(html, match, pattern) ? std::stod(match[1]) : -1;
}

// Short runs get ticks in seconds or minutes that differ (a 60 s run read "0h" six times, a
// 2 h one "0h 0h 1h 1h 2h 2h"), and the preemption totals at the ends of close lines are
// pushed apart rather than drawn over each other (61, 60, 57 and 53 were unreadable).
TEST(HtmlAxesTest, TimeTicksDifferAndEndLabelsDoNotOverlap) {
  ClusterModel cluster = testing::SmallCluster(16);
  SimulationReport report = HandMadeReport(cluster, 0);
  const std::vector<std::string> policies = {"phalanx", "first-fit", "kueue-tas", "kai-topology"};
  const std::vector<size_t> evictions = {61, 60, 57, 53};
  for (size_t p = 0; p < policies.size(); ++p) {
    RunResult r;
    r.summary.policy = policies[p];
    r.summary.horizon_end_s = 60;
    r.summary.makespan_s = 60;
    r.usage = {{0.0, 8}, {60.0, 0}};
    for (size_t i = 0; i < evictions[p]; ++i) r.preemption_times.push_back(0.5 * i);
    report.results.push_back(r);
  }
  std::string html = FormatHtml(report);
  for (const char* tick : {">0s</text>", ">12s</text>", ">48s</text>", ">60s</text>"}) {
    EXPECT_THAT(html, HasSubstr(tick));
  }
  EXPECT_THAT(html, ::testing::Not(HasSubstr(">0h</text>")));
  std::vector<double> ys;
  for (size_t n : evictions) ys.push_back(EndLabelY(html, std::to_string(n)));
  std::sort(ys.begin(), ys.end());
  ASSERT_GT(ys[0], 0);
  for (size_t i = 1; i < ys.size(); ++i) EXPECT_GE(ys[i] - ys[i - 1], 10) << i;
  for (RunResult& r : report.results) r.summary.horizon_end_s = 7200;
  html = FormatHtml(report);
  for (const char* tick : {">24m</text>", ">96m</text>", ">120m</text>"}) {
    EXPECT_THAT(html, HasSubstr(tick));
  }
}

// A policy under which some jobs never started says so: its own column and JSON field, a
// warning for stderr, and no wait / locality / JCT figure made up from nothing ("-" and null).
// Unfinished jobs are warned about by what ended the run.
TEST(NeverStartedReportTest, ShownAsItsOwnColumnAndWarned) {
  ClusterModel cluster = testing::SmallCluster(16);
  SimulationReport report = HandMadeReport(cluster, 3);
  RunResult ok, stuck;
  ok.summary.policy = "kueue-tas";
  ok.summary.jobs = 3;
  ok.summary.jobs_started = 3;
  ok.summary.jobs_completed = 3;
  ok.summary.locality_jobs = 1;
  stuck.summary.policy = "phalanx";
  stuck.summary.jobs = 3;
  stuck.summary.jobs_never_started = 3;
  stuck.summary.locality_lowest_level = 1.0;  // the engine's neutral value for "nothing to judge"
  report.results = {stuck, ok};
  EXPECT_EQ(RunWarnings(report),
            "3 of 3 jobs never started under phalanx; they are not in its wait, locality and JCT "
            "figures (column \"never\", JSON jobs_never_started); --jobs-out's pending_reason "
            "says why each waited\n");
  report.results = {ok};
  EXPECT_EQ(RunWarnings(report), "");
  // Unfinished jobs are worded by what ended the run: the repeat check leaves them evicted.
  RunResult repeating = ok;
  repeating.summary.jobs_completed = 1;
  repeating.summary.jobs_unfinished = 2;
  repeating.summary.ended_by = "livelock";
  report.results = {repeating};
  EXPECT_EQ(RunWarnings(report),
            "2 of 3 jobs started under kueue-tas had not finished when the run ended because the "
            "policy only repeated itself (it would never start a job again): 2 evicted and "
            "pending, holding no GPUs; they are not in its JCT and queued figures (JSON "
            "jobs_unfinished, jobs_running_at_end, ended_by)\n");
  repeating.summary.ended_by = "safety_stop";
  repeating.summary.jobs_running_at_end = 1;
  report.results = {repeating};
  EXPECT_EQ(RunWarnings(report),
            "2 of 3 jobs started under kueue-tas had not finished at the safety stop (365 days "
            "after the last submission): 1 still running, their GPUs busy until the stop; 1 "
            "evicted and pending, holding no GPUs; they are not in its JCT and queued figures "
            "(JSON jobs_unfinished, jobs_running_at_end, ended_by)\n");
  report.results = {stuck, ok};
  const std::string table = FormatTable(report);
  EXPECT_THAT(table, HasSubstr("never"));
  EXPECT_THAT(table, ::testing::ContainsRegex("phalanx +- +- +- +- +0 +3 +- +- "));
  rapidjson::Document doc;
  doc.Parse(FormatJson(report).c_str());
  ASSERT_FALSE(doc.HasParseError());
  const auto& p = doc["policies"][0];
  EXPECT_EQ(p["jobs_never_started"].GetInt(), 3);
  EXPECT_TRUE(p["wait_p99_s"].IsNull());
  EXPECT_TRUE(p["jct_mean_s"].IsNull());
  EXPECT_TRUE(p["locality_lowest_level"].IsNull());
  EXPECT_EQ(doc["policies"][1]["jobs_never_started"].GetInt(), 0);
  EXPECT_TRUE(doc["policies"][1]["wait_p99_s"].IsNumber());
  EXPECT_THAT(FormatHtml(report), HasSubstr("<th>never started</th>"));
}

TEST(ProgressBarTest, RendersFractionAndStaysSilentWhenDisabled) {
  EXPECT_EQ(ProgressBar::Render("sim", 0.5, 10), "[#####.....]  50% sim");
  ProgressBar bar("sim", 2, /*enabled=*/false);
  EXPECT_EQ(bar.Reporter(0), nullptr);
}

}  // namespace
}  // namespace phalanx::sim
