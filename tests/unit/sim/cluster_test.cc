#include "sim/cluster.h"

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/phalanx_policy.h"
#include "sim/yaml_input.h"
#include "tests/unit/sim/sim_test_util.h"

namespace phalanx::sim {
namespace {

using ::testing::HasSubstr;

TEST(ClusterTest, DefaultIs128P5NodesInEksThreeLayerTopologyWithThreeTeams) {
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(DefaultClusterSpec()));
  ASSERT_EQ(cluster.nodes.size(), 128u);
  EXPECT_EQ(cluster.total_gpus, 1024);
  EXPECT_EQ(cluster.spec.queues.size(), 3u);
  int64_t quota = 0;
  for (const QueueSpec& q : cluster.spec.queues) quota += q.flavors[0].nominal.at("nvidia.com/gpu");
  EXPECT_EQ(quota, 1024);
  const SimNode& node = cluster.nodes[17];
  EXPECT_EQ(node.labels.at("node.kubernetes.io/instance-type"), "p5.48xlarge");
  EXPECT_EQ(node.labels.at("kubernetes.io/hostname"), node.name);
  // 16 nodes per layer-3 block: node 17 is in the second block, nodes 0-15 in the first.
  EXPECT_NE(node.labels.at(testing::kLayer3), cluster.nodes[15].labels.at(testing::kLayer3));
  EXPECT_EQ(node.labels.at(testing::kLayer3), cluster.nodes[31].labels.at(testing::kLayer3));
  EXPECT_EQ(node.labels.at(testing::kLayer2), cluster.nodes[0].labels.at(testing::kLayer2));
}

TEST(ClusterTest, DomainsAreContiguousNodeRanges) {
  ClusterModel cluster = testing::SmallCluster(16);
  for (const Domain& d : cluster.domains) {
    for (int32_t i = d.begin; i < d.end; ++i) {
      EXPECT_EQ(cluster.nodes[i].domains[d.level], &d - cluster.domains.data());
    }
  }
  EXPECT_EQ(cluster.LevelsCrossed(0, 3), 0);  // same block
  EXPECT_EQ(cluster.LevelsCrossed(0, 4), 1);  // same layer-2
  EXPECT_EQ(cluster.LevelsCrossed(0, 8), 2);  // same layer-1
  EXPECT_EQ(cluster.domains[cluster.nodes[0].domains[1]].children.size(), 2u);
}

TEST(ClusterTest, ParsesAMixedClusterWithFlavorsAndFailures) {
  const std::string text = R"(name: lab
cycleSeconds: 5
nodeGroups:
- name: h100
  instanceType: p5.48xlarge
  count: 32
  topology: {preset: eks, fanout: [1, 2, 16]}
- name: gb
  instanceType: p6e-gb200.36xlarge
  count: 36
queues:
- name: research
  cohort: all
  flavors:
  - name: gb
    nominalQuota: {nvidia.com/gpu: 144}
  - name: h100
    nominalQuota: {nvidia.com/gpu: "256"}
    borrowingLimit: {nvidia.com/gpu: 0}
  preemption: {withinClusterQueue: Never, reclaimWithinCohort: LowerPriority}
  localityWaitSeconds: 0
failures: {nodeMtbfHours: 1000, repairHours: 2}
)";
  ASSERT_OK_AND_ASSIGN(ClusterSpec spec, ParseClusterSpec(text, "lab.yaml"));
  EXPECT_EQ(spec.cycle_seconds, 5);
  ASSERT_EQ(spec.groups.size(), 2u);
  EXPECT_EQ(spec.groups[1].preset, "gb200");  // the instance type's default
  EXPECT_EQ(spec.queues[0].flavors[1].borrowing_limit->at("nvidia.com/gpu"), 0);
  EXPECT_EQ(spec.queues[0].reclaim_within_cohort, "LowerPriority");
  EXPECT_EQ(spec.queues[0].locality_wait_s, 0);
  EXPECT_EQ(spec.failures.node_mtbf_hours, 1000);
  ASSERT_OK_AND_ASSIGN(ClusterModel cluster, BuildCluster(spec));
  EXPECT_EQ(cluster.total_gpus, 32 * 8 + 36 * 4);
  // gb200 nodes: 18 per NVL72 clique.
  const SimNode& gb = cluster.nodes[32];
  EXPECT_EQ(gb.labels.at("nvidia.com/gpu.clique"),
            cluster.nodes[32 + 17].labels.at("nvidia.com/gpu.clique"));
  EXPECT_NE(gb.labels.at("nvidia.com/gpu.clique"),
            cluster.nodes[32 + 18].labels.at("nvidia.com/gpu.clique"));
  // p5 (eks) levels are a prefix of gb200's, so both share one placement Topology.
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> levels, ClusterTopologyLevels(cluster));
  EXPECT_EQ(levels.back(), "nvidia.com/gpu.clique");
}

