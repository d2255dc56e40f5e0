// The admission cycle against a GPU-counting placement double: quota and placement must both
// agree before anything is admitted, many workloads go per cycle, queueing strategies and
// flavors behave as in Kueue, and every pending workload says why.
#include "operator/admission/admission_cycle.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/mocks/scheduler/mock_placement_service.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using ::testing::_;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using testing::AdmissionFor;
using testing::AdmittedKeys;
using testing::FakePlacementService;
using testing::Gpu;
using testing::GpuQueue;
using testing::Job;
using testing::PendingFor;
using testing::World;

TEST(AdmissionCycleTest, AdmitsManyWorkloadsPerCycleAcrossAndWithinQueues) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}, {.name = "b2", .gpus = 64}});
  World world(fake);
  world.Flavor("h100")
      .Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}))
      .Queue(GpuQueue("team-b", "", {{"h100", Gpu(64)}}));
  for (int i = 0; i < 4; ++i) {
    world.Add(Job("team-a/a" + std::to_string(i), 2, 8, 0, i));
    world.Add(Job("team-b/b" + std::to_string(i), 2, 8, 0, i));
  }
  CycleResult result = world.Cycle();
  EXPECT_EQ(result.admissions.size(), 8u);
  EXPECT_THAT(result.pending, IsEmpty());
  // One round trip for the whole cycle.
  EXPECT_EQ(result.calls.reserve_batch, 1);
  EXPECT_EQ(result.calls.Total(), 1);
  EXPECT_EQ(fake.calls().reserve_batch, 1);
  for (const AdmissionDecision& a : result.admissions) {
    EXPECT_EQ(a.count, 2);
    EXPECT_EQ(a.placement.nodes.size(), 2u);
    EXPECT_TRUE(fake.Holds(a.workload));
  }
}

TEST(AdmissionCycleTest, FitsQuotaButNotTopologyStaysPendingWithBothExplanations) {
  FakePlacementService fake({{.name = "b1", .gpus = 32}, {.name = "b2", .gpus = 32}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  world.Add(Job("team-a/big", 8, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.admissions, IsEmpty());
  const PendingDecision* pending = PendingFor(result, "team-a/big");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kTopology);
  EXPECT_THAT(pending->message, HasSubstr("needs 64 GPUs in one block; the best block b1 has 32 free"));
  // No wait can help: the message says so first (audit 2026-11-30: "the best fits 6" alone had
  // users wait for capacity that would never come).
  EXPECT_THAT(pending->message,
              HasSubstr("placement: can never be placed in flavor h100: at most 4 of its 8 pods "
                        "fit in the cluster even with every node empty; now: needs 64 GPUs"));
  EXPECT_THAT(pending->message,
              HasSubstr(
                  "ClusterTrainingQueue team-a has 64 nvidia.com/gpu in flavor h100 available"));
  EXPECT_FALSE(fake.Holds("team-a/big"));
}

// Two gangs refused by placement in one batch: each is told the quota the queue really has,
// not what is left after the other's tentative charge (audit 2026-11-30: "48 available" of a
// 64-GPU queue that used nothing).
TEST(AdmissionCycleTest, GangsRefusedTogetherAreToldTheQuotaNoneOfThemHolds) {
  FakePlacementService fake({{.name = "b1", .gpus = 8}, {.name = "b2", .gpus = 8}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  world.Add(Job("team-a/first", 2, 8, 0, 0));
  world.Add(Job("team-a/second", 2, 8, 0, 1));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.admissions, IsEmpty());
  for (const char* key : {"team-a/first", "team-a/second"}) {
    const PendingDecision* pending = PendingFor(result, key);
    ASSERT_NE(pending, nullptr) << key;
    EXPECT_EQ(pending->reason, PendingReason::kTopology) << key;
    EXPECT_THAT(pending->message, HasSubstr("ClusterTrainingQueue team-a has 64 nvidia.com/gpu "
                                            "in flavor h100 available"))
        << key;
  }
}

TEST(AdmissionCycleTest, QuotaShortfallSaysHowMuchIsLeft) {
  FakePlacementService fake({{.name = "b1", .gpus = 128}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  world.Admitted(Job("team-a/running", 6, 8), "team-a", "h100");
  world.Add(Job("team-a/big", 8, 8));
  CycleResult result = world.Cycle();
  const PendingDecision* pending = PendingFor(result, "team-a/big");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kQuota);
  EXPECT_THAT(pending->message,
              HasSubstr("ClusterTrainingQueue team-a lacks quota for 8 pods: flavor h100: needs 64 "
                        "nvidia.com/gpu, 16 available (nominal 64, 48 in use)"));
  // No placement was asked for: quota already said no.
  EXPECT_EQ(fake.calls().reserve_batch, 0);
}

struct FifoCase {
  std::string name;
  QueueingStrategy strategy;
  int64_t fake_gpus;     // one block
  int64_t nominal;
  std::vector<std::string> want_admitted;
  PendingReason want_follower_reason;
};

class FifoTest : public ::testing::TestWithParam<FifoCase> {};

// A head that cannot be admitted (by quota, or by topology) followed by a small job.
TEST_P(FifoTest, HeadBlocksOnlyUnderStrictFifo) {
  const FifoCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = c.fake_gpus}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(c.nominal)}});
  cq.queueing_strategy = c.strategy;
  world.Flavor("h100").Queue(cq);
  world.Add(Job("team-a/head", 8, 8, 0, 1)).Add(Job("team-a/follower", 1, 8, 0, 2));
  CycleResult result = world.Cycle();
  EXPECT_EQ(AdmittedKeys(result), c.want_admitted);
  if (c.want_admitted.empty()) {
    const PendingDecision* follower = PendingFor(result, "team-a/follower");
    ASSERT_NE(follower, nullptr);
    EXPECT_EQ(follower->reason, c.want_follower_reason);
    EXPECT_THAT(follower->message, HasSubstr("queued behind team-a/head in StrictFIFO"));
    // A follower reserved behind a head whose placement failed is given back.
    EXPECT_FALSE(fake.Holds("team-a/follower"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, FifoTest,
    ::testing::Values(
        FifoCase{"StrictQuotaBlocked", QueueingStrategy::kStrictFifo, 128, 32, {},
                 PendingReason::kStrictFifoBlocked},
        FifoCase{"StrictTopologyBlocked", QueueingStrategy::kStrictFifo, 32, 128, {},
                 PendingReason::kStrictFifoBlocked},
        FifoCase{"BestEffortQuotaBlocked", QueueingStrategy::kBestEffortFifo, 128, 32,
                 {"team-a/follower"}, PendingReason::kQuota},
        FifoCase{"BestEffortTopologyBlocked", QueueingStrategy::kBestEffortFifo, 32, 128,
                 {"team-a/follower"}, PendingReason::kQuota}),
    [](const auto& info) { return info.param.name; });

TEST(AdmissionCycleTest, OrdersByPriorityThenCreationTime) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(16)}}));
  world.Add(Job("team-a/old-low", 2, 8, 0, 0))
      .Add(Job("team-a/new-high", 2, 8, 10, 5))
      .Add(Job("team-a/newer-high", 2, 8, 10, 6));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/new-high"));
}

