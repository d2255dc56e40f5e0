// LiveSnapshot: informer objects in, ClusterSnapshot state out. What a user would notice: a
// restarted scheduler holds exactly the reservations recorded in TrainingJob status, running gang
// pods take their reserved slots (no double count), and capacity used by any bound pod is seen.
#include "scheduler/server/live_snapshot.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api/training_job.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"

namespace phalanx::scheduler {
namespace {

using ::phalanx::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const char kLayer3[] = "topology.k8s.aws/network-node-layer-3";

std::shared_ptr<const kube::Node> Node(const std::string& name, const std::string& block,
                                       bool ready = true) {
  auto node = std::make_shared<kube::Node>();
  node->meta.name = name;
  node->meta.labels.Set("kubernetes.io/hostname", name);
  node->meta.labels.Set("topology.k8s.aws/network-node-layer-1", "l1");
  node->meta.labels.Set("topology.k8s.aws/network-node-layer-2", "l2");
  node->meta.labels.Set(kLayer3, block);
  node->allocatable = {{"nvidia.com/gpu", 8}, {"cpu", 192000}, {"pods", 110}};
  node->ready = ready;
  return node;
}

std::shared_ptr<const kube::Pod> Pod(const std::string& ns, const std::string& name,
                                     const std::string& node, int64_t gpus,
                                     const std::string& job = "", int rank = -1,
                                     const std::string& phase = "Running") {
  auto pod = std::make_shared<kube::Pod>();
  pod->meta.namespace_ = ns;
  pod->meta.name = name;
  pod->node_name = node;
  pod->phase = phase;
  pod->requests = {{"nvidia.com/gpu", gpus}};
  if (!job.empty()) {
    pod->meta.labels.Set("phalanx.dev/job", job);
    pod->meta.labels.Set("phalanx.dev/rank", absl::StrCat(rank));
  }
  return pod;
}

// A TrainingJob as the API server returns it; `nodes` empty = no status.placement.
std::shared_ptr<const kube::RawObject> Job(const std::string& ns, const std::string& name,
                                           const std::vector<std::string>& nodes,
                                           const std::string& phase = "Running",
                                           bool admitted = true) {
  std::string status;
  if (admitted) {
    status = absl::StrCat(R"("admission":{"clusterQueue":"team-a","flavor":"p5","replicas":)",
                          nodes.size(), "}");
  }
  if (!nodes.empty()) {
    status += absl::StrCat(R"(,"placement":{"domain":"b1","level":")", kLayer3,
                           R"(","nodes":[")", absl::StrJoin(nodes, R"(",")"), R"("]})");
  }
  auto raw = std::make_shared<kube::RawObject>();
  raw->meta.namespace_ = ns;
  raw->meta.name = name;
  raw->json = absl::StrCat(
      R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob","metadata":{"name":")", name,
      R"(","namespace":")", ns, R"(","uid":"u-)", name, R"("},"spec":{"queueName":"q","replicas":)",
      std::max<size_t>(1, nodes.size()), R"(,"topology":{"required":")", kLayer3,
      R"("},"template":{"spec":{"containers":[{"name":"t","resources":{"requests":)",
      R"({"nvidia.com/gpu":"8","cpu":"4"}}}]}}},"status":{"phase":")", phase, R"(",)", status,
      "}}");
  if (!admitted && nodes.empty()) {
    // "status":{"phase":"x",} is not JSON: drop the dangling comma.
    raw->json = absl::StrCat(
        R"({"metadata":{"name":")", name, R"(","namespace":")", ns,
        R"("},"spec":{"queueName":"q","replicas":1,"template":{"spec":{"containers":[{"name":"t"}]}}},"status":{"phase":")",
        phase, R"("}})");
  }
  return raw;
}

class LiveSnapshotTest : public ::testing::Test {
 protected:
  LiveSnapshotTest()
      : service_(placement::ClusterSnapshot(*placement::Topology::Preset("eks"))), live_(service_) {}

  // Used GPUs of a node, as the placement core counts them (pods + reserved slots).
  int64_t UsedGpus(const std::string& node) {
    int64_t used = -1;
    service_.Read([&](const placement::ClusterSnapshot& s) {
      auto free = s.NodeFree(node);
      if (free) used = 8 - free->at("nvidia.com/gpu");
    });
    return used;
  }
  std::vector<std::string> Reserved() {
    std::vector<std::string> jobs;
    service_.Read([&](const placement::ClusterSnapshot& s) { jobs = s.ReservedJobs(); });
    return jobs;
  }
  void ExpectConsistent() {
    service_.Read([](const placement::ClusterSnapshot& s) { EXPECT_THAT(s.CheckConsistency(), IsOk()); });
  }

