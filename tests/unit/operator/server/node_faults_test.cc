// The operator's answer to failed nodes under an admitted gang, against the real placement core:
// what counts as failed, replace inside the domain, shrink an elastic gang (ranks stay dense),
// evict otherwise; a NotReady node waits out its grace first.
#include "operator/server/node_faults.h"
#include "operator/server/pods_ready.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/server/job_status.h"
#include "scheduler/in_process_placement_service.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::operator_server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using namespace ::phalanx::placement::testing;  // NOLINT: the test cluster vocabulary

kube::StringMap HealthLabel(const std::string& value) {
  std::vector<kube::StringMap::Entry> entries;
  entries.emplace_back("sagemaker.amazonaws.com/node-health-status", value);
  return kube::StringMap(std::move(entries));
}

kube::Node ReadyNode(const std::string& name) {
  kube::Node node;
  node.meta.name = name;
  node.ready = true;
  return node;
}

TEST(DetectNodeFault, WhatCountsAsFailed) {
  const std::vector<placement::Toleration> none;
  kube::Node node = ReadyNode("n");
  EXPECT_EQ(DetectNodeFault("n", &node, none), std::nullopt);
  EXPECT_EQ(DetectNodeFault("n", nullptr, none)->kind, NodeFaultKind::kDeleted);
  node.ready = false;
  EXPECT_EQ(DetectNodeFault("n", &node, none)->kind, NodeFaultKind::kNotReady);

  // HyperPod's health label: anything but Schedulable.
  for (const char* value :
       {"Unschedulable", "UnschedulablePendingReplacement", "UnschedulablePendingReboot"}) {
    node = ReadyNode("n");
    node.meta.labels = HealthLabel(value);
    std::optional<NodeFault> fault = DetectNodeFault("n", &node, none);
    ASSERT_TRUE(fault.has_value()) << value;
    EXPECT_EQ(fault->kind, NodeFaultKind::kUnhealthy);
    EXPECT_THAT(fault->detail, HasSubstr(value));
  }
  node.meta.labels = HealthLabel("Schedulable");
  EXPECT_EQ(DetectNodeFault("n", &node, none), std::nullopt);

  // Taints: untolerated NoSchedule / NoExecute; not PreferNoSchedule, not the node lifecycle's
  // condition taints (NotReady has its own grace), not tolerated ones.
  node = ReadyNode("n");
  node.taints = {{"example.com/gpu-xid", "79", "NoExecute"}};
  std::optional<NodeFault> tainted = DetectNodeFault("n", &node, none);
  ASSERT_TRUE(tainted.has_value());
  EXPECT_EQ(tainted->kind, NodeFaultKind::kTainted);
  EXPECT_THAT(tainted->detail, HasSubstr("example.com/gpu-xid=79:NoExecute"));
  EXPECT_EQ(DetectNodeFault("n", &node, {{"example.com/gpu-xid", "Exists", "", ""}}), std::nullopt);
  // A cordon is its own kind (the responder spares the ranks running there), whether the node
  // lifecycle controller has mirrored spec.unschedulable as its taint yet or not; said as the
  // user did it, not as the taint derived from it.
  node.taints = {{"node.kubernetes.io/unschedulable", "", "NoSchedule"}};
  std::optional<NodeFault> cordoned = DetectNodeFault("n", &node, none);
  ASSERT_TRUE(cordoned.has_value());
  EXPECT_EQ(cordoned->kind, NodeFaultKind::kCordoned);
  EXPECT_EQ(cordoned->detail, "n is cordoned (spec.unschedulable)");
  EXPECT_EQ(FaultReason(cordoned->kind), "NodeCordoned");
  node.taints = {};
  node.unschedulable = true;
  EXPECT_EQ(DetectNodeFault("n", &node, none)->kind, NodeFaultKind::kCordoned);
  EXPECT_EQ(DetectNodeFault("n", &node, {{"node.kubernetes.io/unschedulable", "Exists", "", ""}}),
            std::nullopt);
  // A cordoned node with a health agent's taint too: the taint, which moves ranks at once.
  node.taints = {{"node.kubernetes.io/unschedulable", "", "NoSchedule"},
                 {"example.com/gpu-xid", "79", "NoSchedule"}};
  EXPECT_EQ(DetectNodeFault("n", &node, none)->kind, NodeFaultKind::kTainted);
  node.unschedulable = false;
  node.taints = {{"node.kubernetes.io/not-ready", "", "NoExecute"},
                 {"node.kubernetes.io/memory-pressure", "", "NoSchedule"},
                 {"example.com/soon", "", "PreferNoSchedule"}};
  EXPECT_EQ(DetectNodeFault("n", &node, none), std::nullopt);
}

