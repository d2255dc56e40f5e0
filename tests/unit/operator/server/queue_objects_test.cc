// Decoding the queue objects and TrainingJobs a user applies (deploy/examples) into the admission
// core's types. What a user would notice: every shipped example means what its comments say
// (quotas in the core's units, the simulator's units, policies, selectors), a malformed field is
// named in the error with its object, and a job's workload carries its requests, priority,
// topology and admission.
#include "operator/server/queue_objects.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api/training_job.h"
#include "kube/json.h"
#include "operator/admission/model.h"
#include "operator/server/namespace_quota.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "tests/unit/operator/example_json.h"

namespace phalanx::operator_server {
namespace {

using ::phalanx::testing::ExampleDocuments;
using ::phalanx::testing::ExampleJson;
using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr int64_t kGi = int64_t{1} << 30;

// ParseResourceList is how the simulator reads its quotas (sim/cluster.cc ParseQuota).
int64_t SimulatorAmount(const std::string& resource, const std::string& text) {
  absl::StatusOr<ResourceList> list = ParseResourceList({{resource, text}}, "quota");
  EXPECT_THAT(list, IsOk());
  return list.ok() ? list->at(resource) : -1;
}

template <typename T>
T Decoded(absl::StatusOr<T> decoded) {
  EXPECT_THAT(decoded, IsOk());
  return decoded.ok() ? *std::move(decoded) : T{};
}

// ---- ResourceFlavor, LocalQueue, PriorityClass, Namespace ----------------------------------

TEST(DecodeResourceFlavorTest, Examples) {
  std::vector<std::string> docs = ExampleJson("02-nodeflavors.yaml");
  ASSERT_EQ(docs.size(), 2u);
  admission::ResourceFlavor p5 = Decoded(DecodeResourceFlavor(docs[0]));
  EXPECT_EQ(p5.name, "p5");
  EXPECT_THAT(p5.node_labels, ElementsAre(Pair("node.kubernetes.io/instance-type", "p5.48xlarge")));
  ASSERT_EQ(p5.node_taints.size(), 1u);
  EXPECT_EQ(p5.node_taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(p5.node_taints[0].value, "true");
  EXPECT_EQ(p5.node_taints[0].effect, "NoSchedule");
  ASSERT_EQ(p5.tolerations.size(), 1u);
  EXPECT_EQ(p5.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(p5.tolerations[0].op, "Exists");
  EXPECT_EQ(p5.tolerations[0].value, "");
  EXPECT_EQ(p5.tolerations[0].effect, "NoSchedule");
  EXPECT_EQ(p5.topology_name, "eks");
  admission::ResourceFlavor gb200 = Decoded(DecodeResourceFlavor(docs[1]));
  EXPECT_EQ(gb200.name, "gb200");
  EXPECT_EQ(gb200.topology_name, "gb200");
  EXPECT_EQ(gb200.node_labels.at("node.kubernetes.io/instance-type"), "p6e-gb200.36xlarge");
}

TEST(DecodeResourceFlavorTest, WithoutSpecAndTolerationOperatorDefaultsToEqual) {
  admission::ResourceFlavor plain = Decoded(DecodeResourceFlavor(
      R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"NodeFlavor","metadata":{"name":"cpu"}})"));
  EXPECT_EQ(plain.name, "cpu");
  EXPECT_TRUE(plain.node_labels.empty());
  admission::ResourceFlavor spot = Decoded(DecodeResourceFlavor(
      R"({"metadata":{"name":"spot"},"spec":{"tolerations":[{"key":"spot","value":"yes"}]}})"));
  ASSERT_EQ(spot.tolerations.size(), 1u);
  EXPECT_EQ(spot.tolerations[0].op, "Equal");
  EXPECT_EQ(spot.tolerations[0].value, "yes");
}

TEST(DecodeLocalQueueTest, Examples) {
  std::vector<std::string> docs = ExampleJson("05-trainingqueues.yaml");
  ASSERT_EQ(docs.size(), 3u);
  std::vector<std::string> got;
  for (const std::string& json : docs) {
    admission::LocalQueue lq = Decoded(DecodeLocalQueue(json));
    got.push_back(lq.namespace_name + "/" + lq.name + " -> " + lq.cluster_queue);
  }
  EXPECT_THAT(got, ElementsAre("team-llm/training -> llm", "team-vision/training -> vision",
                               "team-research/training -> research"));
}

TEST(DecodePriorityClassTest, Examples) {
  std::vector<PriorityClass> got;
  for (const std::string& json : ExampleJson("00-priorityclasses.yaml")) {
    got.push_back(Decoded(DecodePriorityClass(json)));
  }
  EXPECT_THAT(got, ElementsAre(PriorityClass{"training-critical", 10000, false},
                               PriorityClass{"training-standard", 1000, false},
                               PriorityClass{"training-preemptible", 100, false}));
}

std::string PriorityClassJson(const std::string& name, const std::string& rest) {
  return absl::StrCat(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)",
                      R"("metadata":{"name":")", name, R"("},)", rest, "}");
}

TEST(DecodePriorityClassTest, GlobalDefault) {
  EXPECT_EQ(
      Decoded(DecodePriorityClass(PriorityClassJson("d", R"("value":5,"globalDefault":true)"))),
      (PriorityClass{"d", 5, true}));
  EXPECT_EQ(Decoded(DecodePriorityClass(PriorityClassJson("d", R"("value":5)"))),
            (PriorityClass{"d", 5, false}));
  EXPECT_THAT(
      DecodePriorityClass(PriorityClassJson("d", R"("value":5,"globalDefault":"yes")")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("globalDefault: not a boolean")));
}

// The Priority admission plugin's rule (plugin/pkg/admission/priority/admission.go,
// getDefaultPriorityClass), which Kueue's pkg/util/priority follows too: of the classes marked
// globalDefault, the lowest value; none marked, no class (priority 0).
TEST(GlobalDefaultPriorityClassTest, TheDefaultOfLowestValueElseNone) {
  EXPECT_EQ(GlobalDefaultPriorityClass({}), "");
  EXPECT_EQ(GlobalDefaultPriorityClass({{"critical", 10000, false}, {"low", 100, false}}), "");
  EXPECT_EQ(GlobalDefaultPriorityClass({{"critical", 10000, false}, {"standard", 1000, true}}),
            "standard");
  // Two defaults (a race the API server's check cannot stop): the lower value, in any order.
  EXPECT_EQ(GlobalDefaultPriorityClass({{"standard", 1000, true}, {"low", 100, true}}), "low");
  EXPECT_EQ(GlobalDefaultPriorityClass({{"low", 100, true}, {"standard", 1000, true}}), "low");
  // Equal values: Kubernetes keeps the first its lister returns; here, the lowest name, so
  // every cycle and every replica picks the same one.
  EXPECT_EQ(GlobalDefaultPriorityClass({{"b", 100, true}, {"a", 100, true}}), "a");
}

TEST(DecodeNamespaceTest, Examples) {
  std::vector<std::string> docs = ExampleJson("03-namespaces.yaml");
  ASSERT_EQ(docs.size(), 3u);
  admission::Namespace ns = Decoded(DecodeNamespace(docs[0]));
  EXPECT_EQ(ns.name, "team-llm");
  EXPECT_THAT(ns.labels, ElementsAre(Pair("phalanx.dev/training", "true")));
}

// ---- ClusterQueue --------------------------------------------------------------------------

admission::ClusterQueue ExampleQueue(size_t index) {
  std::vector<std::string> docs = ExampleJson("04-clustertrainingqueues.yaml");
  EXPECT_EQ(docs.size(), 3u);
  return Decoded(DecodeClusterQueue(docs.at(index)));
}

TEST(DecodeClusterQueueTest, ExampleLlmQuotasInCanonicalUnits) {
  admission::ClusterQueue llm = ExampleQueue(0);
  EXPECT_EQ(llm.name, "llm");
  EXPECT_EQ(llm.cohort, "gpu-fleet");
  EXPECT_EQ(llm.queueing_strategy, admission::QueueingStrategy::kBestEffortFifo);
  ASSERT_EQ(llm.resource_groups.size(), 1u);
  const admission::ResourceGroup& group = llm.resource_groups[0];
  EXPECT_THAT(group.covered_resources,
              ElementsAre("nvidia.com/gpu", "vpc.amazonaws.com/efa", "cpu", "memory"));
  ASSERT_EQ(group.flavors.size(), 2u);
  const admission::FlavorQuotas& p5 = group.flavors[0];
  EXPECT_EQ(p5.flavor, "p5");
  ASSERT_EQ(p5.resources.size(), 4u);
  EXPECT_EQ(p5.resources[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(p5.resources[0].nominal, 256);
  EXPECT_EQ(p5.resources[0].borrowing_limit, 128);
  EXPECT_EQ(p5.resources[0].lending_limit, std::nullopt);
  EXPECT_EQ(p5.resources[2].resource, "cpu");
  EXPECT_EQ(p5.resources[2].nominal, 6144 * 1000);  // millicores
  EXPECT_EQ(p5.resources[2].borrowing_limit, 3072 * 1000);
  EXPECT_EQ(p5.resources[3].resource, "memory");
  EXPECT_EQ(p5.resources[3].nominal, 65536 * kGi);  // bytes
  EXPECT_EQ(p5.resources[3].borrowing_limit, 32768 * kGi);
  const admission::FlavorQuotas& gb200 = group.flavors[1];
  EXPECT_EQ(gb200.flavor, "gb200");
  EXPECT_EQ(gb200.resources[0].nominal, 72);
  EXPECT_EQ(gb200.resources[0].borrowing_limit, std::nullopt);
  EXPECT_EQ(gb200.resources[0].lending_limit, 36);
  EXPECT_EQ(gb200.resources[3].lending_limit, 8640 * kGi);
}

TEST(DecodeClusterQueueTest, QuotasAgreeWithTheSimulator) {
  admission::ClusterQueue llm = ExampleQueue(0);
  const admission::FlavorQuotas& p5 = llm.resource_groups[0].flavors[0];
  EXPECT_EQ(p5.resources[0].nominal, SimulatorAmount("nvidia.com/gpu", "256"));
  EXPECT_EQ(p5.resources[2].nominal, SimulatorAmount("cpu", "6144"));
  EXPECT_EQ(p5.resources[3].nominal, SimulatorAmount("memory", "65536Gi"));
  // Fractions round up to whole units except cpu, as ParseResourceList does.
  admission::ClusterQueue odd = Decoded(DecodeClusterQueue(
      R"({"metadata":{"name":"odd"},"spec":{"namespaceSelector":{},"resourceGroups":[
          {"coveredResources":["cpu","memory"],"flavors":[{"name":"f","resources":[
            {"name":"cpu","nominalQuota":"1.5"},{"name":"memory","nominalQuota":"1.5Gi"}]}]}]}})"));
  const auto& resources = odd.resource_groups[0].flavors[0].resources;
  EXPECT_EQ(resources[0].nominal, SimulatorAmount("cpu", "1.5"));
  EXPECT_EQ(resources[0].nominal, 1500);
  EXPECT_EQ(resources[1].nominal, SimulatorAmount("memory", "1.5Gi"));
}

TEST(DecodeClusterQueueTest, ExamplePoliciesSelectorsAndWeights) {
  using admission::BorrowWithinCohortPolicy;
  using admission::ReclaimWithinCohortPolicy;
  using admission::WithinClusterQueuePolicy;
  admission::ClusterQueue llm = ExampleQueue(0);
  ASSERT_TRUE(llm.namespace_selector.has_value());
  EXPECT_THAT(llm.namespace_selector->match_labels,
              ElementsAre(Pair("kubernetes.io/metadata.name", "team-llm")));
  EXPECT_EQ(llm.preemption.within_cluster_queue, WithinClusterQueuePolicy::kLowerPriority);
  EXPECT_EQ(llm.preemption.reclaim_within_cohort, ReclaimWithinCohortPolicy::kAny);
  EXPECT_EQ(llm.preemption.borrow_within_cohort.policy, BorrowWithinCohortPolicy::kLowerPriority);
  EXPECT_EQ(llm.preemption.borrow_within_cohort.max_priority_threshold, 100);
  EXPECT_EQ(llm.fair_sharing_weight, 2.0);
  EXPECT_EQ(llm.stop_policy, admission::StopPolicy::kNone);
  EXPECT_EQ(llm.locality_wait_seconds, admission::kDefaultLocalityWaitSeconds);

  admission::ClusterQueue vision = ExampleQueue(1);
  EXPECT_EQ(vision.preemption.reclaim_within_cohort, ReclaimWithinCohortPolicy::kLowerPriority);
  EXPECT_EQ(vision.preemption.borrow_within_cohort.policy, BorrowWithinCohortPolicy::kNever);
  EXPECT_EQ(vision.preemption.borrow_within_cohort.max_priority_threshold, std::nullopt);
  EXPECT_EQ(vision.resource_groups[0].flavors[0].resources[0].borrowing_limit, std::nullopt);
  EXPECT_EQ(vision.fair_sharing_weight, 1.0);

  admission::ClusterQueue research = ExampleQueue(2);
  EXPECT_EQ(research.preemption.within_cluster_queue,
            WithinClusterQueuePolicy::kLowerOrNewerEqualPriority);
  EXPECT_EQ(research.preemption.reclaim_within_cohort, ReclaimWithinCohortPolicy::kNever);
}

TEST(DecodeClusterQueueTest, EveryExampleCompilesWithoutErrors) {
  admission::Snapshot snapshot;
  for (const std::string& json : ExampleJson("02-nodeflavors.yaml")) {
    snapshot.flavors.push_back(Decoded(DecodeResourceFlavor(json)));
  }
  for (const std::string& json : ExampleJson("04-clustertrainingqueues.yaml")) {
    snapshot.cluster_queues.push_back(Decoded(DecodeClusterQueue(json)));
  }
  for (const std::string& json : ExampleJson("05-trainingqueues.yaml")) {
    snapshot.local_queues.push_back(Decoded(DecodeLocalQueue(json)));
  }
  admission::Model model = admission::CompileModel(snapshot);
  for (const admission::ObjectError& e : model.errors) {
    ADD_FAILURE() << e.kind << " " << e.name << ": " << e.message;
  }
  ASSERT_EQ(model.cqs.size(), 3u);
  for (const admission::CompiledClusterQueue& cq : model.cqs) EXPECT_EQ(cq.inactive, "");
  EXPECT_EQ(model.local_queues.at({"team-vision", "training"}), model.cq_index.at("vision"));
}

// Kueue: a ClusterQueue without namespaceSelector admits no namespace; {} admits all.
TEST(DecodeClusterQueueTest, NamespaceSelectorAbsentEmptyAndExpressions) {
  admission::ClusterQueue absent = Decoded(DecodeClusterQueue(R"({"metadata":{"name":"a"},"spec":{}})"));
  EXPECT_EQ(absent.namespace_selector, std::nullopt);
  admission::ClusterQueue no_spec = Decoded(DecodeClusterQueue(R"({"metadata":{"name":"b"}})"));
  EXPECT_EQ(no_spec.namespace_selector, std::nullopt);
  admission::ClusterQueue all =
      Decoded(DecodeClusterQueue(R"({"metadata":{"name":"c"},"spec":{"namespaceSelector":{}}})"));
  ASSERT_TRUE(all.namespace_selector.has_value());
  EXPECT_TRUE(all.namespace_selector->match_labels.empty());
  EXPECT_TRUE(all.namespace_selector->match_expressions.empty());
  admission::ClusterQueue expr = Decoded(DecodeClusterQueue(
      R"({"metadata":{"name":"d"},"spec":{"namespaceSelector":{"matchExpressions":[
          {"key":"team","operator":"In","values":["llm","vision"]},
          {"key":"sandbox","operator":"DoesNotExist"}]}}})"));
  ASSERT_TRUE(expr.namespace_selector.has_value());
  const auto& reqs = expr.namespace_selector->match_expressions;
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].key, "team");
  EXPECT_EQ(reqs[0].op, "In");
  EXPECT_THAT(reqs[0].values, ElementsAre("llm", "vision"));
  EXPECT_EQ(reqs[1].op, "DoesNotExist");
  EXPECT_TRUE(reqs[1].values.empty());
}