  placement::InProcessPlacementService service_;
  LiveSnapshot live_;
};

TEST_F(LiveSnapshotTest, RestartRestoresReservationsAndRunningPodsTakeTheirSlots) {
  // A 2-rank gang on n0, n1 whose rank 0 is already running; rank 1 is not bound yet.
  live_.Build({Node("n0", "b1"), Node("n1", "b1"), Node("n2", "b1")},
              {Job("ml", "llama", {"n0", "n1"})}, {Pod("ml", "llama-0", "n0", 8, "llama", 0)});
  EXPECT_THAT(Reserved(), ElementsAre("ml/llama"));
  EXPECT_EQ(UsedGpus("n0"), 8);  // the pod took its slot: not 16
  EXPECT_EQ(UsedGpus("n1"), 8);  // still reserved for rank 1
  EXPECT_EQ(UsedGpus("n2"), 0);
  EXPECT_EQ(live_.counters().restored, 1);
  ExpectConsistent();
  // Rank 1 binds: the slot turns into real usage, nothing is counted twice.
  live_.PodChanged("ml/llama-1", Pod("ml", "llama-1", "n1", 8, "llama", 1).get());
  EXPECT_EQ(UsedGpus("n1"), 8);
  service_.Read([](const placement::ClusterSnapshot& s) {
    const auto* r = s.FindReservation("ml/llama");
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->ranks[0].pod, "ml/llama-0");
    EXPECT_EQ(r->ranks[1].pod, "ml/llama-1");
  });
  ExpectConsistent();
}

TEST_F(LiveSnapshotTest, FinishedOrUnadmittedJobsHoldNothing) {
  live_.Build({Node("n0", "b1"), Node("n1", "b1")},
              {Job("ml", "done", {"n0"}, "Succeeded"), Job("ml", "failed", {"n1"}, "Failed"),
               Job("ml", "queued", {}, "Queued", /*admitted=*/false)},
              {});
  EXPECT_THAT(Reserved(), IsEmpty());
  EXPECT_EQ(UsedGpus("n0"), 0);
  EXPECT_EQ(UsedGpus("n1"), 0);
}

TEST_F(LiveSnapshotTest, AnyBoundPodCountsAndFinishedPodsFreeTheirNode) {
  live_.Build({Node("n0", "b1")}, {}, {Pod("kube-system", "dcgm", "n0", 0)});
  live_.PodChanged("other/train", Pod("other", "train", "n0", 4).get());
  EXPECT_EQ(UsedGpus("n0"), 4);
  live_.PodChanged("other/train", Pod("other", "train", "n0", 4, "", -1, "Succeeded").get());
  EXPECT_EQ(UsedGpus("n0"), 0);
  live_.PodChanged("other/pending", Pod("other", "pending", "", 8).get());  // not bound
  EXPECT_EQ(UsedGpus("n0"), 0);
  ExpectConsistent();
}

TEST_F(LiveSnapshotTest, PodOnAnUnknownNodeWaitsForTheNode) {
  live_.Build({}, {}, {});
  live_.PodChanged("x/p", Pod("x", "p", "late", 8).get());
  EXPECT_EQ(UsedGpus("late"), -1);  // no such node yet
  live_.NodeChanged("late", Node("late", "b1").get());
  EXPECT_EQ(UsedGpus("late"), 8);
  live_.PodChanged("x/p", nullptr);
  EXPECT_EQ(UsedGpus("late"), 0);
  ExpectConsistent();
}

TEST_F(LiveSnapshotTest, DeletedPodWhileWaitingIsForgotten) {
  live_.Build({}, {}, {});
  live_.PodChanged("x/p", Pod("x", "p", "late", 8).get());
  live_.PodChanged("x/p", nullptr);
  live_.NodeChanged("late", Node("late", "b1").get());
  EXPECT_EQ(UsedGpus("late"), 0);
}

