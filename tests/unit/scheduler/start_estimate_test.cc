// EstimateStart: when and where a gang that does not fit now fits as running gangs end.
// PlacementPropertyTest.StartEstimatesEqualCarryingTheEndsOut checks it on random clusters.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;
using namespace ::phalanx::placement::testing;  // NOLINT

// nn-a: x0-x3 held by j1 (x0, x1) and j2 (x2, x3). nn-b: y0, y1 free, j3 on y2, y3.
class StartEstimateTest : public ::testing::Test {
 protected:
  StartEstimateTest() : snapshot_(Eks()) {
    AddNodes(snapshot_, {"a", "b", "nn-a"}, "x", 4);
    AddNodes(snapshot_, {"a", "b", "nn-b"}, "y", 4);
    EXPECT_OK(snapshot_.Restore(Gang("ns/j1", 2, 8), {"ns/j1", {}, {"x0", "x1"}}).status());
    EXPECT_OK(snapshot_.Restore(Gang("ns/j2", 2, 8), {"ns/j2", {}, {"x2", "x3"}}).status());
    EXPECT_OK(snapshot_.Restore(Gang("ns/j3", 2, 8), {"ns/j3", {}, {"y2", "y3"}}).status());
  }
  ClusterSnapshot snapshot_;
};

TEST_F(StartEstimateTest, FitsNowNeedsNoEnd) {
  ASSERT_OK_AND_ASSIGN(StartEstimate estimate,
                       snapshot_.EstimateStart(Gang("ns/w", 2, 8, kLayer3), {{"ns/j1", 100}}));
  EXPECT_TRUE(estimate.feasible);
  EXPECT_EQ(estimate.ended, 0);
  EXPECT_EQ(estimate.start, 0);
  EXPECT_EQ(Distinct(estimate.placement.nodes), (std::set<std::string>{"y0", "y1"}));
}

TEST_F(StartEstimateTest, WaitsForTheFewestEndsThatFreeOneDomain) {
  // After j1 (100) each block has 2 free nodes; after j3 (200) nn-b has 4. j2 (300) is not
  // needed. The ends are given out of order, with a gang that holds nothing.
  std::vector<EndingGang> ends = {{"ns/j2", 300}, {"ns/gone", 50}, {"ns/j3", 200}, {"ns/j1", 100}};
  ASSERT_OK_AND_ASSIGN(StartEstimate estimate,
                       snapshot_.EstimateStart(Gang("ns/w", 4, 8, kLayer3), ends));
  ASSERT_TRUE(estimate.feasible) << estimate.explanation.summary;
  EXPECT_EQ(estimate.ended, 2);
  EXPECT_EQ(estimate.start, 200);
  EXPECT_EQ(estimate.placement.domain.ToString(), kLayer3 + "=nn-b");
  EXPECT_EQ(Distinct(estimate.placement.nodes),
            (std::set<std::string>{"y0", "y1", "y2", "y3"}));
  // A dry run: everything is still held.
  EXPECT_EQ(snapshot_.ReservedJobs().size(), 3u);
  EXPECT_EQ(snapshot_.NodeFree("y2")->at("nvidia.com/gpu"), 0);
}

TEST_F(StartEstimateTest, GangsEndingTogetherGoTogether) {
  // j1 and j2 end at the same moment: nn-a empties at 150, before j3's 200.
  ASSERT_OK_AND_ASSIGN(
      StartEstimate estimate,
      snapshot_.EstimateStart(Gang("ns/w", 4, 8, kLayer3),
                              {{"ns/j1", 150}, {"ns/j3", 200}, {"ns/j2", 150}}));
  ASSERT_TRUE(estimate.feasible);
  EXPECT_EQ(estimate.ended, 2);
  EXPECT_EQ(estimate.start, 150);
  EXPECT_EQ(estimate.placement.domain.ToString(), kLayer3 + "=nn-a");
}