TEST(DecodeClusterQueueTest, StrategyStopPolicyWeightAndLocalityWait) {
  admission::ClusterQueue cq = Decoded(DecodeClusterQueue(
      R"({"metadata":{"name":"q"},"spec":{"queueingStrategy":"StrictFIFO",
          "stopPolicy":"HoldAndDrain","fairSharing":{"weight":"500m"},
          "localityWaitSeconds":600}})"));
  EXPECT_EQ(cq.queueing_strategy, admission::QueueingStrategy::kStrictFifo);
  EXPECT_EQ(cq.stop_policy, admission::StopPolicy::kHoldAndDrain);
  EXPECT_EQ(cq.fair_sharing_weight, 0.5);
  EXPECT_EQ(cq.locality_wait_seconds, 600);
  EXPECT_EQ(cq.backfill_quota, admission::BackfillQuota::kNever);  // the CRD's default
  admission::ClusterQueue hold = Decoded(
      DecodeClusterQueue(R"({"metadata":{"name":"h"},"spec":{"backfillQuota":"HoldForHead"}})"));
  EXPECT_EQ(hold.backfill_quota, admission::BackfillQuota::kHoldForHead);
  admission::ClusterQueue zero = Decoded(DecodeClusterQueue(
      R"({"metadata":{"name":"z"},"spec":{"stopPolicy":"Hold","fairSharing":{"weight":0},
          "localityWaitSeconds":0}})"));
  EXPECT_EQ(zero.stop_policy, admission::StopPolicy::kHold);
  EXPECT_EQ(zero.fair_sharing_weight, 0.0);
  EXPECT_EQ(zero.locality_wait_seconds, 0);
}

TEST(DecodeLocalQueueTest, StopPolicy) {
  absl::StatusOr<admission::LocalQueue> lq = DecodeLocalQueue(
      R"({"metadata":{"name":"t","namespace":"ns"},
          "spec":{"clusterQueue":"q","stopPolicy":"HoldAndDrain"}})");
  ASSERT_THAT(lq, IsOk());
  EXPECT_EQ(lq->stop_policy, admission::StopPolicy::kHoldAndDrain);
  EXPECT_THAT(DecodeLocalQueue(R"({"metadata":{"name":"t","namespace":"ns"},
                                   "spec":{"clusterQueue":"q","stopPolicy":"Pause"}})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.stopPolicy")));
}

TEST(DecodeClusterQueueTest, DeletionRequestedMakesItTerminating) {
  EXPECT_FALSE(Decoded(DecodeClusterQueue(R"({"metadata":{"name":"q"},"spec":{}})")).terminating);
  EXPECT_TRUE(Decoded(DecodeClusterQueue(
                          R"({"metadata":{"name":"q","deletionTimestamp":"2026-11-29T10:00:00Z",
                              "finalizers":["phalanx.dev/resource-in-use"]},"spec":{}})"))
                  .terminating);
}

// Kueue's resource-in-use rule: a queue is in use while a job admitted to it runs; a flavor
// while a queue names it (even one being deleted) or a job admitted in it runs.
TEST(ResourcesInUseTest, QueuesWithAdmittedJobsAndFlavorsNamedOrUsed) {
  admission::Snapshot s;
  admission::ClusterQueue named;
  named.name = "named";
  named.resource_groups.push_back({.covered_resources = {"nvidia.com/gpu"},
                                   .flavors = {{"h100", {{"nvidia.com/gpu", 8}}}}});
  s.cluster_queues = {named};
  admission::Workload running;
  running.key = "ns/running";
  running.admitted = admission::AdmittedState{"gone", {{"nvidia.com/gpu", "a100"}}, 1, 0};
  admission::Workload pending;
  pending.key = "ns/pending";
  s.workloads = {running, pending};
  ResourcesInUse in_use = FindResourcesInUse(s);
  EXPECT_THAT(in_use.cluster_queues, ElementsAre("gone"));  // "named" runs nothing
  EXPECT_THAT(in_use.flavors, ElementsAre("a100", "h100"));
}

TEST(ResourcesInUseTest, FinalizerAddedToLiveObjectsAndRemovedOnceUnused) {
  kube::ObjectMeta meta;
  meta.name = "q";
  EXPECT_EQ(ResourceInUseFinalizerChange(meta, false), FinalizerChange::kAdd);
  meta.finalizers = {kube::InternedString("other.io/keep")};
  EXPECT_EQ(ResourceInUseFinalizerChange(meta, true), FinalizerChange::kAdd);
  meta.finalizers = {kube::InternedString("other.io/keep"),
                     kube::InternedString(std::string(kResourceInUseFinalizer))};
  EXPECT_EQ(ResourceInUseFinalizerChange(meta, false), FinalizerChange::kNone);
  meta.deletion_timestamp = kube::InternedString("2026-11-29T10:00:00Z");
  EXPECT_EQ(ResourceInUseFinalizerChange(meta, true), FinalizerChange::kNone);  // waits
  EXPECT_EQ(ResourceInUseFinalizerChange(meta, false), FinalizerChange::kRemove);
  meta.finalizers = {kube::InternedString("other.io/keep")};  // ours gone already: never re-add
  EXPECT_EQ(ResourceInUseFinalizerChange(meta, true), FinalizerChange::kNone);
}

// ---- Errors name the object and the field --------------------------------------------------

struct BadField {
  std::string file;     // deploy/examples file whose first document is mutated
  std::string pointer;  // JSON pointer of the field
  std::optional<std::string> value;  // its new JSON value; nullopt removes it
  std::string want;     // a substring of the error
};

void PrintTo(const BadField& c, std::ostream* os) { *os << c.pointer << " = " << c.value.value_or("<removed>"); }

class BadFieldTest : public ::testing::TestWithParam<BadField> {};

TEST_P(BadFieldTest, ErrorNamesTheField) {
  const BadField& c = GetParam();
  rapidjson::Document doc = std::move(ExampleDocuments(c.file).at(0));
  rapidjson::Pointer pointer(c.pointer.c_str());
  ASSERT_TRUE(pointer.IsValid()) << c.pointer;
  if (c.value.has_value()) {
    rapidjson::Document value;
    value.Parse(c.value->c_str());
    ASSERT_FALSE(value.HasParseError()) << *c.value;
    pointer.Set(doc, rapidjson::Value(value, doc.GetAllocator()));
  } else {
    ASSERT_TRUE(pointer.Erase(doc)) << c.pointer;
  }
  std::string json = kube::ToJson(doc);
  absl::Status status;
  if (c.file == "04-clustertrainingqueues.yaml") status = DecodeClusterQueue(json).status();
  if (c.file == "02-nodeflavors.yaml") status = DecodeResourceFlavor(json).status();
  if (c.file == "05-trainingqueues.yaml") status = DecodeLocalQueue(json).status();
  if (c.file == "00-priorityclasses.yaml") status = DecodePriorityClass(json).status();
  if (c.file == "03-namespaces.yaml") status = DecodeNamespace(json).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.want)));
}

constexpr char kCq[] = "04-clustertrainingqueues.yaml";
constexpr char kRf[] = "02-nodeflavors.yaml";
const std::string kQuota = "/spec/resourceGroups/0/flavors/1/resources/0";
const std::string kQuotaField = "ClusterTrainingQueue llm: "
                                "spec.resourceGroups[0].flavors[1].resources[0]";