// Kueue's requeueState.requeueAt: a workload evicted for its pods' readiness waits out its
// backoff even with quota and nodes free, does not hold back the workloads behind it, and the
// cycle says when to look again.
TEST(AdmissionCycleTest, AWorkloadInRequeueBackoffWaitsItOut) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  world.snapshot.now = 1000;
  Workload backing_off = Job("team-a/evicted", 2, 8, 10, 0);
  backing_off.requeue_at = 1060;
  world.Add(backing_off).Add(Job("team-a/later", 2, 8, 0, 5));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/later"));
  EXPECT_THAT(result.pending,
              ElementsAre(AllOf(Field(&PendingDecision::workload, "team-a/evicted"),
                                Field(&PendingDecision::cluster_queue, "team-a"),
                                Field(&PendingDecision::reason, PendingReason::kRequeueBackoff),
                                Field(&PendingDecision::message, HasSubstr("for 60s")))));
  EXPECT_EQ(result.requeue_at, 1060);
  world.Apply(result);
  world.snapshot.now = 1060;  // the backoff is over
  EXPECT_THAT(AdmittedKeys(world.Cycle()), ElementsAre("team-a/evicted"));
}

// A workload its caller holds back (the operator: a namespace ResourceQuota has no room left
// for its gang, Volcano's resourcequota enqueue check) stays pending with the caller's message,
// counted as its queue's, and is neither admitted nor preempted for, though it is the queue's
// head by priority and preemption would make room; the workload behind it that fits is
// admitted, StrictFIFO or not (as behind any head the cycle does not consider, e.g. in a
// requeue backoff). Released, it preempts as any other would.
class HeldWorkloadTest : public ::testing::TestWithParam<QueueingStrategy> {};

