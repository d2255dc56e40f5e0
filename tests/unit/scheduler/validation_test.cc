// Bad requests are InvalidArgument naming the field, from every entry point; never a crash.
#include <functional>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;
using namespace ::phalanx::placement::testing;  // NOLINT

struct BadCase {
  std::string name;
  std::function<void(GangRequest&)> mutate;
  std::string message;
};

class ValidationTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ValidationTest, EveryEntryPointRejectsTheRequestNamingTheField) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  ASSERT_OK(snapshot.Reserve(Gang("ns/running", 1, 8)).status());
  GangRequest request = Gang("ns/j", 2, 8);
  GetParam().mutate(request);
  auto invalid = StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message));
  EXPECT_THAT(snapshot.Place(request), invalid);
  EXPECT_THAT(snapshot.Reserve(request), invalid);
  EXPECT_THAT(snapshot.PlanPreemption(request, {{"ns/running", -1, {}}}), invalid);
  EXPECT_TRUE(snapshot.FindReservation("ns/j") == nullptr);
  EXPECT_OK(snapshot.CheckConsistency());
}

INSTANTIATE_TEST_SUITE_P(
    BadRequests, ValidationTest,
    ::testing::Values(
        BadCase{"ZeroCount", [](GangRequest& r) { r.count = 0; }, "request.count (0)"},
        BadCase{"NegativeCount", [](GangRequest& r) { r.count = -3; }, "request.count (-3)"},
        BadCase{"EmptyJob", [](GangRequest& r) { r.job = ""; }, "request.job"},
        BadCase{"MinAboveMax", [](GangRequest& r) { r.elastic = ElasticRange{5, 3, 1}; },
                "request.elastic.min (5) > request.elastic.max (3)"},
        BadCase{"MinZero", [](GangRequest& r) { r.elastic = ElasticRange{0, 3, 1}; },
                "request.elastic.min (0)"},
        BadCase{"StepZero", [](GangRequest& r) { r.elastic = ElasticRange{1, 3, 0}; },
                "request.elastic.step (0)"},
        BadCase{"UnknownRequiredLevel", [](GangRequest& r) { r.required_level = "rack"; },
                "request.required_level (\"rack\") is not a level"},
        BadCase{"UnknownPreferredLevel", [](GangRequest& r) { r.preferred_level = "rack"; },
                "request.preferred_level"},
        BadCase{"UnknownGroupLevel",
                [](GangRequest& r) {
                  r.group_size = 2;
                  r.group_level = "nvidia.com/gpu.clique";
                },
                "request.group_level"},
        BadCase{"PreferredCoarserThanRequired",
                [](GangRequest& r) {
                  r.required_level = kLayer3;
                  r.preferred_level = kLayer1;
                },
                "request.preferred_level"},
        BadCase{"GroupSizeNotDividingCount",
                [](GangRequest& r) {
                  r.group_size = 3;
                  r.group_level = kLayer3;
                },
                "request.group_size (3) does not divide request.count (2)"},
        BadCase{"GroupSizeNotDividingElasticStep",
                [](GangRequest& r) {
                  r.elastic = ElasticRange{2, 8, 1};
                  r.group_size = 2;
                  r.group_level = kLayer3;
                },
                "request.elastic.step (1)"},
        BadCase{"GroupLevelWithoutSize", [](GangRequest& r) { r.group_level = kLayer3; },
                "request.group_level"},
        BadCase{"GroupSizeWithoutLevel", [](GangRequest& r) { r.group_size = 2; },
                "needs request.group_level"},
        BadCase{"NegativeGroupSize", [](GangRequest& r) { r.group_size = -2; },
                "request.group_size (-2)"},
        BadCase{"NegativeResource", [](GangRequest& r) { r.per_pod["cpu"] = -1; },
                "request.per_pod[cpu]"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(ValidationTest, HostnameIsAValidLevel) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  GangRequest request = Gang("ns/j", 2, 4, kHostname);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(Distinct(result.placement.nodes).size(), 1u);
  request.count = 3;
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
  EXPECT_THAT(result.explanation.summary, HasSubstr("on one node"));
}

TEST(ValidationTest, ExtremeValuesAreAnswersNotCrashes) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 2);
  GangRequest huge = Gang("ns/j", std::numeric_limits<int32_t>::max(), 1);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(huge));
  EXPECT_FALSE(result.placed);
  huge = Gang("ns/j", 1, 1);
  huge.per_pod = {{"memory", std::numeric_limits<int64_t>::max()},
                  {"cpu", std::numeric_limits<int64_t>::max()}};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(huge));
  EXPECT_FALSE(result.placed);
  huge.per_pod = {{"memory", 1}, {"cpu", std::numeric_limits<int64_t>::max() / 2}};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(huge));
  EXPECT_FALSE(result.placed);
  GangRequest elastic = Gang("ns/e", 0, 8);
  elastic.elastic = ElasticRange{1, std::numeric_limits<int32_t>::max(), 1};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(elastic));
  EXPECT_EQ(result.placement.nodes.size(), 2u);
}

TEST(ValidationTest, FlatTopologyPlacesAcrossTheCluster) {
  ASSERT_OK_AND_ASSIGN(Topology flat, Topology::Create({}));
  ClusterSnapshot snapshot(flat);
  AddNodes(snapshot, {}, "n", 3);
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(Gang("ns/j", 3, 8)));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), "cluster");
  EXPECT_THAT(snapshot.Place(Gang("ns/j", 1, 8, kLayer3)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request.required_level")));
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(Gang("ns/j", 2, 4, kHostname)));
  EXPECT_TRUE(result.placed);
}

}  // namespace
}  // namespace phalanx::placement