INSTANTIATE_TEST_SUITE_P(
    ClusterQueue, BadFieldTest,
    ::testing::Values(
        BadField{kCq, kQuota + "/nominalQuota", R"("12Qi")", kQuotaField + ".nominalQuota: "},
        BadField{kCq, kQuota + "/nominalQuota", "true",
                 kQuotaField + ".nominalQuota: not a quantity"},
        BadField{kCq, kQuota + "/nominalQuota", R"("-8")",
                 kQuotaField + ".nominalQuota: must not be negative, got \"-8\""},
        BadField{kCq, kQuota + "/nominalQuota", std::nullopt,
                 kQuotaField + ".nominalQuota: missing"},
        BadField{kCq, kQuota + "/lendingLimit", "[36]",
                 kQuotaField + ".lendingLimit: not a quantity"},
        BadField{kCq, "/spec/resourceGroups/0/flavors/0/resources/3/borrowingLimit", R"("lots")",
                 "ClusterTrainingQueue llm: "
                 "spec.resourceGroups[0].flavors[0].resources[3].borrowingLimit: "},
        BadField{kCq, kQuota + "/name", "5", kQuotaField + ".name: not a string"},
        BadField{kCq, "/spec/resourceGroups/0/flavors/0/name", "{}",
                 "ClusterTrainingQueue llm: spec.resourceGroups[0].flavors[0].name: not a string"},
        BadField{kCq, "/spec/resourceGroups/0/flavors/0", R"("p5")",
                 "ClusterTrainingQueue llm: spec.resourceGroups[0].flavors[0]: not an object"},
        BadField{kCq, "/spec/resourceGroups/0/flavors", "{}",
                 "ClusterTrainingQueue llm: spec.resourceGroups[0].flavors: not an array"},
        BadField{kCq, "/spec/resourceGroups/0/coveredResources/2", "7",
                 "ClusterTrainingQueue llm: spec.resourceGroups[0].coveredResources[2]: not a "
                 "string"},
        BadField{kCq, "/spec/resourceGroups", R"("all")",
                 "ClusterTrainingQueue llm: spec.resourceGroups: not an array"},
        BadField{kCq, "/spec/cohort", "1", "ClusterTrainingQueue llm: spec.cohort: not a string"},
        BadField{kCq, "/spec/queueingStrategy", R"("LIFO")",
                 "ClusterTrainingQueue llm: spec.queueingStrategy: \"LIFO\" is not one of "
                 "StrictFIFO, BestEffortFIFO"},
        BadField{kCq, "/spec/namespaceSelector", "[]",
                 "ClusterTrainingQueue llm: spec.namespaceSelector: not an object"},
        BadField{kCq, "/spec/namespaceSelector/matchLabels/kubernetes.io~1metadata.name", "1",
                 "ClusterTrainingQueue llm: "
                 "spec.namespaceSelector.matchLabels[kubernetes.io/metadata.name]: not a string"},
        BadField{kCq, "/spec/namespaceSelector/matchExpressions",
                 R"([{"key":"team","operator":"In","values":["a",2]}])",
                 "ClusterTrainingQueue llm: spec.namespaceSelector.matchExpressions[0].values[1]: "
                 "not a string"},
        BadField{kCq, "/spec/preemption/withinClusterQueue", R"("Always")",
                 "ClusterTrainingQueue llm: spec.preemption.withinClusterQueue: \"Always\" is not "
                 "one of Never, LowerPriority, LowerOrNewerEqualPriority"},
        BadField{kCq, "/spec/preemption/reclaimWithinCohort", "true",
                 "ClusterTrainingQueue llm: spec.preemption.reclaimWithinCohort: not a string"},
        BadField{kCq, "/spec/preemption/borrowWithinCohort/policy", R"("Any")",
                 "ClusterTrainingQueue llm: spec.preemption.borrowWithinCohort.policy: \"Any\" is "
                 "not one of Never, LowerPriority"},
        BadField{kCq, "/spec/preemption/borrowWithinCohort/maxPriorityThreshold", R"("high")",
                 "ClusterTrainingQueue llm: "
                 "spec.preemption.borrowWithinCohort.maxPriorityThreshold: not a 32-bit integer"},
        BadField{kCq, "/spec/fairSharing", "2",
                 "ClusterTrainingQueue llm: spec.fairSharing: not an object"},
        BadField{kCq, "/spec/fairSharing/weight", R"("heavy")",
                 "ClusterTrainingQueue llm: spec.fairSharing.weight: "},
        BadField{kCq, "/spec/fairSharing/weight", "-1",
                 "ClusterTrainingQueue llm: spec.fairSharing.weight: must not be negative"},
        BadField{kCq, "/spec/stopPolicy", R"("Pause")",
                 "ClusterTrainingQueue llm: spec.stopPolicy: \"Pause\" is not one of None, Hold, "
                 "HoldAndDrain"},
        BadField{kCq, "/spec/backfillQuota", R"("Always")",
                 "ClusterTrainingQueue llm: spec.backfillQuota: \"Always\" is not one of Never, "
                 "HoldForHead"},
        BadField{kCq, "/spec/localityWaitSeconds", "-1",
                 "ClusterTrainingQueue llm: spec.localityWaitSeconds: must not be negative, "
                 "got -1"},
        BadField{kCq, "/spec/localityWaitSeconds", R"("300")",
                 "ClusterTrainingQueue llm: spec.localityWaitSeconds: not an integer"},
        BadField{kCq, "/spec", "[]", "ClusterTrainingQueue llm: spec: not an object"},
        BadField{kCq, "", R"("llm")", "ClusterTrainingQueue"}));

INSTANTIATE_TEST_SUITE_P(
    OtherObjects, BadFieldTest,
    ::testing::Values(
        BadField{kRf, "/spec/nodeLabels/node.kubernetes.io~1instance-type", "5",
                 "NodeFlavor p5: spec.nodeLabels[node.kubernetes.io/instance-type]: not a string"},
        BadField{kRf, "/spec/nodeTaints", "{}", "NodeFlavor p5: spec.nodeTaints: not an array"},
        BadField{kRf, "/spec/nodeTaints/0/effect", "1",
                 "NodeFlavor p5: spec.nodeTaints[0].effect: not a string"},
        BadField{kRf, "/spec/tolerations/0/operator", "2",
                 "NodeFlavor p5: spec.tolerations[0].operator: not a string"},
        BadField{kRf, "/spec/tolerations/0", "3",
                 "NodeFlavor p5: spec.tolerations[0]: not an object"},
        BadField{kRf, "/spec/topologyName", "3", "NodeFlavor p5: spec.topologyName: not a string"},
        BadField{"05-trainingqueues.yaml", "/spec/clusterQueue", "7",
                 "TrainingQueue team-llm/training: spec.clusterQueue: not a string"},
        BadField{"05-trainingqueues.yaml", "/spec", R"("llm")",
                 "TrainingQueue team-llm/training: spec: not an object"},
        BadField{"00-priorityclasses.yaml", "/value", std::nullopt,
                 "PriorityClass training-critical: value: missing"},
        BadField{"00-priorityclasses.yaml", "/value", R"("high")",
                 "PriorityClass training-critical: value: not a 32-bit integer"},
        BadField{"00-priorityclasses.yaml", "/value", "4294967296",
                 "PriorityClass training-critical: value: not a 32-bit integer"},
        BadField{"03-namespaces.yaml", "/metadata/labels", "[]",
                 "Namespace: malformed JSON at metadata.labels"}));

TEST(DecodeErrorsTest, NotJson) {
  EXPECT_THAT(DecodeClusterQueue("{"),
              StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("ClusterTrainingQueue")));
  EXPECT_THAT(DecodeLocalQueue("[]"),
              StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("TrainingQueue")));
}

// ---- TrainingJob -> Workload ---------------------------------------------------------------

// An example job as the API server returns it: with a creation time and a resourceVersion.
kube::TrainingJob ExampleJob(const std::string& file, const std::string& status_json = "") {
  rapidjson::Document doc = std::move(ExampleDocuments(file).at(0));
  auto& alloc = doc.GetAllocator();
  kube::SetMember(doc["metadata"], "creationTimestamp", rapidjson::Value("2025-06-01T12:00:00Z"),
                  alloc);
  kube::SetMember(doc["metadata"], "resourceVersion", rapidjson::Value("48213"), alloc);
  if (!status_json.empty()) {
    rapidjson::Document status;
    status.Parse(status_json.c_str());
    kube::SetMember(doc, "status", rapidjson::Value(status, alloc), alloc);
  }
  return Decoded(kube::DecodeTrainingJob(kube::ToJson(doc)));
}

constexpr int64_t kJune1Noon = 1748779200;  // 2025-06-01T12:00:00Z