TEST_F(LiveSnapshotTest, RestoreThatCannotHappenYetIsRetriedWhenTheNodeArrives) {
  live_.Build({Node("n0", "b1")}, {Job("ml", "llama", {"n0", "n1"})}, {});
  EXPECT_THAT(Reserved(), IsEmpty());  // all or nothing: n1 is unknown
  EXPECT_THAT(live_.UnrestoredJobs(), ElementsAre("ml/llama"));
  EXPECT_EQ(UsedGpus("n0"), 0);
  live_.NodeChanged("n1", Node("n1", "b1").get());
  EXPECT_THAT(Reserved(), ElementsAre("ml/llama"));
  EXPECT_THAT(live_.UnrestoredJobs(), IsEmpty());
  EXPECT_EQ(UsedGpus("n0"), 8);
  EXPECT_EQ(UsedGpus("n1"), 8);
}

TEST_F(LiveSnapshotTest, DeletingAJobReleasesItsReservation) {
  live_.Build({Node("n0", "b1")}, {Job("ml", "llama", {"n0"})}, {});
  ASSERT_THAT(Reserved(), ElementsAre("ml/llama"));
  live_.JobChanged("ml/llama", nullptr);
  EXPECT_THAT(Reserved(), IsEmpty());
  EXPECT_EQ(UsedGpus("n0"), 0);
  EXPECT_EQ(live_.counters().released_on_delete, 1);
}

// A job being deleted keeps its admitted status until the finalizer lets it go; the operator
// releases its reservation first, and a later update of the object (the deletion itself, the
// job controller's status write) must not restore it (audit 2026-11-30: seen once in a log).
// A reservation the scheduler itself restored earlier is released then.
TEST_F(LiveSnapshotTest, AJobBeingDeletedIsNotRestored) {
  auto deleting = [](const std::shared_ptr<const kube::RawObject>& job) {
    auto raw = std::make_shared<kube::RawObject>(*job);
    raw->json.insert(raw->json.find(R"("metadata":{)") + 12,
                     R"("deletionTimestamp":"2026-11-30T00:00:00Z",)");
    raw->meta.deletion_timestamp = "2026-11-30T00:00:00Z";
    return raw;
  };
  live_.Build({Node("n0", "b1"), Node("n1", "b1")}, {Job("ml", "llama", {"n0"})}, {});
  ASSERT_THAT(Reserved(), ElementsAre("ml/llama"));
  ASSERT_THAT(service_.Release("ml/llama"), IsOk());  // the operator, on deletion
  live_.JobChanged("ml/llama", deleting(Job("ml", "llama", {"n0"}, "Running")).get());
  EXPECT_THAT(Reserved(), IsEmpty());
  EXPECT_EQ(UsedGpus("n0"), 0);

  live_.JobChanged("ml/other", Job("ml", "other", {"n1"}, "Running").get());  // restored here
  ASSERT_THAT(Reserved(), ElementsAre("ml/other"));
  live_.JobChanged("ml/other", deleting(Job("ml", "other", {"n1"}, "Running")).get());
  EXPECT_THAT(Reserved(), IsEmpty());
  ExpectConsistent();
}

// Found by hack/chaos.sh: the operator released a finishing job's reservation through the
// Placement API while the scheduler's informer was behind; the job's older status (admitted,
// placed, not finished) then re-created the reservation, and nothing ever released it.
TEST_F(LiveSnapshotTest, AReservationRestoredFromAStaleStatusIsReleasedWhenTheJobFinishes) {
  live_.Build({Node("n0", "b1"), Node("n1", "b1")}, {Job("ml", "llama", {"n0", "n1"})}, {});
  ASSERT_THAT(Reserved(), ElementsAre("ml/llama"));
  ASSERT_THAT(service_.Release("ml/llama"), IsOk());  // the operator, on Succeeded
  live_.JobChanged("ml/llama", Job("ml", "llama", {"n0", "n1"}, "Admitted").get());  // stale
  ASSERT_THAT(Reserved(), ElementsAre("ml/llama"));
  live_.JobChanged("ml/llama", Job("ml", "llama", {"n0", "n1"}, "Succeeded").get());
  EXPECT_THAT(Reserved(), IsEmpty());
  EXPECT_EQ(UsedGpus("n0"), 0);
  EXPECT_EQ(live_.counters().released_on_finish, 1);
  ExpectConsistent();
}