TEST_P(HeldWorkloadTest, PendingWithItsReasonAndNeitherAdmittedNorPreemptedFor) {
  FakePlacementService fake({{.name = "b1", .gpus = 32}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(32)}});
  cq.queueing_strategy = GetParam();
  cq.preemption.within_cluster_queue = WithinClusterQueuePolicy::kLowerPriority;
  world.Flavor("h100").Queue(cq);
  world.Running(fake, "b1", Job("team-a/low", 2, 8, 0), "team-a", "h100");
  const std::string why =
      "ResourceQuota team-a/gpus has room for 8 more nvidia.com/gpu in namespace team-a (8 of 16 "
      "used), and the gang needs 32 (4 pods of 8): it waits until the namespace uses less";
  Workload held = Job("team-a/held", 4, 8, 100, 0);
  held.held = why;
  world.Add(held).Add(Job("team-a/later", 2, 8, 0, 5));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/later"));
  EXPECT_THAT(result.preemptions, IsEmpty());
  EXPECT_EQ(result.calls.plan_preemption, 0);
  EXPECT_FALSE(fake.Holds("team-a/held"));
  EXPECT_THAT(result.pending,
              ElementsAre(AllOf(Field(&PendingDecision::workload, "team-a/held"),
                                Field(&PendingDecision::cluster_queue, "team-a"),
                                Field(&PendingDecision::reason, PendingReason::kNamespaceQuota),
                                Field(&PendingDecision::message, why))));
  EXPECT_EQ(ToString(PendingReason::kNamespaceQuota), "InsufficientResourceQuota");
  // The next cycle, its namespace has room: it preempts for its place like any workload.
  world.Apply(result);
  world.Find("team-a/held")->held.clear();
  result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/held"));
  EXPECT_THAT(result.preemptions, ::testing::Not(IsEmpty()));
}

INSTANTIATE_TEST_SUITE_P(Strategies, HeldWorkloadTest,
                         ::testing::Values(QueueingStrategy::kBestEffortFifo,
                                           QueueingStrategy::kStrictFifo),
                         [](const auto& info) {
                           return info.param == QueueingStrategy::kStrictFifo ? "StrictFifo"
                                                                              : "BestEffortFifo";
                         });

// A caller budget (the operator: what a namespace ResourceQuota has room for) is taken by the
// gangs admitted in the cycle, in the order they are admitted: two gangs of one namespace that
// each fit the room alone are not both admitted into it (before 2026-11-30 both were, and the
// second one's pod creates were refused). The one left waits with kNamespaceQuota, blocking
// nobody; the next cycle's budget (the caller's room, less the first gang) decides again.
//
// The worlds below: ClusterQueue team-a of `gpus` GPUs in flavor h100, and the budget
// "team-a/gpus" with `left` GPUs, as the operator gives a ResourceQuota's room.
World BudgetedWorld(FakePlacementService& fake, int64_t gpus, int64_t left) {
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(gpus)}}));
  world.snapshot.budgets["team-a/gpus"] = {.name = "ResourceQuota team-a/gpus",
                                           .resource = "nvidia.com/gpu",
                                           .unit = "nvidia.com/gpu",
                                           .left = left};
  return world;
}

TEST(AdmissionCycleTest, GangsAdmittedInOneCycleTakeTheirCallersBudget) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world = BudgetedWorld(fake, 64, 16);
  Workload first = Job("team-a/first", 2, 8, 0, 0);
  Workload second = Job("team-a/second", 2, 8, 0, 1);
  Workload other = Job("team-a/unbudgeted", 2, 8, 0, 2);  // no quota applies to its pods
  first.budget_per_pod = second.budget_per_pod = {{"team-a/gpus", 8}};
  world.Add(first).Add(second).Add(other);
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), UnorderedElementsAre("team-a/first", "team-a/unbudgeted"));
  EXPECT_FALSE(fake.Holds("team-a/second"));
  ASSERT_NE(PendingFor(result, "team-a/second"), nullptr);
  EXPECT_EQ(PendingFor(result, "team-a/second")->reason, PendingReason::kNamespaceQuota);
  EXPECT_EQ(PendingFor(result, "team-a/second")->message,
            "ResourceQuota team-a/gpus has room for 0 more nvidia.com/gpu once the gangs "
            "admitted before it in this admission cycle have their pods, and the gang needs 16 "
            "(2 pods of 8): it waits until the namespace uses less");
  // A budget of pods counts pods.
  FakePlacementService fake2({{.name = "b1", .gpus = 64}});
  World pods = BudgetedWorld(fake2, 64, 1000);
  pods.snapshot.budgets["team-a/q/pods"] = {
      .name = "ResourceQuota team-a/q", .resource = "pods", .unit = "pods", .left = 3};
  first.budget_per_pod = second.budget_per_pod = {{"team-a/q/pods", 1}};
  pods.Add(first).Add(second);
  result = pods.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/first"));
  EXPECT_THAT(PendingFor(result, "team-a/second")->message,
              HasSubstr("ResourceQuota team-a/q has room for 1 more pod once the gangs admitted "
                        "before it in this admission cycle have their pods, and the gang needs 2"));
}

