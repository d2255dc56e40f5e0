// Backfill for quota (ClusterQueue::backfill_quota, docs/admission.md "Backfill for quota"): a
// queue without a cohort holds its quota for the first workload quota refuses, from the time its
// running workloads are expected to free enough of it. The cluster has room to spare (16 nodes),
// so the queue's quota (10 nodes of 8 GPUs) is all that binds.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "scheduler/in_process_placement_service.h"
#include "tests/unit/operator/empty_cluster.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using testing::AdmissionFor;
using testing::AdmittedKeys;
using ::testing::ElementsAre;
using testing::EmptyCluster;
using testing::Gpu;
using testing::GpuQueue;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Job;
using testing::PendingFor;
using testing::World;

// `nodes` p5 nodes, expected to run `runtime` seconds (nullopt: unknown).
Workload TimedJob(std::string key, int32_t nodes, std::optional<int64_t> runtime, int64_t created,
                  int32_t priority = 0) {
  Workload w = Job(std::move(key), nodes, 8, priority, created);
  w.expected_runtime_seconds = runtime;
  return w;
}

// team-a (10 nodes of quota, no cohort) runs `a` (3 nodes until 5000) and `b` (3 nodes until
// 1000): 4 nodes of quota are free at now = 1. `head` needs 6, which it has once b ends, so its
// start is expected in 999 s with 3 nodes of the queue's quota in use then (a's).
struct HoldWorld {
  std::unique_ptr<placement::InProcessPlacementService> service = EmptyCluster(16);
  World world{*service};

  explicit HoldWorld(BackfillQuota mode, std::string cohort = "") {
    ClusterQueue cq = GpuQueue("team-a", cohort, {{"p5", Gpu(80)}});
    cq.backfill_quota = mode;
    world.Flavor("p5").Queue(cq);
    world.Start({TimedJob("team-a/a", 3, 5000, 0), TimedJob("team-a/b", 3, 1000, 0)});
  }
};

TEST(BackfillQuotaTest, WorkloadsBehindTheHeadTakeQuotaOnlyIfTheyEndByItsStartOrLeaveEnough) {
  HoldWorld w(BackfillQuota::kHoldForHead);
  w.world.Add(TimedJob("team-a/head", 6, 3600, 10))
      .Add(TimedJob("team-a/short", 2, 500, 11))    // ends before 1000
      .Add(TimedJob("team-a/long1", 1, 10000, 12))  // 3 + 1 + 6 = 10 at the start: fits
      .Add(TimedJob("team-a/long2", 1, 10000, 13))  // 3 + 1 + 1 + 6 = 11: would delay it
      .Add(TimedJob("team-a/unknown", 1, std::nullopt, 14));
  CycleResult result = w.world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/short", "team-a/long1"));
  EXPECT_THAT(result.preemptions, IsEmpty());
  const PendingDecision* head = PendingFor(result, "team-a/head");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->reason, PendingReason::kQuota);
  EXPECT_THAT(head->message,
              HasSubstr("backfill: ClusterTrainingQueue team-a's quota held for its expected "
                        "start in 999s"));
  const PendingDecision* long2 = PendingFor(result, "team-a/long2");
  ASSERT_NE(long2, nullptr);
  EXPECT_EQ(long2->reason, PendingReason::kQuota);
  EXPECT_EQ(long2->message,
            "backfill: ClusterTrainingQueue team-a holds its quota for team-a/head, expected to "
            "start in 999s, and this job would run past that start");
  const PendingDecision* unknown = PendingFor(result, "team-a/unknown");
  ASSERT_NE(unknown, nullptr);
  EXPECT_THAT(unknown->message,
              HasSubstr("and this job has no expected run time to show it ends by then"));

  // b ends on time: the head is admitted in the quota held for it, and the rest wait their turn.
  w.world.Apply(result);
  std::erase_if(w.world.snapshot.workloads,
                [](const Workload& j) { return j.key == "team-a/b" || j.key == "team-a/short"; });
  w.world.snapshot.now = 1000;
  CycleResult later = w.world.Cycle();
  EXPECT_THAT(AdmittedKeys(later), ElementsAre("team-a/head"));
}