TEST_F(LiveSnapshotTest, AFinishedJobHoldsNoReservationWhoeverMadeIt) {
  live_.Build({Node("n0", "b1")}, {}, {});
  ASSERT_THAT(service_.Reserve([] {
    placement::GangRequest r;
    r.job = "ml/done";
    r.count = 1;
    r.per_pod = {{"nvidia.com/gpu", 8}};
    return r;
  }()),
              IsOk());
  live_.JobChanged("ml/done", Job("ml", "done", {"n0"}, "Failed").get());
  EXPECT_THAT(Reserved(), IsEmpty());
}

TEST_F(LiveSnapshotTest, AReservationRestoredFromAStatusTheJobHasLeftIsReleased) {
  // Preempted: the operator released the reservation and wrote status without admission; an
  // older status arriving in between re-created it.
  live_.Build({Node("n0", "b1")}, {Job("ml", "llama", {"n0"})}, {});
  ASSERT_THAT(service_.Release("ml/llama"), IsOk());
  live_.JobChanged("ml/llama", Job("ml", "llama", {"n0"}, "Running").get());
  ASSERT_THAT(Reserved(), ElementsAre("ml/llama"));
  live_.JobChanged("ml/llama", Job("ml", "llama", {}, "Queued", /*admitted=*/false).get());
  EXPECT_THAT(Reserved(), IsEmpty());
  EXPECT_EQ(live_.counters().released_stale, 1);
  // A reservation the operator makes afresh for the queued job is its own: kept.
  ASSERT_THAT(service_.Reserve([] {
    placement::GangRequest r;
    r.job = "ml/llama";
    r.count = 1;
    r.per_pod = {{"nvidia.com/gpu", 8}};
    return r;
  }()),
              IsOk());
  live_.JobChanged("ml/llama", Job("ml", "llama", {}, "Queued", /*admitted=*/false).get());
  EXPECT_THAT(Reserved(), ElementsAre("ml/llama"));
}

TEST_F(LiveSnapshotTest, AJobWithoutPlacementKeepsAReservationTheOperatorJustMade) {
  // The operator reserves through the Placement API first and writes status.placement after:
  // the scheduler must not drop the reservation in between.
  live_.Build({Node("n0", "b1")}, {}, {});
  ASSERT_THAT(service_.Reserve([] {
    placement::GangRequest r;
    r.job = "ml/fresh";
    r.count = 1;
    r.per_pod = {{"nvidia.com/gpu", 8}};
    return r;
  }()),
              IsOk());
  live_.JobChanged("ml/fresh", Job("ml", "fresh", {}, "Queued", /*admitted=*/false).get());
  EXPECT_THAT(Reserved(), ElementsAre("ml/fresh"));
}

TEST_F(LiveSnapshotTest, NodeHealthChangesApplyLive) {
  live_.Build({Node("n0", "b1")}, {}, {});
  live_.NodeChanged("n0", Node("n0", "b1", /*ready=*/false).get());
  service_.Read([](const placement::ClusterSnapshot& s) {
    EXPECT_EQ(s.nodes()[s.FindNode("n0")].condition, placement::NodeCondition::kNotReady);
  });
  live_.NodeChanged("n0", nullptr);
  service_.Read([](const placement::ClusterSnapshot& s) { EXPECT_EQ(s.FindNode("n0"), -1); });
}

// A node carrying only the given layers (1..3) of the eks topology.
std::shared_ptr<const kube::Node> NodeWithLayers(const std::string& name,
                                                 const std::vector<int>& layers) {
  auto node = std::make_shared<kube::Node>();
  node->meta.name = name;
  for (int layer : layers) {
    node->meta.labels.Set(absl::StrCat("topology.k8s.aws/network-node-layer-", layer),
                          absl::StrCat("l", layer));
  }
  node->allocatable = {{"nvidia.com/gpu", 8}, {"pods", 110}};
  node->ready = true;
  return node;
}