TEST(WorkloadFromJobTest, ExamplePretraining) {
  admission::Workload w =
      Decoded(WorkloadFromJob(ExampleJob("10-trainingjob-pretrain-64gpu.yaml")));
  EXPECT_EQ(w.key, "team-llm/llama-pretrain-64");
  EXPECT_EQ(w.namespace_name, "team-llm");
  EXPECT_EQ(w.queue_name, "training");
  EXPECT_EQ(w.count, 8);
  EXPECT_EQ(w.elastic, std::nullopt);
  EXPECT_THAT(w.per_pod, ElementsAre(Pair("cpu", 180'000), Pair("memory", 1800 * kGi),
                                     Pair("nvidia.com/gpu", 8), Pair("vpc.amazonaws.com/efa", 32)));
  EXPECT_EQ(w.priority_class, "training-critical");
  EXPECT_EQ(w.priority, 0);
  EXPECT_EQ(w.creation_time, kJune1Noon);
  EXPECT_EQ(w.required_level, "topology.k8s.aws/network-node-layer-2");
  EXPECT_EQ(w.preferred_level, "topology.k8s.aws/network-node-layer-3");
  EXPECT_EQ(w.group_size, 0);
  EXPECT_EQ(w.group_level, "");
  EXPECT_TRUE(w.node_selector.empty());
  ASSERT_EQ(w.tolerations.size(), 1u);
  EXPECT_EQ(w.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(w.tolerations[0].op, "Exists");
  EXPECT_EQ(w.tolerations[0].effect, "NoSchedule");
  EXPECT_EQ(w.admitted, std::nullopt);
  EXPECT_EQ(w.revision, 48213u);
}

TEST(WorkloadFromJobTest, ExampleElasticAndGroupedJobs) {
  admission::Workload elastic =
      Decoded(WorkloadFromJob(ExampleJob("11-trainingjob-elastic-finetune.yaml")));
  EXPECT_EQ(elastic.key, "team-research/mistral-finetune");
  EXPECT_EQ(elastic.count, 8);
  ASSERT_TRUE(elastic.elastic.has_value());
  EXPECT_EQ(elastic.elastic->min, 2);
  EXPECT_EQ(elastic.elastic->max, 16);
  EXPECT_EQ(elastic.elastic->step, 2);
  EXPECT_EQ(elastic.priority_class, "training-preemptible");
  EXPECT_EQ(elastic.required_level, "");
  EXPECT_EQ(elastic.preferred_level, "topology.k8s.aws/network-node-layer-2");

  admission::Workload grouped =
      Decoded(WorkloadFromJob(ExampleJob("12-trainingjob-gb200-tensor-parallel.yaml")));
  EXPECT_EQ(grouped.count, 16);
  EXPECT_EQ(grouped.group_size, 4);
  EXPECT_EQ(grouped.group_level, "nvidia.com/gpu.clique");
  EXPECT_EQ(grouped.preferred_level, "nvidia.com/gpu.clique");
  EXPECT_EQ(grouped.per_pod.at("nvidia.com/gpu"), 4);
  EXPECT_EQ(grouped.per_pod.at("memory"), 900 * kGi);
}

TEST(WorkloadFromJobTest, AdmittedJobChargesEveryResourceInItsFlavor) {
  admission::Workload w = Decoded(WorkloadFromJob(
      ExampleJob("10-trainingjob-pretrain-64gpu.yaml",
                 R"({"phase":"Running","admission":{"clusterQueue":"llm","flavor":"p5","replicas":6}})"),
      1'750'000'000));
  ASSERT_TRUE(w.admitted.has_value());
  EXPECT_EQ(w.admitted->cluster_queue, "llm");
  EXPECT_EQ(w.admitted->count, 6);
  EXPECT_EQ(w.admitted->admission_time, 1'750'000'000);
  EXPECT_THAT(w.admitted->flavors,
              ElementsAre(Pair("cpu", "p5"), Pair("memory", "p5"), Pair("nvidia.com/gpu", "p5"),
                          Pair("pods", "p5"), Pair("vpc.amazonaws.com/efa", "p5")));
}

TEST(WorkloadFromJobTest, ActiveDeadlineIsTheExpectedRunTime) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  EXPECT_EQ(job.active_deadline_seconds, std::nullopt);
  EXPECT_EQ(Decoded(WorkloadFromJob(job)).expected_runtime_seconds, std::nullopt);
  job.active_deadline_seconds = 7200;
  EXPECT_EQ(Decoded(WorkloadFromJob(job)).expected_runtime_seconds, 7200);
}

TEST(DecodeTrainingJobTest, ActiveDeadlineSeconds) {
  rapidjson::Document doc = std::move(ExampleDocuments("10-trainingjob-pretrain-64gpu.yaml").at(0));
  kube::SetMember(doc["spec"], "activeDeadlineSeconds", rapidjson::Value(int64_t{86400 * 30}),
                  doc.GetAllocator());
  EXPECT_EQ(Decoded(kube::DecodeTrainingJob(kube::ToJson(doc))).active_deadline_seconds,
            86400 * 30);
  kube::SetMember(doc["spec"], "activeDeadlineSeconds", rapidjson::Value("1h"),
                  doc.GetAllocator());
  EXPECT_THAT(kube::DecodeTrainingJob(kube::ToJson(doc)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.activeDeadlineSeconds")));
}

// A fraction of a GPU in the template (which the CRD's schema cannot refuse) would have every
// pod refused by the API server: the job is Invalid, naming the field, and never admitted.
// A fraction of a native resource is fine.
// An extended resource requested without an equal limit: the API server would refuse every
// pod ("Limit must be set for non overcommitable resources"), so the job is Invalid before it
// holds any node (audit 2026-11-30: 16 GB200 nodes were held while pod creates failed).
TEST(WorkloadFromJobTest, AnExtendedRequestWithoutAnEqualLimitIsInvalid) {
  rapidjson::Document doc = std::move(ExampleDocuments("10-trainingjob-pretrain-64gpu.yaml").at(0));
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& resources = doc["spec"]["template"]["spec"]["containers"][0]["resources"];
  if (!resources.HasMember("requests")) {
    resources.AddMember("requests", rapidjson::Value(rapidjson::kObjectType), alloc);
  }
  kube::SetMember(resources["requests"], "vpc.amazonaws.com/efa", rapidjson::Value("4"), alloc);
  resources["limits"].RemoveMember("vpc.amazonaws.com/efa");
  EXPECT_THAT(WorkloadFromJob(Decoded(kube::DecodeTrainingJob(kube::ToJson(doc)))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.containers[0].resources.limits"
                                 "[vpc.amazonaws.com/efa]: must be set, equal to the request")));
  kube::SetMember(resources["limits"], "vpc.amazonaws.com/efa", rapidjson::Value(4), alloc);
  EXPECT_THAT(WorkloadFromJob(Decoded(kube::DecodeTrainingJob(kube::ToJson(doc)))), IsOk());
}

// Required inter-pod (anti-)affinity and DoNotSchedule spread constraints are not modelled by
// gang placement, which reserves the nodes before the pods exist: "one rank per node"
// anti-affinity left 2 of 4 ranks Pending for ever on their reserved nodes (audit
// 2026-11-30). Such a job is Invalid, naming the field; the preferred forms are fine.
TEST(WorkloadFromJobTest, UnmodelledInterPodRulesAreInvalid) {
  auto with = [](const char* field, const char* json) {
    rapidjson::Document doc =
        std::move(ExampleDocuments("10-trainingjob-pretrain-64gpu.yaml").at(0));
    rapidjson::Document value;
    value.Parse(json);
    rapidjson::Value copy(value, doc.GetAllocator());
    kube::SetMember(doc["spec"]["template"]["spec"], field, std::move(copy), doc.GetAllocator());
    return WorkloadFromJob(Decoded(kube::DecodeTrainingJob(kube::ToJson(doc))));
  };
  EXPECT_THAT(with("affinity", R"({"podAntiAffinity":{
                   "requiredDuringSchedulingIgnoredDuringExecution":
                   [{"labelSelector":{"matchLabels":{"app":"x"}},
                     "topologyKey":"kubernetes.io/hostname"}]}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.affinity.podAntiAffinity."
                                 "requiredDuringSchedulingIgnoredDuringExecution[0]: not "
                                 "modelled by gang placement")));
  // Anti-affinity to the template's own pods per node is modelled: one rank per node.
  const char* self = R"({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      [{"labelSelector":{"matchLabels":{"app.kubernetes.io/name":"llama-pretrain"},
        "matchExpressions":[{"key":"app.kubernetes.io/name","operator":"Exists"}]},
        "topologyKey":"kubernetes.io/hostname"}]}})";
  absl::StatusOr<admission::Workload> one_per_node = with("affinity", self);
  ASSERT_THAT(one_per_node, IsOk());
  EXPECT_EQ(one_per_node->max_pods_per_node, 1);
  EXPECT_EQ(Decoded(WorkloadFromJob(ExampleJob("10-trainingjob-pretrain-64gpu.yaml")))
                .max_pods_per_node,
            0);
  // ... but not per zone, not across namespaces, not with a selector its own pods miss.
  for (const char* other : {
           R"({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
               [{"labelSelector":{},"topologyKey":"topology.kubernetes.io/zone"}]}})",
           R"({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
               [{"labelSelector":{},"namespaceSelector":{},
                 "topologyKey":"kubernetes.io/hostname"}]}})",
           R"({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
               [{"labelSelector":{},"topologyKey":"kubernetes.io/hostname"},
                {"labelSelector":{"matchExpressions":[{"key":"app.kubernetes.io/name",
                  "operator":"NotIn","values":["llama-pretrain"]}]},
                 "topologyKey":"kubernetes.io/hostname"}]}})"}) {
    EXPECT_THAT(with("affinity", other),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("requiredDuringSchedulingIgnoredDuringExecution[")))
        << other;
  }
  EXPECT_THAT(with("affinity", R"({"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
                   [{"labelSelector":{},"topologyKey":"kubernetes.io/hostname"}]}})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("affinity.podAffinity.")));
  EXPECT_THAT(with("topologySpreadConstraints",
                   R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"},
                       {"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}])"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.topologySpreadConstraints[1]: not modelled "
                                 "by gang placement")));
  EXPECT_THAT(with("affinity", R"({"podAntiAffinity":{
                   "preferredDuringSchedulingIgnoredDuringExecution":
                   [{"weight":1,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname"}}]}})"),
              IsOk());
  EXPECT_THAT(with("topologySpreadConstraints",
                   R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"}])"),
              IsOk());
}

TEST(WorkloadFromJobTest, FractionOfAnExtendedResourceIsInvalid) {
  rapidjson::Document doc = std::move(ExampleDocuments("10-trainingjob-pretrain-64gpu.yaml").at(0));
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& resources = doc["spec"]["template"]["spec"]["containers"][0]["resources"];
  kube::SetMember(resources["limits"], "nvidia.com/gpu", rapidjson::Value("1.5"), alloc);
  kube::SetMember(resources["requests"], "cpu", rapidjson::Value("1.5"), alloc);
  kube::TrainingJob job = Decoded(kube::DecodeTrainingJob(kube::ToJson(doc)));
  EXPECT_THAT(WorkloadFromJob(job),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.containers[0].resources.limits"
                                 "[nvidia.com/gpu]: must be a whole number, got \"1.5\"")));
  kube::SetMember(resources["limits"], "nvidia.com/gpu", rapidjson::Value(8), alloc);
  kube::SetMember(resources["requests"], "nvidia.com/gpu", rapidjson::Value(8), alloc);
  EXPECT_THAT(WorkloadFromJob(Decoded(kube::DecodeTrainingJob(kube::ToJson(doc)))), IsOk());
}

// A quantity that is not one is named by the field the user wrote, not by the defaulted request
// the pod decoder would meet it as ("spec.template: spec.containers[cpu]: ...").
TEST(WorkloadFromJobTest, AnUnreadableQuantityIsNamedByItsField) {
  rapidjson::Document doc = std::move(ExampleDocuments("10-trainingjob-pretrain-64gpu.yaml").at(0));
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& resources = doc["spec"]["template"]["spec"]["containers"][0]["resources"];
  kube::SetMember(resources["limits"], "cpu", rapidjson::Value("lots"), alloc);
  EXPECT_THAT(kube::DecodeTrainingJob(kube::ToJson(doc)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.containers[0].resources.limits[cpu]: "
                                 "invalid quantity \"lots\"")));
  kube::SetMember(resources["limits"], "cpu", rapidjson::Value(4), alloc);  // a JSON number
  ASSERT_OK(kube::DecodeTrainingJob(kube::ToJson(doc)).status());
  kube::SetMember(doc["spec"]["template"]["spec"], "overhead",
                  rapidjson::Value(rapidjson::kObjectType), alloc);
  kube::SetMember(doc["spec"]["template"]["spec"]["overhead"], "memory", rapidjson::Value("1Qi"),
                  alloc);
  EXPECT_THAT(kube::DecodeTrainingJob(kube::ToJson(doc)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.overhead[memory]: invalid quantity")));
}

// The template with `affinity` (JSON) as spec.template.spec.affinity, decoded.
kube::TrainingJob JobWithAffinity(const std::string& affinity) {
  rapidjson::Document doc = std::move(ExampleDocuments("10-trainingjob-pretrain-64gpu.yaml").at(0));
  rapidjson::Document value;
  value.Parse(affinity.c_str());
  kube::SetMember(doc["spec"]["template"]["spec"], "affinity",
                  rapidjson::Value(value, doc.GetAllocator()), doc.GetAllocator());
  return Decoded(kube::DecodeTrainingJob(kube::ToJson(doc)));
}

TEST(WorkloadFromJobTest, RequiredNodeAffinityIsCarriedToTheWorkload) {
  admission::Workload w = Decoded(WorkloadFromJob(JobWithAffinity(R"({"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"topology.k8s.aws/network-node-layer-3","operator":"NotIn",
                              "values":["nn-1"]},{"key":"gpus","operator":"Gt","values":["4"]}]},
        {"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{
        "matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}}]}})")));
  const std::vector<placement::NodeSelectorTerm> want = {
      {.match_expressions = {{"topology.k8s.aws/network-node-layer-3", "NotIn", {"nn-1"}},
                             {"gpus", "Gt", {"4"}}}},
      {.match_fields = {{"metadata.name", "In", {"n1"}}}}};
  EXPECT_EQ(w.node_affinity, want);
  // Only a preference, or only pod affinity: nothing placement must honour.
  EXPECT_THAT(Decoded(WorkloadFromJob(JobWithAffinity(R"({"nodeAffinity":{
      "preferredDuringSchedulingIgnoredDuringExecution":[]},"podAffinity":{}})")))
                  .node_affinity,
              IsEmpty());
}

// A form kube-scheduler refuses or placement cannot honour: Invalid, naming the field.
TEST(WorkloadFromJobTest, ABadRequiredNodeAffinityIsInvalid) {
  const std::string kField =
      "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
      ".nodeSelectorTerms";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"nodeSelectorTerms":[]})", ": must have at least one node selector term"},
      {R"({})", ": must have at least one node selector term"},
      {R"({"nodeSelectorTerms":{}})", ": not an array"},
      {R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Near"}]}]})",
       "[0].matchExpressions[0].operator: unsupported value \"Near\""},
      {R"({"nodeSelectorTerms":[{},{"matchExpressions":[{"key":"k","operator":"Lt",
           "values":["ten"]}]}]})",
       "[1].matchExpressions[0].values: for Gt and Lt, exactly one integer value"},
      {R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.uid","operator":"In",
           "values":["x"]}]}]})",
       "[0].matchFields[0].key: \"metadata.uid\": only metadata.name is supported"},
      {R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"In",
           "values":[1]}]}]})",
       "[0].matchExpressions[0].values[0]: not a string"},
  };
  for (const auto& [required, message] : cases) {
    SCOPED_TRACE(required);
    kube::TrainingJob job = JobWithAffinity(absl::StrCat(
        R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)", required, "}}"));
    EXPECT_THAT(job.node_affinity, IsEmpty());
    EXPECT_THAT(WorkloadFromJob(job), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr(kField + message)));
  }
}

