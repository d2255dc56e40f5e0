#include "common/metrics/registry.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics/metrics.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::metrics {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RegistryTest, CounterRendersHelpTypeAndSeriesSortedByLabelValues) {
  Registry registry;
  auto& requests = registry.AddCounter("phalanx_requests_total", "Requests served.",
                                       {"verb", "code"});
  requests.WithLabels({"filter", "200"}).Inc();
  requests.WithLabels({"filter", "200"}).Inc(2);
  requests.WithLabels({"bind", "500"}).Inc(0.5);
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_requests_total Requests served.\n"
            "# TYPE phalanx_requests_total counter\n"
            "phalanx_requests_total{verb=\"bind\",code=\"500\"} 0.5\n"
            "phalanx_requests_total{verb=\"filter\",code=\"200\"} 3\n");
}

TEST(RegistryTest, CounterIgnoresNegativeAndNaNIncrements) {
  Registry registry;
  Counter& counter = registry.AddCounter("x_total", "X.").WithLabels({});
  counter.Inc(4);
  counter.Inc(-1);
  counter.Inc(std::nan(""));
  EXPECT_EQ(counter.Value(), 4);
}

TEST(RegistryTest, UnlabelledFamilyIsPresentAtZeroWithoutBraces) {
  Registry registry;
  registry.AddCounter("phalanx_restarts_total", "Restarts.");
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_restarts_total Restarts.\n"
            "# TYPE phalanx_restarts_total counter\n"
            "phalanx_restarts_total 0\n");
}

TEST(RegistryTest, LabelledFamilyWithoutSeriesRendersNothing) {
  Registry registry;
  registry.AddGauge("phalanx_queue_pending", "Pending workloads.", {"queue"});
  EXPECT_EQ(registry.Render(), "");
}

TEST(RegistryTest, GaugeSetIncDec) {
  Registry registry;
  auto& free = registry.AddGauge("phalanx_free_gpus", "Free GPUs.", {"domain"});
  free.WithLabels({"a"}).Set(16);
  free.WithLabels({"a"}).Dec(8);
  free.WithLabels({"a"}).Inc();
  free.WithLabels({"b"}).Dec(2.5);
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_free_gpus Free GPUs.\n"
            "# TYPE phalanx_free_gpus gauge\n"
            "phalanx_free_gpus{domain=\"a\"} 9\n"
            "phalanx_free_gpus{domain=\"b\"} -2.5\n");
}

TEST(RegistryTest, CallbackGaugeIsEvaluatedAtEachRender) {
  Registry registry;
  int nodes = 3;
  registry.AddCallbackGauge("phalanx_snapshot_nodes", "Nodes in the snapshot.",
                            [&nodes] { return nodes; });
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_snapshot_nodes Nodes in the snapshot.\n"
            "# TYPE phalanx_snapshot_nodes gauge\n"
            "phalanx_snapshot_nodes 3\n");
  nodes = 4096;
  EXPECT_THAT(registry.Render(), HasSubstr("\nphalanx_snapshot_nodes 4096\n"));
}

TEST(RegistryTest, RenderHooksRunOnceBeforeTheCallbacksOfEachRender) {
  Registry registry;
  int prepared = 0;
  int seen = -1;
  registry.AddRenderHook([&] { ++prepared; });
  registry.AddCallbackGauge("test_a", "A.", [&] { return double(seen = prepared); });
  registry.AddCallbackGauge("test_b", "B.", [&] { return double(prepared); });
  EXPECT_THAT(registry.Render(), HasSubstr("test_b 1\n"));
  EXPECT_EQ(seen, 1);
  EXPECT_THAT(registry.Render(), HasSubstr("test_a 2\n"));
  EXPECT_EQ(prepared, 2);
}

TEST(RegistryTest, ARenderHookThatThrowsDoesNotStopTheScrape) {
  Registry registry;
  registry.AddRenderHook([] { throw std::runtime_error("snapshot gone"); });
  registry.AddCallbackGauge("test_a", "A.", [] { return 7.0; });
  EXPECT_THAT(registry.Render(), HasSubstr("test_a 7\n"));
}

TEST(RegistryTest, CallbackGaugeThatThrowsIsLeftOutOfThatScrape) {
  Registry registry;
  registry.AddCallbackGauge("a_broken", "Throws.",
                            []() -> double { throw std::runtime_error("x"); });
  registry.AddGauge("b_fine", "Fine.").WithLabels({}).Set(1);
  EXPECT_EQ(registry.Render(), "# HELP b_fine Fine.\n# TYPE b_fine gauge\nb_fine 1\n");
}

