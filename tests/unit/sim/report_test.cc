#include "sim/report.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "sim/progress.h"
#include "sim/scenario.h"

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
                          "jobs_completed", "locality_lowest_level", "comm_slowdown_mean",
                          "preemptions", "partial_gang_events", "overcommit_events"}) {
    EXPECT_TRUE(p.HasMember(key)) << key;
  }
  EXPECT_GT(p["gpu_utilization"].GetDouble(), 0.0);
  EXPECT_LE(p["gpu_utilization"].GetDouble(), 1.0);
}

TEST_F(ReportTest, HtmlIsSelfContainedWithThreeCharts) {
  const std::string html = FormatHtml(report_);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  size_t charts = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    ++charts;
  }
  EXPECT_EQ(charts, 3u);
  EXPECT_THAT(html, HasSubstr("GPU utilization over time"));
  EXPECT_THAT(html, HasSubstr("Wait-time CDF"));
  EXPECT_THAT(html, HasSubstr("Locality by job size"));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no fetches
}

TEST_F(ReportTest, UtilizationSeriesAveragesTheLedger) {
  const RunResult& r = report_.results[0];
  const std::vector<double> series =
      UtilizationSeries(r, report_.cluster->total_gpus, r.summary.makespan_s, 50);
  double mean = 0;
  for (double v : series) {
    EXPECT_GE(v, 0.0);
    EXPECT_LE(v, 1.0 + 1e-9);
    mean += v / series.size();
  }
  EXPECT_NEAR(mean, r.summary.gpu_utilization, 1e-6);
}

TEST_F(ReportTest, TableListsEveryPolicy) {
  const std::string table = FormatTable(report_);
  EXPECT_THAT(table, HasSubstr("phalanx"));
  EXPECT_THAT(table, HasSubstr("first-fit"));
  EXPECT_THAT(table, HasSubstr("32 x p5.48xlarge"));
}

TEST(ProgressBarTest, RendersFractionAndStaysSilentWhenDisabled) {
  EXPECT_EQ(ProgressBar::Render("sim", 0.5, 10), "[#####.....]  50% sim");
  ProgressBar bar("sim", 2, /*enabled=*/false);
  EXPECT_EQ(bar.Reporter(0), nullptr);
}

}  // namespace
}  // namespace phalanx::sim
