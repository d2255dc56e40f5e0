// Preemption: Kueue's withinClusterQueue, reclaimWithinCohort and borrowWithinCohort policies
// choose the eligible victims (in Kueue's preference order); the placement core's plan picks
// among them so the preemptor then fits in one domain; quota decides what more must go; elastic
// victims shrink before anyone is evicted.
#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "tests/mocks/scheduler/mock_placement_service.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::AdmissionFor;
using testing::AdmittedKeys;
using testing::FakePlacementService;
using testing::Gpu;
using testing::GpuQueue;
using testing::Job;
using testing::PendingFor;
using testing::World;

std::vector<std::string> Victims(const CycleResult& result) {
  std::vector<std::string> victims;
  for (const PreemptionDecision& p : result.preemptions) victims.push_back(p.victim);
  return victims;
}

struct RunningSpec {
  std::string key;
  int32_t priority;
  int64_t created;
  int64_t admitted_at;
};

struct WithinCase {
  std::string name;
  WithinClusterQueuePolicy policy;
  std::vector<RunningSpec> running;  // each 1 pod x 8 GPUs, filling the queue's 16 GPUs
  int32_t preemptor_priority;
  int64_t preemptor_created;
  std::vector<std::string> want_victims;
};

class WithinClusterQueueTest : public ::testing::TestWithParam<WithinCase> {};

TEST_P(WithinClusterQueueTest, PicksEligibleVictimsMostRecentlyAdmittedFirst) {
  const WithinCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = 16}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(16)}});
  cq.preemption.within_cluster_queue = c.policy;
  world.Flavor("h100").Queue(cq);
  for (const RunningSpec& r : c.running) {
    world.Running(fake, "b1", Job(r.key, 1, 8, r.priority, r.created), "team-a", "h100",
                  r.admitted_at);
  }
  world.Add(Job("team-a/new", 1, 8, c.preemptor_priority, c.preemptor_created));
  CycleResult result = world.Cycle();
  EXPECT_EQ(Victims(result), c.want_victims);
  if (c.want_victims.empty()) {
    EXPECT_THAT(result.admissions, IsEmpty());
    const std::string& message = PendingFor(result, "team-a/new")->message;
    if (c.policy == WithinClusterQueuePolicy::kNever) {
      EXPECT_THAT(message, Not(HasSubstr("preemption")));
    } else {
      EXPECT_THAT(message, HasSubstr("preemption: no running workload is eligible"));
    }
  } else {
    ASSERT_THAT(AdmittedKeys(result), ElementsAre("team-a/new"));
    EXPECT_EQ(result.admissions[0].preempted, c.want_victims);
    EXPECT_EQ(result.preemptions[0].reason, PreemptionReason::kInClusterQueue);
    // The victim is told which rule took it: lower priority, or equal priority and newer.
    const auto victim = std::find_if(c.running.begin(), c.running.end(), [&](const auto& r) {
      return r.key == result.preemptions[0].victim;
    });
    ASSERT_NE(victim, c.running.end());
    const bool equal = victim->priority == c.preemptor_priority;
    EXPECT_THAT(result.preemptions[0].message,
                HasSubstr(equal ? "same priority as team-a/new and created after it, in "
                                  "ClusterTrainingQueue team-a (LowerOrNewerEqualPriority)"
                                : "lower priority than team-a/new in ClusterTrainingQueue team-a"))
        << result.preemptions[0].message;
    EXPECT_TRUE(fake.Holds("team-a/new"));
    for (const std::string& v : c.want_victims) EXPECT_FALSE(fake.Holds(v));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, WithinClusterQueueTest,
    ::testing::Values(
        WithinCase{"NeverPreempts", WithinClusterQueuePolicy::kNever,
                   {{"team-a/low1", 0, 0, 1}, {"team-a/low2", 0, 0, 2}}, 10, 5, {}},
        WithinCase{"LowerPriorityMostRecentFirst", WithinClusterQueuePolicy::kLowerPriority,
                   {{"team-a/low1", 0, 0, 1}, {"team-a/low2", 0, 0, 2}}, 10, 5, {"team-a/low2"}},
        WithinCase{"LowerPriorityLowestFirst", WithinClusterQueuePolicy::kLowerPriority,
                   {{"team-a/mid", 5, 0, 2}, {"team-a/low", 0, 0, 1}}, 10, 5, {"team-a/low"}},
        WithinCase{"LowerPriorityNeverEqual", WithinClusterQueuePolicy::kLowerPriority,
                   {{"team-a/eq1", 10, 9, 1}, {"team-a/eq2", 10, 9, 2}}, 10, 5, {}},
        WithinCase{"NewerEqualPriorityIsFair", WithinClusterQueuePolicy::kLowerOrNewerEqualPriority,
                   {{"team-a/older", 10, 1, 1}, {"team-a/newer", 10, 9, 2}}, 10, 5,
                   {"team-a/newer"}},
        WithinCase{"OlderEqualPriorityIsSafe", WithinClusterQueuePolicy::kLowerOrNewerEqualPriority,
                   {{"team-a/old1", 10, 1, 1}, {"team-a/old2", 10, 2, 2}}, 10, 5, {}},
        WithinCase{"HigherPriorityIsSafe", WithinClusterQueuePolicy::kLowerOrNewerEqualPriority,
                   {{"team-a/hi1", 20, 9, 1}, {"team-a/hi2", 20, 9, 2}}, 10, 5, {}}),
    [](const auto& info) { return info.param.name; });

