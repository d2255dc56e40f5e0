// Elastic growth in the admission cycle: a running elastic workload grows toward its
// maxReplicas by the largest size on its grid that quota allows and the placement service can
// place next to its ranks, and only when nothing that could use the capacity is waiting.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::AdmittedKeys;
using testing::FakePlacementService;
using testing::Gpu;
using testing::GpuQueue;
using testing::Job;
using testing::World;

// An elastic job of 8-GPU pods running `count` pods in domain "b1", admitted to `cq` in "h100".
void RunElastic(World& world, FakePlacementService& fake, const std::string& key,
                placement::ElasticRange range, int32_t count, const std::string& cq,
                int32_t group_size = 0) {
  Workload w = Job(key, 0, 8);
  w.elastic = range;
  w.group_size = group_size;
  fake.Hold(key, "b1", count, 8);
  world.Admitted(w, cq, "h100");
  world.Find(key)->admitted->count = count;
}

struct GrowthCase {
  std::string name;
  int64_t domain_gpus;
  int64_t nominal;
  placement::ElasticRange range;
  int32_t running;
  int32_t group_size;
  int sizes_per_workload;
  std::optional<int32_t> grown_to;  // nullopt: no growth
  int resizes;                      // Resize calls spent
};

class GrowthTableTest : public ::testing::TestWithParam<GrowthCase> {};

TEST_P(GrowthTableTest, GrowsToTheLargestSizeQuotaAndPlacementAllow) {
  const GrowthCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = c.domain_gpus}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(c.nominal)}}));
  RunElastic(world, fake, "team-a/elastic", c.range, c.running, "team-a", c.group_size);
  CycleOptions options;
  options.growth_sizes_per_workload = c.sizes_per_workload;
  CycleResult result = world.Cycle(options);
  EXPECT_EQ(result.calls.resize, c.resizes);
  if (!c.grown_to) {
    EXPECT_THAT(result.growths, IsEmpty());
    EXPECT_EQ(fake.HeldCount("team-a/elastic"), c.running);
    return;
  }
  ASSERT_EQ(result.growths.size(), 1u);
  const GrowthDecision& g = result.growths[0];
  EXPECT_EQ(g.workload, "team-a/elastic");
  EXPECT_EQ(g.cluster_queue, "team-a");
  EXPECT_EQ(g.old_count, c.running);
  EXPECT_EQ(g.new_count, *c.grown_to);
  EXPECT_EQ(g.placement.nodes.size(), static_cast<size_t>(*c.grown_to));
  EXPECT_FALSE(g.borrowing);
  EXPECT_EQ(fake.HeldCount("team-a/elastic"), *c.grown_to);
  world.Apply(result);
  EXPECT_EQ(world.Find("team-a/elastic")->admitted->count, *c.grown_to);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GrowthTableTest,
    ::testing::Values(
        // Quota (48 GPUs = 6 pods) caps growth below the maximum; sizes above it cost no call.
        GrowthCase{"QuotaCaps", 128, 48, {2, 8, 2}, 2, 0, 3, 6, 1},
        // Placement (40 GPUs = 5 pods) refuses 8 and 6; 4 fits.
        GrowthCase{"PlacementCaps", 40, 64, {2, 8, 2}, 2, 0, 3, 4, 3},
        // Sizes tried per workload are bounded: after 8 and 6 fail it stops.
        GrowthCase{"PlacementTriesAreBounded", 40, 64, {2, 8, 2}, 2, 0, 2, std::nullopt, 2},
        // Grid min + k * step, divisible by the group size: quota allows 10 pods, 10 is not a
        // multiple of the group size 4, so 8.
        GrowthCase{"StepAndGroupSize", 128, 80, {2, 12, 2}, 4, 4, 3, 8, 1},
        // Already at the size quota allows: nothing to ask.
        GrowthCase{"NoQuotaLeft", 128, 16, {2, 8, 2}, 2, 0, 3, std::nullopt, 0},
        // Already at its maximum.
        GrowthCase{"AtMaximum", 128, 128, {2, 8, 2}, 8, 0, 3, std::nullopt, 0}),
    [](const ::testing::TestParamInfo<GrowthCase>& info) { return info.param.name; });