// A pod of TrainingJob ns/j (uid "u1") for `rank` of gang generation `restart`.
kube::Pod RankPod(int rank, int restart, const std::string& node, const std::string& phase) {
  kube::Pod pod;
  pod.meta.name = absl::StrCat("j-", rank);
  pod.meta.namespace_ = "ns";
  std::vector<kube::StringMap::Entry> labels;
  labels.emplace_back("phalanx.dev/rank", std::to_string(rank));
  labels.emplace_back("phalanx.dev/restart", std::to_string(restart));
  pod.meta.labels = kube::StringMap(std::move(labels));
  pod.meta.owner_references = {
      {.kind = "TrainingJob", .name = "j", .uid = "u1", .controller = true}};
  pod.node_name = node;
  pod.phase = phase;
  return pod;
}

// A node relabelled under a running gang (GFD moving a GB200 node to another NVLink clique, an
// EC2 topology label that changed): the job is told which rank and what broke, once.
TEST(TopologyDrift, ARankOutsideItsDomainOrGroupIsNamed) {
  const std::string clique = "nvidia.com/gpu.clique", l3 = "topology.k8s.aws/network-node-layer-3";
  std::map<std::string, std::shared_ptr<const kube::Node>> nodes;
  auto node = [&](const std::string& name, const std::string& c, const std::string& block) {
    kube::Node n;
    n.meta.name = name;
    std::vector<kube::StringMap::Entry> labels;
    if (!c.empty()) labels.emplace_back(clique, c);
    labels.emplace_back(l3, block);
    n.meta.labels = kube::StringMap(std::move(labels));
    nodes[name] = std::make_shared<const kube::Node>(n);
  };
  auto lookup = [&](const std::string& name) -> std::shared_ptr<const kube::Node> {
    auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : it->second;
  };
  for (int i = 0; i < 8; ++i) node(absl::StrCat("g", i), i < 4 ? "c1" : "c2", "b1");
  kube::TrainingJob job;
  job.topology.group_size = 4;
  job.topology.group_level = clique;
  job.status.placement = kube::TrainingJobPlacement{
      .domain = "b1", .level = l3, .nodes = {"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7"}};
  EXPECT_EQ(TopologyDrift(job, lookup), "");
  node("g0", "c9", "b1");  // rank 0's node moved to another clique
  EXPECT_EQ(TopologyDrift(job, lookup),
            "rank 0's node g0 now has nvidia.com/gpu.clique=c9: group 0 (ranks 0-3) spans 2 "
            "nvidia.com/gpu.clique domains");
  node("g5", "", "b2");  // and rank 5's lost its clique label and left the block
  EXPECT_EQ(TopologyDrift(job, lookup),
            "rank 5's node g5 now has topology.k8s.aws/network-node-layer-3=b2, outside the "
            "gang's domain b1 (and 2 more such ranks)");
  nodes.erase("g5");  // a deleted node is a fault, not drift
  EXPECT_EQ(TopologyDrift(job, lookup),
            "rank 0's node g0 now has nvidia.com/gpu.clique=c9: group 0 (ranks 0-3) spans 2 "
            "nvidia.com/gpu.clique domains");
  job.status.placement->level = "";  // placed on the whole cluster: no domain to leave
  job.topology.group_size = 0;
  EXPECT_EQ(TopologyDrift(job, lookup), "");
}

