// What a user reads in `kubectl describe trainingjob`: every decision's Event names where, why
// and by whom, and a waiting job records an Event when its reason changes, not every cycle.
#include "operator/server/job_events.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::operator_server {
namespace {

using ::testing::HasSubstr;

TEST(AdmittedMessage, NamesQueueFlavorSizeAndDomain) {
  EXPECT_EQ(AdmittedMessage({.cluster_queue = "team-llm",
                             .flavor = "p5",
                             .pods = 4,
                             .where = "topology.k8s.aws/network-node-layer-3=nn-3"}),
            "admitted to ClusterTrainingQueue team-llm in flavor p5 with 4 pods; placed in "
            "topology.k8s.aws/network-node-layer-3=nn-3");
}

TEST(AdmittedMessage, SaysWhenItBorrowsAndWhomItPreempted) {
  const std::string m = AdmittedMessage({.cluster_queue = "team-llm",
                                         .flavor = "p5",
                                         .pods = 1,
                                         .where = "",
                                         .borrowing = true,
                                         .preempted = {"team-llm/low", "team-vision/big"}});
  EXPECT_EQ(m,
            "admitted to ClusterTrainingQueue team-llm in flavor p5 with 1 pod; placed "
            "anywhere in the cluster (borrowing cohort quota); preempted team-llm/low, "
            "team-vision/big");
}

TEST(AdmittedMessage, SaysWhenItTookNoFlavor) {
  EXPECT_EQ(AdmittedMessage(
                {.cluster_queue = "cpu-jobs", .pods = 2, .where = "kubernetes.io/hostname=n-1"}),
            "admitted to ClusterTrainingQueue cpu-jobs with 2 pods and no flavor (they request "
            "nothing its quota covers); placed in kubernetes.io/hostname=n-1");
}

TEST(GrownMessage, NamesBothSizesAndTheDomain) {
  EXPECT_EQ(GrownMessage(2, 4, "nvidia.com/gpu.clique=c-1"),
            "grown from 2 to 4 pods in nvidia.com/gpu.clique=c-1 with capacity nobody was "
            "waiting for");
}

TEST(ResizedAdmission, TheMessageGivesTheSizeNowAndTheSizeBefore) {
  // Admitted at 10 pods; grown to 12, then shrunk to 8 and to 6 (elastic 2..12, step 2).
  const std::string where = "topology.k8s.aws/network-node-layer-3=nn-3";
  const Admitted now{.cluster_queue = "gpus", .flavor = "h100", .pods = 12, .where = where};
  const std::vector<Condition> grown = ResizedAdmission(now, 10);
  ASSERT_EQ(grown.size(), 2u);
  const std::string message =
      "admitted to ClusterTrainingQueue gpus in flavor h100 with 12 pods; placed in "
      "topology.k8s.aws/network-node-layer-3=nn-3; grown from 10 pods";
  // The Queued condition says the same, not the first admission's size (audit session 36).
  EXPECT_EQ(grown[0].type, "Queued");
  EXPECT_EQ(grown[0].status, "False");
  EXPECT_EQ(grown[0].reason, "Admitted");
  EXPECT_EQ(grown[0].message, message);
  EXPECT_EQ(grown[1].type, "Admitted");
  EXPECT_EQ(grown[1].status, "True");
  EXPECT_EQ(grown[1].reason, "Admitted");
  EXPECT_EQ(grown[1].message, message);
  Admitted smaller = now;
  smaller.pods = 8;
  EXPECT_THAT(ResizedAdmission(smaller, 12)[1].message,
              HasSubstr("with 8 pods; placed in " + where + "; shrunk from 12 pods"));
  smaller.pods = 1;
  smaller.where = "";
  EXPECT_THAT(ResizedAdmission(smaller, 2)[1].message,
              HasSubstr("with 1 pod; placed anywhere in the cluster; shrunk from 2 pods"));
}

TEST(ResizedAdmission, KeepsTheAdmissionTimeAndReplacesTheFirstSize) {
  // What the admission controller writes over the conditions of a job admitted at 10 pods.
  const std::vector<Condition> current = {
      {.type = "Queued", .status = "False", .reason = "Admitted", .message = "admitted ...",
       .last_transition_time = "2026-11-30T01:00:00Z"},
      {.type = "Admitted", .status = "True", .reason = "Admitted",
       .message = AdmittedMessage({.cluster_queue = "gpus", .flavor = "h100", .pods = 10}),
       .last_transition_time = "2026-11-30T01:00:00Z"}};
  const std::vector<Condition> merged =
      MergeConditions(current, {"Queued", "Admitted"},
                      ResizedAdmission({.cluster_queue = "gpus", .flavor = "h100", .pods = 12}, 10),
                      "2026-11-30T02:00:00Z", 1);
  const Condition* admitted = FindCondition(merged, "Admitted");
  ASSERT_NE(admitted, nullptr);
  EXPECT_THAT(admitted->message, HasSubstr("with 12 pods"));
  EXPECT_THAT(admitted->message, ::testing::Not(HasSubstr("with 10 pods")));
  EXPECT_EQ(admitted->last_transition_time, "2026-11-30T01:00:00Z");
  EXPECT_EQ(AdmittedSince(merged), AdmittedSince(current));
  // Queued=False keeps its time, and says the size now too.
  const Condition* queued = FindCondition(merged, "Queued");
  ASSERT_NE(queued, nullptr);
  EXPECT_EQ(queued->last_transition_time, "2026-11-30T01:00:00Z");
  EXPECT_EQ(queued->message, admitted->message);
}

// A shrink for a preemptor and a shrink after node failures write the same conditions (the
// preemptor's wrote no Shrunk condition, only its event): Shrunk=True naming why, over the
// Admitted condition's time, and Admitted with the new size.
TEST(ShrunkUpdates, ShrunkTrueWithTheReasonAndTheAdmissionResized) {
  const std::vector<Condition> current = {
      {.type = "Admitted", .status = "True", .reason = "Admitted",
       .message = AdmittedMessage({.cluster_queue = "llm", .flavor = "p5", .pods = 4}),
       .last_transition_time = "2026-11-30T01:00:00Z"}};
  const std::string message = "shrunk to 2 pods to make room for team-llm/hi: lower priority";
  const std::vector<Condition> merged = MergeConditions(
      current, {"Queued", "Admitted", "Evicted", "NodesReplaced", "Shrunk"},
      ShrunkUpdates({.cluster_queue = "llm", .flavor = "p5", .pods = 2}, 4, "Preempted", message),
      "2026-11-30T02:00:00Z", 1);
  const Condition* shrunk = FindCondition(merged, "Shrunk");
  ASSERT_NE(shrunk, nullptr);
  EXPECT_EQ(shrunk->status, "True");
  EXPECT_EQ(shrunk->reason, "Preempted");
  EXPECT_EQ(shrunk->message, message);
  EXPECT_EQ(shrunk->last_transition_time, "2026-11-30T02:00:00Z");
  const Condition* admitted = FindCondition(merged, "Admitted");
  ASSERT_NE(admitted, nullptr);
  EXPECT_THAT(admitted->message, HasSubstr("with 2 pods; placed anywhere in the cluster; "
                                           "shrunk from 4 pods"));
  EXPECT_EQ(admitted->last_transition_time, "2026-11-30T01:00:00Z");
}

TEST(PlacedIn, LevelAndDomainOrNothingForTheWholeCluster) {
  EXPECT_EQ(PlacedIn(kube::TrainingJobPlacement{
                .domain = "nn-3", .level = "topology.k8s.aws/network-node-layer-3"}),
            "topology.k8s.aws/network-node-layer-3=nn-3");
  EXPECT_EQ(PlacedIn(kube::TrainingJobPlacement{.domain = "cluster"}), "");
  EXPECT_EQ(PlacedIn(std::nullopt), "");
}

TEST(QueuedEventDue, OnANewReasonOrStatusNotOnANewMessage) {
  const Condition quota{.type = "Queued",
                        .status = "True",
                        .reason = "InsufficientQuota",
                        .message = "quota: ClusterTrainingQueue a has 8 nvidia.com/gpu available"};
  EXPECT_TRUE(QueuedEventDue(nullptr, "True", "InsufficientQuota"));  // first time queued
  EXPECT_FALSE(QueuedEventDue(&quota, "True", "InsufficientQuota"));  // only numbers changed
  EXPECT_TRUE(QueuedEventDue(&quota, "True", "CannotBePlaced"));
  EXPECT_TRUE(QueuedEventDue(&quota, "False", "Suspended"));
  const Condition admitted{.type = "Queued", .status = "False", .reason = "Admitted"};
  EXPECT_TRUE(QueuedEventDue(&admitted, "True", "InsufficientQuota"));  // queued again
}

TEST(FailedRequestMessage, NamesTheObjectAndTheApiServersAnswer) {
  const std::string m = FailedRequestMessage(
      "create", "pod", "ml", "llama-0",
      absl::PermissionDeniedError("pods \"llama-0\" is forbidden: User "
                                  "\"system:serviceaccount:phalanx:phalanx-operator\" cannot "
                                  "create resource \"pods\""));
  EXPECT_THAT(m, HasSubstr("create pod ml/llama-0: pods \"llama-0\" is forbidden"));
}

}  // namespace
}  // namespace phalanx::operator_server