struct WaitingCase {
  std::string name;
  std::string pending_queue;  // a queue whose pending job cannot be admitted this cycle
  bool grows;
  std::string held;  // what the elastic job is told when it does not grow
};

class GrowthWaitsTest : public ::testing::TestWithParam<WaitingCase> {};

// team-a (cohort c1, flavor h100) runs the elastic job. Pending jobs elsewhere block growth
// only when they compete for the same quota (queue or cohort) or the same nodes (flavor).
TEST_P(GrowthWaitsTest, NoGrowthWhileSomethingThatCouldUseItWaits) {
  const WaitingCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .labels = {{"pool", "h100"}}, .gpus = 128},
                             {.name = "b2", .labels = {{"pool", "a100"}}, .gpus = 8}});
  World world(fake);
  world.Flavor("h100", {{"pool", "h100"}}).Flavor("a100", {{"pool", "a100"}});
  world.Queue(GpuQueue("team-a", "c1", {{"h100", Gpu(64)}}))
      .Queue(GpuQueue("team-b", "c1", {{"h100", Gpu(0)}}))
      .Queue(GpuQueue("team-c", "", {{"h100", Gpu(0)}}))
      .Queue(GpuQueue("team-d", "", {{"a100", Gpu(0)}}));
  RunElastic(world, fake, "team-a/elastic", {2, 8, 2}, 2, "team-a");
  if (!c.pending_queue.empty()) {
    // More than any queue or domain holds: pending after the cycle whatever happens.
    world.Add(Job(c.pending_queue + "/huge", 64, 8));
  }
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), IsEmpty());
  EXPECT_EQ(result.growths.size(), c.grows ? 1u : 0u);
  EXPECT_EQ(fake.HeldCount("team-a/elastic"), c.grows ? 8 : 2);
  if (c.grows) {
    EXPECT_THAT(result.growth_holds, IsEmpty());
    return;
  }
  // Quota would let it grow, so it is told who it waits for.
  ASSERT_EQ(result.growth_holds.size(), 1u);
  EXPECT_EQ(result.growth_holds[0].workload, "team-a/elastic");
  EXPECT_EQ(result.growth_holds[0].count, 2);
  EXPECT_EQ(result.growth_holds[0].message,
            absl::StrCat("not grown beyond 2 pods while ", c.pending_queue, "/huge", c.held,
                         " (growth takes only capacity nobody waits for)"));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GrowthWaitsTest,
    ::testing::Values(
        WaitingCase{"NothingPending", "", true, ""},
        WaitingCase{"PendingInItsQueue", "team-a", false,
                    " waits in the same ClusterTrainingQueue team-a"},
        WaitingCase{"PendingInItsCohort", "team-b", false,
                    " (ClusterTrainingQueue team-b) waits in cohort c1"},
        // Even one its own queue's quota keeps out (team-c has none): capacity taken now could
        // be what it needs once its quota frees.
        WaitingCase{"PendingOnItsFlavor", "team-c", false,
                    " (ClusterTrainingQueue team-c) waits and could run on NodeFlavor h100"},
        WaitingCase{"PendingElsewhere", "team-d", true, ""}),
    [](const ::testing::TestParamInfo<WaitingCase>& info) { return info.param.name; });

// Growth never takes capacity from an admission of the same cycle: the pending job is admitted
// first, and the elastic one grows into what is left.
TEST(GrowthTest, AdmissionsComeFirst) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  RunElastic(world, fake, "team-a/elastic", {2, 8, 2}, 2, "team-a");
  world.Add(Job("team-a/new", 4, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/new"));
  ASSERT_EQ(result.growths.size(), 1u);
  EXPECT_EQ(result.growths[0].new_count, 4);
}

// A workload its caller holds back (a namespace ResourceQuota without room) cannot use capacity
// whatever is free, so it does not hold back the growth of another in its queue.
TEST(GrowthTest, AHeldWorkloadHoldsNoGrowthBack) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  RunElastic(world, fake, "team-a/elastic", {2, 8, 2}, 2, "team-a");
  Workload held = Job("team-a/held", 2, 8);
  held.held = "ResourceQuota team-a/gpus has room for 0 more nvidia.com/gpu ...";
  world.Add(held);
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), IsEmpty());
  ASSERT_EQ(result.growths.size(), 1u);
  EXPECT_EQ(result.growths[0].new_count, 8);
  EXPECT_THAT(result.growth_holds, IsEmpty());
}