// The pods-ready eviction's message (pods_ready.h): the ranks of the current restart that do not
// run, the first few by name with where they are stuck.
TEST(DescribeNotRunning, NamesTheFirstRanksNotRunningAndCountsTheRest) {
  kube::TrainingJob job;
  job.meta.uid = "u1";
  job.status.restarts = 1;
  job.status.admission = kube::TrainingJobAdmission{.replicas = 6};
  std::vector<std::shared_ptr<const kube::Pod>> pods;
  auto add = [&](kube::Pod pod) { pods.push_back(std::make_shared<const kube::Pod>(pod)); };
  add(RankPod(0, 1, "a", "Running"));
  kube::Pod unschedulable = RankPod(1, 1, "", "Pending");
  unschedulable.unschedulable = true;
  unschedulable.unschedulable_message = "0/8 nodes are available: pvc \"x\" not found.";
  add(unschedulable);
  add(RankPod(2, 1, "c", "Succeeded"));
  add(RankPod(3, 1, "d", "Pending"));   // bound, its image not pulled yet
  add(RankPod(4, 0, "e", "Running"));   // the previous restart's: rank 4 has no pod
  add(RankPod(5, 1, "", "Pending"));
  EXPECT_EQ(DescribeNotRunning(job, pods),
            "4 of 6 ranks not running: rank 1 (pod j-1) Pending, not bound to a node "
            "(unschedulable: 0/8 nodes are available: pvc \"x\" not found.); rank 3 (pod j-3) "
            "Pending on node d and 2 more");
  EXPECT_EQ(DescribeNotRunning(job, pods, 4),
            "4 of 6 ranks not running: rank 1 (pod j-1) Pending, not bound to a node "
            "(unschedulable: 0/8 nodes are available: pvc \"x\" not found.); rank 3 (pod j-3) "
            "Pending on node d; rank 4 has no pod; "
            "rank 5 (pod j-5) Pending, not bound to a node");
  job.status.admission->replicas = 1;
  EXPECT_EQ(DescribeNotRunning(job, {}), "1 of 1 rank not running: rank 0 has no pod");
  // The last pod create the API server refused says why a rank has none.
  const std::string refused = "create pod ns/j-0: pods \"j-0\" is forbidden: exceeded quota: gpus";
  EXPECT_EQ(DescribeNotRunning(job, {}, 2, refused),
            "1 of 1 rank not running: rank 0 has no pod; the last pod create was refused: " +
                refused);
  // Not when every rank has a pod (the refusal is from before).
  const auto pending = std::make_shared<const kube::Pod>(RankPod(0, 1, "", "Pending"));
  EXPECT_EQ(DescribeNotRunning(job, {pending}, 2, refused),
            "1 of 1 rank not running: rank 0 (pod j-0) Pending, not bound to a node");
  // Its previous pod stuck terminating (a kubelet that does not answer): that is why.
  kube::Pod stuck = RankPod(0, 0, "n9", "Running");
  stuck.meta.deletion_timestamp = "2026-11-30T11:00:00Z";
  job.meta.name = "j";
  EXPECT_EQ(DescribeNotRunning(job, {std::make_shared<const kube::Pod>(stuck)}),
            "1 of 1 rank not running: rank 0 has no pod: the previous pod j-0 is still "
            "terminating on node n9");
}

TEST(RunningRanks, PodsOfTheCurrentRestartThatRunOrSucceeded) {
  kube::TrainingJob job;
  job.meta.uid = "u1";
  job.status.restarts = 1;
  job.status.admission = kube::TrainingJobAdmission{.replicas = 5};
  std::vector<std::shared_ptr<const kube::Pod>> pods;
  auto add = [&](kube::Pod pod) { pods.push_back(std::make_shared<const kube::Pod>(pod)); };
  add(RankPod(0, 1, "a", "Running"));
  add(RankPod(1, 1, "b", "Pending"));
  add(RankPod(2, 1, "c", "Succeeded"));
  add(RankPod(3, 0, "d", "Running"));  // the previous restart's
  kube::Pod deleting = RankPod(4, 1, "e", "Running");
  deleting.meta.deletion_timestamp = "2026-11-30T00:00:00Z";
  add(deleting);
  add(RankPod(7, 1, "f", "Running"));  // above the admitted size (a shrink's, stopping)
  EXPECT_THAT(RunningRanks(job, pods), ElementsAre(0, 2));
}

TEST(RanksInPlace, RanksWhosePodRunsOnTheirReservedNodeAndNeedsNothing) {
  kube::TrainingJob job;
  job.meta.uid = "u1";
  job.status.restarts = 2;
  job.status.placement = kube::TrainingJobPlacement{};
  job.status.placement->nodes = {"a", "b", "c", "d", "e", "f", "g"};
  std::vector<std::shared_ptr<const kube::Pod>> pods;
  auto add = [&](kube::Pod pod) { pods.push_back(std::make_shared<const kube::Pod>(pod)); };
  add(RankPod(0, 2, "a", "Running"));
  add(RankPod(1, 2, "b", "Succeeded"));  // done: needs no new pod
  kube::Pod deleting = RankPod(2, 2, "c", "Running");
  deleting.meta.deletion_timestamp = "2026-11-30T00:00:00Z";  // a drain's eviction
  add(deleting);
  add(RankPod(3, 2, "d", "Failed"));
  add(RankPod(4, 2, "", "Pending"));       // not bound yet
  add(RankPod(5, 2, "x", "Running"));      // moved: reserved elsewhere now
  add(RankPod(6, 1, "g", "Running"));      // the previous generation
  kube::Pod foreign = RankPod(6, 2, "g", "Running");
  foreign.meta.owner_references = {{.kind = "TrainingJob", .uid = "u0", .controller = true}};
  add(foreign);                            // a job of the same name deleted and created again
  EXPECT_THAT(RanksInPlace(job, pods), ElementsAre(0, 1));
  job.status.placement.reset();
  EXPECT_TRUE(RanksInPlace(job, pods).empty());
}

