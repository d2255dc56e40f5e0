// Queue statuses as `kubectl get clustertrainingqueues,trainingqueues` shows them: workload
// counts, usage and borrowing per flavor, the fair-sharing share (numbers worked out by hand
// below), why a queue is inactive, and apply bodies the API server accepts under the CRDs' status
// schemas.
#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/json.h"
#include "operator/admission/admission_cycle.h"
#include "operator/admission/apply.h"
#include "operator/server/queue_objects.h"
#include "rapidjson/document.h"
#include "tests/unit/operator/example_json.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "yaml-cpp/yaml.h"

namespace phalanx::operator_server {
namespace {

using ::phalanx::testing::ExampleJson;
using ::phalanx::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using rapidjson::Value;

constexpr char kGpu[] = "nvidia.com/gpu";

admission::ResourceQuota Quota(std::string resource, int64_t nominal) {
  return {.resource = std::move(resource), .nominal = nominal};
}

admission::ClusterQueue Queue(std::string name, std::string cohort,
                              std::vector<admission::ResourceQuota> quotas,
                              double weight = 1.0) {
  admission::ClusterQueue cq{.name = std::move(name), .cohort = std::move(cohort)};
  admission::ResourceGroup group;
  for (const admission::ResourceQuota& q : quotas) group.covered_resources.push_back(q.resource);
  group.flavors.push_back({.flavor = "h100", .resources = std::move(quotas)});
  cq.resource_groups.push_back(std::move(group));
  cq.fair_sharing_weight = weight;
  return cq;
}

admission::Workload Admitted(std::string ns, std::string name, std::string cq, int32_t count,
                             ResourceList per_pod) {
  admission::Workload w{.key = ns + "/" + name, .namespace_name = ns, .queue_name = "main",
                        .count = count, .per_pod = std::move(per_pod)};
  admission::AdmittedState admitted{.cluster_queue = std::move(cq), .count = count};
  for (const auto& entry : w.per_pod) admitted.flavors[entry.first] = "h100";
  admitted.flavors["pods"] = "h100";  // as WorkloadFromJob records it
  w.admitted = std::move(admitted);
  return w;
}

admission::Workload Pending(std::string ns, std::string name, std::string queue = "main") {
  return {.key = ns + "/" + name, .namespace_name = ns, .queue_name = std::move(queue),
          .count = 1, .per_pod = {{kGpu, 8}}};
}

// Cohort "fleet" lends 8 + 8 + 16 + 0 = 32 GPUs (every member's nominal quota: no lending limits).
//   a: nominal 8, uses 3 pods x 4 = 12 -> borrows 4: share 4/32 = 0.125 -> 125.
//   b: nominal 8, weight 2, uses 5 x 2 = 10 -> borrows 2: 2/32 / 2 = 0.03125 -> 31 (truncated).
//   lender: nominal 16, uses nothing -> 0.
//   greedy: nominal 0, weight 0, uses 1 -> borrows with weight 0: infinite.
// solo has no cohort and is stopped (Hold): its running workload still counts.
// broken names a flavor that does not exist: inactive, nothing charged.
admission::Snapshot BorrowingSnapshot() {
  admission::Snapshot s;
  s.flavors.push_back({.name = "h100"});
  s.cluster_queues.push_back(
      Queue("a", "fleet", {Quota(kGpu, 8), Quota("cpu", 100'000), Quota("pods", 10)}));
  s.cluster_queues.push_back(Queue("b", "fleet", {Quota(kGpu, 8)}, 2.0));
  s.cluster_queues.push_back(Queue("lender", "fleet", {Quota(kGpu, 16)}));
  s.cluster_queues.push_back(Queue("greedy", "fleet", {Quota(kGpu, 0)}, 0.0));
  s.cluster_queues.push_back(Queue("solo", "", {Quota(kGpu, 4)}));
  s.cluster_queues.back().stop_policy = admission::StopPolicy::kHold;
  s.cluster_queues.push_back(Queue("broken", "", {Quota(kGpu, 4)}));
  s.cluster_queues.back().resource_groups[0].flavors[0].flavor = "a100";
  s.local_queues = {{"ns-a", "main", "a"},      {"ns-b", "main", "b"},
                    {"ns-b", "other", "gone"},  {"ns-g", "main", "greedy"},
                    {"ns-s", "main", "solo"},   {"ns-x", "main", "broken"}};
  s.workloads = {
      Admitted("ns-a", "a1", "a", 3, {{kGpu, 4}, {"cpu", 10'000}}),
      Pending("ns-a", "a2"),
      Pending("ns-a", "a3"),
      Admitted("ns-b", "b1", "b", 5, {{kGpu, 2}}),
      Pending("ns-b", "b2", "other"),
      Admitted("ns-g", "g1", "greedy", 1, {{kGpu, 1}}),
      Admitted("ns-s", "s1", "solo", 2, {{kGpu, 1}}),
      Admitted("ns-x", "x1", "broken", 1, {{kGpu, 1}}),
      Pending("ns-x", "x2"),
  };
  return s;
}

// "flavor: resource=total/borrowed ..." for compact comparisons.
std::string Usage(const std::vector<FlavorUsage>& usage) {
  std::string out;
  for (const FlavorUsage& f : usage) {
    out += f.flavor + ":";
    for (const ResourceUsage& r : f.resources) {
      out += " " + r.resource + "=" + std::to_string(r.total) + "/" + std::to_string(r.borrowed);
    }
    out += ";";
  }
  return out;
}

TEST(ComputeQueueStatusesTest, CountsUsageBorrowingAndShares) {
  QueueStatuses statuses = ComputeQueueStatuses(BorrowingSnapshot());
  ASSERT_EQ(statuses.cluster_queues.size(), 6u);
  const ClusterQueueStatus& a = statuses.cluster_queues[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.pending, 2);
  EXPECT_EQ(a.admitted, 1);
  // Spec order; pods counted one per pod because the queue has quota for pods.
  EXPECT_EQ(Usage(a.flavors_usage), "h100: nvidia.com/gpu=12/4 cpu=30000/0 pods=3/0;");
  EXPECT_EQ(a.weighted_share, 125);
  EXPECT_EQ(a.inactive_reason, "");

  const ClusterQueueStatus& b = statuses.cluster_queues[1];
  EXPECT_EQ(b.pending, 0);  // b2's LocalQueue points at a ClusterQueue that does not exist
  EXPECT_EQ(b.admitted, 1);
  EXPECT_EQ(Usage(b.flavors_usage), "h100: nvidia.com/gpu=10/2;");
  EXPECT_EQ(b.weighted_share, 31);

  const ClusterQueueStatus& lender = statuses.cluster_queues[2];
  EXPECT_EQ(Usage(lender.flavors_usage), "h100: nvidia.com/gpu=0/0;");
  EXPECT_EQ(lender.weighted_share, 0);

  EXPECT_EQ(statuses.cluster_queues[3].weighted_share, kInfiniteWeightedShare);

  const ClusterQueueStatus& solo = statuses.cluster_queues[4];
  EXPECT_EQ(solo.inactive_reason, "ClusterTrainingQueue solo is stopped (stopPolicy Hold)");
  EXPECT_EQ(solo.admitted, 1);
  EXPECT_EQ(Usage(solo.flavors_usage), "h100: nvidia.com/gpu=2/0;");
  EXPECT_EQ(solo.weighted_share, 0);  // no cohort

  const ClusterQueueStatus& broken = statuses.cluster_queues[5];
  EXPECT_THAT(broken.inactive_reason, HasSubstr("NodeFlavor \"a100\", which does not exist"));
  EXPECT_EQ(broken.pending, 1);
  EXPECT_EQ(broken.admitted, 1);
  EXPECT_TRUE(broken.flavors_usage.empty());
}

TEST(ComputeQueueStatusesTest, LocalQueues) {
  QueueStatuses statuses = ComputeQueueStatuses(BorrowingSnapshot());
  ASSERT_EQ(statuses.local_queues.size(), 6u);
  const LocalQueueStatus& a = statuses.local_queues[0];
  EXPECT_EQ(a.namespace_name, "ns-a");
  EXPECT_EQ(a.name, "main");
  EXPECT_EQ(a.pending, 2);
  EXPECT_EQ(a.admitted, 1);
  EXPECT_EQ(Usage(a.flavors_usage), "h100: cpu=30000/0 nvidia.com/gpu=12/0 pods=3/0;");
  EXPECT_EQ(a.inactive_reason, "");
  const LocalQueueStatus& other = statuses.local_queues[2];
  EXPECT_EQ(other.pending, 1);
  EXPECT_EQ(other.inactive_reason, "ClusterTrainingQueue gone does not exist");
  EXPECT_EQ(statuses.local_queues[4].inactive_reason,
            "ClusterTrainingQueue solo is stopped (stopPolicy Hold)");
  EXPECT_THAT(statuses.local_queues[5].inactive_reason,
              HasSubstr("ClusterTrainingQueue broken is inactive"));
}

// The operator's loop on the shipped examples: decode, run a cycle, apply its decisions, report.
TEST(ComputeQueueStatusesTest, ExamplesAfterOneCycle) {
  admission::Snapshot snapshot;
  for (const std::string& json : ExampleJson("00-priorityclasses.yaml")) {
    absl::StatusOr<PriorityClass> pc = DecodePriorityClass(json);
    ASSERT_THAT(pc, IsOk());
    snapshot.priority_classes.emplace(pc->name, pc->value);
  }
  for (const std::string& json : ExampleJson("02-nodeflavors.yaml")) {
    snapshot.flavors.push_back(*DecodeResourceFlavor(json));
  }
  for (const std::string& json : ExampleJson("03-namespaces.yaml")) {
    snapshot.namespaces.push_back(*DecodeNamespace(json));
  }
  for (const std::string& json : ExampleJson("04-clustertrainingqueues.yaml")) {
    snapshot.cluster_queues.push_back(*DecodeClusterQueue(json));
  }
  for (const std::string& json : ExampleJson("05-trainingqueues.yaml")) {
    snapshot.local_queues.push_back(*DecodeLocalQueue(json));
  }
  for (const char* file :
       {"10-trainingjob-pretrain-64gpu.yaml", "11-trainingjob-elastic-finetune.yaml",
        "12-trainingjob-gb200-tensor-parallel.yaml"}) {
    absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJob(ExampleJson(file).at(0));
    ASSERT_THAT(job, IsOk());
    absl::StatusOr<admission::Workload> w = WorkloadFromJob(*job);
    ASSERT_THAT(w, IsOk());
    snapshot.workloads.push_back(*std::move(w));
  }
  admission::testing::FakePlacementService fake(
      {{.name = "p5", .labels = {{"node.kubernetes.io/instance-type", "p5.48xlarge"}}, .gpus = 512},
       {.name = "gb200",
        .labels = {{"node.kubernetes.io/instance-type", "p6e-gb200.36xlarge"}},
        .gpus = 144}});
  admission::CycleResult result = admission::RunAdmissionCycle(snapshot, fake);
  EXPECT_TRUE(result.errors.empty());
  ASSERT_EQ(result.admissions.size(), 3u);
  admission::ApplyDecisions(result, snapshot);

  QueueStatuses statuses = ComputeQueueStatuses(snapshot);
  ASSERT_EQ(statuses.cluster_queues.size(), 3u);
  std::map<std::string, int64_t> gpus;  // per queue, over flavors
  for (const ClusterQueueStatus& cq : statuses.cluster_queues) {
    EXPECT_EQ(cq.pending, 0) << cq.name;
    EXPECT_EQ(cq.inactive_reason, "") << cq.name;
    for (const FlavorUsage& f : cq.flavors_usage) gpus[cq.name] += f.resources[0].total;
  }
  EXPECT_EQ(statuses.cluster_queues[0].admitted, 2);  // llm: pre-training and the GB200 job
  EXPECT_EQ(statuses.cluster_queues[1].admitted, 0);
  EXPECT_EQ(statuses.cluster_queues[2].admitted, 1);
  EXPECT_EQ(gpus["llm"], 8 * 8 + 16 * 4);
  int32_t elastic_count = 0;
  for (const admission::AdmissionDecision& d : result.admissions) {
    if (d.workload == "team-research/mistral-finetune") elastic_count = d.count;
  }
  EXPECT_EQ(gpus["research"], 8 * elastic_count);
  EXPECT_EQ(statuses.local_queues[0].admitted, 2);
  EXPECT_EQ(statuses.local_queues[2].admitted, 1);
}

// ---- Apply bodies against the CRD status schemas -------------------------------------------

YAML::Node CrdSchema(const std::string& file) {
  YAML::Node crd = YAML::LoadFile(std::string(PHALANX_SOURCE_DIR) + "/crds/" + file);
  return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

// Checks `json` against a structural schema as the API server would for the parts we use:
// types, int-or-string, enums, patterns, required fields, and no unknown fields (which the
// API server would prune, silently losing the status).
void ExpectMatchesSchema(const Value& json, const YAML::Node& schema, const std::string& path) {
  SCOPED_TRACE(path);
  if (schema["x-kubernetes-int-or-string"]) {
    EXPECT_TRUE(json.IsString() || json.IsInt64());
    return;
  }
  std::string type = schema["type"].as<std::string>();
  if (type == "object") {
    ASSERT_TRUE(json.IsObject());
    for (const auto& member : json.GetObject()) {
      std::string name = member.name.GetString();
      YAML::Node property = schema["properties"][name];
      ASSERT_TRUE(property.IsDefined()) << "unknown field " << path << "." << name;
      ExpectMatchesSchema(member.value, property, path + "." + name);
    }
    for (const auto& required : schema["required"]) {
      EXPECT_TRUE(json.HasMember(required.as<std::string>().c_str()))
          << "missing " << required.as<std::string>();
    }
  } else if (type == "array") {
    ASSERT_TRUE(json.IsArray());
    for (rapidjson::SizeType i = 0; i < json.Size(); ++i) {
      ExpectMatchesSchema(json[i], schema["items"], path + "[" + std::to_string(i) + "]");
    }
  } else if (type == "integer") {
    EXPECT_TRUE(json.IsInt64());
    if (schema["format"] && schema["format"].as<std::string>() == "int32") {
      EXPECT_TRUE(json.IsInt());
    }
  } else if (type == "string") {
    ASSERT_TRUE(json.IsString());
    std::string text = json.GetString();
    if (schema["enum"]) {
      std::vector<std::string> values = schema["enum"].as<std::vector<std::string>>();
      EXPECT_THAT(values, ::testing::Contains(text));
    }
    if (schema["pattern"]) {
      EXPECT_TRUE(std::regex_search(text, std::regex(schema["pattern"].as<std::string>())))
          << text;
    }
    if (schema["minLength"]) {
      EXPECT_GE(text.size(), schema["minLength"].as<size_t>());
    }
  } else {
    ADD_FAILURE() << "type " << type << " not checked";
  }
}

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return doc;
}

TEST(StatusApplyTest, ClusterQueueBodyFollowsTheCrd) {
  QueueStatuses statuses = ComputeQueueStatuses(BorrowingSnapshot());
  ClusterQueueStatus a = statuses.cluster_queues[0];
  a.flavors_usage[0].resources.push_back({"memory", 1800LL << 30, 64LL << 30});
  a.observed_generation = 3;
  rapidjson::Document doc = Parse(ClusterQueueStatusApply(a, "2025-06-01T12:00:00Z"));
  rapidjson::Document want = Parse(R"({
    "apiVersion": "phalanx.dev/v1alpha1", "kind": "ClusterTrainingQueue", "metadata": {"name": "a"},
    "status": {
      "pendingWorkloads": 2, "admittedWorkloads": 1,
      "flavorsUsage": [{"name": "h100", "resources": [
        {"name": "nvidia.com/gpu", "total": "12", "borrowed": "4"},
        {"name": "cpu", "total": "30", "borrowed": "0"},
        {"name": "pods", "total": "3", "borrowed": "0"},
        {"name": "memory", "total": "1800Gi", "borrowed": "64Gi"}]}],
      "fairSharing": {"weightedShare": 125},
      "conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                      "message": "Can admit new workloads",
                      "lastTransitionTime": "2025-06-01T12:00:00Z", "observedGeneration": 3}]
    }})");
  EXPECT_EQ(doc, want) << kube::ToJson(doc);
  YAML::Node schema = CrdSchema("phalanx.dev_clustertrainingqueues.yaml");
  ExpectMatchesSchema(doc["status"], schema["properties"]["status"], "status");
}

TEST(StatusApplyTest, InactiveClusterQueueAndInfiniteShare) {
  QueueStatuses statuses = ComputeQueueStatuses(BorrowingSnapshot());
  YAML::Node schema = CrdSchema("phalanx.dev_clustertrainingqueues.yaml")["properties"]["status"];
  rapidjson::Document greedy =
      Parse(ClusterQueueStatusApply(statuses.cluster_queues[3], "2025-06-01T12:00:00Z"));
  EXPECT_EQ(greedy["status"]["fairSharing"]["weightedShare"].GetInt64(), INT64_MAX);
  ExpectMatchesSchema(greedy["status"], schema, "status");
  rapidjson::Document broken =
      Parse(ClusterQueueStatusApply(statuses.cluster_queues[5], "2025-06-01T12:00:00Z"));
  const Value& condition = broken["status"]["conditions"][0];
  EXPECT_STREQ(condition["status"].GetString(), "False");
  EXPECT_STREQ(condition["reason"].GetString(), "Inactive");
  EXPECT_THAT(condition["message"].GetString(),
              HasSubstr("ClusterTrainingQueue broken is inactive"));
  EXPECT_EQ(broken["status"]["flavorsUsage"].Size(), 0u);
  ExpectMatchesSchema(broken["status"], schema, "status");
}

// Status, reason and message of the Active condition of a queue's status apply body.
std::vector<std::string> ActiveOf(const std::string& body) {
  rapidjson::Document doc = Parse(body);
  const Value& c = doc["status"]["conditions"][0];
  return {c["status"].GetString(), c["reason"].GetString(), c["message"].GetString()};
}

TEST(StatusApplyTest, StoppedAndTerminatingQueuesSayWhyAsKueue) {
  admission::Snapshot s = BorrowingSnapshot();
  s.cluster_queues[1].terminating = true;  // b: being deleted
  QueueStatuses statuses = ComputeQueueStatuses(s);
  auto condition_of = [&](int i) {
    return ActiveOf(ClusterQueueStatusApply(statuses.cluster_queues[i], "2025-06-01T12:00:00Z"));
  };
  EXPECT_THAT(condition_of(1), ElementsAre("False", "Terminating",
                                           HasSubstr("ClusterTrainingQueue b is being deleted")));
  EXPECT_THAT(condition_of(4), ElementsAre("False", "Stopped", HasSubstr("stopPolicy Hold")));
  EXPECT_THAT(condition_of(0), ElementsAre("True", "Ready", "Can admit new workloads"));
  // Its running workload still counts, and its TrainingQueue says why it is inactive.
  EXPECT_EQ(statuses.cluster_queues[1].admitted, 1);
  EXPECT_THAT(statuses.local_queues[1].inactive_reason, HasSubstr("is being deleted"));
  EXPECT_EQ(statuses.local_queues[1].inactive_condition_reason,
            "ClusterTrainingQueueIsInactive");
}

TEST(StatusApplyTest, StoppedTrainingQueueIsInactiveAlone) {
  admission::Snapshot s = BorrowingSnapshot();
  s.local_queues[0].stop_policy = admission::StopPolicy::kHoldAndDrain;  // ns-a/main of a
  QueueStatuses statuses = ComputeQueueStatuses(s);
  EXPECT_THAT(ActiveOf(LocalQueueStatusApply(statuses.local_queues[0], "2025-06-01T12:00:00Z")),
              ElementsAre("False", "Stopped",
                          "TrainingQueue ns-a/main is stopped (stopPolicy HoldAndDrain)"));
  EXPECT_TRUE(statuses.local_queues[1].inactive_reason.empty());  // ns-b/main, same cohort
  EXPECT_TRUE(statuses.cluster_queues[0].inactive_reason.empty());  // its ClusterQueue
  EXPECT_EQ(statuses.local_queues[2].inactive_condition_reason,  // ns-b/other -> gone
            "ClusterTrainingQueueDoesNotExist");
}

TEST(StatusApplyTest, LocalQueueBodyFollowsTheCrd) {
  QueueStatuses statuses = ComputeQueueStatuses(BorrowingSnapshot());
  YAML::Node schema = CrdSchema("phalanx.dev_trainingqueues.yaml");
  statuses.local_queues[0].observed_generation = 2;
  rapidjson::Document a = Parse(LocalQueueStatusApply(statuses.local_queues[0], "2025-06-01T12:00:00Z"));
  rapidjson::Document want = Parse(R"({
    "apiVersion": "phalanx.dev/v1alpha1", "kind": "TrainingQueue",
    "metadata": {"name": "main", "namespace": "ns-a"},
    "status": {
      "pendingWorkloads": 2, "admittedWorkloads": 1,
      "conditions": [{"type": "Active", "status": "True", "reason": "Ready",
                      "message": "Can submit new workloads to its ClusterTrainingQueue",
                      "lastTransitionTime": "2025-06-01T12:00:00Z", "observedGeneration": 2}],
      "pendingJobs": []
    }})");
  EXPECT_EQ(a, want) << kube::ToJson(a);
  ExpectMatchesSchema(a["status"], schema["properties"]["status"], "status");
  rapidjson::Document other =
      Parse(LocalQueueStatusApply(statuses.local_queues[2], "2025-06-01T12:00:00Z"));
  const Value& condition = other["status"]["conditions"][0];
  EXPECT_STREQ(condition["status"].GetString(), "False");
  EXPECT_STREQ(condition["message"].GetString(), "ClusterTrainingQueue gone does not exist");
  ExpectMatchesSchema(other["status"], schema["properties"]["status"], "status");
}

// Positions, as a tenant reads them in its TrainingQueue: one ClusterQueue of 8 GPUs fed by
// two namespaces, five jobs of 8 GPUs. The cycle admits the first in the queue's order
// (priority, then creation time); the other four are pending at positions 1-4 of the
// ClusterQueue, each TrainingQueue listing its own in that order, at most `max_jobs` of them.
TEST(PendingJobsTest, PositionsFollowTheClusterQueueOrder) {
  admission::Snapshot s;
  s.flavors.push_back({.name = "h100"});
  s.cluster_queues.push_back(Queue("shared", "", {Quota(kGpu, 8)}));
  s.local_queues = {
      {"ns-a", "main", "shared"}, {"ns-b", "main", "shared"}, {"ns-c", "main", "missing"}};
  auto job = [](std::string ns, std::string name, int32_t priority, int64_t created) {
    admission::Workload w = Pending(std::move(ns), std::move(name));
    w.priority = priority;
    w.creation_time = created;
    return w;
  };
  s.workloads = {job("ns-a", "old-low", 0, 100), job("ns-b", "new-high", 10, 300),
                 job("ns-a", "new-low", 0, 200), job("ns-b", "old-high", 10, 50),
                 job("ns-a", "mid", 5, 400),     job("ns-c", "nowhere", 99, 1)};
  admission::testing::FakePlacementService fake({{.name = "n", .gpus = 64}});
  admission::CycleResult result = admission::RunAdmissionCycle(s, fake);
  ASSERT_EQ(result.admissions.size(), 1u);
  EXPECT_EQ(result.admissions[0].workload, "ns-b/old-high");
  std::map<std::string, int32_t> position;
  for (const admission::PendingDecision& p : result.pending) position[p.workload] = p.position;
  EXPECT_EQ(position, (std::map<std::string, int32_t>{{"ns-b/new-high", 1},
                                                      {"ns-a/mid", 2},
                                                      {"ns-a/old-low", 3},
                                                      {"ns-a/new-low", 4},
                                                      {"ns-c/nowhere", 0}}));
  admission::ApplyDecisions(result, s);

  auto listed = [](const LocalQueueStatus& lq) {
    std::vector<std::string> out;
    for (const LocalQueueStatus::PendingJob& j : lq.pending_jobs) {
      out.push_back(j.name + "@" + std::to_string(j.position_in_cluster_queue));
    }
    return out;
  };
  QueueStatuses all = ComputeQueueStatuses(s);
  AddPendingJobs(s, result.pending, 10, all);
  EXPECT_THAT(listed(all.local_queues[0]), ElementsAre("mid@2", "old-low@3", "new-low@4"));
  EXPECT_THAT(listed(all.local_queues[1]), ElementsAre("new-high@1"));
  EXPECT_THAT(listed(all.local_queues[2]), ElementsAre());  // its ClusterQueue does not exist
  QueueStatuses two = ComputeQueueStatuses(s);
  AddPendingJobs(s, result.pending, 2, two);
  EXPECT_THAT(listed(two.local_queues[0]), ElementsAre("mid@2", "old-low@3"));
  QueueStatuses none = ComputeQueueStatuses(s);
  AddPendingJobs(s, result.pending, 0, none);
  EXPECT_THAT(listed(none.local_queues[0]), ElementsAre());

  rapidjson::Document body =
      Parse(LocalQueueStatusApply(all.local_queues[0], "2025-06-01T12:00:00Z"));
  rapidjson::Document want = Parse(R"([
      {"name": "mid", "positionInQueue": 1, "positionInClusterQueue": 2},
      {"name": "old-low", "positionInQueue": 2, "positionInClusterQueue": 3},
      {"name": "new-low", "positionInQueue": 3, "positionInClusterQueue": 4}])");
  EXPECT_EQ(body["status"]["pendingJobs"], want) << kube::ToJson(body);
  ExpectMatchesSchema(body["status"],
                      CrdSchema("phalanx.dev_trainingqueues.yaml")["properties"]["status"],
                      "status");
}

}  // namespace
}  // namespace phalanx::operator_server