struct ReclaimCase {
  std::string name;
  ReclaimWithinCohortPolicy policy;
  int64_t lender_nominal;   // team-b's nominal quota
  int32_t borrower_priority;
  std::vector<std::string> want_victims;
};

class ReclaimTest : public ::testing::TestWithParam<ReclaimCase> {};

// team-a lent its 8 GPUs to team-b; team-a's new job reclaims them.
TEST_P(ReclaimTest, ReclaimsOnlyFromBorrowersAsThePolicySays) {
  const ReclaimCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = 16}});
  World world(fake);
  ClusterQueue a = GpuQueue("team-a", "cohort", {{"h100", Gpu(8)}});
  a.preemption.reclaim_within_cohort = c.policy;
  world.Flavor("h100").Queue(a).Queue(GpuQueue("team-b", "cohort", {{"h100", Gpu(c.lender_nominal)}}));
  world.Running(fake, "b1", Job("team-b/b1", 1, 8, c.borrower_priority), "team-b", "h100", 1);
  world.Running(fake, "b1", Job("team-b/b2", 1, 8, c.borrower_priority), "team-b", "h100", 2);
  world.Add(Job("team-a/reclaimer", 1, 8, 5));
  CycleResult result = world.Cycle();
  EXPECT_EQ(Victims(result), c.want_victims);
  if (!c.want_victims.empty()) {
    EXPECT_EQ(result.preemptions[0].reason, PreemptionReason::kReclaimWithinCohort);
    EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/reclaimer"));
    EXPECT_FALSE(result.admissions[0].borrowing);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, ReclaimTest,
    ::testing::Values(
        ReclaimCase{"Never", ReclaimWithinCohortPolicy::kNever, 8, 0, {}},
        ReclaimCase{"LowerPriority", ReclaimWithinCohortPolicy::kLowerPriority, 8, 0, {"team-b/b2"}},
        ReclaimCase{"LowerPrioritySparesHigher", ReclaimWithinCohortPolicy::kLowerPriority, 8, 9,
                    {}},
        ReclaimCase{"AnyTakesHigherPriority", ReclaimWithinCohortPolicy::kAny, 8, 9, {"team-b/b2"}},
        // team-b within its own nominal quota is not borrowing: nothing to reclaim.
        ReclaimCase{"NonBorrowerIsSafe", ReclaimWithinCohortPolicy::kAny, 16, 0, {}}),
    [](const auto& info) { return info.param.name; });

struct BorrowCase {
  std::string name;
  BorrowWithinCohortPolicy policy;
  std::optional<int32_t> threshold;
  std::vector<std::string> want_victims;
};

class BorrowWithinCohortTest : public ::testing::TestWithParam<BorrowCase> {};