TEST(ShrinkTarget, LargestAllowedCountWithoutTheLostRanks) {
  EXPECT_EQ(ShrinkTarget(8, 1, {.min_replicas = 2, .max_replicas = 8, .step = 1}, 0), 7);
  EXPECT_EQ(ShrinkTarget(8, 1, {.min_replicas = 2, .max_replicas = 8, .step = 2}, 0), 6);
  EXPECT_EQ(ShrinkTarget(8, 2, {.min_replicas = 4, .max_replicas = 8, .step = 2}, 4), 4);
  EXPECT_EQ(ShrinkTarget(3, 2, {.min_replicas = 2, .max_replicas = 8, .step = 1}, 0), std::nullopt);
}

// Block c1 (x0..x4) and block c2 (y0..y5) under layer-2 "b", and the operator's view of them.
// Gangs of up to 5 take c1 (the best fit), from x0 up.
class NodeFaultsTest : public ::testing::Test {
 protected:
  NodeFaultsTest() : service_(Cluster()) {
    for (const char* n : {"x0", "x1", "x2", "x3", "x4", "y0", "y1", "y2", "y3", "y4", "y5"}) {
      nodes_[n] = ReadyNode(n);
    }
  }
  static placement::ClusterSnapshot Cluster() {
    placement::ClusterSnapshot snapshot(Eks());
    AddNodes(snapshot, {"a", "b", "c1"}, "x", 5);
    AddNodes(snapshot, {"a", "b", "c2"}, "y", 6);
    return snapshot;
  }

  // A job admitted with `count` pods, reserved through the service; its status as written.
  kube::TrainingJob Admit(int32_t count, const std::string& required,
                          std::optional<kube::TrainingJobElastic> elastic = std::nullopt) {
    kube::TrainingJob job;
    job.meta.name = "j";
    job.meta.namespace_ = "ns";
    job.elastic = elastic;
    placement::GangRequest request = Gang("ns/j", count, 8, required);
    if (elastic) request.elastic = placement::ElasticRange{elastic->min_replicas, count, 1};
    absl::StatusOr<placement::PlacementResult> r = service_.Reserve(request);
    EXPECT_TRUE(r.ok() && r->placed);
    job.status.admission =
        kube::TrainingJobAdmission{.cluster_queue = "cq", .flavor = "h100", .replicas = count};
    job.status.placement = PlacementStatus(r->placement);
    return job;
  }

  // The node as the informer and the scheduler's snapshot both see it.
  void SetNode(const kube::Node& node) {
    nodes_[node.meta.name] = node;
    ASSERT_OK(service_.Update([&](placement::ClusterSnapshot& s) {
      placement::NodeInfo info = s.nodes()[s.FindNode(node.meta.name)].info;
      info.ready = node.ready;
      info.unschedulable = node.unschedulable;
      info.labels.erase(std::string(placement::kNodeHealthLabel));
      for (const auto& [k, v] : node.meta.labels) info.labels[k.str()] = v.str();
      return s.UpdateNode(info);
    }));
  }
  void NotReady(const std::string& name) {
    kube::Node node = nodes_[name];
    node.ready = false;
    SetNode(node);
  }
  std::vector<std::string> Held() {
    std::vector<std::string> nodes;
    service_.Read([&](const placement::ClusterSnapshot& s) {
      if (const auto* r = s.FindReservation("ns/j")) {
        for (const auto& rank : r->ranks) nodes.push_back(s.nodes()[rank.node].info.name);
      }
    });
    return nodes;
  }