TEST(RegistryTest, RemoveIfDropsTheSeriesOfWhatIsGone) {
  Registry registry;
  auto& pending = registry.AddGauge("phalanx_pending_workloads", "Pending.", {"cluster_queue"});
  pending.WithLabels({"llm"}).Set(2);
  pending.WithLabels({"scratch"}).Set(5);
  pending.RemoveIf([](const std::vector<std::string>& v) { return v[0] == "scratch"; });
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_pending_workloads Pending.\n"
            "# TYPE phalanx_pending_workloads gauge\n"
            "phalanx_pending_workloads{cluster_queue=\"llm\"} 2\n");
  // Looked up again, a dropped series starts over at zero.
  EXPECT_EQ(pending.WithLabels({"scratch"}).Value(), 0);
  // An unlabelled family keeps its one series.
  auto& cycles = registry.AddCounter("phalanx_cycles_total", "Cycles.");
  cycles.RemoveIf([](const std::vector<std::string>&) { return true; });
  EXPECT_THAT(registry.Render(), HasSubstr("\nphalanx_cycles_total 0\n"));
}

TEST(RegistryTest, CallbackGaugeFamilyListsTheSeriesOfEachRenderSortedAndSummed) {
  Registry registry;
  std::vector<LabelledValue> listed = {{{"layer-3", "nn-2"}, 16},
                                       {{"layer-3", "nn-1"}, 8},
                                       {{"layer-2", "nn-0"}, 24},
                                       {{"layer-3", "nn-1"}, 8}};  // same labels: added
  registry.AddCallbackGaugeFamily("phalanx_domain_gpus", "GPUs per domain.", {"level", "domain"},
                                  [&listed] { return listed; });
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_domain_gpus GPUs per domain.\n"
            "# TYPE phalanx_domain_gpus gauge\n"
            "phalanx_domain_gpus{level=\"layer-2\",domain=\"nn-0\"} 24\n"
            "phalanx_domain_gpus{level=\"layer-3\",domain=\"nn-1\"} 16\n"
            "phalanx_domain_gpus{level=\"layer-3\",domain=\"nn-2\"} 16\n");
  // A series no longer listed is gone from the next scrape: nothing stale stays behind.
  listed = {{{"layer-3", "nn-2"}, 0}};
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_domain_gpus GPUs per domain.\n"
            "# TYPE phalanx_domain_gpus gauge\n"
            "phalanx_domain_gpus{level=\"layer-3\",domain=\"nn-2\"} 0\n");
  listed.clear();
  EXPECT_EQ(registry.Render(), "");
}

TEST(RegistryTest, CallbackGaugeFamilyDropsSeriesWithTheWrongLabelCountAndSurvivesThrows) {
  Registry registry;
  registry.AddCallbackGaugeFamily("a_family", "A.", {"reason"}, [] {
    return std::vector<LabelledValue>{{{"NotReady", "extra"}, 1}, {{"Unhealthy"}, 2}};
  });
  registry.AddCallbackGaugeFamily("b_family", "B.", {"reason"},
                                  []() -> std::vector<LabelledValue> {
                                    throw std::runtime_error("x");
                                  });
  EXPECT_EQ(registry.Render(),
            "# HELP a_family A.\n# TYPE a_family gauge\na_family{reason=\"Unhealthy\"} 2\n");
}

TEST(RegistryTest, HistogramRendersCumulativeBucketsSumAndCount) {
  Registry registry;
  auto& latency = registry.AddHistogram("phalanx_extender_request_duration_seconds",
                                        "Time to answer one kube-scheduler extender call.",
                                        {"verb"}, {0.25, 0.5, 1});
  Histogram& filter = latency.WithLabels({"filter"});
  filter.Observe(0.125);
  filter.Observe(0.25);  // on a bound: le is "less than or equal"
  filter.Observe(0.5);
  filter.Observe(4);  // only in +Inf
  EXPECT_EQ(registry.Render(),
            "# HELP phalanx_extender_request_duration_seconds Time to answer one "
            "kube-scheduler extender call.\n"
            "# TYPE phalanx_extender_request_duration_seconds histogram\n"
            "phalanx_extender_request_duration_seconds_bucket{verb=\"filter\",le=\"0.25\"} 2\n"
            "phalanx_extender_request_duration_seconds_bucket{verb=\"filter\",le=\"0.5\"} 3\n"
            "phalanx_extender_request_duration_seconds_bucket{verb=\"filter\",le=\"1\"} 3\n"
            "phalanx_extender_request_duration_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 4\n"
            "phalanx_extender_request_duration_seconds_sum{verb=\"filter\"} 4.875\n"
            "phalanx_extender_request_duration_seconds_count{verb=\"filter\"} 4\n");
}