TEST_F(StartEstimateTest, AGangWithoutAnExpectedEndIsNeverCountedOn) {
  // Only j1 has an expected end: nn-a still holds j2, nn-b still holds j3.
  ASSERT_OK_AND_ASSIGN(StartEstimate estimate,
                       snapshot_.EstimateStart(Gang("ns/w", 4, 8, kLayer3), {{"ns/j1", 100}}));
  EXPECT_FALSE(estimate.feasible);
  EXPECT_THAT(estimate.explanation.summary, HasSubstr("not even after all 1 ending gangs end"));
}

TEST_F(StartEstimateTest, TooBigForAnyDomainIsNeverFeasible) {
  ASSERT_OK_AND_ASSIGN(
      StartEstimate estimate,
      snapshot_.EstimateStart(Gang("ns/w", 5, 8, kLayer3),
                              {{"ns/j1", 1}, {"ns/j2", 2}, {"ns/j3", 3}}));
  EXPECT_FALSE(estimate.feasible);
  EXPECT_EQ(estimate.explanation.max_fit_empty, 4);
}

// The snapshot remembers max_fit_empty per shape; a node change must move it, usage must not.
TEST_F(StartEstimateTest, MaxFitEmptyFollowsNodeChangesNotUsage) {
  const GangRequest big = Gang("ns/w", 5, 8, kLayer3);
  auto max_fit_empty = [&] {
    absl::StatusOr<StartEstimate> estimate = snapshot_.EstimateStart(big, {{"ns/j1", 1}});
    EXPECT_OK(estimate.status());
    return estimate.ok() ? estimate->explanation.max_fit_empty : -1;
  };
  EXPECT_EQ(max_fit_empty(), 4);
  ASSERT_OK(snapshot_.Release("ns/j2"));  // usage only
  EXPECT_EQ(max_fit_empty(), 4);
  AddNodes(snapshot_, {"a", "b", "nn-b"}, "z", 1);  // a fifth node in nn-b
  EXPECT_EQ(max_fit_empty(), 5);
  ASSERT_OK(snapshot_.RemoveNode("z0"));
  EXPECT_EQ(max_fit_empty(), 4);
  NodeInfo cordoned = snapshot_.nodes()[snapshot_.FindNode("y0")].info;
  cordoned.unschedulable = true;
  ASSERT_OK(snapshot_.UpdateNode(cordoned));
  EXPECT_EQ(max_fit_empty(), 4);  // nn-a still holds 4 when empty
  NodeInfo down = snapshot_.nodes()[snapshot_.FindNode("x0")].info;
  down.ready = false;
  ASSERT_OK(snapshot_.UpdateNode(down));
  EXPECT_EQ(max_fit_empty(), 3);
}

TEST_F(StartEstimateTest, BoundPodsCountAsGoneWithTheirGang) {
  // j3's pods are bound (real usage, not only a reservation): its end frees them too.
  PodInfo pod;
  pod.key = "ns/j3-0";
  pod.node = "y2";
  pod.job = "ns/j3";
  pod.rank = 0;
  pod.requests = {{"nvidia.com/gpu", 8}};
  ASSERT_OK(snapshot_.AddPod(pod));
  ASSERT_OK_AND_ASSIGN(StartEstimate estimate,
                       snapshot_.EstimateStart(Gang("ns/w", 4, 8, kLayer3), {{"ns/j3", 10}}));
  ASSERT_TRUE(estimate.feasible);
  EXPECT_EQ(estimate.placement.domain.ToString(), kLayer3 + "=nn-b");
}

TEST_F(StartEstimateTest, BadInputNamesTheField) {
  EXPECT_THAT(snapshot_.EstimateStart(Gang("ns/w", 0, 8), {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(snapshot_.EstimateStart(Gang("ns/w", 4, 8), {{"ns/j1", 1}, {"", 2}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ends[1].job")));
}

}  // namespace
}  // namespace phalanx::placement