  placement::InProcessPlacementService service_;
  std::map<std::string, kube::Node> nodes_;
  std::vector<placement::Toleration> flavor_tolerations_;
  std::vector<std::shared_ptr<const kube::Pod>> pods_;  // the job's, as the pod informer has them
  NodeFaultResponder faults_{[this](const std::string& name) -> std::shared_ptr<const kube::Node> {
                               auto it = nodes_.find(name);
                               if (it == nodes_.end()) return nullptr;
                               return std::make_shared<const kube::Node>(it->second);
                             },
                             [this](const std::string& flavor) {
                               return flavor == "h100" ? flavor_tolerations_
                                                       : std::vector<placement::Toleration>{};
                             },
                             [this](const std::string& job) {
                               EXPECT_EQ(job, "ns/j");
                               return pods_;
                             },
                             service_,
                             {.not_ready_grace = absl::Seconds(30)}};
  const absl::Time t0_ = absl::FromUnixSeconds(1'800'000'000);
};

TEST_F(NodeFaultsTest, NotReadyWaitsOutItsGraceThenTheRankMovesInsideItsBlock) {
  kube::TrainingJob job = Admit(4, kLayer2);
  ASSERT_THAT(job.status.placement->nodes, ElementsAre("x0", "x1", "x2", "x3"));
  EXPECT_EQ(faults_.Respond(job, t0_), std::nullopt);  // all healthy
  EXPECT_THAT(faults_.notices(), ::testing::IsEmpty());
  NotReady("x1");
  faults_.BeginCycle();
  EXPECT_EQ(faults_.Respond(job, t0_), std::nullopt);
  EXPECT_EQ(faults_.next_check(), t0_ + absl::Seconds(30));
  // The job is told at once when its rank will move, once per NotReady episode.
  ASSERT_EQ(faults_.notices().size(), 1u);
  EXPECT_EQ(faults_.notices()[0].job, "ns/j");
  EXPECT_EQ(faults_.notices()[0].message,
            "x1 (rank 1) is NotReady: its ranks move to a spare node at 2027-01-15T08:00:30Z "
            "(NotReady grace 30 s) unless it is Ready again by then");
  faults_.BeginCycle();
  EXPECT_EQ(faults_.Respond(job, t0_ + absl::Seconds(10)), std::nullopt);  // since t0, not t0+10
  EXPECT_THAT(faults_.notices(), ::testing::IsEmpty());

  faults_.BeginCycle();
  std::optional<FaultDecision> d = faults_.Respond(job, t0_ + absl::Seconds(31));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->action, FaultAction::kReplaced);
  EXPECT_EQ(d->reason, "NodeNotReady");
  EXPECT_THAT(d->placement->nodes, ElementsAre("x0", "x4", "x2", "x3"));
  EXPECT_EQ(d->placement->domain, "c1");
  EXPECT_EQ(d->admission->replicas, 4);
  EXPECT_THAT(d->nodes_replaced, ElementsAre(Pair("NodeNotReady", 1)));
  EXPECT_THAT(d->message, HasSubstr("x1 is NotReady for 31s"));
  EXPECT_THAT(d->message, HasSubstr("rank 1 x1 -> x4"));
  EXPECT_EQ(Held(), d->placement->nodes);

  // The same job seen again before the informer shows the new status: the same answer, and
  // nothing moves twice.
  std::optional<FaultDecision> again = faults_.Respond(job, t0_ + absl::Seconds(32));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->placement->nodes, d->placement->nodes);
  job.status.placement = d->placement;
  EXPECT_EQ(faults_.Respond(job, t0_ + absl::Seconds(33)), std::nullopt);

  // Back to Ready: the grace starts over on the next failure, and the job is told again.
  nodes_["x1"].ready = true;
  faults_.BeginCycle();
  NotReady("x4");
  EXPECT_EQ(faults_.Respond(job, t0_ + absl::Seconds(100)), std::nullopt);
  ASSERT_EQ(faults_.notices().size(), 1u);
  EXPECT_THAT(faults_.notices()[0].message, HasSubstr("x4 (rank 1) is NotReady"));
}

TEST_F(NodeFaultsTest, TwoUnhealthyNodesAtOnceAreBothReplaced) {
  kube::TrainingJob job = Admit(3, kLayer2);  // x0..x2; x3, x4 free in c1
  for (const char* name : {"x0", "x2"}) {
    kube::Node node = nodes_[name];
    node.meta.labels = HealthLabel("UnschedulablePendingReplacement");
    SetNode(node);
  }
  std::optional<FaultDecision> d = faults_.Respond(job, t0_);  // no grace for the label
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->action, FaultAction::kReplaced);
  EXPECT_EQ(d->reason, "NodeUnhealthy");
  EXPECT_THAT(d->placement->nodes, ElementsAre("x3", "x1", "x4"));
  EXPECT_THAT(d->nodes_replaced, ElementsAre(Pair("NodeUnhealthy", 2)));
}