// A gang given back because placement refused it gives its budget back too: the gang behind it
// is admitted in the next pass of the same cycle.
TEST(AdmissionCycleTest, AGangPlacementRefusesGivesItsBudgetBack) {
  FakePlacementService fake({{.name = "b1", .gpus = 16}});
  World world = BudgetedWorld(fake, 64, 32);
  Workload big = Job("team-a/big", 4, 8, 10, 0);  // first in line, 32 GPUs: never placed here
  Workload small = Job("team-a/small", 2, 8, 0, 1);
  big.budget_per_pod = small.budget_per_pod = {{"team-a/gpus", 8}};
  world.Add(big).Add(small);
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/small"));
  EXPECT_EQ(PendingFor(result, "team-a/big")->reason, PendingReason::kTopology);
}

// An elastic gang is admitted at the largest size its budget has left after the gangs before
// it, and grows no further than a budget lets it; a gang its budget holds back holds back no
// growth (it could not use the capacity).
TEST(AdmissionCycleTest, ElasticGangsAreSizedAndGrownWithinTheirBudget) {
  FakePlacementService fake({{.name = "b1", .gpus = 128}});
  World world = BudgetedWorld(fake, 128, 48);
  Workload first = Job("team-a/first", 2, 8, 0, 0);
  Workload elastic = Job("team-a/elastic", 0, 8, 0, 1);
  elastic.elastic = placement::ElasticRange{1, 8, 1};
  first.budget_per_pod = elastic.budget_per_pod = {{"team-a/gpus", 8}};
  world.Add(first).Add(elastic);
  CycleResult result = world.Cycle();
  ASSERT_NE(AdmissionFor(result, "team-a/elastic"), nullptr);
  EXPECT_EQ(AdmissionFor(result, "team-a/elastic")->count, 4);  // 48 - 16 left: 4 pods of 8
  // Running at 2 with room for 1 more pod, beside a held gang: it grows by one, not to 8.
  FakePlacementService fake2({{.name = "b1", .gpus = 128}});
  World grow = BudgetedWorld(fake2, 128, 8);
  Workload running = Job("team-a/running", 2, 8);
  running.budget_per_pod = {{"team-a/gpus", 8}};
  grow.Running(fake2, "b1", running, "team-a", "h100");
  grow.Find("team-a/running")->elastic = placement::ElasticRange{1, 8, 1};
  Workload held = Job("team-a/held", 2, 8, 0, 1);
  held.budget_per_pod = {{"team-a/gpus", 8}};
  grow.Add(held);
  result = grow.Cycle();
  EXPECT_EQ(PendingFor(result, "team-a/held")->reason, PendingReason::kNamespaceQuota);
  ASSERT_EQ(result.growths.size(), 1u);
  EXPECT_EQ(result.growths[0].new_count, 3);
}

// A spec or queue problem is what to fix first: it is the reason, not the namespace's quota.
TEST(AdmissionCycleTest, AHeldWorkloadNamesItsConfigurationProblemFirst) {
  FakePlacementService fake({{.name = "b1", .gpus = 32}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(32)}}));
  Workload held = Job("team-a/held", 1, 8);
  held.held = "ResourceQuota team-a/gpus has room for ...";
  held.priority_class = "nope";
  world.Add(held);
  CycleResult result = world.Cycle();
  ASSERT_NE(PendingFor(result, "team-a/held"), nullptr);
  EXPECT_EQ(PendingFor(result, "team-a/held")->reason, PendingReason::kUnknownPriorityClass);
}

TEST(AdmissionCycleTest, FirstFlavorWithQuotaInPreferenceOrder) {
  FakePlacementService fake({{.name = "spot-block", .labels = {{"tier", "spot"}}, .gpus = 64},
                             {.name = "od-block", .labels = {{"tier", "od"}}, .gpus = 64}});
  World world(fake);
  world.Flavor("spot", {{"tier", "spot"}})
      .Flavor("on-demand", {{"tier", "od"}})
      .Queue(GpuQueue("team-a", "", {{"spot", Gpu(8)}, {"on-demand", Gpu(64)}}));
  world.Add(Job("team-a/small", 1, 8, 0, 0)).Add(Job("team-a/big", 2, 8, 0, 1));
  CycleResult result = world.Cycle();
  ASSERT_EQ(result.admissions.size(), 2u);
  EXPECT_EQ(AdmissionFor(result, "team-a/small")->flavors.at("nvidia.com/gpu"), "spot");
  EXPECT_EQ(AdmissionFor(result, "team-a/small")->placement.domain.path.back(), "spot-block");
  EXPECT_EQ(AdmissionFor(result, "team-a/big")->flavors.at("nvidia.com/gpu"), "on-demand");
  EXPECT_EQ(AdmissionFor(result, "team-a/big")->placement.domain.path.back(), "od-block");
}