TEST_F(LiveSnapshotTest, ANodeWithALabelGapIsLoggedOnceAndListed) {
  // Audit 2026-11-30 (finding 6): a node with a deeper topology label but not a coarser one
  // (its deeper labels ignored) was silently usable at no deeper level.
  std::ostringstream log;
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  auto capture = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  capture->set_level(spdlog::level::info);
  spdlog::set_default_logger(capture);
  auto lines_with = [&](const std::string& text) {
    int n = 0;
    std::istringstream in(log.str());
    for (std::string line; std::getline(in, line);) n += line.find(text) != std::string::npos;
    return n;
  };
  const std::string l1 = "topology.k8s.aws/network-node-layer-1";
  const std::string l2 = "topology.k8s.aws/network-node-layer-2";

  live_.Build({NodeWithLayers("gap", {1, 3}), NodeWithLayers("short", {1, 2})}, {}, {});
  // Updates in the same state (status heartbeats) say nothing more.
  for (int i = 0; i < 3; ++i) live_.NodeChanged("gap", NodeWithLayers("gap", {1, 3}).get());
  EXPECT_EQ(lines_with("node gap carries " + std::string(kLayer3) + " but not " + l2), 1)
      << log.str();
  EXPECT_EQ(lines_with("node short"), 0);  // missing only the deepest labels is no gap
  auto gaps = live_.LabelGapNodes();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].first, "gap");
  EXPECT_EQ(gaps[0].second.missing, l2);
  EXPECT_THAT(gaps[0].second.ignored, ElementsAre(kLayer3));

  // Another gap is a new state: logged again. Labels complete: listed no more.
  live_.NodeChanged("gap", NodeWithLayers("gap", {2, 3}).get());
  EXPECT_EQ(lines_with("node gap carries " + l2 + ", " + kLayer3 + " but not " + l1), 1);
  live_.NodeChanged("gap", NodeWithLayers("gap", {1, 2, 3}).get());
  EXPECT_THAT(live_.LabelGapNodes(), IsEmpty());
  live_.NodeChanged("short", NodeWithLayers("short", {3}).get());
  EXPECT_EQ(live_.LabelGapNodes().size(), 1u);
  live_.NodeChanged("short", nullptr);  // deleted
  EXPECT_THAT(live_.LabelGapNodes(), IsEmpty());
  spdlog::set_default_logger(previous);
}

TEST_F(LiveSnapshotTest, EventsBeforeBuildAreLeftToBuild) {
  live_.NodeChanged("n0", Node("n0", "b1").get());
  EXPECT_EQ(UsedGpus("n0"), -1);
  EXPECT_FALSE(live_.built());
  live_.Build({Node("n0", "b1")}, {}, {});
  EXPECT_TRUE(live_.built());
  EXPECT_EQ(UsedGpus("n0"), 0);
}

TEST(GangRequestFromTest, ReadsEveryFieldOfTheJob) {
  auto raw = std::string(R"({"metadata":{"name":"j","namespace":"ml"},"spec":{"queueName":"q",)"
                         R"("replicas":8,"priority":100,"elastic":{"minReplicas":4,"maxReplicas":16,"step":4},)"
                         R"("topology":{"required":"topology.k8s.aws/network-node-layer-2",)"
                         R"("preferred":"topology.k8s.aws/network-node-layer-3","groupSize":4,)"
                         R"("groupLevel":"topology.k8s.aws/network-node-layer-3"},)"
                         R"("template":{"spec":{"nodeSelector":{"pool":"p5"},)"
                         R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
                         R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In",)"
                         R"("values":["a"]}]}]}}},)"
                         R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],)"
                         R"("containers":[{"name":"t","resources":{"requests":{"nvidia.com/gpu":"8","cpu":"500m"}}}]}}}})");
  ASSERT_OK_AND_ASSIGN(kube::TrainingJob job, kube::DecodeTrainingJob(raw));
  placement::GangRequest r = GangRequestFrom(job);
  EXPECT_EQ(r.job, "ml/j");
  EXPECT_EQ(r.count, 8);
  ASSERT_TRUE(r.elastic.has_value());
  EXPECT_EQ(r.elastic->min, 4);
  EXPECT_EQ(r.elastic->max, 16);
  EXPECT_EQ(r.elastic->step, 4);
  EXPECT_EQ(r.per_pod.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(r.per_pod.at("cpu"), 500);
  EXPECT_EQ(r.node_selector.at("pool"), "p5");
  ASSERT_EQ(r.node_affinity.size(), 1u);
  EXPECT_EQ(r.node_affinity[0].match_expressions,
            (std::vector<placement::NodeSelectorRequirement>{{"zone", "In", {"a"}}}));
  ASSERT_EQ(r.tolerations.size(), 1u);
  EXPECT_EQ(r.tolerations[0].op, "Exists");
  EXPECT_EQ(r.required_level, "topology.k8s.aws/network-node-layer-2");
  EXPECT_EQ(r.preferred_level, "topology.k8s.aws/network-node-layer-3");
  EXPECT_EQ(r.group_size, 4);
  EXPECT_EQ(r.priority, 100);
  EXPECT_FALSE(RestorableFrom(job).has_value());  // no status
}