// team-a (nominal 4) needs 8, so it must borrow; team-b borrows 4 beyond its nominal 8 with
// b-low (priority 1, 8 GPUs) and b-mid (priority 3, 4 GPUs); team-c uses its own 8.
TEST_P(BorrowWithinCohortTest, BorrowingPreemptorRespectsThreshold) {
  const BorrowCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = 20}});
  World world(fake);
  ClusterQueue a = GpuQueue("team-a", "cohort", {{"h100", Gpu(4)}});
  a.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kLowerPriority;
  a.preemption.borrow_within_cohort = {c.policy, c.threshold};
  world.Flavor("h100")
      .Queue(a)
      .Queue(GpuQueue("team-b", "cohort", {{"h100", Gpu(8)}}))
      .Queue(GpuQueue("team-c", "cohort", {{"h100", Gpu(8)}}));
  world.Running(fake, "b1", Job("team-b/b-low", 1, 8, 1), "team-b", "h100", 1);
  world.Running(fake, "b1", Job("team-b/b-mid", 1, 4, 3), "team-b", "h100", 2);
  world.Running(fake, "b1", Job("team-c/c", 1, 8, 0), "team-c", "h100", 3);
  world.Add(Job("team-a/borrower", 1, 8, 5));
  CycleResult result = world.Cycle();
  EXPECT_EQ(Victims(result), c.want_victims);
  if (!c.want_victims.empty()) {
    EXPECT_EQ(result.preemptions[0].reason, PreemptionReason::kBorrowWithinCohort);
    ASSERT_THAT(AdmittedKeys(result), ElementsAre("team-a/borrower"));
    EXPECT_TRUE(result.admissions[0].borrowing);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Policies, BorrowWithinCohortTest,
    ::testing::Values(BorrowCase{"Never", BorrowWithinCohortPolicy::kNever, {}, {}},
                      BorrowCase{"LowerPriority", BorrowWithinCohortPolicy::kLowerPriority, {},
                                 {"team-b/b-low"}},
                      BorrowCase{"ThresholdAdmitsLowVictim",
                                 BorrowWithinCohortPolicy::kLowerPriority, 2, {"team-b/b-low"}},
                      BorrowCase{"ThresholdProtectsEveryone",
                                 BorrowWithinCohortPolicy::kLowerPriority, 0, {}}),
    [](const auto& info) { return info.param.name; });

TEST(PreemptionTest, ElasticVictimsShrinkBeforeAnyoneIsEvicted) {
  FakePlacementService fake({{.name = "b1", .gpus = 24}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(24)}});
  cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  world.Flavor("h100").Queue(cq);
  Workload elastic = Job("team-a/elastic", 0, 8, 0);
  elastic.elastic = placement::ElasticRange{1, 2, 1};
  world.Running(fake, "b1", elastic, "team-a", "h100", 1);
  // Admitted more recently than the elastic one.
  world.Running(fake, "b1", Job("team-a/rigid", 1, 8, 0), "team-a", "h100", 2);
  world.Add(Job("team-a/new", 1, 8, 5));
  CycleResult result = world.Cycle();
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].victim, "team-a/elastic");
  EXPECT_EQ(result.preemptions[0].new_count, 1);
  EXPECT_THAT(result.preemptions[0].message, HasSubstr("shrunk to 1 pod "));
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/new"));
  EXPECT_EQ(fake.HeldCount("team-a/elastic"), 1);
  EXPECT_TRUE(fake.Holds("team-a/rigid"));
  EXPECT_EQ(result.calls.resize, 1);
  EXPECT_FALSE(result.preemptions[0].borrowing);  // no cohort: nothing to borrow
}

// A shrunk victim's message says whether its queue still borrows, as an admission's does: team-a
// (nominal 8) runs an elastic gang of 3 x 8 GPUs on team-b's lent quota; team-b reclaims 8 of the
// 16, so the gang shrinks to its minimum, 2 pods, and team-a still borrows 8.
TEST(PreemptionTest, AShrunkVictimSaysWhetherItsQueueStillBorrows) {
  FakePlacementService fake({{.name = "b1", .gpus = 32}});
  World world(fake);
  ClusterQueue b = GpuQueue("team-b", "cohort", {{"h100", Gpu(24)}});
  b.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
  world.Flavor("h100").Queue(GpuQueue("team-a", "cohort", {{"h100", Gpu(8)}})).Queue(b);
  Workload elastic = Job("team-a/elastic", 0, 8, 0);
  elastic.elastic = placement::ElasticRange{2, 3, 1};
  world.Running(fake, "b1", elastic, "team-a", "h100", 1);
  world.Add(Job("team-b/reclaimer", 2, 8, 5));
  CycleResult result = world.Cycle();
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].victim, "team-a/elastic");
  EXPECT_EQ(result.preemptions[0].new_count, 2);
  EXPECT_EQ(result.preemptions[0].reason, PreemptionReason::kReclaimWithinCohort);
  EXPECT_TRUE(result.preemptions[0].borrowing);
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-b/reclaimer"));
}

