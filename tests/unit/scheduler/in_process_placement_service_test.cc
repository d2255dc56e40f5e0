#include "scheduler/in_process_placement_service.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using namespace ::phalanx::placement::testing;  // NOLINT

TEST(InProcessPlacementServiceTest, ServesEveryMethodOverTheSnapshot) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "c"}, "n", 4);
  InProcessPlacementService service(std::move(snapshot));
  PlacementService& api = service;

  ASSERT_OK_AND_ASSIGN(PlacementResult dry, api.Place(Gang("ns/a", 2, 8)));
  EXPECT_TRUE(dry.placed);
  // A batch sees its own earlier reservations: the third no longer fits.
  std::vector<absl::StatusOr<PlacementResult>> batch =
      api.ReserveBatch({Gang("ns/a", 2, 8), Gang("ns/b", 2, 8), Gang("ns/c", 1, 8),
                        Gang("ns/d", 0, 8)});
  ASSERT_EQ(batch.size(), 4u);
  EXPECT_TRUE(batch[0]->placed);
  EXPECT_TRUE(batch[1]->placed);
  EXPECT_FALSE(batch[2]->placed);
  EXPECT_THAT(batch[3], StatusIs(absl::StatusCode::kInvalidArgument));

  ASSERT_OK_AND_ASSIGN(PlacementResult shrunk, api.Resize("ns/a", 1));
  EXPECT_EQ(shrunk.placement.nodes.size(), 1u);
  GangRequest urgent = Gang("ns/urgent", 3, 8);
  urgent.priority = 100;
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, api.PlanPreemption(urgent, {{"ns/b", 0, {}}}));
  EXPECT_TRUE(plan.feasible);
  ASSERT_EQ(plan.victims.size(), 1u);
  EXPECT_EQ(plan.victims[0].job, "ns/b");
  ASSERT_OK(api.Release("ns/b"));
  EXPECT_THAT(api.Release("ns/b"), StatusIs(absl::StatusCode::kNotFound));

  ASSERT_OK(service.Update([](ClusterSnapshot& s) { return s.RemoveNode("n0"); }));
  int live = 0;
  service.Read([&](const ClusterSnapshot& s) {
    for (const auto& node : s.nodes()) live += !node.removed;
  });
  EXPECT_EQ(live, 3);
}

}  // namespace
}  // namespace phalanx::placement
