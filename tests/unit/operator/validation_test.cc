// Bad input is reported per object, and everything that does not depend on the bad object keeps
// admitting.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using testing::AdmittedKeys;
using testing::FakePlacementService;
using testing::Gpu;
using testing::GpuQueue;
using testing::Job;
using testing::PendingFor;
using testing::World;

struct BadQueueCase {
  std::string name;
  ClusterQueue queue;  // named "broken"
  std::string want_error;
};

class BadClusterQueueTest : public ::testing::TestWithParam<BadQueueCase> {};

TEST_P(BadClusterQueueTest, ReportsTheFieldAndKeepsOthersAdmitting) {
  const BadQueueCase& c = GetParam();
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(c.queue).Queue(GpuQueue("healthy", "cohort", {{"h100", Gpu(8)}}));
  world.Add(Job("broken/job", 1, 8)).Add(Job("healthy/job", 1, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.errors,
              ElementsAre(AllOf(Field(&ObjectError::kind, "ClusterTrainingQueue"),
                                Field(&ObjectError::name, "broken"),
                                Field(&ObjectError::message, HasSubstr(c.want_error)))));
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("healthy/job"));
  const PendingDecision* pending = PendingFor(result, "broken/job");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kClusterQueueInactive);
  EXPECT_THAT(pending->message, HasSubstr(c.want_error));
}

ClusterQueue Broken(std::vector<std::pair<std::string, ResourceQuota>> flavors,
                    std::string cohort = "cohort") {
  return GpuQueue("broken", std::move(cohort), std::move(flavors));
}

ClusterQueue BrokenSelector() {
  ClusterQueue cq = Broken({{"h100", Gpu(8)}});
  cq.namespace_selector = LabelSelector{.match_expressions = {{"team", "Matches", {"a"}}}};
  return cq;
}

ClusterQueue DoublyCovered() {
  ClusterQueue cq = Broken({{"h100", Gpu(8)}});
  cq.resource_groups.push_back(cq.resource_groups[0]);
  return cq;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadClusterQueueTest,
    ::testing::Values(
        BadQueueCase{"MissingFlavor", Broken({{"a100", Gpu(8)}}),
                     "spec.resourceGroups[0].flavors[0].name: references NodeFlavor \"a100\", "
                     "which does not exist"},
        BadQueueCase{"NegativeNominal", Broken({{"h100", Gpu(-8)}}),
                     "resources[0].nominalQuota: must not be negative, got -8"},
        BadQueueCase{"NegativeBorrowingLimit", Broken({{"h100", Gpu(8, -1)}}),
                     "borrowingLimit: must not be negative"},
        BadQueueCase{"LendingAboveNominal", Broken({{"h100", Gpu(8, {}, 9)}}),
                     "lendingLimit: 9 exceeds nominalQuota 8"},
        BadQueueCase{"BorrowingLimitWithoutCohort", Broken({{"h100", Gpu(8, 2)}}, ""),
                     "borrowingLimit: must be unset without a cohort"},
        BadQueueCase{"FlavorListedTwice", Broken({{"h100", Gpu(8)}, {"h100", Gpu(8)}}),
                     "flavor h100 is listed twice"},
        BadQueueCase{"ResourceInTwoGroups", DoublyCovered(),
                     "nvidia.com/gpu is covered by another group"},
        BadQueueCase{"BadSelectorOperator", BrokenSelector(),
                     "operator: \"Matches\" is not In, NotIn, Exists or DoesNotExist"}),
    [](const auto& info) { return info.param.name; });

TEST(ValidationTest, CohortCyclesAndNestingAreReportedAndOnlyTheirQueuesStop) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100")
      .Queue(GpuQueue("in-cycle", "a", {{"h100", Gpu(8)}}))
      .Queue(GpuQueue("nested", "child", {{"h100", Gpu(8)}}))
      .Queue(GpuQueue("flat", "flat-cohort", {{"h100", Gpu(8)}}));
  world.snapshot.cohorts = {{"a", "b"}, {"b", "a"}, {"child", "root"}, {"flat-cohort", ""}};
  world.Add(Job("in-cycle/job", 1, 8)).Add(Job("nested/job", 1, 8)).Add(Job("flat/job", 1, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.errors,
              Contains(AllOf(Field(&ObjectError::kind, "Cohort"), Field(&ObjectError::name, "a"),
                             Field(&ObjectError::message,
                                   HasSubstr("the parent chain a -> b -> a is a cycle")))));
  EXPECT_THAT(result.errors,
              Contains(AllOf(Field(&ObjectError::name, "child"),
                             Field(&ObjectError::message,
                                   HasSubstr("nested cohorts are not supported")))));
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("flat/job"));
  EXPECT_THAT(PendingFor(result, "in-cycle/job")->message, HasSubstr("its cohort a is invalid"));
  EXPECT_EQ(PendingFor(result, "nested/job")->reason, PendingReason::kClusterQueueInactive);
}