// A ClusterTrainingQueue copied from a cluster into a spec simulates the same policy: a queue
// that does not say how it preempts gets the CRD's defaults, read from the CRD itself.
TEST(ClusterTest, QueuePreemptionDefaultsAreTheCrds) {
  ASSERT_OK_AND_ASSIGN(
      YAML::Node crd, LoadYamlFile(std::string(PHALANX_SOURCE_DIR) +
                                   "/crds/phalanx.dev_clustertrainingqueues.yaml"));
  const YAML::Node preemption = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
                                   ["properties"]["spec"]["properties"]["preemption"]["properties"];
  const std::string within = preemption["withinClusterQueue"]["default"].as<std::string>("");
  const std::string reclaim = preemption["reclaimWithinCohort"]["default"].as<std::string>("");
  EXPECT_EQ(within, "Never");  // what the CRD says today; the comparison below is the contract
  EXPECT_EQ(reclaim, "Never");
  ASSERT_OK_AND_ASSIGN(ClusterSpec spec,
                       ParseClusterSpec("nodeGroups:\n- {instanceType: p5.48xlarge, count: 4}\n"
                                        "queues:\n- {name: q, nominalQuota: {nvidia.com/gpu: 8}}\n",
                                        "q.yaml"));
  EXPECT_EQ(spec.queues[0].within_cluster_queue, within);
  EXPECT_EQ(spec.queues[0].reclaim_within_cohort, reclaim);
  EXPECT_EQ(QueueSpec{}.within_cluster_queue, within);
  EXPECT_EQ(QueueSpec{}.reclaim_within_cohort, reclaim);
  // The built-in scenario says explicitly that its teams preempt (docs/simulator.md).
  for (const QueueSpec& q : DefaultClusterSpec().queues) {
    EXPECT_EQ(q.within_cluster_queue, "LowerPriority") << q.name;
    EXPECT_EQ(q.reclaim_within_cohort, "Any") << q.name;
  }
}

// backfillQuota: Never by default, as the CRD; HoldForHead only without a cohort, refused in one
// with the CRD's CEL message, which the CRD file carries word for word.
TEST(ClusterTest, BackfillQuotaIsTheCrdsFieldWithItsRule) {
  const std::string crd_path =
      std::string(PHALANX_SOURCE_DIR) + "/crds/phalanx.dev_clustertrainingqueues.yaml";
  ASSERT_OK_AND_ASSIGN(YAML::Node crd, LoadYamlFile(crd_path));
  const YAML::Node field = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                              ["spec"]["properties"]["backfillQuota"];
  EXPECT_EQ(field["default"].as<std::string>(""), QueueSpec{}.backfill_quota);
  // One queue q, in cohort `cohort` (none if empty), with backfillQuota `mode`.
  auto parse = [](const std::string& cohort, const std::string& mode) {
    return ParseClusterSpec(
        absl::StrCat("nodeGroups:\n- {instanceType: p5.48xlarge, count: 4}\nqueues:\n- {name: q, ",
                     cohort.empty() ? "" : absl::StrCat("cohort: ", cohort, ", "),
                     "nominalQuota: {nvidia.com/gpu: 8}, backfillQuota: ", mode, "}\n"),
        "q.yaml");
  };
  ASSERT_OK_AND_ASSIGN(ClusterSpec spec, parse("", "HoldForHead"));
  EXPECT_EQ(spec.queues[0].backfill_quota, "HoldForHead");
  absl::StatusOr<ClusterSpec> in_cohort = parse("all", "HoldForHead");
  ASSERT_FALSE(in_cohort.ok());
  const std::string message(in_cohort.status().message());
  const std::string prefix = "q.yaml:4: queues[0].backfillQuota: ";
  ASSERT_THAT(message, ::testing::StartsWith(prefix));
  bool found = false;
  for (const YAML::Node& rule : crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
                                   ["properties"]["spec"]["x-kubernetes-validations"]) {
    found = found || rule["message"].as<std::string>("") == message.substr(prefix.size());
  }
  EXPECT_TRUE(found) << "no CEL rule of " << crd_path << " says: " << message;
  absl::StatusOr<ClusterSpec> unknown = parse("", "Always");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), ::testing::HasSubstr("queues[0].backfillQuota"));
}