// Held back, but quota would not let it grow anyway: quota is what holds it, and it is not told
// about the waiting job.
TEST(GrowthTest, NoHoldToldWhenQuotaCapsItAnyway) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(16)}}));
  RunElastic(world, fake, "team-a/elastic", {2, 8, 2}, 2, "team-a");
  world.Add(Job("team-a/huge", 64, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.growths, IsEmpty());
  EXPECT_THAT(result.growth_holds, IsEmpty());
}

// A victim evicted this cycle queues again next cycle: nothing in its queue grows into its room.
TEST(GrowthTest, NoGrowthIntoRoomAnEvictedVictimWillWaitFor) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(64)}});
  cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  world.Flavor("h100").Queue(cq);
  RunElastic(world, fake, "team-a/elastic", {2, 8, 2}, 2, "team-a");
  // Admitted after the elastic one, so it is the preferred victim.
  world.Running(fake, "b1", Job("team-a/low", 6, 8, 0), "team-a", "h100", 1);
  world.Add(Job("team-a/high", 2, 8, 5));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/high"));
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].victim, "team-a/low");
  EXPECT_THAT(result.growths, IsEmpty());
  ASSERT_EQ(result.growth_holds.size(), 1u);
  EXPECT_EQ(result.growth_holds[0].message,
            "not grown beyond 2 pods while team-a/low was evicted and queues again in the same "
            "ClusterTrainingQueue team-a (growth takes only capacity nobody waits for)");
}

// Growth may borrow within the cohort's limits; that borrowed usage is charged like any other,
// so the lender reclaims it by shrinking the grown workload back.
TEST(GrowthTest, BorrowedGrowthIsReclaimedByPreemption) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  ClusterQueue lender = GpuQueue("team-b", "c1", {{"h100", Gpu(48)}});
  lender.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kLowerPriority;
  world.Flavor("h100").Queue(GpuQueue("team-a", "c1", {{"h100", Gpu(16)}})).Queue(lender);
  RunElastic(world, fake, "team-a/elastic", {2, 8, 2}, 2, "team-a");

  CycleResult grown = world.Cycle();
  ASSERT_EQ(grown.growths.size(), 1u);
  EXPECT_EQ(grown.growths[0].new_count, 8);
  EXPECT_TRUE(grown.growths[0].borrowing);
  world.Apply(grown);

  world.Add(Job("team-b/owner", 4, 8, 1));
  CycleResult reclaimed = world.Cycle();
  EXPECT_THAT(AdmittedKeys(reclaimed), ElementsAre("team-b/owner"));
  ASSERT_EQ(reclaimed.preemptions.size(), 1u);
  EXPECT_EQ(reclaimed.preemptions[0].victim, "team-a/elastic");
  EXPECT_EQ(reclaimed.preemptions[0].reason, PreemptionReason::kReclaimWithinCohort);
  EXPECT_EQ(reclaimed.preemptions[0].new_count, 2);
  EXPECT_EQ(fake.HeldCount("team-a/elastic"), 2);
  // Shrunk this cycle: it does not grow back in the same cycle.
  EXPECT_THAT(reclaimed.growths, IsEmpty());
}

TEST(GrowthTest, OffWhenItHasNoBudget) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  RunElastic(world, fake, "team-a/elastic", {2, 8, 2}, 2, "team-a");
  CycleOptions options;
  options.max_growth_resizes = 0;
  CycleResult result = world.Cycle(options);
  EXPECT_THAT(result.growths, IsEmpty());
  EXPECT_EQ(result.calls.resize, 0);
}

}  // namespace
}  // namespace phalanx::admission