TEST(ValidationTest, BrokenLocalQueueAndWorkloadsArePerObject) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  world.snapshot.local_queues.push_back({"lost", "main", "nowhere"});
  world.snapshot.priority_classes = {{"high", 100}};
  Workload bad_class = Job("team-a/bad-class", 1, 8);
  bad_class.priority_class = "urgent";
  Workload bad_range = Job("team-a/bad-range", 0, 8);
  bad_range.elastic = placement::ElasticRange{4, 2, 1};
  Workload negative = Job("team-a/negative", 1, -8);
  Workload no_queue = Job("team-a/no-queue", 1, 8);
  no_queue.queue_name = "missing";
  Workload good = Job("team-a/good", 1, 8);
  good.priority_class = "high";
  world.Add(Job("lost/job", 1, 8))
      .Add(bad_class)
      .Add(bad_range)
      .Add(negative)
      .Add(Job("team-a/zero", 0, 8))
      .Add(no_queue)
      .Add(good)
      .Add(Job("team-a/good", 1, 8));  // duplicate key
  CycleResult result = world.Cycle();
  EXPECT_THAT(result.errors,
              ElementsAre(AllOf(Field(&ObjectError::kind, "TrainingQueue"),
                                Field(&ObjectError::name, "lost/main"),
                                Field(&ObjectError::message,
                                      HasSubstr("ClusterTrainingQueue \"nowhere\" does not "
                                                "exist")))));
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/good"));
  auto reason = [&](std::string_view key) { return PendingFor(result, key)->reason; };
  // Its TrainingQueue exists; the ClusterTrainingQueue that it names does not.
  EXPECT_EQ(reason("lost/job"), PendingReason::kClusterQueueInactive);
  EXPECT_EQ(reason("team-a/bad-class"), PendingReason::kUnknownPriorityClass);
  EXPECT_EQ(reason("team-a/bad-range"), PendingReason::kInvalid);
  EXPECT_THAT(PendingFor(result, "team-a/bad-range")->message,
              HasSubstr("elastic.maxReplicas 2 is below minReplicas 4"));
  EXPECT_EQ(reason("team-a/negative"), PendingReason::kInvalid);
  EXPECT_EQ(reason("team-a/zero"), PendingReason::kInvalid);
  EXPECT_EQ(reason("team-a/no-queue"), PendingReason::kNoLocalQueue);
  EXPECT_THAT(PendingFor(result, "team-a/no-queue")->message,
              HasSubstr("TrainingQueue team-a/missing does not exist"));
  EXPECT_THAT(result.pending,
              Contains(AllOf(Field(&PendingDecision::workload, "team-a/good"),
                             Field(&PendingDecision::reason, PendingReason::kInvalid),
                             Field(&PendingDecision::message, HasSubstr("same key")))));
}

// A job the operator could not turn into a workload (a template problem, a priority the
// cluster does not honour) still counts as its queue's: the cycle resolves the queue, then keeps
// it pending, Invalid, with the decoder's message (audit 2026-11-30 c, D1: such jobs were in no
// pending count). Without a queue it says so first, as any workload would.
TEST(ValidationTest, AWorkloadTheDecoderRefusedIsPendingInItsClusterQueue) {
  FakePlacementService fake({{.name = "b1", .gpus = 64}});
  World world(fake);
  world.Flavor("h100").Queue(GpuQueue("team-a", "", {{"h100", Gpu(64)}}));
  Workload refused;
  refused.key = "team-a/refused";
  refused.namespace_name = "team-a";
  refused.queue_name = "main";
  refused.invalid = "spec.priority (5000) is not honoured on this cluster";
  Workload lost = refused;
  lost.key = "team-a/lost";
  lost.queue_name = "missing";
  world.Add(refused).Add(lost).Add(Job("team-a/fine", 1, 8));
  CycleResult result = world.Cycle();
  EXPECT_THAT(AdmittedKeys(result), ElementsAre("team-a/fine"));
  const PendingDecision* p = PendingFor(result, "team-a/refused");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->reason, PendingReason::kInvalid);
  EXPECT_EQ(p->cluster_queue, "team-a");
  EXPECT_EQ(p->message, "spec.priority (5000) is not honoured on this cluster");
  EXPECT_EQ(PendingFor(result, "team-a/lost")->reason, PendingReason::kNoLocalQueue);
  EXPECT_EQ(PendingFor(result, "team-a/lost")->cluster_queue, "");
}

}  // namespace
}  // namespace phalanx::admission
