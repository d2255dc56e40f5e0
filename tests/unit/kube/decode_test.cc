#include "kube/decode.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using testing::Testdata;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;

TEST(DecodePodTest, KeepsSchedulingFieldsAndSkipsManagedFields) {
  ASSERT_OK_AND_ASSIGN(Pod pod, Decode<Pod>(Testdata("pod_with_managed_fields.json")));
  EXPECT_EQ(pod.meta.name, "llama-70b-3");
  EXPECT_EQ(pod.meta.namespace_, "ml-team");
  EXPECT_EQ(pod.meta.Key(), "ml-team/llama-70b-3");
  EXPECT_EQ(pod.meta.uid, "6f1a0b4e-2c39-4d0e-9a57-0b2b1f9c7e11");
  EXPECT_EQ(pod.meta.resource_version, "184467");
  EXPECT_EQ(pod.meta.generation, 1);
  ASSERT_NE(pod.meta.labels.Find("phalanx.dev/rank"), nullptr);
  EXPECT_EQ(*pod.meta.labels.Find("phalanx.dev/rank"), "3");
  EXPECT_EQ(pod.meta.labels.size(), 3u);
  // An annotation whose value is escaped JSON with a newline comes back unescaped.
  EXPECT_EQ(*pod.meta.annotations.Find("kubectl.kubernetes.io/last-applied-configuration"),
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n");
  ASSERT_EQ(pod.meta.owner_references.size(), 1u);
  EXPECT_EQ(pod.meta.owner_references[0].kind, "TrainingJob");
  EXPECT_EQ(pod.meta.owner_references[0].uid, "0d6b5b0e-7f3a-4c1b-8d8e-5a1f2e3c4d5e");
  EXPECT_TRUE(pod.meta.owner_references[0].controller);
  EXPECT_TRUE(pod.meta.owner_references[0].block_owner_deletion);
  ASSERT_NE(pod.meta.ControllerRef(), nullptr);
  EXPECT_THAT(pod.meta.finalizers, ElementsAre("phalanx.dev/gang"));
  EXPECT_EQ(pod.node_name, "ip-10-1-4-17.ec2.internal");
  EXPECT_EQ(pod.scheduler_name, "phalanx");
  EXPECT_EQ(pod.phase, "Running");
  EXPECT_EQ(pod.priority, 100000);
  EXPECT_EQ(pod.priority_class_name, "training-high");
  EXPECT_TRUE(pod.ready);
  EXPECT_FALSE(pod.unschedulable);
  EXPECT_EQ(pod.pod_ip, "10.1.77.203");
  EXPECT_EQ(*pod.node_selector.Find("node.kubernetes.io/instance-type"), "p5.48xlarge");
  ASSERT_EQ(pod.tolerations.size(), 2u);
  EXPECT_EQ(pod.tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(pod.tolerations[0].operator_, "Exists");
  EXPECT_EQ(pod.tolerations[1].effect, "NoExecute");
}

TEST(DecodePodTest, RequestsFollowKubeSchedulerRules) {
  ASSERT_OK_AND_ASSIGN(Pod pod, Decode<Pod>(Testdata("pod_with_managed_fields.json")));
  // containers 180 + 0.25 CPU, plus the log-shipper sidecar 0.5, plus 0.1 pod overhead; the
  // 4-CPU init container runs alone before them and does not raise the maximum.
  EXPECT_THAT(pod.requests,
              ElementsAre(Pair("cpu", 180850), Pair("memory", 1900 * kGi + 256 * kMi + 512 * kMi),
                          Pair("nvidia.com/gpu", 8), Pair("vpc.amazonaws.com/efa", 32)));
}

TEST(DecodePodTest, BigInitContainerSetsTheFloor) {
  ASSERT_OK_AND_ASSIGN(Pod pod, Decode<Pod>(R"({
    "metadata": {"name": "p", "namespace": "n"},
    "spec": {
      "initContainers": [
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
        {"name": "warmup", "resources": {"requests": {"cpu": "6", "memory": "1Gi"}}}
      ],
      "containers": [{"name": "main", "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}]
    }})"));
  // warmup runs beside the sidecar: 6 + 1 = 7 CPUs; the steady state is 2 + 1 = 3.
  EXPECT_THAT(pod.requests, ElementsAre(Pair("cpu", 7000), Pair("memory", 4 * kGi)));
}

TEST(DecodePodTest, UnschedulableCondition) {
  ASSERT_OK_AND_ASSIGN(DecodedList<Pod> list, DecodeList<Pod>(Testdata("pod_list_page1.json")));
  ASSERT_EQ(list.items.size(), 2u);
  EXPECT_TRUE(list.items[0].unschedulable);
  EXPECT_FALSE(list.items[1].unschedulable);
  EXPECT_TRUE(list.items[1].unschedulable_message.empty());
  // Why, as kube-scheduler wrote it (for the pods-ready timeout's message), whatever the order.
  ASSERT_OK_AND_ASSIGN(Pod pod, Decode<Pod>(R"({"metadata":{"name":"p"},"status":{
      "phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",
      "lastTransitionTime":"2026-11-30T11:00:00Z","reason":"Unschedulable",
      "message":"0/16 nodes are available: persistentvolumeclaim \"ckpt\" not found."}]}})"));
  EXPECT_TRUE(pod.unschedulable);
  EXPECT_EQ(pod.unschedulable_message,
            "0/16 nodes are available: persistentvolumeclaim \"ckpt\" not found.");
  ASSERT_OK_AND_ASSIGN(pod, Decode<Pod>(R"({"metadata":{"name":"p"},"status":{
      "conditions":[{"message":"m","status":"False","type":"PodScheduled"}]}})"));
  EXPECT_EQ(pod.unschedulable_message, "m");
}