TEST_F(NodeFaultsTest, AToleratedTaintIsNoFault) {
  kube::TrainingJob job = Admit(2, kLayer3);
  kube::Node node = nodes_["x0"];
  node.taints = {{"example.com/maintenance", "true", "NoSchedule"}};
  nodes_["x0"] = node;
  flavor_tolerations_ = {{"example.com/maintenance", "Exists", "", "NoSchedule"}};
  EXPECT_EQ(faults_.Respond(job, t0_), std::nullopt);
  flavor_tolerations_.clear();
  // The flavor's tolerations as recorded at admission are what the pods carry: they count,
  // whatever the NodeFlavor says now.
  job.status.admission->tolerations =
      std::vector<kube::Toleration>{{.key = "example.com/maintenance", .operator_ = "Exists"}};
  EXPECT_EQ(faults_.Respond(job, t0_), std::nullopt);
  job.status.admission->tolerations = std::vector<kube::Toleration>{};
  flavor_tolerations_ = {{"example.com/maintenance", "Exists", "", "NoSchedule"}};  // not read
  std::optional<FaultDecision> d = faults_.Respond(job, t0_);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->reason, "NodeTainted");
}

// kubectl cordon keeps new pods off a node and moves no running rank (a fixed-size NCCL gang
// would lose its step); a rank there that needs a new pod — drained, failed, or of a new gang
// generation — goes to a spare in the domain instead of waiting for a node that takes none.
TEST_F(NodeFaultsTest, ACordonMovesNoRunningRankButARankThatNeedsAPodGoesToASpare) {
  kube::TrainingJob job = Admit(3, kLayer2);  // x0..x2; x3, x4 free in c1
  job.meta.uid = "u1";
  for (int r = 0; r < 3; ++r) {
    pods_.push_back(std::make_shared<const kube::Pod>(
        RankPod(r, 0, job.status.placement->nodes[r], "Running")));
  }
  kube::Node x1 = nodes_["x1"];
  x1.unschedulable = true;
  x1.taints = {{"node.kubernetes.io/unschedulable", "", "NoSchedule"}};
  SetNode(x1);
  EXPECT_EQ(faults_.Respond(job, t0_), std::nullopt);
  EXPECT_TRUE(faults_.calls().empty());
  EXPECT_EQ(faults_.next_check(), std::nullopt);  // nothing to wait for: pod events wake it

  // kubectl drain evicts rank 1's pod: it is being deleted, and the rank moves.
  kube::Pod evicted = *pods_[1];
  evicted.meta.deletion_timestamp = "2026-11-30T00:00:00Z";
  pods_[1] = std::make_shared<const kube::Pod>(evicted);
  std::optional<FaultDecision> d = faults_.Respond(job, t0_);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->action, FaultAction::kReplaced);
  EXPECT_EQ(d->reason, "NodeCordoned");
  EXPECT_THAT(d->placement->nodes, ElementsAre("x0", "x3", "x2"));
  EXPECT_EQ(d->message,
            "replaced 1 node (x1 is cordoned (spec.unschedulable) and rank 1 there needs a new "
            "pod): rank 1 x1 -> x3; the gang is in topology.k8s.aws/network-node-layer-3=c1");
  EXPECT_THAT(d->nodes_replaced, ElementsAre(Pair("NodeCordoned", 1)));

  // A new gang generation (a restart after a failure) has no pod anywhere yet: the cordoned
  // node's rank goes to a spare before its pod is created; the others keep their nodes.
  faults_.BeginCycle();
  job.status.placement = d->placement;
  job.status.restarts = 1;
  kube::Node x3 = nodes_["x3"];
  x3.unschedulable = true;
  SetNode(x3);
  d = faults_.Respond(job, t0_);
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(d->placement->nodes, ElementsAre("x0", "x4", "x2"));
}

// A reserved node whose allocatable falls below its rank's request (a GPU off the bus: the
// device plugin re-registers with fewer devices) is a fault like a cordon: a running rank stays,
// a rank that needs a new pod (here not yet bound) moves to a spare instead of waiting for ever.
TEST_F(NodeFaultsTest, ANodeThatLostCapacityMovesARankThatNeedsAPod) {
  kube::TrainingJob job = Admit(3, kLayer2);  // x0..x2; x3, x4 free in c1
  job.meta.uid = "u1";
  job.pod.requests = phalanx::ResourceList{{"nvidia.com/gpu", 8}};
  for (int r = 0; r < 3; ++r) {
    pods_.push_back(std::make_shared<const kube::Pod>(
        RankPod(r, 0, job.status.placement->nodes[r], "Running")));
  }
  kube::Node x1 = nodes_["x1"];
  x1.allocatable = phalanx::ResourceList{{"nvidia.com/gpu", 4}};
  SetNode(x1);
  EXPECT_EQ(faults_.Respond(job, t0_), std::nullopt);  // rank 1 still runs there
  EXPECT_TRUE(faults_.calls().empty());

  kube::Pod pending = RankPod(1, 0, "", "Pending");  // a new pod, not bound yet
  pods_[1] = std::make_shared<const kube::Pod>(pending);
  std::optional<FaultDecision> d = faults_.Respond(job, t0_);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->reason, "NodeCapacityLost");
  EXPECT_THAT(d->placement->nodes, ElementsAre("x0", "x3", "x2"));
  EXPECT_THAT(d->message, ::testing::HasSubstr(
                              "x1 has nvidia.com/gpu=4 allocatable, below its rank's "
                              "nvidia.com/gpu=8 and rank 1 there needs a new pod"));
}