TEST(DecodeTrainingJobTest, RestartCountersComeFromTheStatus) {
  kube::TrainingJob job =
      ExampleJob("10-trainingjob-pretrain-64gpu.yaml",
                 R"({"phase":"Running","restarts":4,"nodeFaultRestarts":3})");
  EXPECT_EQ(job.status.restarts, 4);
  EXPECT_EQ(job.status.node_fault_restarts, 3);
  EXPECT_EQ(ExampleJob("10-trainingjob-pretrain-64gpu.yaml", R"({"restarts":1})")
                .status.node_fault_restarts,
            0);
}

// status.requeueState after a pods-ready eviction: the workload is not admitted before its
// requeueAt; an admitted job's old state holds nothing back.
TEST(WorkloadFromJobTest, RequeueAtComesFromTheRequeueState) {
  const kube::TrainingJob job = ExampleJob(
      "10-trainingjob-pretrain-64gpu.yaml",
      R"({"requeueState":{"count":2,"requeueAt":"2026-11-23T19:02:00Z"}})");
  ASSERT_TRUE(job.status.requeue_state.has_value());
  EXPECT_EQ(job.status.requeue_state->count, 2);
  EXPECT_EQ(Decoded(WorkloadFromJob(job)).requeue_at, 1795460520);
  EXPECT_EQ(Decoded(WorkloadFromJob(ExampleJob("10-trainingjob-pretrain-64gpu.yaml")))
                .requeue_at,
            0);
  kube::TrainingJob admitted = job;
  admitted.status.admission = kube::TrainingJobAdmission{.cluster_queue = "q", .flavor = "p5",
                                                         .replicas = 8};
  EXPECT_EQ(Decoded(WorkloadFromJob(admitted, 1)).requeue_at, 0);
  EXPECT_THAT(kube::DecodeTrainingJob(R"({"metadata":{"name":"a"},"spec":{"template":{}},)"
                                      R"("status":{"requeueState":{"count":"x"}}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("status.requeueState.count")));
}

TEST(WorkloadFromJobTest, ExplicitPriorityWinsOverTheClass) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  job.priority = 5;
  admission::Workload w = Decoded(WorkloadFromJob(job, 0, /*allow_job_priority=*/true));
  EXPECT_EQ(w.priority_class, "");
  EXPECT_EQ(w.priority, 5);
}

// phalanx-operator's default (--allow-job-priority=false): priorities come only from
// PriorityClasses, which admins control. A waiting job that sets spec.priority is Invalid,
// naming the field and the fix; one admitted while the flag was on keeps running (its quota
// stays charged) at its class's priority.
TEST(WorkloadFromJobTest, SpecPriorityIsRefusedUnlessTheOperatorAllowsIt) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  ASSERT_FALSE(job.priority_class_name.empty());
  job.priority = 2'000'000'000;
  EXPECT_THAT(WorkloadFromJob(job, 0, /*allow_job_priority=*/false),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.priority (2000000000) is not honoured on this cluster: "
                                 "priorities come only from PriorityClasses "
                                 "(phalanx-operator --allow-job-priority=false); remove it and "
                                 "set spec.priorityClassName")));
  job.status.admission =
      kube::TrainingJobAdmission{.cluster_queue = "llm", .flavor = "p5", .replicas = 8};
  admission::Workload admitted = Decoded(WorkloadFromJob(job, 100, false));
  EXPECT_EQ(admitted.priority_class, job.priority_class_name);
  ASSERT_TRUE(admitted.admitted.has_value());
  job.priority.reset();
  job.status.admission.reset();
  EXPECT_EQ(Decoded(WorkloadFromJob(job, 0, false)).priority_class, job.priority_class_name);
}

// A job that names no class, in spec or template, is the globalDefault class's (the class the
// API server gives its pods), by name, so the core resolves its value and checks it exists.
TEST(WorkloadFromJobTest, AJobWithoutAClassHasTheGlobalDefaultClass) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  ASSERT_EQ(job.priority_class_name, "training-critical");
  ASSERT_TRUE(job.pod.priority_class_name.empty());
  // Its own class wins over the default.
  EXPECT_EQ(Decoded(WorkloadFromJob(job, 0, false, "training-standard")).priority_class,
            "training-critical");
  job.priority_class_name.clear();
  EXPECT_EQ(Decoded(WorkloadFromJob(job, 0, false, "training-standard")).priority_class,
            "training-standard");
  EXPECT_EQ(Decoded(WorkloadFromJob(job, 0, false, "")).priority_class, "");
  // The template's class is the pods' class too, and so the job's.
  job.pod.priority_class_name = kube::InternedString("training-preemptible");
  EXPECT_EQ(Decoded(WorkloadFromJob(job, 0, false, "training-standard")).priority_class,
            "training-preemptible");
  // An explicit spec.priority, where allowed, still wins over any class.
  job.pod.priority_class_name = kube::InternedString("");
  job.priority = 7;
  admission::Workload w = Decoded(WorkloadFromJob(job, 0, true, "training-standard"));
  EXPECT_EQ(w.priority_class, "");
  EXPECT_EQ(w.priority, 7);
}

TEST(WorkloadFromJobTest, RevisionFollowsTheResourceVersion) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  job.meta.resource_version = "opaque-a";
  uint64_t a = Decoded(WorkloadFromJob(job)).revision;
  job.meta.resource_version = "opaque-b";
  uint64_t b = Decoded(WorkloadFromJob(job)).revision;
  EXPECT_NE(a, 0u);
  EXPECT_NE(b, 0u);
  EXPECT_NE(a, b);
  job.meta.resource_version = "";
  EXPECT_EQ(Decoded(WorkloadFromJob(job)).revision, 0u);  // unknown: CycleCache compares fields
}

TEST(WorkloadFromJobTest, BadCreationTimestampNamesTheField) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  job.meta.creation_timestamp = kube::InternedString("yesterday");
  EXPECT_THAT(WorkloadFromJob(job),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("TrainingJob team-llm/llama-pretrain-64: "
                                 "metadata.creationTimestamp: \"yesterday\"")));
  job.meta.creation_timestamp = kube::InternedString("");
  EXPECT_EQ(Decoded(WorkloadFromJob(job)).creation_time, 0);
}

// ---- ResourceQuotas of the job's namespace (namespace_quota.h) ----------------------------

NamespaceQuota Quota(const std::string& spec_json, const std::string& ns = "team-llm",
                     const std::string& status_json = "{}") {
  return Decoded(DecodeResourceQuota(absl::StrCat(
      R"({"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":")", ns,
      R"("},"spec":)", spec_json, R"(,"status":)", status_json, "}")));
}

// A quota as the quota controller writes it: status.hard a copy of spec.hard, status.used.
NamespaceQuota QuotaInUse(const std::string& hard_json, const std::string& used_json,
                          const std::string& spec_rest = "") {
  return Quota(absl::StrCat(R"({"hard":)", hard_json, spec_rest, "}"), "team-llm",
               absl::StrCat(R"({"hard":)", hard_json, R"(,"used":)", used_json, "}"));
}

// A quota scoped to a PriorityClass is how Kubernetes limits who may use the class: a job of
// the class in that namespace is refused before admission (audit 2026-11-30 d, S2), a job of
// another class, or of another namespace, is not.
TEST(NamespaceQuotaTest, APriorityClassScopedQuotaRefusesTheClassOnly) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");  // training-critical
  const NamespaceQuota no_critical = Quota(
      R"({"hard":{"pods":"0"},"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass",)"
      R"("operator":"In","values":["training-critical"]}]}})");
  EXPECT_EQ(QuotaRefusal(job, 8, {no_critical}),
            "ResourceQuota team-llm/q (scope PriorityClass In [training-critical]) allows at "
            "most 0 pods in namespace team-llm, and the gang needs 8: the API server would "
            "refuse its pods, so it is not admitted");
  kube::TrainingJob other = job;
  other.priority_class_name = "training-preemptible";
  EXPECT_EQ(QuotaRefusal(other, 8, {no_critical}), "");
  EXPECT_EQ(QuotaRefusal(job, 8, {Quota(R"({"hard":{"pods":"0"}})", "team-vision")}), "");
  // Without a class of its own the job's pods keep the template's, which the quota sees.
  kube::TrainingJob template_class = other;
  template_class.priority_class_name.clear();
  template_class.pod.priority_class_name = kube::InternedString("training-critical");
  EXPECT_NE(QuotaRefusal(template_class, 8, {no_critical}), "");
  // NotIn and DoesNotExist turn it around.
  EXPECT_THAT(QuotaRefusal(other, 8,
                           {Quota(R"({"hard":{"pods":"0"},"scopeSelector":{"matchExpressions":[)"
                                  R"({"scopeName":"PriorityClass","operator":"NotIn",)"
                                  R"("values":["training-critical"]}]}})")}),
              HasSubstr("(scope PriorityClass NotIn [training-critical]) allows at most 0 pods"));
  EXPECT_EQ(QuotaRefusal(job, 8,
                         {Quota(R"({"hard":{"pods":"0"},"scopeSelector":{"matchExpressions":[)"
                                R"({"scopeName":"PriorityClass","operator":"DoesNotExist"}]}})")}),
            "");
}

// The API server charges the pods of a job that names no class to the globalDefault class's
// scoped quota (the Priority admission plugin sets their priorityClassName before the quota
// admission runs), so the check does too.
TEST(NamespaceQuotaTest, AJobWithoutAClassIsChargedAsTheGlobalDefaultClass) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  job.priority_class_name.clear();
  const NamespaceQuota no_standard = Quota(
      R"({"hard":{"pods":"0"},"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass",)"
      R"("operator":"In","values":["training-standard"]}]}})");
  EXPECT_EQ(QuotaRefusal(job, 8, {no_standard}, "training-standard"),
            "ResourceQuota team-llm/q (scope PriorityClass In [training-standard]) allows at "
            "most 0 pods in namespace team-llm, and the gang needs 8: the API server would "
            "refuse its pods, so it is not admitted");
  EXPECT_EQ(QuotaRefusal(job, 8, {no_standard}, ""), "");  // no default: no class
  // A quota for pods without a class no longer applies to them.
  const NamespaceQuota classless = Quota(
      R"({"hard":{"pods":"0"},"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass",)"
      R"("operator":"DoesNotExist"}]}})");
  EXPECT_NE(QuotaRefusal(job, 8, {classless}, ""), "");
  EXPECT_EQ(QuotaRefusal(job, 8, {classless}, "training-standard"), "");
  // The job's own class wins over the default.
  job.priority_class_name = "training-critical";
  EXPECT_EQ(QuotaRefusal(job, 8, {no_standard}, "training-standard"), "");
  // The room left now and an elastic job's size see the same class.
  job.priority_class_name.clear();
  const NamespaceQuota standard_full =
      QuotaInUse(R"({"pods":"4"})", R"({"pods":"4"})",
                 R"(,"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass",)"
                 R"("operator":"In","values":["training-standard"]}]})");
  EXPECT_THAT(QuotaShortfall(job, 1, {standard_full}, "training-standard"),
              HasSubstr("has room for 0 more pods"));
  EXPECT_EQ(QuotaShortfall(job, 1, {standard_full}, ""), "");
  const placement::ElasticRange range{.min = 1, .max = 8, .step = 1};
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 0, {standard_full}, "training-standard"), 1);
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 0, {standard_full}, ""), 8);
}

