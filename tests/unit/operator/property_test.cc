// Seeded random scenarios (reproducible: the failing seed is printed) run for a few cycles each,
// with decisions applied back, jobs finishing and new ones arriving between cycles. After every
// cycle these must hold:
//   1. No ClusterQueue uses more than nominal + borrowingLimit of any flavor-resource, and one
//      without a cohort no more than its nominal quota.
//   2. Lending limits hold: in every cohort, what members use beyond their guaranteed
//      (never-lent) quota is at most the sum of what they lend.
//   3. No workload is admitted twice (within a cycle, or again while admitted).
//   4. No victim has equal or higher priority than its preemptor unless the policy says so
//      (LowerOrNewerEqualPriority for a newer equal, reclaimWithinCohort Any).
//   5. StrictFIFO: no workload of a StrictFIFO queue is admitted while one ahead of it in queue
//      order stays pending.
//   6. Every admission has a placement of exactly its count, held by the placement service, and
//      elastic counts lie in [min, max].
//   7. Every pending workload carries a reason.
//   8. Elastic growth: only running elastic workloads not preempted this cycle grow, onto their
//      grid (min + k*step, group size) up to max, held at the new count, and never while a
//      workload of their ClusterQueue or cohort is left pending. (1 and 2 cover its quota.)
//   9. Backfill for quota: a workload held back names a holder pending ahead of it in its own
//      queue, which asks for the hold and has no cohort; at the holder's expected start the
//      queue's admitted workloads not expected to end by then leave it room.
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/random_scenario.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using testing::Checker;
using testing::FakePlacementService;
using testing::Scenario;
using testing::World;

constexpr int kScenarios = 5000;
constexpr int kCyclesPerScenario = 3;

TEST(AdmissionPropertyTest, InvariantsHoldOverRandomScenarios) {
  int admitted = 0, preempted = 0, pending = 0, grown = 0, held = 0, holders = 0;
  for (int s = 0; s < kScenarios; ++s) {
    const uint64_t seed = 1000 + s;
    Scenario gen(seed);
    int flavors = gen.Pick(1, 2);
    FakePlacementService fake(gen.Domains(flavors));
    World world(fake);
    for (int f = 0; f < flavors; ++f) world.Flavor("f" + std::to_string(f), {{"pool", "f" + std::to_string(f)}});
    int queues = gen.Pick(2, 4);
    for (int q = 0; q < queues; ++q) world.Queue(gen.Queue(q, flavors));
    world.snapshot.fair_sharing.enable = gen.Coin(0.3);
    int serial = 0;
    for (int cycle = 0; cycle < kCyclesPerScenario; ++cycle) {
      if (cycle == kCyclesPerScenario - 1 && gen.Coin()) {
        // Pending work is withdrawn: the cluster drains and elastic workloads may grow.
        std::erase_if(world.snapshot.workloads, [](const Workload& w) { return !w.admitted; });
      } else {
        for (int n = gen.Pick(2, 8); n > 0; --n) world.Add(gen.NewJob(queues, ++serial, cycle));
      }
      Snapshot before = world.snapshot;
      CycleResult result = world.Cycle();
      world.Apply(result);
      std::string failure;
      Checker checker{before, result, [&](std::string_view job) { return fake.HeldCount(job); },
                      &failure};
      checker.Run(world.snapshot);
      ASSERT_TRUE(failure.empty()) << "seed " << seed << " cycle " << cycle << ": " << failure;
      held += checker.held_back_seen;
      holders += checker.holders_seen;
      admitted += static_cast<int>(result.admissions.size());
      preempted += static_cast<int>(result.preemptions.size());
      pending += static_cast<int>(result.pending.size());
      grown += static_cast<int>(result.growths.size());
      // Some running jobs finish and leave.
      std::erase_if(world.snapshot.workloads, [&](const Workload& w) {
        if (!w.admitted || !gen.Coin(0.3)) return false;
        EXPECT_TRUE(fake.Release(w.key).ok()) << w.key;
        return true;
      });
    }
  }
  // The scenarios exercise every outcome, not just one.
  EXPECT_GT(admitted, kScenarios);
  EXPECT_GT(preempted, kScenarios / 50);
  EXPECT_GT(pending, kScenarios);
  EXPECT_GT(grown, kScenarios / 100);
  EXPECT_GT(held, kScenarios / 100);
  EXPECT_GT(holders, kScenarios / 100);
  std::printf(
      "admitted %d, preempted %d, pending %d, grown %d, quota holds %d, held back for "
      "one %d\n",
      admitted, preempted, pending, grown, holders, held);
}

}  // namespace
}  // namespace phalanx::admission
