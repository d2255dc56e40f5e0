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
            "admitted to ClusterTrainingQueue team-llm in flavor p5 with 1 pod; placed in "
            "anywhere in the cluster (borrowing cohort quota); preempted team-llm/low, "
            "team-vision/big");
}

TEST(GrownMessage, NamesBothSizesAndTheDomain) {
  EXPECT_EQ(GrownMessage(2, 4, "nvidia.com/gpu.clique=c-1"),
            "grown from 2 to 4 pods in nvidia.com/gpu.clique=c-1 with capacity nobody was "
            "waiting for");
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