// A preemptor still in its locality wait asks for its preferred level only; preemption must
// still be planned (at that level), not skipped. Found on a live cluster: an 8-node job of a
// higher priority could never shrink the elastic job filling its block.
TEST(PreemptionTest, PreemptorInItsLocalityWaitStillPreempts) {
  FakePlacementService fake({{.name = "b1", .gpus = 16}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(16)}});
  cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  cq.locality_wait_seconds = 300;
  world.Flavor("h100").Queue(cq);
  Workload elastic = Job("team-a/elastic", 0, 8, 0);
  elastic.elastic = placement::ElasticRange{1, 2, 1};
  world.Running(fake, "b1", elastic, "team-a", "h100", 2);
  Workload urgent = Job("team-a/urgent", 1, 8, 5, /*created=*/0);
  urgent.preferred_level = "topology.k8s.aws/network-node-layer-3";
  world.Add(urgent);
  CycleResult result = world.Cycle();
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].victim, "team-a/elastic");
  EXPECT_EQ(result.preemptions[0].new_count, 1);
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/urgent"));
  EXPECT_EQ(result.calls.plan_preemption, 1);
}

// Quota has room, but no block does: the placement plan decides which victim frees a block.
TEST(PreemptionTest, TopologyChoosesTheVictimThatFreesOneBlock) {
  FakePlacementService fake({{.name = "b1", .gpus = 16}, {.name = "b2", .gpus = 16}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(64)}});
  cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  world.Flavor("h100").Queue(cq);
  // Kueue's order alone would pick "in-b2-newest" first; only "in-b1" frees a whole block
  // with one eviction.
  world.Running(fake, "b1", Job("team-a/in-b1", 1, 8, 0), "team-a", "h100", 1);
  world.Running(fake, "b2", Job("team-a/in-b2", 1, 8, 0), "team-a", "h100", 2);
  world.Running(fake, "b2", Job("team-a/in-b2-newest", 1, 8, 0), "team-a", "h100", 3);
  world.Add(Job("team-a/gang", 2, 8, 5));
  CycleResult result = world.Cycle();
  EXPECT_EQ(Victims(result), std::vector<std::string>{"team-a/in-b1"});
  ASSERT_THAT(AdmittedKeys(result), ElementsAre("team-a/gang"));
  EXPECT_EQ(result.admissions[0].placement.domain.path.back(), "b1");
  EXPECT_EQ(result.calls.plan_preemption, 1);
}

TEST(PreemptionTest, InfeasiblePlanKeepsEveryoneAndExplains) {
  FakePlacementService fake({{.name = "b1", .gpus = 32}, {.name = "b2", .gpus = 32}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(64)}});
  cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  world.Flavor("h100").Queue(cq);
  world.Running(fake, "b1", Job("team-a/low", 1, 8, 0), "team-a", "h100", 1);
  world.Add(Job("team-a/huge", 8, 8, 5));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.preemptions, IsEmpty());
  const PendingDecision* pending = PendingFor(result, "team-a/huge");
  ASSERT_NE(pending, nullptr);
  // Quota is short too (56 of 64 left); the plan says why preempting would not help either.
  EXPECT_EQ(pending->reason, PendingReason::kQuota);
  EXPECT_THAT(pending->message, HasSubstr("even with every eligible victim gone, no block has 64 GPUs"));
  EXPECT_TRUE(fake.Holds("team-a/low"));
}

// Kueue's candidate order: other queues' borrowers first, then lowest priority, then most
// recently admitted. The planner gets them in that order, and a priority that lets it take any.
TEST(PreemptionTest, CandidatesReachThePlannerInKueueOrder) {
  placement::MockPlacementService mock;
  World world(mock);
  ClusterQueue a = GpuQueue("team-a", "cohort", {{"h100", Gpu(16)}});
  a.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  a.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kLowerPriority;
  world.Flavor("h100").Queue(a).Queue(GpuQueue("team-b", "cohort", {{"h100", Gpu(8)}}));
  world.Admitted(Job("team-a/a1", 1, 4, 0), "team-a", "h100", 5);
  world.Admitted(Job("team-b/b1", 1, 8, 2), "team-b", "h100", 1);
  world.Admitted(Job("team-b/b2", 1, 8, 1), "team-b", "h100", 2);
  world.Admitted(Job("team-b/b3", 1, 4, 1), "team-b", "h100", 3);
  world.Add(Job("team-a/p", 1, 8, 10));
  std::vector<placement::RunningGang> seen;
  int32_t seen_priority = 0;
  EXPECT_CALL(mock, ReserveBatch(_)).Times(0);
  EXPECT_CALL(mock, PlanPreemption(_, _))
      .WillOnce([&](const placement::GangRequest& request,
                    const std::vector<placement::RunningGang>& candidates) {
        seen = candidates;
        seen_priority = request.priority;
        placement::PreemptionPlan plan;
        plan.explanation.summary = "test says no";
        return plan;
      });
  CycleResult result = world.Cycle();
  std::vector<std::string> order;
  for (const placement::RunningGang& g : seen) order.push_back(g.job);
  EXPECT_THAT(order, ElementsAreArray({"team-b/b3", "team-b/b2", "team-b/b1", "team-a/a1"}));
  EXPECT_EQ(seen_priority, 10);
  EXPECT_THAT(PendingFor(result, "team-a/p")->message, HasSubstr("test says no"));
}