// Requests are compared with the smallest gang, the hard limit only (not what other pods
// use now); BestEffort and Terminating quotas never apply to a gang's pods.
TEST(NamespaceQuotaTest, HardRequestLimitsAgainstTheSmallestGang) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");  // 8 GPUs a pod
  const NamespaceQuota gpus = Quota(R"({"hard":{"requests.nvidia.com/gpu":"16","cpu":"1k"}})");
  EXPECT_EQ(QuotaRefusal(job, 2, {gpus}), "");
  EXPECT_EQ(
      QuotaRefusal(job, 3, {gpus}),
      "ResourceQuota team-llm/q allows at most 16 requests.nvidia.com/gpu in namespace team-llm, "
      "and the gang needs 24 (3 pods of 8): the API server would refuse its pods, so it "
      "is not admitted");
  EXPECT_EQ(QuotaRefusal(job, 3,
                         {Quota(R"({"hard":{"pods":"0"},"scopes":["BestEffort"]})"),
                          Quota(R"({"hard":{"pods":"0"},"scopes":["Terminating"]})")}),
            "");
  EXPECT_NE(QuotaRefusal(job, 3,
                         {Quota(R"({"hard":{"count/pods":"2"},"scopes":)"
                                R"(["NotBestEffort","NotTerminating"]})")}),
            "");
  // Object counts other than pods are not what a pod's creation is refused on.
  EXPECT_EQ(QuotaRefusal(job, 3, {Quota(R"({"hard":{"services":"0","secrets":"0"}})")}), "");
  EXPECT_THAT(DecodeResourceQuota(R"({"metadata":{"name":"q","namespace":"n"},)"
                                  R"("spec":{"hard":{"pods":"lots"}}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ResourceQuota n/q: spec.hard[pods]: ")));
}

// The pods' QoS class decides BestEffort / NotBestEffort (cpu and memory only: pods that ask
// only for GPUs are BestEffort), and the template's activeDeadlineSeconds, which the pods keep,
// Terminating / NotTerminating (audit session 35: both were judged from the job as a whole).
TEST(NamespaceQuotaTest, QosAndDeadlineScopesFollowThePods) {
  const std::string head =
      R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob",)"
      R"("metadata":{"name":"j","namespace":"team-llm"},"spec":{"queueName":"training",)"
      R"("replicas":2,"template":{"spec":{)";
  const kube::TrainingJob gpu_only = Decoded(kube::DecodeTrainingJob(
      head + R"("activeDeadlineSeconds":600,"containers":[{"name":"t","image":"i",)"
             R"("resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}})"));
  EXPECT_TRUE(gpu_only.pod_best_effort);
  EXPECT_TRUE(gpu_only.pod_terminating);
  const kube::TrainingJob burstable = Decoded(kube::DecodeTrainingJob(
      head + R"("containers":[{"name":"t","image":"i","resources":)"
             R"({"requests":{"memory":"1Gi"},"limits":{"nvidia.com/gpu":"8"}}}]}}}})"));
  EXPECT_FALSE(burstable.pod_best_effort);
  EXPECT_FALSE(burstable.pod_terminating);
  auto scoped = [](const char* scope) {
    return std::vector<NamespaceQuota>{
        Quota(absl::StrCat(R"({"hard":{"pods":"0"},"scopes":[")", scope, R"("]})"))};
  };
  for (const char* scope : {"BestEffort", "Terminating"}) {
    EXPECT_NE(QuotaRefusal(gpu_only, 2, scoped(scope)), "") << scope;
    EXPECT_EQ(QuotaRefusal(burstable, 2, scoped(scope)), "") << scope;
  }
  for (const char* scope : {"NotBestEffort", "NotTerminating"}) {
    EXPECT_EQ(QuotaRefusal(gpu_only, 2, scoped(scope)), "") << scope;
    EXPECT_NE(QuotaRefusal(burstable, 2, scoped(scope)), "") << scope;
  }
}

// A pod (anti-)affinity term naming other namespaces, required or preferred, puts the pods in a
// quota's CrossNamespacePodAffinity scope (Kubernetes' way to limit who may use such terms);
// terms of the pod's own namespace do not (before 2026-12-01 the scope never matched).
TEST(NamespaceQuotaTest, CrossNamespacePodAffinityScopeFollowsTheTemplatesTerms) {
  const std::string head =
      R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob",)"
      R"("metadata":{"name":"j","namespace":"team-llm"},"spec":{"queueName":"training",)"
      R"("replicas":2,"template":{"spec":{"containers":[{"name":"t","image":"i","resources":)"
      R"({"limits":{"nvidia.com/gpu":"8"}}}],"affinity":)";
  const std::string term = R"({"labelSelector":{"matchLabels":{"app":"cache"}},)"
                           R"("topologyKey":"kubernetes.io/hostname")";
  auto decoded = [&](const std::string& affinity) {
    return Decoded(kube::DecodeTrainingJob(head + affinity + "}}}}"));
  };
  const kube::TrainingJob own =
      decoded(R"({"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,)"
              R"("podAffinityTerm":)" +
              term + "}}]}}");
  const kube::TrainingJob listed =
      decoded(R"({"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,)"
              R"("podAffinityTerm":)" +
              term + R"(,"namespaces":["team-cache"]}}]}})");
  const kube::TrainingJob selected = decoded(
      R"({"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,)"
      R"("podAffinityTerm":)" +
      term + R"(,"namespaceSelector":{}}}]}})");
  EXPECT_FALSE(own.pod_cross_namespace_affinity);
  EXPECT_TRUE(listed.pod_cross_namespace_affinity);
  EXPECT_TRUE(selected.pod_cross_namespace_affinity);
  auto scoped = [](const char* op) {
    return std::vector<NamespaceQuota>{Quota(
        absl::StrCat(R"({"hard":{"pods":"0"},"scopeSelector":{"matchExpressions":[)",
                     R"({"scopeName":"CrossNamespacePodAffinity","operator":")", op, R"("}]}})"))};
  };
  EXPECT_EQ(QuotaRefusal(own, 2, scoped("Exists")), "");
  EXPECT_NE(QuotaRefusal(own, 2, scoped("DoesNotExist")), "");
  EXPECT_THAT(QuotaRefusal(listed, 2, scoped("Exists")),
              HasSubstr("(scope CrossNamespacePodAffinity Exists) allows at most 0 pods"));
  EXPECT_EQ(QuotaRefusal(selected, 2, scoped("DoesNotExist")), "");
}

// A LimitRange's Container defaults fill in what a template leaves unset before the API server
// checks the pod against a quota: such a gang is not refused for it (audit session 35: it was
// refused as Invalid though the API server would create its pods), and what they add is charged
// (session 36: before, only whether a resource was defaulted was known, so the gang was charged
// less than its pods would be).
TEST(NamespaceQuotaTest, LimitRangeDefaultsAreAppliedToThePodsAndCharged) {
  ASSERT_OK_AND_ASSIGN(
      LimitRangeDefaults defaults,
      DecodeLimitRange(R"({"metadata":{"name":"d","namespace":"team-llm"},"spec":{"limits":[)"
                       R"({"type":"Pod","max":{"cpu":"200"}},)"
                       R"({"type":"Container","default":{"cpu":"2"},)"
                       R"("defaultRequest":{"memory":"1Gi"}},)"
                       R"({"type":"Container","default":{"cpu":"5","memory":"3Gi"}}]}})"));
  EXPECT_EQ(defaults.namespace_name, "team-llm");
  // defaultRequest falls back to default within an item; of two items, the first holds.
  EXPECT_EQ(defaults.limits, (ResourceList{{"cpu", 2000}, {"memory", 3LL << 30}}));
  EXPECT_EQ(defaults.requests, (ResourceList{{"cpu", 2000}, {"memory", 1LL << 30}}));
  EXPECT_THAT(DecodeLimitRange(R"({"metadata":{"name":"d","namespace":"team-llm"},"spec":)"
                               R"({"limits":[{"type":"Container","default":{"cpu":"x"}}]}})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("LimitRange team-llm/d: spec.limits[0].default[cpu]")));

  // The example's one container requests cpu and memory and limits neither.
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  const std::vector<NamespaceQuota> cpu_limits = {Quota(R"({"hard":{"limits.cpu":"16"}})")};
  ASSERT_THAT(QuotaRefusal(job, 1, cpu_limits), HasSubstr("sets no cpu limit"));
  kube::TrainingJob elsewhere = job;
  elsewhere.meta.namespace_ = "team-cv";
  ApplyLimitRanges({defaults}, elsewhere);
  EXPECT_EQ(elsewhere.pod_limits, job.pod_limits) << "another namespace's LimitRange";
  ApplyLimitRanges({defaults}, job);
  // Its pods get a 2-cpu and a 3Gi limit: charged 2 cpu each on limits.cpu.
  EXPECT_EQ(job.pod_limits.at("cpu"), 2000);
  EXPECT_EQ(job.pod_limits.at("memory"), 3LL << 30);
  EXPECT_EQ(QuotaRefusal(job, 8, cpu_limits), "");
  EXPECT_THAT(QuotaRefusal(job, 9, cpu_limits), HasSubstr("allows at most 16 limits.cpu"));
  EXPECT_THAT(job.unset_limits, IsEmpty());
  // The requests it sets stay.
  EXPECT_EQ(job.pod.requests.get().at("cpu"), 180000);

  // A container that requests nothing gets the default requests, which its pods are charged.
  kube::TrainingJob logger = job;
  logger.containers.push_back(
      {.kind = kube::TrainingJob::Container::Kind::kContainer, .requests = {}, .limits = {}});
  logger.unset_requests = {"cpu", "memory"};
  ApplyLimitRanges({defaults}, logger);
  EXPECT_EQ(logger.pod.requests.get().at("cpu"), 182000);
  EXPECT_EQ(logger.pod.requests.get().at("memory"), (1800LL << 30) + (1LL << 30));
  EXPECT_THAT(logger.unset_requests, IsEmpty());
  EXPECT_THAT(QuotaShortfall(logger, 1,
                             {QuotaInUse(R"({"requests.cpu":"200"})", R"({"requests.cpu":"19"})")}),
              HasSubstr("has room for 181 more requests.cpu in namespace team-llm (19 of 200 "
                        "used), and the gang needs 182 (1 pod of 182)"));
}

// A LimitRange's max and min, which its LimitRanger enforces on every pod: a job none of whose
// pods would pass is refused, naming the container, resource, bound and LimitRange (before
// 2026-12-01 it was admitted and its pod creates were refused, one FailedCreate after another).
TEST(NamespaceQuotaTest, ALimitRangeBoundEveryPodWouldBreakRefusesTheJob) {
  auto range = [](const std::string& items) {
    absl::StatusOr<LimitRangeDefaults> r = DecodeLimitRange(absl::StrCat(
        R"({"metadata":{"name":"caps","namespace":"team-llm"},"spec":{"limits":[)", items, "]}}"));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.value_or(LimitRangeDefaults{});
  };
  // The example's container: 8 GPUs (a limit), 180 cpu and 1800Gi memory (requests).
  auto refusal = [](const LimitRangeDefaults& r) {
    kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
    ApplyLimitRanges({r}, job);
    return LimitRangeRefusal({r}, job);
  };
  EXPECT_EQ(refusal(range(R"({"type":"Container","max":{"nvidia.com/gpu":"8"}})")), "");
  EXPECT_EQ(refusal(range(R"({"type":"Container","max":{"nvidia.com/gpu":"4"}})")),
            "spec.template.spec.containers[0]: nvidia.com/gpu 8 is above the maximum per "
            "Container (4) of LimitRange team-llm/caps: the API server would refuse every pod");
  // Of two items the lower max holds; the max is also the default limit (as stored), which
  // the request the container sets must not exceed.
  const LimitRangeDefaults two =
      range(R"({"type":"Container","max":{"cpu":"200"}},{"type":"Container","max":{"cpu":"100"}})");
  EXPECT_EQ(two.container_max, (ResourceList{{"cpu", 100000}}));
  EXPECT_EQ(two.limits, (ResourceList{{"cpu", 200000}}));
  EXPECT_THAT(refusal(two), HasSubstr("containers[0]: cpu 200 is above the maximum per Container "
                                      "(100)"));
  // A min alone is the default request (as stored): a container that sets none gets it.
  EXPECT_EQ(refusal(range(R"({"type":"Container","min":{"ephemeral-storage":"1Gi"}})")), "");
  EXPECT_THAT(refusal(range(R"({"type":"Container","min":{"memory":"2000Gi"}})")),
              HasSubstr("containers[0]: memory 1800Gi is below the minimum per Container "
                        "(2000Gi)"));
  // Per pod: its effective requests.
  EXPECT_THAT(refusal(range(R"({"type":"Pod","max":{"cpu":"100"}})")),
              HasSubstr("spec.template.spec: cpu 180 is above the maximum per Pod (100)"));
  EXPECT_EQ(refusal(range(R"({"type":"Pod","max":{"cpu":"200"},"min":{"cpu":"1"}})")), "");
  // Another namespace's LimitRange says nothing of this job.
  LimitRangeDefaults elsewhere = range(R"({"type":"Pod","max":{"cpu":"1"}})");
  elsewhere.namespace_name = "team-cv";
  EXPECT_EQ(refusal(elsewhere), "");
}

// status.hard and status.used are read in the units spec.hard is: "pods" and "count/pods" as
// one (the lower limit, the higher use), requests.X and bare cpu/memory as the resource,
// limits.cpu (memory, ephemeral-storage) in the resource's units, limits of an extended
// resource left out; a quantity that does not parse names the quota and the field.
TEST(NamespaceQuotaTest, DecodesStatusHardAndUsedInCanonicalUnits) {
  const NamespaceQuota q = Quota(
      R"({"hard":{"requests.nvidia.com/gpu":"16"}})", "team-llm",
      R"({"hard":{"requests.nvidia.com/gpu":"16","pods":"10","count/pods":"8","memory":"2Gi",)"
      R"("limits.cpu":"4","limits.nvidia.com/gpu":"8"},"used":{"requests.nvidia.com/gpu":"8",)"
      R"("pods":"3","count/pods":"4","memory":"1536Mi","limits.cpu":"2"}})");
  EXPECT_EQ(q.hard_per_pods, (ResourceList{{"nvidia.com/gpu", 16}}));
  EXPECT_EQ(q.status_hard,
            (ResourceList{
                {"nvidia.com/gpu", 16}, {"pods", 8}, {"memory", 2LL << 30}, {"limits.cpu", 4000}}));
  EXPECT_EQ(
      q.used,
      (ResourceList{
          {"nvidia.com/gpu", 8}, {"pods", 4}, {"memory", 1536LL << 20}, {"limits.cpu", 2000}}));
  // Not yet seen by the quota controller: no status at all.
  EXPECT_THAT(Quota(R"({"hard":{"pods":"1"}})").used, IsEmpty());
  for (const auto& [status, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"used":{"requests.nvidia.com/gpu":"eight"}})",
            "status.used[requests.nvidia.com/gpu]"},
           {R"({"hard":{"count/pods":"1.5.0"}})", "status.hard[count/pods]"}}) {
    EXPECT_THAT(
        DecodeResourceQuota(absl::StrCat(
            R"({"metadata":{"name":"gpus","namespace":"ml"},"spec":{},"status":)", status, "}")),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 HasSubstr(absl::StrCat("ResourceQuota ml/gpus: ", field, ": "))))
        << field;
  }
}