TEST_F(NodeFaultsTest, AnElasticGangWithoutASpareShrinksAndTheLostRankTakesAFreedNode) {
  kube::TrainingJob job =
      Admit(5, kLayer3, kube::TrainingJobElastic{.min_replicas = 2, .max_replicas = 5, .step = 1});
  ASSERT_THAT(job.status.placement->nodes, ElementsAre("x0", "x1", "x2", "x3", "x4"));
  // The pods run: the one of the dropped rank 4 still does when rank 1 wants its node.
  for (int r = 0; r < 5; ++r) {
    ASSERT_OK(service_.Update([&](placement::ClusterSnapshot& s) {
      return s.AddPod({absl::StrCat("ns/j-", r),
                       job.status.placement->nodes[r],
                       {{"nvidia.com/gpu", 8}},
                       "ns/j",
                       r});
    }));
  }
  NotReady("x1");
  EXPECT_EQ(faults_.Respond(job, t0_ + absl::Seconds(60)), std::nullopt);  // grace starts
  faults_.BeginCycle();
  std::optional<FaultDecision> d = faults_.Respond(job, t0_ + absl::Seconds(120));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->action, FaultAction::kShrunk);
  EXPECT_EQ(d->reason, "NodeNotReady");
  EXPECT_EQ(d->admission->replicas, 4);
  // Rank 4 went; rank 1 runs on the node rank 4 had: ranks stay 0..3.
  EXPECT_THAT(d->placement->nodes, ElementsAre("x0", "x4", "x2", "x3"));
  EXPECT_THAT(d->message, HasSubstr("shrunk from 5 to 4 pods"));
  EXPECT_EQ(Held(), d->placement->nodes);
}

// The pods-ready timeout on an elastic gang with only some ranks running (a namespace
// ResourceQuota that admits two of its four pods, say): it keeps the ranks that run, the rest
// go, and a rank not running below the new size leaves its node for one a dropped rank freed.
TEST_F(NodeFaultsTest, PodsReadyShrinksAnElasticGangToTheRanksThatRun) {
  kube::TrainingJob job =
      Admit(4, kLayer3, kube::TrainingJobElastic{.min_replicas = 2, .max_replicas = 4, .step = 1});
  ASSERT_THAT(job.status.placement->nodes, ElementsAre("x0", "x1", "x2", "x3"));
  std::string why;
  std::optional<FaultDecision> d =
      faults_.ShrinkToRunning(job, {0, 2}, "2 of 4 ranks not running", why);
  ASSERT_TRUE(d.has_value()) << why;
  EXPECT_EQ(d->action, FaultAction::kShrunk);
  EXPECT_EQ(d->reason, "PodsReadyTimeout");
  EXPECT_EQ(d->admission->replicas, 2);
  ASSERT_EQ(d->placement->nodes.size(), 2u);
  EXPECT_EQ(d->placement->nodes[0], "x0");
  // Rank 1 never ran on x1 and rank 3 never on x3: neither is a target; x2 (freed by rank 2)
  // or the spare x4, in the same block.
  EXPECT_THAT(d->placement->nodes[1], ::testing::AnyOf("x2", "x4"));
  EXPECT_THAT(d->message, HasSubstr("shrunk from 4 to 2 pods: 2 of 4 ranks not running; moved: "
                                    "rank 1 x1 -> "));
  EXPECT_EQ(Held(), d->placement->nodes);

  // Only rank 0 runs now, and the minimum is 2: no shrink, and the caller learns why.
  job.status.admission = d->admission;
  job.status.placement = d->placement;
  d = faults_.ShrinkToRunning(job, {0}, "1 of 2 ranks not running", why);
  EXPECT_EQ(d, std::nullopt);
  EXPECT_EQ(why, "; cannot shrink: 2 pods less 1 lost is below elastic.minReplicas 2");
  EXPECT_EQ(Held(), job.status.placement->nodes);  // nothing changed

  // A gang of a fixed size is never shrunk; nor one whose every rank runs.
  kube::TrainingJob fixed = job;
  fixed.elastic.reset();
  why.clear();
  EXPECT_EQ(faults_.ShrinkToRunning(fixed, {0}, "", why), std::nullopt);
  EXPECT_EQ(faults_.ShrinkToRunning(job, {0, 1}, "", why), std::nullopt);
  EXPECT_EQ(why, "");
}