TEST(DecodePodTest, PodIpWhereverItComesAndEmptyBeforeIt) {
  ASSERT_OK_AND_ASSIGN(Pod first, Decode<Pod>(R"({"metadata":{"name":"a"},"status":{
      "podIP":"10.0.0.7","phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})"));
  EXPECT_EQ(first.pod_ip, "10.0.0.7");
  EXPECT_TRUE(first.ready);
  ASSERT_OK_AND_ASSIGN(Pod pending, Decode<Pod>(R"({"metadata":{"name":"b"},"status":{
      "phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}],
      "qosClass":"BestEffort"}})"));
  EXPECT_EQ(pending.pod_ip, "");
  EXPECT_EQ(pending.phase, "Pending");
  EXPECT_FALSE(pending.disruption_target);
}

// What the taint manager writes when it evicts a pod from an unreachable node.
TEST(DecodePodTest, DisruptionTargetCondition) {
  ASSERT_OK_AND_ASSIGN(Pod evicted, Decode<Pod>(R"({"metadata":{"name":"a"},"status":{
      "phase":"Failed","conditions":[{"type":"DisruptionTarget","status":"True",
      "reason":"DeletionByTaintManager","message":"Taint manager: deleting due to NoExecute taint"},
      {"type":"Ready","status":"False"}]}})"));
  EXPECT_TRUE(evicted.disruption_target);
  EXPECT_EQ(evicted.phase, "Failed");
  ASSERT_OK_AND_ASSIGN(Pod kept, Decode<Pod>(R"({"metadata":{"name":"b"},"status":{
      "phase":"Running","conditions":[{"type":"DisruptionTarget","status":"False"}]}})"));
  EXPECT_FALSE(kept.disruption_target);
}

// A Failed pod is read to the end of its status for its containers' exit codes: the regular
// containers first, then the init containers (the API server writes those first), as a Job's
// podFailurePolicy looks at them; a container that exited 0 or still runs is not an exit.
TEST(DecodePodTest, AFailedPodsExitCodesAndReason) {
  ASSERT_OK_AND_ASSIGN(Pod failed, Decode<Pod>(R"({"metadata":{"name":"a"},"status":{
      "phase":"Failed","conditions":[{"type":"Ready","status":"False"}],
      "reason":"Evicted","message":"The node was low on resource: memory.",
      "podIP":"10.0.0.7",
      "initContainerStatuses":[{"name":"setup","state":{"terminated":{"exitCode":2,
        "reason":"Error","finishedAt":"2026-11-30T01:00:00Z"}}}],
      "containerStatuses":[
        {"name":"sidecar","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
        {"name":"trainer","ready":false,"restartCount":0,"state":{"terminated":{
          "exitCode":137,"reason":"OOMKilled","startedAt":"2026-11-30T00:00:00Z",
          "finishedAt":"2026-11-30T01:00:05Z","containerID":"containerd://1"}},
         "lastState":{"terminated":{"exitCode":1}}},
        {"name":"logger","state":{"running":{"startedAt":"2026-11-30T00:00:00Z"}}}],
      "qosClass":"Burstable"}})"));
  EXPECT_EQ(failed.status_reason, "Evicted");
  EXPECT_EQ(failed.status_message, "The node was low on resource: memory.");
  ASSERT_EQ(failed.exits.size(), 2u);
  EXPECT_EQ(failed.exits[0].name, "trainer");
  EXPECT_FALSE(failed.exits[0].init);
  EXPECT_EQ(failed.exits[0].exit_code, 137);
  EXPECT_EQ(failed.exits[0].reason, "OOMKilled");
  EXPECT_EQ(failed.exits[0].finished_at, "2026-11-30T01:00:05Z");
  EXPECT_EQ(failed.exits[1].name, "setup");
  EXPECT_TRUE(failed.exits[1].init);
  EXPECT_EQ(failed.exits[1].exit_code, 2);
  // A running pod is read only as far as it needs: no exits, whatever its statuses say.
  ASSERT_OK_AND_ASSIGN(Pod running, Decode<Pod>(R"({"metadata":{"name":"b"},"status":{
      "phase":"Running","conditions":[],"podIP":"10.0.0.8","containerStatuses":[
        {"name":"init-done","state":{"terminated":{"exitCode":3}}}]}})"));
  EXPECT_TRUE(running.exits.empty());
}