TEST(AdmissionCycleTest, FallsBackToTheNextFlavorWhenPlacementFails) {
  FakePlacementService fake({{.name = "spot-block", .labels = {{"tier", "spot"}}, .gpus = 8},
                             {.name = "od-block", .labels = {{"tier", "od"}}, .gpus = 64}});
  World world(fake);
  world.Flavor("spot", {{"tier", "spot"}})
      .Flavor("on-demand", {{"tier", "od"}})
      .Queue(GpuQueue("team-a", "", {{"spot", Gpu(64)}, {"on-demand", Gpu(64)}}));
  world.Add(Job("team-a/job", 2, 8));
  CycleResult result = world.Cycle();
  ASSERT_THAT(AdmittedKeys(result), ElementsAre("team-a/job"));
  EXPECT_EQ(result.admissions[0].flavors.at("nvidia.com/gpu"), "on-demand");
  // First pass tried spot, second pass on-demand: two round trips.
  EXPECT_EQ(result.calls.reserve_batch, 2);
}

TEST(AdmissionCycleTest, PendingMessageExplainsEveryFlavorTried) {
  FakePlacementService fake({{.name = "spot-block", .labels = {{"tier", "spot"}}, .gpus = 8},
                             {.name = "od-block", .labels = {{"tier", "od"}}, .gpus = 8}});
  World world(fake);
  world.Flavor("spot", {{"tier", "spot"}})
      .Flavor("on-demand", {{"tier", "od"}})
      .Queue(GpuQueue("team-a", "", {{"spot", Gpu(64)}, {"on-demand", Gpu(64)}}));
  world.Add(Job("team-a/job", 2, 8));
  CycleResult result = world.Cycle();
  const PendingDecision* pending = PendingFor(result, "team-a/job");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kTopology);
  EXPECT_THAT(pending->message,
              AllOf(HasSubstr("the best block spot-block has 8 free"),
                    HasSubstr("nvidia.com/gpu in flavor spot available; next flavor: placement: "),
                    HasSubstr("the best block od-block has 8 free"),
                    HasSubstr("nvidia.com/gpu in flavor on-demand available")));
}

TEST(AdmissionCycleTest, FlavorLabelsAndTolerationsReachTheGangRequest) {
  placement::MockPlacementService mock;
  World world(mock);
  world.snapshot.flavors.push_back(
      {.name = "p5",
       .node_labels = {{"node.kubernetes.io/instance-type", "p5.48xlarge"}},
       .tolerations = {{.key = "nvidia.com/gpu", .op = "Exists", .effect = "NoSchedule"}}});
  world.Queue(GpuQueue("team-a", "", {{"p5", Gpu(64)}}));
  Workload w = Job("team-a/job", 2, 8, 7);
  w.node_selector = {{"topology.kubernetes.io/zone", "us-east-1a"}};
  w.required_level = "topology.k8s.aws/network-node-layer-3";
  world.Add(w);
  std::vector<placement::GangRequest> seen;
  EXPECT_CALL(mock, ReserveBatch(_)).WillOnce([&](const std::vector<placement::GangRequest>& r) {
    seen = r;
    placement::PlacementResult placed{.placed = true};
    placed.placement.nodes = {"n1", "n2"};
    return std::vector<absl::StatusOr<placement::PlacementResult>>{placed};
  });
  CycleResult result = world.Cycle();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].job, "team-a/job");
  EXPECT_EQ(seen[0].count, 2);
  EXPECT_EQ(seen[0].priority, 7);
  EXPECT_EQ(seen[0].required_level, "topology.k8s.aws/network-node-layer-3");
  EXPECT_THAT(seen[0].node_selector,
              UnorderedElementsAre(std::pair<const std::string, std::string>(
                                       "node.kubernetes.io/instance-type", "p5.48xlarge"),
                                   std::pair<const std::string, std::string>(
                                       "topology.kubernetes.io/zone", "us-east-1a")));
  EXPECT_THAT(seen[0].tolerations, Contains(Field(&placement::Toleration::key, "nvidia.com/gpu")));
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/job"));
}