// An elastic gang is admitted, or grows, only to a size whose pods the room left lets the API
// server create: 8-GPU pods, a range of 2 to 7 in steps of 2 (2, 4, 6).
TEST(NamespaceQuotaTest, ElasticSizeWithRoomStopsAtTheRoomLeft) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");  // 8 GPUs a pod
  const placement::ElasticRange range{.min = 2, .max = 7, .step = 2};
  auto room = [](int gpus_used) {
    return std::vector<NamespaceQuota>{
        QuotaInUse(R"({"requests.nvidia.com/gpu":"64"})",
                   absl::StrCat(R"({"requests.nvidia.com/gpu":")", gpus_used, R"("})"))};
  };
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 0, room(0)), 6);   // the largest size on the grid
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 0, room(24)), 4);  // 40 GPUs left: 5 pods, 4 fit
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 0, room(48)), 2);  // 16 left: the minimum
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 0, room(56)), 2);  // none: the minimum (held)
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 0, {}), 6);        // no quota
  // Running at 2 (its 16 GPUs in the use): growth by what is left.
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 2, room(40)), 4);  // 24 left: 3 more pods, 2 fit
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 2, room(56)), 2);  // 8 left: not a whole step
  EXPECT_EQ(ElasticSizeWithRoom(job, range, 2, room(64)), 2);  // none left: stays
  // A size above an edited-down maximum is not raised to it by this.
  EXPECT_EQ(ElasticSizeWithRoom(job, {.min = 2, .max = 4, .step = 2}, 6, room(64)), 4);
}

// A gang that the limits hold but that does not fit what the namespace's pods leave of them
// waits, told the quota, its room, its use and what the gang needs.
TEST(NamespaceQuotaTest, ShortfallAgainstHardLessUsed) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");  // 8 GPUs a pod
  const NamespaceQuota gpus =
      QuotaInUse(R"({"requests.nvidia.com/gpu":"16"})", R"({"requests.nvidia.com/gpu":"8"})");
  EXPECT_EQ(QuotaRefusal(job, 2, {gpus}), "");    // the limit holds 2 pods
  EXPECT_EQ(QuotaShortfall(job, 1, {gpus}), "");  // exactly the room left
  EXPECT_EQ(
      QuotaShortfall(job, 2, {gpus}),
      "ResourceQuota team-llm/q has room for 8 more requests.nvidia.com/gpu in namespace team-llm "
      "(8 of 16 used), and the gang needs 16 (2 pods of 8): it waits until the namespace "
      "uses less");
  // An elastic job is told about its smallest gang, the size the caller asks about.
  kube::TrainingJob elastic = job;
  elastic.elastic = kube::TrainingJobElastic{.min_replicas = 2, .max_replicas = 4, .step = 1};
  EXPECT_THAT(QuotaShortfall(elastic, 2, {gpus}),
              HasSubstr(", and its smallest gang needs 16 (2 pods of 8): "));
  // Pods, with their noun's number; a use above a lowered limit leaves no room, not less.
  EXPECT_EQ(QuotaShortfall(job, 2, {QuotaInUse(R"({"count/pods":"3"})", R"({"count/pods":"2"})")}),
            "ResourceQuota team-llm/q has room for 1 more pod in namespace team-llm (2 of 3 "
            "used), and the gang needs 2: it waits until the namespace uses less");
  EXPECT_THAT(QuotaShortfall(job, 1, {QuotaInUse(R"({"pods":"3"})", R"({"pods":"5"})")}),
              HasSubstr("has room for 0 more pods in namespace team-llm (5 of 3 used)"));
  // Memory in its own units.
  EXPECT_THAT(
      QuotaShortfall(
          job, 1,
          {QuotaInUse(R"({"requests.memory":"2000Gi"})", R"({"requests.memory":"1000Gi"})")}),
      HasSubstr("has room for 1000Gi more requests.memory in namespace team-llm (1000Gi of 2000Gi "
                "used), and the gang needs 1800Gi (1 pod of 1800Gi)"));
  // Not counted: limits, resources the pods do not request, a quota whose scope does not match
  // the pods, and one of another namespace.
  EXPECT_EQ(QuotaShortfall(
                job, 8,
                {QuotaInUse(R"({"limits.nvidia.com/gpu":"8","requests.example.com/fpga":"0"})",
                            R"({"limits.nvidia.com/gpu":"8","requests.example.com/fpga":"0"})"),
                 QuotaInUse(R"({"pods":"0"})", R"({"pods":"0"})", R"(,"scopes":["BestEffort"])"),
                 QuotaInUse(R"({"pods":"0"})", R"({"pods":"0"})",
                            R"(,"scopeSelector":{"matchExpressions":[{"scopeName":)"
                            R"("PriorityClass","operator":"In","values":["low"]}]})")}),
            "");
  EXPECT_EQ(QuotaShortfall(job, 8,
                           {Quota(R"({"hard":{"pods":"1"}})", "team-vision",
                                  R"({"hard":{"pods":"1"},"used":{"pods":"1"}})")}),
            "");
  // A quota the quota controller has not seen yet (no status): the API server does not enforce
  // it yet either.
  EXPECT_EQ(QuotaShortfall(job, 8, {Quota(R"({"hard":{"pods":"1"}})")}), "");
  // The scope's text, as QuotaRefusal gives it.
  EXPECT_THAT(QuotaShortfall(job, 2,
                             {QuotaInUse(R"({"pods":"2"})", R"({"pods":"1"})",
                                         R"(,"scopeSelector":{"matchExpressions":[{"scopeName":)"
                                         R"("PriorityClass","operator":"In",)"
                                         R"("values":["training-critical"]}]})")}),
              HasSubstr("ResourceQuota team-llm/q (scope PriorityClass In [training-critical]) "
                        "has room for 1 more pod"));
}

// A TrainingJob's pod limits as the API server's pod quota evaluator charges them
// (resourcehelper.PodLimits): containers plus sidecars, at least the largest init step (with
// the sidecars started before it), plus overhead on what is limited; the cpu and memory that
// a container leaves without a limit, or without a request once requests default to limits.
TEST(NamespaceQuotaTest, DecodesTheTemplatesPodLimits) {
  const kube::TrainingJob job = Decoded(kube::DecodeTrainingJob(
      R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob",)"
      R"("metadata":{"name":"j","namespace":"team-llm"},"spec":{"queueName":"training",)"
      R"("replicas":2,"template":{"spec":{"overhead":{"cpu":"250m","memory":"1Gi"},)"
      R"("initContainers":[{"name":"sidecar","restartPolicy":"Always","resources":)"
      R"({"limits":{"cpu":"1","memory":"1Gi"}}},{"name":"setup","resources":)"
      R"({"limits":{"cpu":"8","memory":"2Gi"}}}],"containers":[{"name":"trainer",)"
      R"("resources":{"limits":{"cpu":"4","memory":"8Gi","nvidia.com/gpu":"8"}}},)"
      R"({"name":"logger","resources":{"requests":{"cpu":"100m"},"limits":{"cpu":"1"}}}]}}}})"));
  // cpu: max(4 + 1 + the sidecar's 1, setup's 8 + the sidecar's 1) + 0.25 overhead; memory:
  // max(8 + 1, 2 + 1) + 1; the GPUs have no overhead.
  EXPECT_EQ(job.pod_limits,
            (ResourceList{{"cpu", 9250}, {"memory", 10LL << 30}, {"nvidia.com/gpu", 8}}));
  EXPECT_THAT(job.unset_limits, ElementsAre("memory"));    // the logger's
  EXPECT_THAT(job.unset_requests, ElementsAre("memory"));  // the logger's, not defaulted
  const ResourceList requests_before = job.pod.requests;
  // A LimitRange's defaults change only what a container leaves unset (the logger's memory),
  // and the pod's requests and limits are summed again by the same rules: memory limits
  // max(8 + 2 + 1, 2 + 1) + 1, requests the same (the others default to their limits).
  kube::TrainingJob defaulted = job;
  kube::ApplyContainerDefaults({{"memory", 2LL << 30}, {"cpu", 64000}},
                               {{"memory", 2LL << 30}, {"cpu", 64000}}, defaulted);
  EXPECT_EQ(defaulted.pod_limits,
            (ResourceList{{"cpu", 9250}, {"memory", 12LL << 30}, {"nvidia.com/gpu", 8}}));
  EXPECT_EQ(defaulted.pod.requests.get().at("memory"), 12LL << 30);
  EXPECT_EQ(defaulted.pod.requests.get().at("cpu"), requests_before.at("cpu"));
  EXPECT_THAT(defaulted.unset_limits, IsEmpty());
  EXPECT_THAT(defaulted.unset_requests, IsEmpty());
  // Defaults of what every container sets change nothing, the requests included.
  kube::TrainingJob same = job;
  kube::ApplyContainerDefaults({{"cpu", 64000}}, {{"cpu", 64000}}, same);
  EXPECT_EQ(same.pod_limits, job.pod_limits);
  EXPECT_EQ(same.pod.requests.get(), requests_before);
}