// A container's status does not say it is a sidecar; the spec's restartPolicy Always does. Its
// exit is kept, marked, for a failure rule that names it.
TEST(DecodePodTest, ASidecarsExitIsMarked) {
  ASSERT_OK_AND_ASSIGN(Pod failed, Decode<Pod>(R"({"metadata":{"name":"a"},"spec":{
      "initContainers":[{"name":"setup","image":"s"},
        {"name":"log-shipper","image":"f","resources":{},"restartPolicy":"Always"}],
      "containers":[{"name":"trainer","image":"t"}]},"status":{
      "phase":"Failed","conditions":[],"podIP":"10.0.0.7",
      "initContainerStatuses":[
        {"name":"setup","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
        {"name":"log-shipper","state":{"terminated":{"exitCode":137,"reason":"Error"}}}],
      "containerStatuses":[{"name":"trainer","state":{"terminated":{"exitCode":1}}}]}})"));
  ASSERT_EQ(failed.exits.size(), 2u);
  EXPECT_EQ(failed.exits[0].name, "trainer");
  EXPECT_FALSE(failed.exits[0].sidecar);
  EXPECT_EQ(failed.exits[1].name, "log-shipper");
  EXPECT_TRUE(failed.exits[1].init);
  EXPECT_TRUE(failed.exits[1].sidecar);
  // An init container that is not a sidecar is not marked (the first test's "setup").
  ASSERT_OK_AND_ASSIGN(Pod plain, Decode<Pod>(R"({"metadata":{"name":"b"},"spec":{
      "initContainers":[{"name":"setup","image":"s"}]},"status":{"phase":"Failed",
      "initContainerStatuses":[{"name":"setup","state":{"terminated":{"exitCode":2}}}]}})"));
  ASSERT_EQ(plain.exits.size(), 1u);
  EXPECT_FALSE(plain.exits[0].sidecar);
}

TEST(DecodePodTest, BadQuantityNamesTheField) {
  EXPECT_THAT(Decode<Pod>(R"({"metadata":{"name":"p"},"spec":{"containers":[
                  {"name":"c","resources":{"requests":{"memory":"12Qi"}}}]}})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("memory")));
}

TEST(DecodePodTest, MalformedJsonIsAnError) {
  EXPECT_THAT(Decode<Pod>(R"({"metadata":{"name":)"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Decode<Pod>(R"({"metadata":{"labels":{"a":7}}})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.labels")));
}

TEST(DecodeNodeTest, AllocatableTaintsAndReadiness) {
  ASSERT_OK_AND_ASSIGN(Node node, Decode<Node>(Testdata("node_p5.json")));
  EXPECT_EQ(node.meta.name, "ip-10-1-4-17.ec2.internal");
  EXPECT_EQ(node.meta.Key(), "ip-10-1-4-17.ec2.internal");
  EXPECT_EQ(*node.meta.labels.Find("topology.k8s.aws/network-node-layer-2"), "nn-2c");
  EXPECT_TRUE(node.ready);
  EXPECT_FALSE(node.unschedulable);
  ASSERT_EQ(node.taints.size(), 2u);
  EXPECT_EQ(node.taints[1],
            (Taint{"sagemaker.amazonaws.com/node-health-status", "Unschedulable", "NoExecute"}));
  EXPECT_EQ(node.allocatable.at("cpu"), 191450);
  EXPECT_EQ(node.allocatable.at("memory"), int64_t{2063004} * kMi);
  EXPECT_EQ(node.allocatable.at("nvidia.com/gpu"), 8);
  EXPECT_EQ(node.allocatable.at("vpc.amazonaws.com/efa"), 32);
  EXPECT_EQ(node.allocatable.at("pods"), 110);
}