// No ping-pong (audit 32 ops, finding 6): a borrowing preemptor takes a lower-priority job of
// its own queue; that victim, queued again, would borrow too, so under Kueue's rules it cannot
// reclaim another queue's borrower in its turn: it waits, and nobody else is evicted.
TEST(PreemptionTest, AVictimOfABorrowingPreemptorDoesNotReclaimInItsTurn) {
  FakePlacementService fake({{.name = "b1", .gpus = 32}});
  World world(fake);
  ClusterQueue a = GpuQueue("team-a", "org", {{"h100", Gpu(16)}});
  a.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  a.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
  ClusterQueue d = GpuQueue("team-d", "org", {{"h100", Gpu(8)}});
  d.preemption.reclaim_within_cohort = ReclaimWithinCohortPolicy::kAny;
  world.Flavor("h100").Queue(a).Queue(d).Queue(GpuQueue("team-e", "org", {{"h100", Gpu(8)}}));
  world.Running(fake, "b1", Job("team-a/low", 1, 8, 0), "team-a", "h100", 1);
  world.Running(fake, "b1", Job("team-a/other", 1, 8, 0), "team-a", "h100", 2);
  world.Running(fake, "b1", Job("team-d/d1", 1, 8, 0), "team-d", "h100", 3);
  world.Running(fake, "b1", Job("team-d/borrower", 1, 8, 0), "team-d", "h100", 4);
  world.Add(Job("team-a/high", 1, 8, 100, 10));
  CycleResult first = world.Cycle();
  ASSERT_THAT(AdmittedKeys(first), ElementsAre("team-a/high"));
  // The room comes from its own queue (its most recently admitted job of the lowest priority):
  // reclaiming team-d's borrower would leave team-a borrowing, which no reclaim allows.
  EXPECT_THAT(Victims(first), ElementsAre("team-a/other"));
  world.Apply(first);
  CycleResult second = world.Cycle();
  EXPECT_THAT(AdmittedKeys(second), IsEmpty());
  EXPECT_THAT(Victims(second), IsEmpty());
  EXPECT_TRUE(fake.Holds("team-d/borrower"));
  ASSERT_NE(PendingFor(second, "team-a/other"), nullptr);
  EXPECT_EQ(PendingFor(second, "team-a/other")->reason, PendingReason::kQuota);
}

// A preemption plan the Placement service could not make (phalanx-scheduler restarting) is a
// PlacementError, not InsufficientQuota: quota is not why the job waits now (audit 32).
TEST(PreemptionTest, AFailedPlanIsAPlacementErrorNotAQuotaReason) {
  placement::MockPlacementService mock;
  World world(mock);
  ClusterQueue a = GpuQueue("team-a", "", {{"h100", Gpu(8)}});
  a.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  world.Flavor("h100").Queue(a);
  world.Admitted(Job("team-a/low", 1, 8, 0), "team-a", "h100", 1);
  world.Add(Job("team-a/high", 1, 8, 10));
  EXPECT_CALL(mock, ReserveBatch(_)).Times(0);
  EXPECT_CALL(mock, PlanPreemption(_, _))
      .WillOnce([](const placement::GangRequest&, const std::vector<placement::RunningGang>&) {
        return absl::StatusOr<placement::PreemptionPlan>(
            absl::UnavailableError("failed to connect to all addresses"));
      });
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.preemptions, IsEmpty());
  const PendingDecision* pending = PendingFor(result, "team-a/high");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kPlacementError);
  EXPECT_THAT(pending->message,
              HasSubstr("it needs preemption (its queue's quota is in use), and planning it "
                        "failed: placement service: UNAVAILABLE: failed to connect to all "
                        "addresses"));
}

}  // namespace
}  // namespace phalanx::admission
