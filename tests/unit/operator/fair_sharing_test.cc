// Fair sharing: the weighted dominant resource share orders admission across the queues of a
// cohort and picks which borrower is reclaimed first; and preemption never loops.
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using ::testing::ElementsAre;
using testing::AdmittedKeys;
using testing::FakePlacementService;
using testing::Gpu;
using testing::GpuQueue;
using testing::Job;
using testing::World;

struct OrderCase {
  std::string name;
  bool fair_sharing;
  double weight_a;
  std::string want_admitted;
};

class FairOrderTest : public ::testing::TestWithParam<OrderCase> {};

// Both queues borrow for their next job and only one fits. team-a already borrows 8 of the
// cohort's 32 lendable GPUs; team-b borrows nothing. Classic ordering goes by priority (team-a's
// job is higher); fair sharing admits from the queue whose share would stay lowest.
TEST_P(FairOrderTest, LowestShareGoesFirst) {
  const OrderCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = 1000}});
  World world(fake);
  world.snapshot.fair_sharing.enable = c.fair_sharing;
  ClusterQueue a = GpuQueue("team-a", "cohort", {{"h100", Gpu(8)}});
  a.fair_sharing_weight = c.weight_a;
  world.Flavor("h100")
      .Queue(a)
      .Queue(GpuQueue("team-b", "cohort", {{"h100", Gpu(8)}}))
      .Queue(GpuQueue("idle", "cohort", {{"h100", Gpu(16)}}));
  world.Admitted(Job("team-a/running", 2, 8), "team-a", "h100");
  world.Admitted(Job("team-b/running", 1, 8), "team-b", "h100");
  world.Add(Job("team-a/next", 1, 8, 100, 0)).Add(Job("team-b/next", 1, 8, 0, 1));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre(c.want_admitted));
}

INSTANTIATE_TEST_SUITE_P(
    Shares, FairOrderTest,
    ::testing::Values(
        OrderCase{"ClassicGoesByPriority", false, 1, "team-a/next"},
        // With the job: team-a borrows 16/32 = 0.5, team-b 8/32 = 0.25.
        OrderCase{"FairSharingGoesByShare", true, 1, "team-b/next"},
        // team-a's weight 3 brings its share to 0.5 / 3 < 0.25.
        OrderCase{"WeightBuysAShare", true, 3, "team-a/next"},
        // Weight 0: always last.
        OrderCase{"ZeroWeightIsLast", true, 0, "team-b/next"}),
    [](const auto& info) { return info.param.name; });

TEST(FairSharingTest, ReclaimsFromTheLargestShareFirst) {
  FakePlacementService fake({{.name = "b1", .gpus = 48}});
  World world(fake);
  world.snapshot.fair_sharing.enable = true;
  ClusterQueue a = GpuQueue("team-a", "cohort", {{"h100", Gpu(16)}});
  a.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
  world.Flavor("h100")
      .Queue(a)
      .Queue(GpuQueue("team-b", "cohort", {{"h100", Gpu(16)}}))
      .Queue(GpuQueue("team-c", "cohort", {{"h100", Gpu(16)}}));
  // team-b borrows 8 (share 8/48), team-c borrows 4 (share 4/48); 4 GPUs are left.
  int64_t t = 0;
  for (const auto& [key, gpus] : std::vector<std::pair<std::string, int64_t>>{
           {"team-c/c1", 8}, {"team-c/c2", 8}, {"team-c/c3", 4},
           {"team-b/b1", 8}, {"team-b/b2", 8}, {"team-b/b3", 8}}) {
    std::string cq = key.substr(0, key.find('/'));
    world.Running(fake, "b1", Job(key, 1, gpus), cq, "h100", ++t);
  }
  world.Add(Job("team-a/mine", 1, 8));
  CycleResult result = world.Cycle();
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].victim, "team-b/b3");
  EXPECT_EQ(result.preemptions[0].reason, PreemptionReason::kFairSharing);
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/mine"));
}

struct LoopCase {
  std::string name;
  bool fair_sharing;
  std::vector<int64_t> sizes;  // GPUs per job, cycled through
};

class NoPingPongTest : public ::testing::TestWithParam<LoopCase> {};

// Three queues share a cohort; team-a floods it first, then team-b and team-c arrive and
// reclaim. Preempted jobs go back to their queues and retry every cycle, exactly as the
// operator would. Whatever happens, no two jobs may ever preempt each other (A evicts B, later
// B evicts A), and after the cohort settles nobody is preempted any more.
TEST_P(NoPingPongTest, PreemptionSettles) {
  const LoopCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = 48}});
  World world(fake);
  world.snapshot.fair_sharing.enable = c.fair_sharing;
  world.Flavor("h100");
  for (std::string name : {"team-a", "team-b", "team-c"}) {
    ClusterQueue cq = GpuQueue(name, "cohort", {{"h100", Gpu(16)}});
    cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
    cq.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
    world.Queue(cq);
  }
  int64_t created = 0;
  auto flood = [&](const std::string& cq, int jobs) {
    for (int i = 0; i < jobs; ++i) {
      int64_t gpus = c.sizes[i % c.sizes.size()];
      world.Add(Job(cq + "/j" + std::to_string(i), 1, gpus, i % 2, ++created));
    }
  };
  flood("team-a", 16);
  std::set<std::pair<std::string, std::string>> preempted;  // (preemptor, victim)
  std::map<std::string, int> times_preempted;
  int last_preemption_cycle = -1;
  const int cycles = 60;
  constexpr int kLastArrival = 4;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    if (cycle == 2) flood("team-b", 10);
    if (cycle == kLastArrival) flood("team-c", 10);
    CycleResult result = world.Cycle();
    for (const PreemptionDecision& p : result.preemptions) {
      EXPECT_FALSE(preempted.contains({p.victim, p.preemptor}))
          << p.victim << " and " << p.preemptor << " preempted each other";
      preempted.insert({p.preemptor, p.victim});
      // A job evicted by one arrival may be readmitted into room the eviction left over and be
      // evicted by the next arrival; once nothing new arrives, nobody is evicted twice.
      if (cycle > kLastArrival) ++times_preempted[p.victim];
      last_preemption_cycle = cycle;
    }
    // Admitted jobs hold their reservations; release them in the fake when they are evicted,
    // as the cycle already did; nothing finishes, so pressure never lets up.
    world.Apply(result);
  }
  EXPECT_LT(last_preemption_cycle, cycles / 2) << "still preempting late in the run";
  for (const auto& [victim, times] : times_preempted) {
    EXPECT_LE(times, 1) << victim << " was preempted " << times << " times";
  }
  // Settled where the policy says: every queue holds at least its nominal 16 GPUs' worth of
  // demand's share when it has the demand (the reclaim guarantee).
  std::map<std::string, int64_t> usage;
  for (const Workload& w : world.snapshot.workloads) {
    if (w.admitted) usage[w.admitted->cluster_queue] += w.admitted->count * w.per_pod.at("nvidia.com/gpu");
  }
  for (const std::string name : {"team-a", "team-b", "team-c"}) {
    EXPECT_GE(usage[name], 16 - c.sizes[0] - c.sizes.back()) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, NoPingPongTest,
    ::testing::Values(LoopCase{"ClassicEqualJobs", false, {4}},
                      LoopCase{"ClassicMixedJobs", false, {2, 3, 8}},
                      LoopCase{"FairEqualJobs", true, {4}},
                      LoopCase{"FairMixedJobs", true, {2, 3, 8}}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace phalanx::admission