TEST(DecodeNodeTest, NotReadyAndCordoned) {
  ASSERT_OK_AND_ASSIGN(Node node, Decode<Node>(R"({"metadata":{"name":"n"},
      "spec":{"unschedulable":true},
      "status":{"conditions":[{"type":"Ready","status":"Unknown"}]}})"));
  EXPECT_FALSE(node.ready);
  EXPECT_TRUE(node.unschedulable);
}

TEST(DecodeListTest, ItemsResourceVersionAndContinue) {
  ASSERT_OK_AND_ASSIGN(DecodedList<Pod> list, DecodeList<Pod>(Testdata("pod_list_page1.json")));
  EXPECT_EQ(list.resource_version, "190001");
  EXPECT_FALSE(list.continue_token.empty());
  EXPECT_EQ(list.items[1].node_name, "n-1");
  ASSERT_OK_AND_ASSIGN(ListMeta meta, DecodeListMeta(Testdata("pod_list_page2.json")));
  EXPECT_EQ(meta.resource_version, "190001");
  EXPECT_EQ(meta.continue_token, "");
}

TEST(DecodeListTest, ListMetaWhateverTheFieldOrder) {
  // Items before metadata (not what the API server writes, but valid JSON) still works.
  ASSERT_OK_AND_ASSIGN(
      ListMeta meta,
      DecodeListMeta(
          R"({"items":[{"metadata":{"resourceVersion":"1"}}],"metadata":{"resourceVersion":"9","continue":"c"}})"));
  EXPECT_EQ(meta.resource_version, "9");
  EXPECT_EQ(meta.continue_token, "c");
  ASSERT_OK_AND_ASSIGN(meta, DecodeListMeta(R"({"kind":"PodList","metadata":{"resourceVersion":"7"},
      "items": []})"));
  EXPECT_EQ(meta.resource_version, "7");
  EXPECT_FALSE(DecodeListMeta("not json").ok());
}

TEST(DecodeListTest, NullItemsIsEmpty) {
  ASSERT_OK_AND_ASSIGN(DecodedList<Node> list,
                       DecodeList<Node>(R"({"metadata":{"resourceVersion":"5"},"items":null})"));
  EXPECT_TRUE(list.items.empty());
  EXPECT_EQ(list.resource_version, "5");
}

TEST(DecodeRawTest, KeepsTextAndMetadata) {
  std::string json =
      R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob",)"
      R"("metadata":{"name":"llama","namespace":"ml","uid":"j-1","resourceVersion":"7"},)"
      R"("spec":{"replicas":16}})";
  ASSERT_OK_AND_ASSIGN(RawObject raw, Decode<RawObject>(json));
  EXPECT_EQ(raw.json, json);
  EXPECT_EQ(raw.meta.Key(), "ml/llama");
  EXPECT_EQ(raw.meta.resource_version, "7");
}

TEST(DecoderTest, ReusedDecoderGivesSameResults) {
  Decoder decoder;
  std::string page1 = Testdata("pod_list_page1.json");
  std::string page2 = Testdata("pod_list_page2.json");
  for (int round = 0; round < 3; ++round) {
    ASSERT_OK_AND_ASSIGN(DecodedList<Pod> a, decoder.DecodeList<Pod>(page1));
    ASSERT_OK_AND_ASSIGN(DecodedList<Pod> b, decoder.DecodeList<Pod>(page2));
    EXPECT_EQ(a.items.size(), 2u);
    ASSERT_EQ(b.items.size(), 1u);
    EXPECT_EQ(b.items[0].meta.namespace_, "other");
  }
}

// Found by tests/fuzz/fuzz_kube_decode: a pod without containers has an empty requests
// signature, and an empty text memoised first read blocks_.back() of an empty vector.
TEST(DecoderTest, PodWithoutContainersFirst) {
  constexpr std::string_view kPod = R"({"metadata":{"name":"p","namespace":"n"},"spec":{}})";
  ASSERT_OK_AND_ASSIGN(Pod once, Decode<Pod>(kPod));
  EXPECT_TRUE(once.requests.empty());
  Decoder decoder;
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK_AND_ASSIGN(Pod pod, decoder.Decode<Pod>(kPod));
    EXPECT_EQ(pod.meta.name, "p");
    EXPECT_TRUE(pod.requests.empty());
  }
}

}  // namespace
}  // namespace kube