// Without the hold, in a cohort (where quota also frees as other queues' workloads end), or with
// backfill off, the queue admits in queue order whatever fits: long2 and unknown take the quota
// the head would need at 1000 (and it waits until a's end at 5000 or later).
TEST(BackfillQuotaTest, NoHoldWithoutTheSettingInACohortOrWithBackfillOff) {
  struct Case {
    BackfillQuota mode;
    std::string cohort;
    bool backfill;
  };
  for (const Case& c :
       {Case{BackfillQuota::kNever, "", true}, Case{BackfillQuota::kHoldForHead, "research", true},
        Case{BackfillQuota::kHoldForHead, "", false}}) {
    HoldWorld w(c.mode, c.cohort);
    w.world.Add(TimedJob("team-a/head", 6, 3600, 10))
        .Add(TimedJob("team-a/long1", 2, 10000, 12))
        .Add(TimedJob("team-a/long2", 2, 10000, 13));
    CycleOptions options;
    options.backfill = c.backfill;
    CycleResult result = w.world.Cycle(options);
    EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/long1", "team-a/long2")) << c.cohort;
    const PendingDecision* head = PendingFor(result, "team-a/head");
    ASSERT_NE(head, nullptr);
    EXPECT_THAT(head->message, ::testing::Not(HasSubstr("backfill"))) << c.cohort;
  }
}

// An elastic workload behind the head that would delay it at its largest size is admitted at
// its smallest if that leaves enough: a's 3 + 1 + the head's 6 = the 10 nodes at its start.
TEST(BackfillQuotaTest, AnElasticWorkloadBehindTheHeadDropsToItsMinimum) {
  HoldWorld w(BackfillQuota::kHoldForHead);
  Workload elastic = TimedJob("team-a/elastic", 4, 10000, 11);
  elastic.elastic = placement::ElasticRange{.min = 1, .max = 4, .step = 1};
  w.world.Add(TimedJob("team-a/head", 6, 3600, 10)).Add(elastic);
  CycleResult result = w.world.Cycle();
  const AdmissionDecision* admitted = AdmissionFor(result, "team-a/elastic");
  ASSERT_NE(admitted, nullptr);
  EXPECT_EQ(admitted->count, 1);
  // Growth waits while the head does.
  EXPECT_THAT(result.growths, IsEmpty());
}

// A workload held back for the hold fits the quota now, so preemption would admit it with no
// victim at all: it must not try. team-a preempts lower priorities; `low` (1 node, priority -10)
// could go, but evicting it does not give the head its 7 nodes, so the head stays blocked.
TEST(BackfillQuotaTest, AWorkloadHeldBackForTheHeadDoesNotPreempt) {
  auto service = EmptyCluster(16);
  World world(*service);
  ClusterQueue cq = GpuQueue("team-a", "", {{"p5", Gpu(64)}});
  cq.backfill_quota = BackfillQuota::kHoldForHead;
  cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  world.Flavor("p5").Queue(cq);
  world.Start({TimedJob("team-a/a", 4, 1000, 0), TimedJob("team-a/low", 1, 50000, 0, -10)});
  // 3 nodes free; the head needs 7 (4 + 3 once a ends at 1000); long takes 3 until 10001.
  world.Add(TimedJob("team-a/head", 7, 3600, 10)).Add(TimedJob("team-a/long", 3, 10000, 11));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), IsEmpty());
  EXPECT_THAT(result.preemptions, IsEmpty());
  const PendingDecision* held = PendingFor(result, "team-a/long");
  ASSERT_NE(held, nullptr);
  EXPECT_THAT(held->message, HasSubstr("holds its quota for team-a/head"));
}

// No running workload's end frees enough (the head needs more than the queue's workloads with
// an estimate hold): no hold is made, and the queue admits as without the setting.
TEST(BackfillQuotaTest, NoHoldWhenNoExpectedEndFreesEnough) {
  auto service = EmptyCluster(16);
  World world(*service);
  ClusterQueue cq = GpuQueue("team-a", "", {{"p5", Gpu(80)}});
  cq.backfill_quota = BackfillQuota::kHoldForHead;
  world.Flavor("p5").Queue(cq);
  world.Start({TimedJob("team-a/a", 3, 1000, 0), TimedJob("team-a/forever", 4, std::nullopt, 0)});
  // 3 free; 6 once a ends, never 8 while `forever` runs.
  world.Add(TimedJob("team-a/head", 8, 3600, 10)).Add(TimedJob("team-a/long", 3, 10000, 11));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/long"));
  const PendingDecision* head = PendingFor(result, "team-a/head");
  ASSERT_NE(head, nullptr);
  EXPECT_THAT(head->message, ::testing::Not(HasSubstr("backfill")));
}

}  // namespace
}  // namespace phalanx::admission