TEST(AdmissionCycleTest, FlavorsMustMatchSelectorAndTaints) {
  FakePlacementService fake({{.name = "tainted-block", .labels = {{"pool", "reserved"}}, .gpus = 64},
                             {.name = "plain-block", .labels = {{"pool", "shared"}}, .gpus = 64}});
  World world(fake);
  world.snapshot.flavors.push_back({.name = "reserved",
                                    .node_labels = {{"pool", "reserved"}},
                                    .node_taints = {{"dedicated", "ml", "NoSchedule"}}});
  world.Flavor("shared", {{"pool", "shared"}});
  world.Queue(GpuQueue("team-a", "", {{"reserved", Gpu(64)}, {"shared", Gpu(64)}}));
  Workload tolerant = Job("team-a/tolerant", 1, 8);
  tolerant.tolerations = {{.key = "dedicated", .op = "Equal", .value = "ml"}};
  Workload pinned = Job("team-a/pinned", 1, 8);
  pinned.tolerations = tolerant.tolerations;
  pinned.node_selector = {{"pool", "shared"}};
  world.Add(Job("team-a/plain", 1, 8)).Add(tolerant).Add(pinned);
  CycleResult result = world.Cycle();
  ASSERT_EQ(result.admissions.size(), 3u);
  EXPECT_EQ(AdmissionFor(result, "team-a/plain")->flavors.at("nvidia.com/gpu"), "shared");
  EXPECT_EQ(AdmissionFor(result, "team-a/tolerant")->flavors.at("nvidia.com/gpu"), "reserved");
  EXPECT_EQ(AdmissionFor(result, "team-a/pinned")->flavors.at("nvidia.com/gpu"), "shared");

  Workload lost = Job("team-a/lost", 1, 8);  // wants the reserved pool, does not tolerate it
  lost.node_selector = {{"pool", "reserved"}};
  world.snapshot.workloads = {lost};
  result = world.Cycle();
  const PendingDecision* pending = PendingFor(result, "team-a/lost");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kNoFlavor);
  EXPECT_THAT(pending->message, HasSubstr("nodes are tainted dedicated=ml:NoSchedule"));
  EXPECT_THAT(pending->message,
              HasSubstr("node selector wants pool=reserved, flavor shared has pool=shared"));
}

TEST(AdmissionCycleTest, ElasticTakesTheLargestCountBothQuotaAndPlacementAllow) {
  FakePlacementService fake({{.name = "b1", .gpus = 40}, {.name = "b2", .gpus = 64}});
  World world(fake);
  world.Flavor("h100")
      .Queue(GpuQueue("team-a", "", {{"h100", Gpu(48)}}))
      .Queue(GpuQueue("team-b", "", {{"h100", Gpu(64)}}));
  Workload a = Job("team-a/elastic", 0, 8, 0, 0);
  a.elastic = placement::ElasticRange{2, 8, 2};
  Workload b = Job("team-b/elastic", 0, 8, 0, 1);
  b.elastic = placement::ElasticRange{2, 8, 2};
  world.Add(a).Add(b);
  CycleResult result = world.Cycle();
  // team-a: quota allows 6 pods (48 GPUs); team-b: quota allows 8, and after team-a took 48
  // GPUs of b2, b1's 40 GPUs hold 4 pods (5 is not a step).
  ASSERT_EQ(result.admissions.size(), 2u);
  EXPECT_EQ(AdmissionFor(result, "team-a/elastic")->count, 6);
  EXPECT_EQ(AdmissionFor(result, "team-b/elastic")->count, 4);
  EXPECT_EQ(fake.HeldCount("team-b/elastic"), 4);
}

// Kueue's "Borrowing example": when team-a has used its nominal quota and team-b has pending
// work within its own, team-b is admitted before team-a borrows more.
TEST(AdmissionCycleTest, KueueBorrowingExampleNominalQuotaComesFirst) {
  FakePlacementService fake({{.name = "b1", .gpus = 1000}});
  World world(fake);
  world.Flavor("default-flavor")
      .Queue(GpuQueue("team-a-cq", "team-ab", {{"default-flavor", Gpu(9)}}))
      .Queue(GpuQueue("team-b-cq", "team-ab", {{"default-flavor", Gpu(12)}}));
  world.Admitted(Job("team-a-cq/running", 9, 1), "team-a-cq", "default-flavor");
  // Created first and higher priority, but it needs to borrow.
  world.Add(Job("team-a-cq/borrower", 12, 1, 100, 0)).Add(Job("team-b-cq/owner", 12, 1, 0, 1));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-b-cq/owner"));
  EXPECT_EQ(PendingFor(result, "team-a-cq/borrower")->reason, PendingReason::kQuota);
  EXPECT_FALSE(AdmissionFor(result, "team-b-cq/owner")->borrowing);
}