// A quota on a resource the nodes have but no job requests (a ClusterTrainingQueue's cpu and
// memory, copied from a cluster) is allowed: only nvidia.com/gpu counts.
TEST(ClusterTest, QuotaOnOtherNodeResourcesIsAllowed) {
  ASSERT_OK_AND_ASSIGN(ClusterSpec spec,
                       ParseClusterSpec("nodeGroups:\n- {instanceType: p5.48xlarge, count: 4}\n"
                                        "queues:\n- name: q\n  nominalQuota: {nvidia.com/gpu: 8, "
                                        "cpu: 768, memory: 8Ti, vpc.amazonaws.com/efa: 128}\n",
                                        "q.yaml"));
  EXPECT_EQ(spec.queues[0].flavors[0].nominal.at("nvidia.com/gpu"), 8);
}

// A ClusterTrainingQueue's whole spec.preemption loads, borrowWithinCohort included (it was
// refused as an unknown field), and so do the fields a simulation has no use for.
TEST(ClusterTest, BorrowWithinCohortAndUnsimulatedQueueFieldsLoad) {
  ASSERT_OK_AND_ASSIGN(
      ClusterSpec spec,
      ParseClusterSpec("nodeGroups:\n- {instanceType: p5.48xlarge, count: 4}\n"
                       "queues:\n- name: q\n  cohort: c\n  nominalQuota: {nvidia.com/gpu: 8}\n"
                       "  stopPolicy: None\n  namespaceSelector: {matchLabels: {team: q}}\n"
                       "  preemption:\n    reclaimWithinCohort: Any\n"
                       "    borrowWithinCohort:\n"
                       "      {policy: LowerPriority, maxPriorityThreshold: 100}\n"
                       "- {name: r, cohort: c, nominalQuota: {nvidia.com/gpu: 8}}\n",
                       "q.yaml"));
  EXPECT_EQ(spec.queues[0].borrow_within_cohort, "LowerPriority");
  EXPECT_EQ(spec.queues[0].borrow_max_priority_threshold, 100);
  EXPECT_EQ(spec.queues[1].borrow_within_cohort, "Never");  // the CRD's default
  EXPECT_EQ(spec.queues[1].borrow_max_priority_threshold, std::nullopt);
}

struct BadSpec {
  std::string text;
  std::string message;  // file:line: field: ...
};

class BadClusterSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadClusterSpecTest, NamesFileLineAndField) {
  absl::StatusOr<ClusterSpec> spec = ParseClusterSpec(GetParam().text, "bad.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr(GetParam().message));
}

constexpr char kQueues[] = "queues:\n- name: q\n  nominalQuota: {nvidia.com/gpu: 8}\n";

INSTANTIATE_TEST_SUITE_P(
    Inputs, BadClusterSpecTest,
    ::testing::Values(
        BadSpec{std::string("nodeGroups:\n- instanceType: p9.huge\n  count: 1\n") + kQueues,
                "bad.yaml:2: nodeGroups[0].instanceType: unknown instance type \"p9.huge\""},
        BadSpec{std::string("nodeGroups:\n- instanceType: p5.48xlarge\n  count: many\n") + kQueues,
                "bad.yaml:3: nodeGroups[0].count: want an integer, got \"many\""},
        BadSpec{std::string("nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n  topology:\n"
                            "    fanout: [2, 2]\n") +
                    kQueues,
                "bad.yaml:5: nodeGroups[0].topology.fanout: preset eks has 3 levels"},
        BadSpec{
            std::string("nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n  colour: red\n") +
                kQueues,
            "bad.yaml:4: nodeGroups[0].colour: unknown field"},
        BadSpec{"nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\nqueues:\n- name: q\n"
                "  nominalQuota: {nvidia.com/gpu: lots}\n",
                "bad.yaml:6: queues[0].nominalQuota"},
        // A resource no simulated node has is a typo, not a quota of nothing (it was read as a
        // queue without GPU quota, which only the trace's jobs then showed).
        BadSpec{"nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\nqueues:\n- name: q\n"
                "  nominalQuota: {nvidia.com/gpus: 8}\n",
                "bad.yaml:6: queues[0].nominalQuota.nvidia.com/gpus: unknown resource "
                "\"nvidia.com/gpus\": simulated nodes have cpu, memory, nvidia.com/gpu, pods, "
                "vpc.amazonaws.com/efa (quotas count nvidia.com/gpu only)"},
        BadSpec{"nodeGroups:\n- {name: h100, instanceType: p5.48xlarge, count: 4}\nqueues:\n"
                "- name: q\n  flavors:\n  - name: h100\n    nominalQuota: {nvidia.com/gpu: 8}\n"
                "    borrowingLimit:\n      amd.com/gpu: 8\n",
                "bad.yaml:9: queues[0].flavors[0].borrowingLimit.amd.com/gpu: unknown resource"},
        // A queue is a ClusterTrainingQueue of its name, which Kubernetes would refuse.
        BadSpec{"nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\nqueues:\n"
                "- name: Team_A\n  nominalQuota: {nvidia.com/gpu: 8}\n",
                "bad.yaml:5: queues[0].name: \"Team_A\" must be lowercase letters, digits, '-' "
                "and '.', each '.'-separated part starting and ending with a letter or digit (a "
                "DNS-1123 subdomain): the queue is a ClusterTrainingQueue of that name"},
        BadSpec{"nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\nqueues:\n- name: q\n"
                "  nominalQuota: {nvidia.com/gpu: 8}\n  localityWaitSeconds: -1\n",
                "bad.yaml:7: queues[0].localityWaitSeconds: must be >= 0"},
        // eks-4layer and gb200 differ at their fourth level: no one Topology holds both.
        BadSpec{std::string("nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n  topology:\n"
                            "    preset: eks-4layer\n- instanceType: p6e-gb200.36xlarge\n"
                            "  count: 18\n") +
                    kQueues,
                "bad.yaml:6: nodeGroups[1].topology.preset: preset gb200 cannot share one "
                "Topology with preset eks-4layer of nodeGroups[0] (p5.48xlarge)"},
        // The CRD's CEL rule on spec.preemption, with its message.
        BadSpec{std::string("nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n") + kQueues +
                    "  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n",
                "bad.yaml:8: queues[0].preemption.borrowWithinCohort.policy: "
                "spec.preemption.borrowWithinCohort.policy must be Never when "
                "spec.preemption.reclaimWithinCohort is Never"},
        BadSpec{std::string("nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n") + kQueues +
                    "  preemption:\n    reclaimWithinCohort: Any\n"
                    "    borrowWithinCohort: {policy: Always}\n",
                "bad.yaml:9: queues[0].preemption.borrowWithinCohort.policy: \"Always\" is not "
                "one of Never, LowerPriority"},
        BadSpec{std::string("nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n") + kQueues +
                    "  stopPolicy: Hold\n",
                "bad.yaml:7: queues[0].stopPolicy: Hold is not simulated (a held queue admits "
                "nothing); use None or leave it out"},
        BadSpec{"nodeGroups: [\n", "bad.yaml:2:"},
        BadSpec{"nodeGroups:\n- instanceType: p5.48xlarge\n  count: 4\n",
                "queues: required field is missing"}));

}  // namespace
}  // namespace phalanx::sim