TEST(RegistryTest, HistogramBucketMath) {
  Histogram histogram({1, 2, 4});
  for (double v : {0.0, 1.0, 1.5, 2.0, 3.0, 4.0, 4.5, -1.0, std::nan("")}) histogram.Observe(v);
  Histogram::Snapshot s = histogram.Read();
  // <=1: 0, 1, -1 | <=2: +1.5, 2 | <=4: +3, 4 | +Inf: +4.5, NaN
  EXPECT_THAT(s.cumulative, ElementsAre(3, 5, 7, 9));
  EXPECT_EQ(s.count, 9u);
  EXPECT_TRUE(std::isnan(s.sum));  // NaN poisons the sum, as in client_golang
}

TEST(RegistryTest, HistogramWithoutLabelsAndTrailingInfBound) {
  Registry registry;
  Histogram& h =
      registry.AddHistogram("h_seconds", "H.", {}, {1, INFINITY}).WithLabels({});
  h.Observe(0.5);
  EXPECT_EQ(registry.Render(),
            "# HELP h_seconds H.\n# TYPE h_seconds histogram\n"
            "h_seconds_bucket{le=\"1\"} 1\n"
            "h_seconds_bucket{le=\"+Inf\"} 1\n"
            "h_seconds_sum 0.5\n"
            "h_seconds_count 1\n");
}