TEST(AdmissionCycleTest, BorrowsFromTheCohortWithinLimits) {
  FakePlacementService fake({{.name = "b1", .gpus = 1000}});
  World world(fake);
  world.Flavor("default-flavor")
      .Queue(GpuQueue("team-a-cq", "team-ab", {{"default-flavor", Gpu(9, 1)}}))
      .Queue(GpuQueue("team-b-cq", "team-ab", {{"default-flavor", Gpu(12, {}, 1)}}));
  world.Add(Job("team-a-cq/ten", 10, 1, 0, 0)).Add(Job("team-a-cq/one-more", 1, 1, 0, 1));
  CycleResult result = world.Cycle();
  ASSERT_THAT(AdmittedKeys(result), ElementsAre("team-a-cq/ten"));
  EXPECT_TRUE(result.admissions[0].borrowing);
  EXPECT_THAT(PendingFor(result, "team-a-cq/one-more")->message, HasSubstr("borrowing limit 1"));
}

TEST(AdmissionCycleTest, NamespaceSelectorGatesAdmission) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(64)}});
  cq.namespace_selector = LabelSelector{
      .match_expressions = {{"kubernetes.io/metadata.name", "In", {"team-a", "team-a-dev"}}}};
  world.Flavor("h100").Queue(cq);
  world.snapshot.local_queues.push_back({"intruder", "main", "team-a"});
  world.snapshot.local_queues.push_back({"team-a-dev", "main", "team-a"});
  world.Add(Job("team-a/ok", 1, 8)).Add(Job("team-a-dev/ok", 1, 8)).Add(Job("intruder/no", 1, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), UnorderedElementsAre("team-a/ok", "team-a-dev/ok"));
  EXPECT_EQ(PendingFor(result, "intruder/no")->reason, PendingReason::kNamespaceNotAllowed);

  world.snapshot.cluster_queues[0].namespace_selector.reset();  // Kueue's null selector
  world.snapshot.workloads = {Job("team-a/ok", 1, 8)};
  result = world.Cycle();
  EXPECT_THAT(PendingFor(result, "team-a/ok")->message, HasSubstr("null namespaceSelector"));
}

TEST(AdmissionCycleTest, StopPolicyHoldsAndDrains) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  ClusterQueue held = GpuQueue("held", "", {{"h100", Gpu(64)}});
  held.stop_policy = StopPolicy::kHold;
  ClusterQueue drained = GpuQueue("drained", "", {{"h100", Gpu(64)}});
  drained.stop_policy = StopPolicy::kHoldAndDrain;
  world.Flavor("h100").Queue(held).Queue(drained);
  world.Running(fake, "b1", Job("held/running", 1, 8), "held", "h100");
  world.Running(fake, "b1", Job("drained/running", 1, 8), "drained", "h100");
  world.Add(Job("held/new", 1, 8)).Add(Job("drained/new", 1, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.admissions, IsEmpty());
  EXPECT_THAT(PendingFor(result, "held/new")->message, HasSubstr("stopped (stopPolicy Hold)"));
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].victim, "drained/running");
  EXPECT_EQ(result.preemptions[0].reason, PreemptionReason::kClusterQueueStopped);
  EXPECT_TRUE(fake.Holds("held/running"));
  EXPECT_FALSE(fake.Holds("drained/running"));
}