// Two ranks per node: a rank that does not run on a node where another rank of the gang runs
// keeps its node (the node is not why); the shrink still drops the highest ranks.
TEST_F(NodeFaultsTest, PodsReadyShrinkKeepsANodeARunningRankShares) {
  kube::TrainingJob job;
  job.meta.name = "j";
  job.meta.namespace_ = "ns";
  job.elastic = kube::TrainingJobElastic{.min_replicas = 2, .max_replicas = 4, .step = 2};
  placement::GangRequest request = Gang("ns/j", 4, 4, kLayer3);
  request.elastic = placement::ElasticRange{2, 4, 2};
  absl::StatusOr<placement::PlacementResult> r = service_.Reserve(request);
  ASSERT_TRUE(r.ok() && r->placed);
  job.status.admission =
      kube::TrainingJobAdmission{.cluster_queue = "cq", .flavor = "h100", .replicas = 4};
  job.status.placement = PlacementStatus(r->placement);
  ASSERT_THAT(job.status.placement->nodes, ElementsAre("x0", "x0", "x1", "x1"));
  std::string why;
  std::optional<FaultDecision> d = faults_.ShrinkToRunning(job, {0, 3}, "not running", why);
  ASSERT_TRUE(d.has_value()) << why;
  EXPECT_THAT(d->placement->nodes, ElementsAre("x0", "x0"));
  EXPECT_THAT(d->message, Not(HasSubstr("moved")));
}

TEST_F(NodeFaultsTest, NoReplacementAndNoShrinkEvicts) {
  kube::TrainingJob job = Admit(5, kLayer3);  // fixed size, c1 full
  kube::Node node = nodes_["x2"];
  node.taints = {{"example.com/gpu-xid", "79", "NoExecute"}};
  nodes_["x2"] = node;
  std::optional<FaultDecision> d = faults_.Respond(job, t0_);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->action, FaultAction::kEvicted);
  EXPECT_EQ(d->reason, "NodeFailure");
  EXPECT_EQ(d->admission, std::nullopt);
  EXPECT_EQ(d->placement, std::nullopt);
  EXPECT_THAT(d->message, HasSubstr("no replacement: cannot replace rank 2"));
  EXPECT_TRUE(Held().empty());
  EXPECT_THAT(faults_.calls(), ElementsAre(Pair("Release", 1), Pair("ReplaceNodes", 1)));
  faults_.BeginCycle();
  EXPECT_TRUE(faults_.calls().empty());

  // An elastic gang whose minimum the loss would break is evicted too, saying why.
  kube::TrainingJob elastic =
      Admit(3, kLayer3, kube::TrainingJobElastic{.min_replicas = 3, .max_replicas = 4, .step = 1});
  nodes_["x2"] = ReadyNode("x2");
  for (const auto& [name, unused] : nodes_) {  // nothing spare anywhere
    const std::vector<std::string>& held = elastic.status.placement->nodes;
    if (std::find(held.begin(), held.end(), name) != held.end()) continue;
    ASSERT_OK(service_.Update([&](placement::ClusterSnapshot& s) {
      Occupy(s, name, 8);
      return absl::OkStatus();
    }));
  }
  node = nodes_[elastic.status.placement->nodes[0]];
  node.taints = {{"example.com/gpu-xid", "79", "NoExecute"}};
  nodes_[node.meta.name] = node;
  d = faults_.Respond(elastic, t0_);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->action, FaultAction::kEvicted);
  EXPECT_THAT(d->message, HasSubstr("cannot shrink: 3 pods less 1 lost is below "
                                    "elastic.minReplicas 3"));
}

TEST_F(NodeFaultsTest, ADeletedNodeWithoutAReservationEvicts) {
  kube::TrainingJob job = Admit(2, kLayer3);
  ASSERT_OK(service_.Release("ns/j"));  // e.g. a scheduler that could not restore it
  nodes_.erase("x0");
  std::optional<FaultDecision> d = faults_.Respond(job, t0_);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->action, FaultAction::kEvicted);
  EXPECT_THAT(d->message, HasSubstr("x0 was deleted"));
  EXPECT_THAT(d->message, HasSubstr("holds no reservation"));
}

}  // namespace
}  // namespace phalanx::operator_server