TEST(RegistryTest, FamiliesRenderInNameOrderWhateverTheRegistrationOrder) {
  Registry registry;
  registry.AddGauge("c_gauge", "C.");
  registry.AddCounter("a_total", "A.");
  registry.AddCallbackGauge("b_callback", "B.", [] { return 1.0; });
  std::string text = registry.Render();
  size_t a = text.find("# HELP a_total");
  size_t b = text.find("# HELP b_callback");
  size_t c = text.find("# HELP c_gauge");
  ASSERT_NE(c, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(registry.Render(), text);
}

TEST(RegistryTest, LabelValuesAndHelpAreEscaped) {
  Registry registry;
  registry.AddGauge("g", "Line one\nline \\two\\.", {"path"})
      .WithLabels({"C:\\x \"y\"\nz"})
      .Set(1);
  EXPECT_EQ(registry.Render(),
            "# HELP g Line one\\nline \\\\two\\\\.\n"
            "# TYPE g gauge\n"
            "g{path=\"C:\\\\x \\\"y\\\"\\nz\"} 1\n");
}

TEST(RegistryTest, WithLabelsReturnsTheSameSeriesEachTime) {
  Registry registry;
  auto& family = registry.AddCounter("x_total", "X.", {"a"});
  EXPECT_EQ(&family.WithLabels({"1"}), &family.WithLabels({"1"}));
  EXPECT_NE(&family.WithLabels({"1"}), &family.WithLabels({"2"}));
}

TEST(BucketsTest, Layouts) {
  std::vector<double> latency = Buckets::Latency();
  ASSERT_FALSE(latency.empty());
  for (size_t i = 1; i < latency.size(); ++i) EXPECT_LT(latency[i - 1], latency[i]);
  EXPECT_THAT(Buckets::Exponential(0.001, 10, 4),
              ElementsAre(DoubleEq(0.001), DoubleEq(0.01), DoubleEq(0.1), DoubleEq(1)));
  EXPECT_THAT(Buckets::Linear(1, 0.5, 3), ElementsAre(1, 1.5, 2));
}

// Every update from every thread is counted: the totals come out exact.
TEST(RegistryTest, ConcurrentUpdatesSumExactly) {
  Registry registry;
  auto& counters = registry.AddCounter("c_total", "C.", {"t"});
  auto& gauge = registry.AddGauge("g", "G.");
  auto& histograms = registry.AddHistogram("h_seconds", "H.", {"t"}, {1, 2});
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Half the threads share a series, half look up their own: both paths race.
      std::string label = t % 2 == 0 ? "shared" : "own" + std::to_string(t);
      Counter& counter = counters.WithLabels({label});
      Histogram& histogram = histograms.WithLabels({"shared"});
      Gauge& g = gauge.WithLabels({});
      for (int i = 0; i < kPerThread; ++i) {
        counter.Inc();
        g.Inc(2);
        g.Dec();
        histogram.Observe(i % 3);  // 0, 1, 2: buckets le=1 twice as often as le=2
        if (i % 10'000 == 0) (void)registry.Render();  // scrapes race with updates
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counters.WithLabels({"shared"}).Value(), 2 * kPerThread);
  EXPECT_EQ(counters.WithLabels({"own1"}).Value(), kPerThread);
  EXPECT_EQ(counters.WithLabels({"own3"}).Value(), kPerThread);
  EXPECT_EQ(gauge.WithLabels({}).Value(), kThreads * kPerThread);
  Histogram::Snapshot s = histograms.WithLabels({"shared"}).Read();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kPerThread);
  // i % 3 over 0..49,999: 16,667 zeros, 16,667 ones, 16,666 twos per thread.
  EXPECT_THAT(s.cumulative, ElementsAre(kThreads * 33'334, kThreads * kPerThread,
                                        kThreads * kPerThread));
  EXPECT_EQ(s.sum, kThreads * (16'667.0 + 2 * 16'666.0));
}

TEST(NameValidationTest, MetricNames) {
  EXPECT_THAT(ValidateMetricName("phalanx_requests_total"), IsOk());
  EXPECT_THAT(ValidateMetricName("job:rate5m"), IsOk());
  EXPECT_THAT(ValidateMetricName("_x1"), IsOk());
  EXPECT_THAT(ValidateMetricName(""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateMetricName("1x"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateMetricName("bad-name"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"bad-name\"")));
  EXPECT_THAT(ValidateMetricName("café"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(NameValidationTest, LabelNames) {
  EXPECT_THAT(ValidateLabelName("verb"), IsOk());
  EXPECT_THAT(ValidateLabelName("_x"), IsOk());
  EXPECT_THAT(ValidateLabelName("a:b"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateLabelName("9a"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateLabelName("__name__"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserves")));
}

// Registration mistakes are programming errors: they stop the process with a message that names
// the metric, so the first test or start-up that registers it catches them.
TEST(RegistryDeathTest, InvalidRegistrationsAbortWithAClearMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Registry registry;
  EXPECT_DEATH(registry.AddGauge("bad-name", "X."), "metric name \"bad-name\"");
  EXPECT_DEATH(registry.AddCounter("requests", "X."), "\"requests\" must end in \"_total\"");
  EXPECT_DEATH(registry.AddGauge("g", "X.", {"__reserved"}), "g: label name \"__reserved\"");
  EXPECT_DEATH(registry.AddGauge("g", "X.", {"a", "a"}), "label \"a\" given twice");
  EXPECT_DEATH(registry.AddHistogram("h", "X.", {"le"}, {1}), "label \"le\"");
  EXPECT_DEATH(registry.AddHistogram("h", "X.", {}, {2, 1}), "strictly increasing");
  EXPECT_DEATH(registry.AddHistogram("h", "X.", {}, {}), "no finite buckets");
  EXPECT_DEATH(Buckets::Exponential(0, 2, 3), "start > 0");

  auto& taken = registry.AddGauge("taken", "X.", {"a"});
  EXPECT_DEATH(registry.AddGauge("taken", "X."), "\"taken\" registered twice");
  EXPECT_DEATH(registry.AddCallbackGauge("taken", "X.", [] { return 1.0; }), "registered twice");
  EXPECT_DEATH(registry.AddCallbackGaugeFamily("taken", "X.", {"a"}, [] {
    return std::vector<LabelledValue>{};
  }), "registered twice");
  EXPECT_DEATH(taken.WithLabels({"1", "2"}), "taken: 2 label values given, want 1 \\(a\\)");
  EXPECT_DEATH(registry.AddCounter("taken_total", "X.", {"a"}).WithLabels({}),
               "taken_total: 0 label values given, want 1 \\(a\\)");

  // A histogram writes name_bucket, name_sum and name_count: those names are taken too.
  registry.AddHistogram("lat_seconds", "X.", {}, {1});
  EXPECT_DEATH(registry.AddGauge("lat_seconds_count", "X."), "lat_seconds_count");
  registry.AddGauge("depth_sum", "X.");
  EXPECT_DEATH(registry.AddHistogram("depth", "X.", {}, {1}), "\"depth_sum\"");
}

}  // namespace
}  // namespace phalanx::metrics