// Kueue's LocalQueue stopPolicy: only that LocalQueue's workloads are held (and, with
// HoldAndDrain, evicted); the ClusterQueue's other LocalQueues go on, and a held elastic
// workload does not grow.
TEST(AdmissionCycleTest, LocalQueueStopPolicyHoldsAndDrainsOnlyItsOwnWorkloads) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team", "", {{"h100", Gpu(64)}}));
  world.snapshot.local_queues.push_back({"held", "main", "team", StopPolicy::kHold});
  world.snapshot.local_queues.push_back({"drained", "main", "team", StopPolicy::kHoldAndDrain});
  world.Running(fake, "b1", Job("held/running", 1, 8), "team", "h100");
  world.Find("held/running")->elastic = placement::ElasticRange{1, 2, 1};
  world.Running(fake, "b1", Job("drained/running", 1, 8), "team", "h100");
  world.Add(Job("held/new", 1, 8)).Add(Job("drained/new", 1, 8)).Add(Job("team/new", 1, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team/new"));
  EXPECT_THAT(result.growths, IsEmpty());
  EXPECT_EQ(PendingFor(result, "held/new")->reason, PendingReason::kLocalQueueStopped);
  EXPECT_THAT(PendingFor(result, "held/new")->message,
              HasSubstr("TrainingQueue held/main is stopped (stopPolicy Hold)"));
  EXPECT_EQ(PendingFor(result, "drained/new")->reason, PendingReason::kLocalQueueStopped);
  ASSERT_EQ(result.preemptions.size(), 1u);
  EXPECT_EQ(result.preemptions[0].victim, "drained/running");
  EXPECT_EQ(result.preemptions[0].reason, PreemptionReason::kLocalQueueStopped);
  EXPECT_THAT(result.preemptions[0].message,
              HasSubstr("TrainingQueue drained/main has stopPolicy HoldAndDrain"));
  EXPECT_TRUE(fake.Holds("held/running"));
  EXPECT_FALSE(fake.Holds("drained/running"));
}

// A ClusterQueue being deleted (held by the operator's resource-in-use finalizer) admits and
// grows nothing, and its running workloads keep their reservations and their quota: a queue of
// the same cohort still cannot borrow what they use.
TEST(AdmissionCycleTest, TerminatingQueueAdmitsNothingAndKeepsItsRunningWorkloads) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  ClusterQueue going = GpuQueue("going", "fleet", {{"h100", Gpu(16)}});
  going.terminating = true;
  world.Flavor("h100").Queue(going).Queue(GpuQueue("other", "fleet", {{"h100", Gpu(16)}}));
  world.Running(fake, "b1", Job("going/elastic", 1, 8), "going", "h100");
  world.Find("going/elastic")->elastic = placement::ElasticRange{1, 2, 1};  // could grow to 2
  world.Add(Job("going/new", 1, 8)).Add(Job("other/big", 4, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.admissions, IsEmpty());
  EXPECT_THAT(result.growths, IsEmpty());
  EXPECT_THAT(result.preemptions, IsEmpty());
  EXPECT_EQ(PendingFor(result, "going/new")->reason, PendingReason::kClusterQueueInactive);
  EXPECT_THAT(PendingFor(result, "going/new")->message,
              HasSubstr("ClusterTrainingQueue going is being deleted"));
  // 32 GPUs: its own 16 and 16 borrowed, of which going's running workload leaves only 8.
  EXPECT_EQ(PendingFor(result, "other/big")->reason, PendingReason::kQuota);
  EXPECT_TRUE(fake.Holds("going/elastic"));
}

TEST(AdmissionCycleTest, CountsPodsAndRejectsUncoveredResources) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  ClusterQueue cq = GpuQueue("team-a", "", {{"h100", Gpu(64)}});
  cq.resource_groups.push_back({{"pods"}, {{"default", {{"pods", 3}}}}});
  world.Flavor("h100").Flavor("default").Queue(cq);
  Workload with_cpu = Job("team-a/cpu", 1, 8);
  with_cpu.per_pod["cpu"] = 4000;
  world.Add(Job("team-a/three", 3, 1, 0, 0)).Add(Job("team-a/one", 1, 1, 0, 1)).Add(with_cpu);
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/three"));
  EXPECT_THAT(PendingFor(result, "team-a/one")->message, HasSubstr("needs 1 pods, 0 available"));
  EXPECT_EQ(PendingFor(result, "team-a/cpu")->reason, PendingReason::kNoFlavor);
  EXPECT_THAT(PendingFor(result, "team-a/cpu")->message,
              HasSubstr("ClusterTrainingQueue team-a has no quota for cpu (it covers "
                        "nvidia.com/gpu, pods)"));
}

TEST(AdmissionCycleTest, PlacementServiceErrorsStayPerWorkload) {
  placement::MockPlacementService mock;
  World world(mock);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  world.Add(Job("team-a/a", 1, 8, 0, 0)).Add(Job("team-a/b", 1, 8, 0, 1));
  EXPECT_CALL(mock, ReserveBatch(_)).WillOnce([](const std::vector<placement::GangRequest>&) {
    placement::PlacementResult placed{.placed = true};
    placed.placement.nodes = {"n1"};
    return std::vector<absl::StatusOr<placement::PlacementResult>>{
        absl::UnavailableError("scheduler restarting"), placed};
  });
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/b"));
  EXPECT_EQ(PendingFor(result, "team-a/a")->reason, PendingReason::kPlacementError);
  EXPECT_THAT(PendingFor(result, "team-a/a")->message, HasSubstr("scheduler restarting"));
}

}  // namespace
}  // namespace phalanx::admission