// A quota's limits.cpu, limits.memory and limits.ephemeral-storage are charged the pods'
// limits, as requests are charged; a quota that tracks limits (or requests) of cpu or memory
// makes the API server refuse a pod with a container that sets none ("must specify
// limits.cpu"), so such a gang is refused whatever the room. limits of an extended resource
// charge no pod: the API server quotas those by their requests only.
TEST(NamespaceQuotaTest, LimitsAreChargedAndMustBeSetWhereTracked) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");  // no cpu limits
  EXPECT_EQ(QuotaRefusal(job, 1, {Quota(R"({"hard":{"limits.cpu":"1k"}})")}),
            "ResourceQuota team-llm/q tracks limits.cpu in namespace team-llm, and a container "
            "of the gang's pods sets no cpu limit: the API server would refuse its pods (must "
            "specify limits.cpu), so it is not admitted");
  EXPECT_EQ(QuotaRefusal(job, 1, {Quota(R"({"hard":{"requests.memory":"10Ti"}})")}), "");
  // Unlimited ephemeral storage is charged nothing, and not refused.
  EXPECT_EQ(QuotaRefusal(job, 8, {Quota(R"({"hard":{"limits.ephemeral-storage":"0"}})")}), "");
  EXPECT_EQ(QuotaRefusal(job, 8, {Quota(R"({"hard":{"limits.nvidia.com/gpu":"0"}})")}), "");
  kube::TrainingJob unrequested = job;
  unrequested.unset_requests = {"cpu"};
  EXPECT_THAT(QuotaRefusal(unrequested, 1, {Quota(R"({"hard":{"cpu":"1k"}})")}),
              HasSubstr("tracks requests.cpu in namespace team-llm, and a container of the "
                        "gang's pods sets no cpu request: the API server would refuse its pods "
                        "(must specify requests.cpu)"));
  job.pod_limits = {{"cpu", 16000}, {"memory", 64LL << 30}};
  job.unset_limits.clear();
  EXPECT_EQ(QuotaRefusal(job, 2, {Quota(R"({"hard":{"limits.cpu":"32"}})")}), "");
  EXPECT_EQ(QuotaRefusal(job, 3, {Quota(R"({"hard":{"limits.cpu":"32"}})")}),
            "ResourceQuota team-llm/q allows at most 32 limits.cpu in namespace team-llm, and "
            "the gang needs 48 (3 pods of 16): the API server would refuse its pods, so it is "
            "not admitted");
  EXPECT_EQ(
      QuotaShortfall(job, 1,
                     {QuotaInUse(R"({"limits.memory":"128Gi"})", R"({"limits.memory":"100Gi"})")}),
      "ResourceQuota team-llm/q has room for 28Gi more limits.memory in namespace "
      "team-llm (100Gi of 128Gi used), and the gang needs 64Gi (1 pod of 64Gi): it waits "
      "until the namespace uses less");
  // One quota on both cpu requests (the bare key) and cpu limits: the message names the one
  // that refuses as a quota key (audit 2026-11-30, F8: both read "cpu" before).
  phalanx::ResourceList requests = job.pod.requests;
  requests["cpu"] = 16000;
  job.pod.requests = std::move(requests);
  EXPECT_THAT(QuotaShortfall(job, 1,
                             {QuotaInUse(R"({"cpu":"64","limits.cpu":"64"})",
                                         R"({"cpu":"56","limits.cpu":"40"})")}),
              HasSubstr("has room for 8 more requests.cpu in namespace team-llm (56 of 64 used)"));
  EXPECT_THAT(QuotaShortfall(job, 1,
                             {QuotaInUse(R"({"cpu":"64","limits.cpu":"64"})",
                                         R"({"cpu":"40","limits.cpu":"56"})")}),
              HasSubstr("has room for 8 more limits.cpu in namespace team-llm (56 of 64 used)"));
}

// The pods a gang is still owed once admitted (the job controller creates them after the
// admission) are no longer room for another gang, though status.used, which counts pods that
// exist, does not have them yet (before 2026-11-30 a second gang of the namespace was admitted
// into that room, and its pod creates were refused until the pods-ready timeout).
TEST(NamespaceQuotaTest, PodsAdmittedGangsAreOwedCountAsUsed) {
  const kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");  // 8 GPUs
  std::vector<NamespaceQuota> quotas = {
      QuotaInUse(R"({"requests.nvidia.com/gpu":"32"})", R"({"requests.nvidia.com/gpu":"8"})")};
  // Admitted at 3 pods: 1 created (in status.used), 2 owed.
  ChargeJobPods({{.job = &job, .existing = 1, .owed = 2}}, quotas);
  EXPECT_EQ(quotas[0].used, (ResourceList{{"nvidia.com/gpu", 8}}));
  EXPECT_EQ(quotas[0].owed, (ResourceList{{"nvidia.com/gpu", 16}}));
  EXPECT_EQ(QuotaShortfall(job, 1, quotas), "");
  EXPECT_EQ(
      QuotaShortfall(job, 2, quotas),
      "ResourceQuota team-llm/q has room for 8 more requests.nvidia.com/gpu in namespace team-llm "
      "(24 of 32 used, 16 of it by pods admitted gangs have yet to create), and the gang "
      "needs 16 (2 pods of 8): it waits until the namespace uses less");
  EXPECT_EQ(ElasticSizeWithRoom(job, {.min = 1, .max = 4, .step = 1}, 0, quotas), 1);
  // Created pods whose charge the quota's informer does not show yet: the larger use counts;
  // a use above what the operator's pods are charged (other pods of the namespace) stays.
  std::vector<NamespaceQuota> stale = {QuotaInUse(R"({"requests.nvidia.com/gpu":"32","pods":"10"})",
                                                  R"({"requests.nvidia.com/gpu":"8","pods":"5"})")};
  ChargeJobPods({{.job = &job, .existing = 3, .owed = 0}}, stale);
  EXPECT_EQ(stale[0].used, (ResourceList{{"nvidia.com/gpu", 24}, {"pods", 5}}));
  EXPECT_THAT(stale[0].owed, IsEmpty());
  // A quota whose scope does not match the pods is charged none of them.
  std::vector<NamespaceQuota> scoped = {
      QuotaInUse(R"({"pods":"4"})", R"({"pods":"0"})", R"(,"scopes":["BestEffort"])")};
  ChargeJobPods({{.job = &job, .existing = 2, .owed = 3}}, scoped);
  EXPECT_EQ(scoped[0].used, (ResourceList{{"pods", 0}}));
  EXPECT_THAT(scoped[0].owed, IsEmpty());
}

// A rank's place in the quota's use is kept by a pod that exists and neither terminates nor
// has finished; one that does leaves its rank owed (its replacement is created anew).
TEST(NamespaceQuotaTest, LivePodsAreThoseNeitherTerminatingNorFinished) {
  auto pod = [](const char* phase, const char* deleted) {
    auto p = std::make_shared<kube::Pod>();
    p->phase = kube::InternedString(phase);
    p->meta.deletion_timestamp = kube::InternedString(deleted);
    return std::shared_ptr<const kube::Pod>(std::move(p));
  };
  EXPECT_EQ(
      LivePods({pod("Running", ""), pod("Pending", ""), pod("Running", "2026-12-01T00:00:00Z"),
                pod("Succeeded", ""), pod("Failed", "")}),
      2);
  EXPECT_EQ(LivePods({}), 0);
  // A succeeded rank is done (not owed); a failed one is re-created by the gang's restart.
  EXPECT_EQ(SucceededPods({pod("Running", ""), pod("Succeeded", ""), pod("Succeeded", ""),
                           pod("Succeeded", "2026-11-30T00:00:00Z"), pod("Failed", "")}),
            2);
}

// Each quota's room (status.hard less the use and what is owed) is a budget of the admission
// core, one per quota and resource; a job's pods take from those of the quotas that apply to
// them, on what they are charged.
TEST(NamespaceQuotaTest, EachQuotasRoomIsABudgetItsPodsTakeFrom) {
  const kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  std::vector<NamespaceQuota> quotas = {
      QuotaInUse(R"({"requests.nvidia.com/gpu":"32"})", R"({"requests.nvidia.com/gpu":"8"})"),
      QuotaInUse(R"({"pods":"4"})", R"({"pods":"1"})",
                 R"(,"scopeSelector":{"matchExpressions":[{"scopeName":"PriorityClass",)"
                 R"("operator":"In","values":["low"]}]})"),
      Quota(R"({"hard":{"pods":"1"}})")};  // no status yet: not enforced
  quotas[1].name = "low";
  quotas[2].name = "new";
  ChargeJobPods({{.job = &job, .existing = 0, .owed = 1}}, quotas);
  std::map<std::string, admission::Budget> budgets;
  AddQuotaBudgets(quotas, budgets);
  ASSERT_EQ(budgets.size(), 2u);
  const admission::Budget& gpus = budgets.at("team-llm/q/nvidia.com/gpu");
  EXPECT_EQ(gpus.name, "ResourceQuota team-llm/q");
  EXPECT_EQ(gpus.resource, "requests.nvidia.com/gpu");
  EXPECT_EQ(gpus.left, 16);  // 32 - 8 used - 8 owed
  const admission::Budget& low = budgets.at("team-llm/low/pods");
  EXPECT_EQ(low.name, "ResourceQuota team-llm/low (scope PriorityClass In [low])");
  EXPECT_EQ(low.left, 3);
  EXPECT_EQ(BudgetPerPod(job, quotas),
            (std::map<std::string, int64_t>{{"team-llm/q/nvidia.com/gpu", 8}}));
}

// Every pod create in a namespace raises its quotas' use: that alone starts no admission cycle
// (it only holds back more); any use that went down, or any limit or scope changed, does.
TEST(NamespaceQuotaTest, OnlyUseGoingUpIsNoChangeThatMatters) {
  const NamespaceQuota before = QuotaInUse(R"({"requests.nvidia.com/gpu":"16","pods":"4"})",
                                           R"({"requests.nvidia.com/gpu":"8","pods":"1"})");
  EXPECT_FALSE(QuotaChangeMatters(before, before));
  EXPECT_FALSE(
      QuotaChangeMatters(before, QuotaInUse(R"({"requests.nvidia.com/gpu":"16","pods":"4"})",
                                            R"({"requests.nvidia.com/gpu":"16","pods":"2"})")));
  EXPECT_TRUE(
      QuotaChangeMatters(before, QuotaInUse(R"({"requests.nvidia.com/gpu":"16","pods":"4"})",
                                            R"({"requests.nvidia.com/gpu":"0","pods":"2"})")));
  EXPECT_TRUE(QuotaChangeMatters(
      before, QuotaInUse(R"({"requests.nvidia.com/gpu":"16","pods":"4"})", R"({"pods":"1"})")));
  EXPECT_TRUE(
      QuotaChangeMatters(before, QuotaInUse(R"({"requests.nvidia.com/gpu":"24","pods":"4"})",
                                            R"({"requests.nvidia.com/gpu":"8","pods":"1"})")));
  EXPECT_TRUE(
      QuotaChangeMatters(before, QuotaInUse(R"({"requests.nvidia.com/gpu":"16","pods":"4"})",
                                            R"({"requests.nvidia.com/gpu":"8","pods":"1"})",
                                            R"(,"scopes":["NotBestEffort"])")));
}

}  // namespace
}  // namespace phalanx::operator_server
