#include "operator/server/status_overlay.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace phalanx::operator_server {
namespace {

kube::TrainingJob Job(const std::string& uid) {
  kube::TrainingJob job;
  job.meta.namespace_ = "ml";
  job.meta.name = "a";
  job.meta.uid = uid;
  return job;
}

// The job as the informer shows it admitted with `replicas` pods on `nodes` (no queue, flavor).
kube::TrainingJob ShownAdmitted(const std::string& uid, int32_t replicas,
                                std::vector<std::string> nodes) {
  kube::TrainingJob job = Job(uid);
  job.status.admission = kube::TrainingJobAdmission{.replicas = replicas};
  job.status.placement = kube::TrainingJobPlacement{.nodes = std::move(nodes)};
  return job;
}

StatusOverlay::Written Admitted(int32_t replicas, std::vector<std::string> nodes) {
  return {.admission = kube::TrainingJobAdmission{.cluster_queue = "cq", .flavor = "p5",
                                                  .replicas = replicas},
          .placement = kube::TrainingJobPlacement{.nodes = std::move(nodes)}};
}

TEST(StatusOverlay, AWriteIsLaidOverTheStaleJobUntilTheInformerShowsIt) {
  StatusOverlay overlay;
  overlay.Record("ml/a", "uid-1", Admitted(2, {"n0", "n1"}));

  kube::TrainingJob stale = Job("uid-1");
  overlay.Apply("ml/a", stale);
  ASSERT_TRUE(stale.status.admission.has_value());
  EXPECT_EQ(stale.status.admission->replicas, 2);
  ASSERT_TRUE(stale.status.placement.has_value());
  EXPECT_EQ(stale.status.placement->nodes, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(overlay.size(), 1u);

  kube::TrainingJob shown = ShownAdmitted("uid-1", 2, {"n0", "n1"});
  overlay.Apply("ml/a", shown);
  EXPECT_EQ(overlay.size(), 0u);
  EXPECT_EQ(shown.status.admission->cluster_queue, "");  // the informer's copy, untouched
}

TEST(StatusOverlay, AnOlderVersionOfAResizeIsNotTakenForIt) {
  StatusOverlay overlay;
  overlay.Record("ml/a", "uid-1", Admitted(4, {"n0", "n1", "n2", "n3"}));
  // Admitted at 2, the growth to 4 not shown yet.
  kube::TrainingJob two = ShownAdmitted("uid-1", 2, {"n0", "n1"});
  overlay.Apply("ml/a", two);
  EXPECT_EQ(two.status.admission->replicas, 4);
  EXPECT_EQ(two.status.placement->nodes.size(), 4u);
  EXPECT_EQ(overlay.size(), 1u);
}

TEST(StatusOverlay, AReleaseIsLaidOverAJobStillShownAdmitted) {
  StatusOverlay overlay;
  overlay.Record("ml/a", "uid-1", {});  // evicted or suspended: written as not admitted
  kube::TrainingJob job = ShownAdmitted("uid-1", 2, {"n0", "n1"});
  overlay.Apply("ml/a", job);
  EXPECT_FALSE(job.status.admission.has_value());
  EXPECT_FALSE(job.status.placement.has_value());
  EXPECT_EQ(overlay.size(), 1u);
}

// A pods-ready eviction writes the requeue state too: a cycle that lists the job before the
// informer shows it must not admit it again before its backoff ends.
TEST(StatusOverlay, ARequeueStateIsLaidOverUntilShown) {
  StatusOverlay overlay;
  const kube::TrainingJobRequeueState state{.count = 1, .requeue_at = "2026-11-30T12:01:00Z"};
  overlay.Record("ml/a", "uid-1", {.requeue_state = state});
  kube::TrainingJob job = ShownAdmitted("uid-1", 2, {"n0", "n1"});
  overlay.Apply("ml/a", job);
  EXPECT_FALSE(job.status.admission.has_value());
  ASSERT_TRUE(job.status.requeue_state.has_value());
  EXPECT_EQ(*job.status.requeue_state, state);
  // Released, but the requeue state not shown yet: still laid over.
  kube::TrainingJob released = Job("uid-1");
  overlay.Apply("ml/a", released);
  EXPECT_EQ(released.status.requeue_state, state);
  EXPECT_EQ(overlay.size(), 1u);
  kube::TrainingJob shown = Job("uid-1");
  shown.status.requeue_state = state;
  overlay.Apply("ml/a", shown);
  EXPECT_EQ(overlay.size(), 0u);
}

// `kubectl delete` and `kubectl apply` of the same name before any cycle saw the first object
// with its admission: the new object has none, and must not inherit the old one's.
TEST(StatusOverlay, AJobCreatedAgainUnderTheSameNameDoesNotInheritTheWrite) {
  StatusOverlay overlay;
  overlay.Record("ml/a", "uid-1", Admitted(2, {"n0", "n1"}));
  kube::TrainingJob reborn = Job("uid-2");
  overlay.Apply("ml/a", reborn);
  EXPECT_FALSE(reborn.status.admission.has_value());
  EXPECT_FALSE(reborn.status.placement.has_value());
  EXPECT_EQ(overlay.size(), 0u);
}

TEST(StatusOverlay, WritesToJobsNoLongerListedAreForgotten) {
  StatusOverlay overlay;
  overlay.Record("ml/a", "uid-1", Admitted(1, {"n0"}));
  overlay.Record("ml/b", "uid-9", Admitted(1, {"n1"}));
  overlay.Retain(std::map<std::string, int>{{"ml/b", 0}});
  EXPECT_EQ(overlay.size(), 1u);
  // The same name created again later starts clean, even with a reused uid string.
  kube::TrainingJob again = Job("uid-1");
  overlay.Apply("ml/a", again);
  EXPECT_FALSE(again.status.admission.has_value());
  kube::TrainingJob b = Job("uid-9");
  overlay.Apply("ml/b", b);
  EXPECT_TRUE(b.status.admission.has_value());
}

}  // namespace
}  // namespace phalanx::operator_server