// The admitted flavors' labels and tolerations recorded at admission join the request, so a
// restored reservation moves (ReplaceNodes, Resize) only onto the flavor's nodes.
TEST(GangRequestFromTest, TheFlavorAsRecordedAtAdmissionJoinsTheRequest) {
  auto raw = std::string(
      R"({"metadata":{"name":"j","namespace":"ml"},"spec":{"queueName":"q","replicas":2,)"
      R"("template":{"spec":{"nodeSelector":{"pool":"p5"},)"
      R"("containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}},)"
      R"("status":{"admission":{"clusterQueue":"cq","flavor":"f","replicas":2,)"
      R"("nodeSelector":{"node.kubernetes.io/instance-type":"p5.48xlarge"},)"
      R"("tolerations":[{"key":"spot","operator":"Exists"}]}}})");
  ASSERT_OK_AND_ASSIGN(kube::TrainingJob job, kube::DecodeTrainingJob(raw));
  placement::GangRequest r = GangRequestFrom(job);
  EXPECT_EQ(r.node_selector,
            (std::map<std::string, std::string>{{"node.kubernetes.io/instance-type", "p5.48xlarge"},
                                                {"pool", "p5"}}));
  ASSERT_EQ(r.tolerations.size(), 1u);
  EXPECT_EQ(r.tolerations[0].key, "spot");
  EXPECT_EQ(r.tolerations[0].op, "Exists");
}

TEST(GangRequestFromTest, RequestsDefaultToLimitsAsForPods) {
  // GPUs are usually given as limits only, and as a YAML number; the API server defaults a
  // pod's requests to its limits and stores quantities as strings, but a template inside a
  // custom resource gets neither. The e2e test caught a restored gang holding 0 GPUs per rank.
  ASSERT_OK_AND_ASSIGN(
      kube::TrainingJob job,
      kube::DecodeTrainingJob(
          R"({"metadata":{"name":"j","namespace":"ml"},"spec":{"replicas":2,"template":{"spec":{)"
          R"("containers":[{"name":"t","resources":{"limits":{"nvidia.com/gpu":8,"cpu":"4"},)"
          R"("requests":{"cpu":"2"}}},{"name":"s","resources":{"limits":{"memory":"1Gi"}}}]}}}})"));
  placement::GangRequest r = GangRequestFrom(job);
  EXPECT_EQ(r.per_pod.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(r.per_pod.at("cpu"), 2000);  // an explicit request wins over the limit
  EXPECT_EQ(r.per_pod.at("memory"), int64_t{1} << 30);
  // The template kept for building pods is the user's, untouched.
  EXPECT_EQ(job.template_json.find("\"requests\":{\"cpu\":\"2\"}") != std::string::npos, true);
  // Requests alone, as numbers, decode too.
  ASSERT_OK_AND_ASSIGN(
      job, kube::DecodeTrainingJob(
               R"({"metadata":{"name":"j","namespace":"ml"},"spec":{"replicas":2,"template":{)"
               R"("spec":{"containers":[{"name":"t","resources":{"requests":{"nvidia.com/gpu":8}}}]}}}})"));
  EXPECT_EQ(GangRequestFrom(job).per_pod.at("nvidia.com/gpu"), 8);
}

TEST(DecodeTrainingJobTest, TypeErrorsNameTheField) {
  EXPECT_THAT(kube::DecodeTrainingJob(R"({"metadata":{"name":"j"},"spec":{"replicas":"8","template":{}}})"),
              ::phalanx::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                           ::testing::HasSubstr("spec.replicas")));
  EXPECT_THAT(kube::DecodeTrainingJob(R"({"metadata":{"name":"j"},"spec":{"replicas":8}})"),
              ::phalanx::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                           ::testing::HasSubstr("spec.template")));
  EXPECT_THAT(
      kube::DecodeTrainingJob(
          R"({"metadata":{"name":"j"},"spec":{"replicas":8,"template":{}},"status":{"placement":{"nodes":[1]}}})"),
      ::phalanx::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                   ::testing::HasSubstr("status.placement.nodes[0]")));
}

}  // namespace
}  // namespace phalanx::scheduler
