// The pods and headless Service of a TrainingJob. What a user would notice: a torchrun command
// from a PyTorchJob runs unchanged on every rank (the env), rank 0 is reachable by name, the pods
// land on the admitted flavor's nodes, the job owns them, and phalanx-scheduler recognises each
// pod's gang and rank from the labels the operator writes.
#include "operator/controller/pod_builder.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api/training_job.h"
#include "kube/decode.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "rapidjson/document.h"
#include "scheduler/server/live_snapshot.h"
#include "tests/unit/operator/example_json.h"

namespace phalanx::controller {
namespace {

using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;
using rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;
using EnvList = std::vector<std::pair<std::string, std::string>>;

// Writes every integer amount in the containers' resources as a string, as the API server does
// when it stores a Pod (resource.Quantity). A TrainingJob's template is kept as written
// (x-kubernetes-preserve-unknown-fields), so the example's `nvidia.com/gpu: 8` reaches BuildPod,
// and the pod it builds, as a number.
void QuantitiesAsStrings(Value& pod_spec, Alloc& alloc) {
  for (const char* list : {"containers", "initContainers"}) {
    if (!pod_spec.HasMember(list)) continue;
    for (Value& c : pod_spec[list].GetArray()) {
      if (!c.HasMember("resources")) continue;
      for (auto& kind : c["resources"].GetObject()) {
        for (auto& amount : kind.value.GetObject()) {
          if (amount.value.IsInt64()) {
            amount.value = kube::JsonString(std::to_string(amount.value.GetInt64()), alloc);
          }
        }
      }
    }
  }
}

// The shipped example, as the API server would hand it to the operator (with a uid).
kube::TrainingJob ExampleJob(const std::string& file) {
  rapidjson::Document doc = std::move(::phalanx::testing::ExampleDocuments(file).at(0));
  kube::SetMember(doc["metadata"], "uid", Value("0b8e6a52-uid"), doc.GetAllocator());
  absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJob(kube::ToJson(doc));
  EXPECT_THAT(job, IsOk());
  return job.ok() ? *std::move(job) : kube::TrainingJob{};
}

// A job with a hand-written template; the template is not checked here, so that BuildPod's own
// checks can be tested.
kube::TrainingJob Job(std::string template_json) {
  kube::TrainingJob job;
  job.meta.name = "llama";
  job.meta.namespace_ = "ml";
  job.meta.uid = "uid-1";
  job.replicas = 4;
  job.template_json = std::move(template_json);
  return job;
}

const char kTrainer[] =
    R"({"spec":{"containers":[{"name":"trainer","image":"pytorch",)"
    R"("resources":{"limits":{"nvidia.com/gpu":8}}}]}})";

// The p5 NodeFlavor of deploy/examples/02-nodeflavors.yaml.
PodContext P5(int32_t world_size) {
  PodContext ctx;
  ctx.world_size = world_size;
  ctx.node_labels = {{"node.kubernetes.io/instance-type", "p5.48xlarge"}};
  ctx.tolerations = {{.key = "nvidia.com/gpu", .operator_ = "Exists", .effect = "NoSchedule"}};
  return ctx;
}

rapidjson::Document Parse(const absl::StatusOr<std::string>& json) {
  rapidjson::Document doc;
  EXPECT_THAT(json, IsOk());
  if (json.ok()) doc.Parse(json->c_str());
  EXPECT_FALSE(doc.HasParseError());
  return doc;
}

EnvList Env(const Value& container) {
  EnvList env;
  for (const Value& e : container["env"].GetArray()) {
    env.emplace_back(e["name"].GetString(),
                     e.HasMember("value") ? e["value"].GetString() : "<valueFrom>");
  }
  return env;
}

std::string EnvValue(const Value& container, const std::string& name) {
  for (const auto& [n, v] : Env(container)) {
    if (n == name) return v;
  }
  return "<unset>";
}

TEST(BuildPodTest, ExamplePretrainingJobRank3) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  PodContext ctx = P5(8);
  ctx.restart = 2;
  rapidjson::Document pod = Parse(BuildPod(job, ctx, 3));

  const char* master = "llama-pretrain-64-0.llama-pretrain-64.team-llm.svc";
  rapidjson::Document want;
  want.Parse(absl::StrCat(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {
      "name": "llama-pretrain-64-3", "namespace": "team-llm",
      "labels": {"app.kubernetes.io/name": "llama-pretrain", "phalanx.dev/job": "llama-pretrain-64",
                 "phalanx.dev/rank": "3", "phalanx.dev/restart": "2"},
      "ownerReferences": [{"apiVersion": "phalanx.dev/v1alpha1", "kind": "TrainingJob",
                           "name": "llama-pretrain-64", "uid": "0b8e6a52-uid",
                           "controller": true, "blockOwnerDeletion": true}]
    },
    "spec": {
      "schedulerName": "phalanx",
      "hostname": "llama-pretrain-64-3", "subdomain": "llama-pretrain-64",
      "restartPolicy": "Never",
      "priorityClassName": "training-critical",
      "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "containers": [{
        "name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.12-py3",
        "command": ["bash", "-c"],
        "args": ["torchrun --nnodes=$PET_NNODES --nproc-per-node=$PET_NPROC_PER_NODE )"
                  R"(--node-rank=$PET_NODE_RANK --master-addr=$MASTER_ADDR )"
                  R"(--master-port=$MASTER_PORT pretrain.py --config configs/llama-8b.yaml )"
                  R"(--checkpoint-dir /checkpoints/llama-8b"],
        "env": [
          {"name": "MASTER_ADDR", "value": ")", master, R"("},
          {"name": "MASTER_PORT", "value": "29500"},
          {"name": "WORLD_SIZE", "value": "64"},
          {"name": "RANK", "value": "3"},
          {"name": "NODE_RANK", "value": "3"},
          {"name": "PET_MASTER_ADDR", "value": ")", master, R"("},
          {"name": "PET_MASTER_PORT", "value": "29500"},
          {"name": "PET_NNODES", "value": "8"},
          {"name": "PET_NODE_RANK", "value": "3"},
          {"name": "PET_NPROC_PER_NODE", "value": "8"},
          {"name": "FI_PROVIDER", "value": "efa"},
          {"name": "NCCL_DEBUG", "value": "WARN"}
        ],
        "resources": {
          "requests": {"cpu": "180", "memory": "1800Gi", "nvidia.com/gpu": 8,
                       "vpc.amazonaws.com/efa": 32},
          "limits": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
        },
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]
      }],
      "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "512Gi"}}]
    }
  })")
                 .c_str());
  ASSERT_FALSE(want.HasParseError());
  // RapidJSON compares objects regardless of member order, arrays in order.
  EXPECT_TRUE(pod == want) << "got  " << kube::ToJson(pod) << "\nwant " << kube::ToJson(want);
}

TEST(BuildPodTest, EveryRankOfTheExampleGetsItsOwnRankAndTheSameGang) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  for (int rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE(rank);
    rapidjson::Document pod = Parse(BuildPod(job, P5(8), rank));
    const std::string r = absl::StrCat(rank);
    EXPECT_EQ(std::string(pod["metadata"]["name"].GetString()), "llama-pretrain-64-" + r);
    EXPECT_EQ(std::string(pod["metadata"]["labels"]["phalanx.dev/rank"].GetString()), r);
    EXPECT_EQ(std::string(pod["spec"]["hostname"].GetString()), "llama-pretrain-64-" + r);
    const Value& trainer = pod["spec"]["containers"][0];
    EXPECT_EQ(EnvValue(trainer, "RANK"), r);
    EXPECT_EQ(EnvValue(trainer, "NODE_RANK"), r);
    EXPECT_EQ(EnvValue(trainer, "PET_NODE_RANK"), r);
    EXPECT_EQ(EnvValue(trainer, "MASTER_ADDR"),
              "llama-pretrain-64-0.llama-pretrain-64.team-llm.svc");
    EXPECT_EQ(EnvValue(trainer, "MASTER_PORT"), "29500");
    EXPECT_EQ(EnvValue(trainer, "WORLD_SIZE"), "64");
    EXPECT_EQ(EnvValue(trainer, "PET_NNODES"), "8");
    EXPECT_EQ(EnvValue(trainer, "PET_NPROC_PER_NODE"), "8");
    EXPECT_EQ(EnvValue(trainer, "PET_RDZV_BACKEND"), "<unset>");  // static rendezvous
  }
}

TEST(BuildPodTest, InjectedEnvOverridesTheTemplateAndComesFirst) {
  kube::TrainingJob job = Job(R"json({"spec":{
      "schedulerName":"default-scheduler","hostname":"mine","subdomain":"other",
      "containers":[
        {"name":"trainer","env":[{"name":"RANK","value":"99"},
                                 {"name":"ENDPOINT","value":"$(MASTER_ADDR):$(MASTER_PORT)"},
                                 {"name":"MASTER_PORT","value":"1"},
                                 {"name":"POD_IP",
                                  "valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}]},
        {"name":"sidecar"}]}})json");
  PodContext ctx;
  ctx.world_size = 4;
  ctx.master_port = 23456;
  rapidjson::Document pod = Parse(BuildPod(job, ctx, 2));
  const Value& spec = pod["spec"];
  EXPECT_EQ(std::string(spec["schedulerName"].GetString()), "phalanx");
  EXPECT_EQ(std::string(spec["hostname"].GetString()), "llama-2");
  EXPECT_EQ(std::string(spec["subdomain"].GetString()), "llama");
  const std::string master = "llama-0.llama.ml.svc";
  const EnvList ours = {{"MASTER_ADDR", master},     {"MASTER_PORT", "23456"},
                        {"WORLD_SIZE", "4"},         {"RANK", "2"},
                        {"NODE_RANK", "2"},          {"PET_MASTER_ADDR", master},
                        {"PET_MASTER_PORT", "23456"}, {"PET_NNODES", "4"},
                        {"PET_NODE_RANK", "2"},      {"PET_NPROC_PER_NODE", "1"}};
  // Ours first, so that $(MASTER_ADDR) in the user's entries expands; theirs in their order.
  EnvList trainer = ours;
  trainer.emplace_back("ENDPOINT", "$(MASTER_ADDR):$(MASTER_PORT)");
  trainer.emplace_back("POD_IP", "<valueFrom>");
  EXPECT_EQ(Env(spec["containers"][0]), trainer);
  // Every container, also one that had no env.
  EXPECT_EQ(Env(spec["containers"][1]), ours);
}

TEST(BuildPodTest, InitContainersAndSidecarsGetTheEnvToo) {
  kube::TrainingJob job = Job(R"({"spec":{
      "initContainers":[{"name":"wait-for-rank-0","env":[{"name":"RANK","value":"x"}]},
                        {"name":"log-shipper","restartPolicy":"Always"}],
      "containers":[{"name":"trainer"}]}})");
  PodContext ctx;
  ctx.world_size = 2;
  rapidjson::Document pod = Parse(BuildPod(job, ctx, 1));
  for (const Value& init : pod["spec"]["initContainers"].GetArray()) {
    SCOPED_TRACE(init["name"].GetString());
    EXPECT_EQ(EnvValue(init, "RANK"), "1");
    EXPECT_EQ(EnvValue(init, "MASTER_ADDR"), "llama-0.llama.ml.svc");
    EXPECT_EQ(Env(init).size(), 10u);
  }
}

TEST(BuildPodTest, FlavorNodeLabelsAndTolerationsAreMerged) {
  kube::TrainingJob job = Job(R"({"spec":{
      "nodeSelector":{"team":"llm"},
      "tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},
                     {"key":"spot","operator":"Exists"}],
      "containers":[{"name":"trainer"}]}})");
  PodContext ctx = P5(4);
  ctx.node_labels["topology.k8s.aws/zone"] = "use1-az1";
  ctx.tolerations.push_back(
      {.key = "capacity-block", .value = "cb-1", .effect = "NoSchedule"});  // operator "" = Equal
  ctx.tolerations.push_back({.key = "spot", .operator_ = "Exists"});      // already there
  rapidjson::Document pod = Parse(BuildPod(job, ctx, 0));
  rapidjson::Document want;
  want.Parse(R"({
    "nodeSelector": {"team": "llm", "node.kubernetes.io/instance-type": "p5.48xlarge",
                     "topology.k8s.aws/zone": "use1-az1"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "spot", "operator": "Exists"},
                    {"key": "capacity-block", "value": "cb-1", "effect": "NoSchedule"}]})");
  EXPECT_TRUE(pod["spec"]["nodeSelector"] == want["nodeSelector"])
      << kube::ToJson(pod["spec"]["nodeSelector"]);
  EXPECT_TRUE(pod["spec"]["tolerations"] == want["tolerations"])
      << kube::ToJson(pod["spec"]["tolerations"]);
}

TEST(BuildPodTest, TemplateSelectorThatContradictsTheFlavorIsRejected) {
  kube::TrainingJob job = Job(R"({"spec":{
      "nodeSelector":{"node.kubernetes.io/instance-type":"p5en.48xlarge"},
      "containers":[{"name":"trainer"}]}})");
  EXPECT_THAT(BuildPod(job, P5(4), 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.nodeSelector[node.kubernetes.io/"
                                 "instance-type]: \"p5en.48xlarge\" conflicts")));
  // The same value is fine.
  job.template_json = R"({"spec":{"nodeSelector":{"node.kubernetes.io/instance-type":
      "p5.48xlarge"},"containers":[{"name":"trainer"}]}})";
  EXPECT_THAT(BuildPod(job, P5(4), 0), IsOk());
}

TEST(BuildPodTest, ElasticExampleGetsARangeAndC10dRendezvous) {
  kube::TrainingJob job = ExampleJob("11-trainingjob-elastic-finetune.yaml");
  ASSERT_TRUE(job.elastic.has_value());
  PodContext ctx = P5(6);  // admitted below the preferred 8
  ctx.elastic = job.elastic;
  rapidjson::Document pod = Parse(BuildPod(job, ctx, 5));
  const Value& trainer = pod["spec"]["containers"][0];
  const std::string master = "mistral-finetune-0.mistral-finetune.team-research.svc";
  EXPECT_EQ(EnvValue(trainer, "PET_NNODES"), "2:16");
  EXPECT_EQ(EnvValue(trainer, "WORLD_SIZE"), "48");
  EXPECT_EQ(EnvValue(trainer, "PET_RDZV_BACKEND"), "c10d");
  EXPECT_EQ(EnvValue(trainer, "PET_RDZV_ENDPOINT"), master + ":29500");
  EXPECT_EQ(std::string(pod["spec"]["priorityClassName"].GetString()), "training-preemptible");

  // A gang that grew past the spec's maximum keeps a range torchrun accepts it in.
  ctx.world_size = 18;
  pod = Parse(BuildPod(job, ctx, 17));
  EXPECT_EQ(EnvValue(pod["spec"]["containers"][0], "PET_NNODES"), "2:18");
  ctx.elastic = kube::TrainingJobElastic{.min_replicas = 4, .max_replicas = 2};
  EXPECT_THAT(BuildPod(job, ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("elastic range")));
}

TEST(BuildPodTest, ProcessesPerNodeFollowTheGpusOrTheOverride) {
  PodContext ctx;
  ctx.world_size = 4;
  auto env = [&](const std::string& tmpl) {
    rapidjson::Document pod = Parse(BuildPod(Job(tmpl), ctx, 0));
    const Value& c = pod["spec"]["containers"][0];
    return std::make_pair(EnvValue(c, "PET_NPROC_PER_NODE"), EnvValue(c, "WORLD_SIZE"));
  };
  // Limits only (the template is not defaulted like a pod), a quantity string, two containers.
  EXPECT_EQ(env(kTrainer), std::make_pair(std::string("8"), std::string("32")));
  EXPECT_EQ(env(R"({"spec":{"containers":[
                {"name":"a","resources":{"requests":{"nvidia.com/gpu":"4"},
                                         "limits":{"nvidia.com/gpu":"4"}}},
                {"name":"b","resources":{"requests":{"cpu":"1"},
                                         "limits":{"nvidia.com/gpu":2}}}]}})"),
            std::make_pair(std::string("6"), std::string("24")));
  // No GPUs: one process per pod, WORLD_SIZE = pods.
  EXPECT_EQ(env(R"({"spec":{"containers":[{"name":"cpu"}]}})"),
            std::make_pair(std::string("1"), std::string("4")));
  // An override that is not a number leaves WORLD_SIZE at the pod count, as in Kubeflow.
  ctx.nproc_per_node = "auto";
  EXPECT_EQ(env(kTrainer), std::make_pair(std::string("auto"), std::string("4")));
  ctx.nproc_per_node = "2";
  EXPECT_EQ(env(kTrainer), std::make_pair(std::string("2"), std::string("8")));

  ctx.nproc_per_node.clear();
  // A template's own PET_NPROC_PER_NODE chooses, for pods without nvidia.com/gpu to count
  // (Trainium, AMD, CPU): WORLD_SIZE follows it, and the value is not replaced.
  EXPECT_EQ(env(R"({"spec":{"containers":[{"name":"neuron",
                "env":[{"name":"PET_NPROC_PER_NODE","value":"32"}],
                "resources":{"limits":{"aws.amazon.com/neuron":"16"}}}]}})"),
            std::make_pair(std::string("32"), std::string("128")));
  EXPECT_THAT(BuildPod(Job(R"({"spec":{"containers":[{"name":"a","resources":{
                               "limits":{"nvidia.com/gpu":"1500m"}}}]}})"),
                       ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.containers[0].resources.limits"
                                 "[nvidia.com/gpu]: not a whole")));
  EXPECT_THAT(BuildPod(Job(R"({"spec":{"containers":[{"name":"a","resources":{
                               "requests":{"nvidia.com/gpu":"eight"}}}]}})"),
                       ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("containers[0].resources.requests[nvidia.com/gpu]")));
}

TEST(BuildPodTest, RestartPolicyIsNeverUnlessTheTemplateAsksForOnFailure) {
  PodContext ctx;
  ctx.world_size = 1;
  auto policy = [&](const std::string& tmpl) {
    return std::string(Parse(BuildPod(Job(tmpl), ctx, 0))["spec"]["restartPolicy"].GetString());
  };
  EXPECT_EQ(policy(kTrainer), "Never");
  EXPECT_EQ(policy(R"({"spec":{"restartPolicy":"OnFailure","containers":[{"name":"a"}]}})"),
            "OnFailure");
  EXPECT_THAT(BuildPod(Job(R"({"spec":{"restartPolicy":"Always","containers":[{"name":"a"}]}})"),
                       ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.template.spec.restartPolicy: \"Always\"")));
}

TEST(BuildPodTest, JobPriorityClassReplacesTheTemplatesAndItsComputedFields) {
  const char* tmpl = R"({"spec":{"priorityClassName":"low","priority":10,
      "preemptionPolicy":"Never","containers":[{"name":"a"}]}})";
  PodContext ctx;
  ctx.world_size = 1;
  kube::TrainingJob job = Job(tmpl);
  job.priority_class_name = "training-critical";
  job.priority = 5000;  // an admission-order override, never a pod field
  rapidjson::Document pod = Parse(BuildPod(job, ctx, 0));
  EXPECT_EQ(std::string(pod["spec"]["priorityClassName"].GetString()), "training-critical");
  EXPECT_FALSE(pod["spec"].HasMember("priority"));
  EXPECT_FALSE(pod["spec"].HasMember("preemptionPolicy"));

  // Without a class on the job the template's stand.
  pod = Parse(BuildPod(Job(tmpl), ctx, 0));
  EXPECT_EQ(std::string(pod["spec"]["priorityClassName"].GetString()), "low");
  EXPECT_EQ(pod["spec"]["priority"].GetInt(), 10);
}

TEST(BuildPodTest, ReservedNodesPinEachRankThroughNodeAffinity) {
  PodContext ctx;
  ctx.world_size = 2;
  ctx.nodes = {"p5-0001", "p5-0002"};
  rapidjson::Document pod = Parse(BuildPod(Job(kTrainer), ctx, 1));
  rapidjson::Document want;
  want.Parse(R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
      "nodeSelectorTerms":[{"matchFields":[
        {"key":"metadata.name","operator":"In","values":["p5-0002"]}]}]}}})");
  EXPECT_TRUE(pod["spec"]["affinity"] == want) << kube::ToJson(pod["spec"]["affinity"]);

  // The user's terms are ORed: each one must also require the node. Pod affinity stays.
  kube::TrainingJob job = Job(R"({"spec":{"containers":[{"name":"a"}],"affinity":{
      "podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[]},
      "nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
        {"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]}}}}})");
  pod = Parse(BuildPod(job, ctx, 0));
  want.Parse(R"({
      "podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[]},
      "nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}],
         "matchFields":[{"key":"metadata.name","operator":"In","values":["p5-0001"]}]},
        {"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}],
         "matchFields":[{"key":"metadata.name","operator":"In","values":["p5-0001"]}]}]}}})");
  EXPECT_TRUE(pod["spec"]["affinity"] == want) << kube::ToJson(pod["spec"]["affinity"]);

  // Without nodes nothing is pinned.
  ctx.nodes.clear();
  EXPECT_FALSE(Parse(BuildPod(Job(kTrainer), ctx, 1))["spec"].HasMember("affinity"));
  ctx.nodes = {"p5-0001"};
  EXPECT_THAT(BuildPod(Job(kTrainer), ctx, 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("none for rank 1")));
}

// One rank per node: the template's anti-affinity is narrowed to this job's pods of this
// restart, so that another job's pods with the same labels, or this job's previous generation
// still terminating, cannot make kube-scheduler refuse a reserved node. Preferred terms stay.
TEST(BuildPodTest, OneRankPerNodeAntiAffinityIsNarrowedToTheGangsCurrentPods) {
  kube::TrainingJob job = Job(R"({"metadata":{"labels":{"app":"t"}},"spec":{
      "containers":[{"name":"a"}],"affinity":{"podAntiAffinity":{
        "requiredDuringSchedulingIgnoredDuringExecution":[
          {"labelSelector":{"matchLabels":{"app":"t"}},"topologyKey":"kubernetes.io/hostname"},
          {"labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},
           "topologyKey":"kubernetes.io/hostname"}],
        "preferredDuringSchedulingIgnoredDuringExecution":[]}}}})");
  job.max_pods_per_node = 1;
  PodContext ctx;
  ctx.world_size = 4;
  ctx.restart = 2;
  rapidjson::Document pod = Parse(BuildPod(job, ctx, 1));
  rapidjson::Document want;
  want.Parse(R"({
      "requiredDuringSchedulingIgnoredDuringExecution":[
        {"labelSelector":{"matchLabels":{"app":"t","phalanx.dev/job":"llama",
                                         "phalanx.dev/restart":"2"}},
         "topologyKey":"kubernetes.io/hostname"},
        {"labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}],
                          "matchLabels":{"phalanx.dev/job":"llama","phalanx.dev/restart":"2"}},
         "topologyKey":"kubernetes.io/hostname"}],
      "preferredDuringSchedulingIgnoredDuringExecution":[]})");
  EXPECT_TRUE(pod["spec"]["affinity"]["podAntiAffinity"] == want)
      << kube::ToJson(pod["spec"]["affinity"]["podAntiAffinity"]);
  // The pod carries the labels it is narrowed to.
  EXPECT_STREQ(pod["metadata"]["labels"]["phalanx.dev/restart"].GetString(), "2");
}

TEST(BuildPodTest, TemplatesThatCannotBecomePodsNameTheField) {
  PodContext ctx;
  ctx.world_size = 2;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"metadata":{}})", "spec.template.spec: missing"},
      {R"({"spec":{}})", "spec.template.spec.containers: at least one container"},
      {R"({"spec":{"containers":[]}})", "spec.template.spec.containers: at least one container"},
      {R"({"spec":{"containers":{"name":"a"}}})", "spec.template.spec.containers: at least one"},
      {R"({"spec":{"containers":[{"image":"x"}]}})", "spec.template.spec.containers[0].name"},
      {R"({"spec":{"containers":[{"name":"a"},"b"]}})",
       "spec.template.spec.containers[1]: not an object"},
      {R"({"spec":{"containers":[{"name":"a","env":{"RANK":"1"}}]}})",
       "spec.template.spec.containers[0].env: not an array"},
      {R"({"spec":{"containers":[{"name":"a","env":[{"value":"1"}]}]}})",
       "spec.template.spec.containers[0].env[0].name: required"},
      {R"({"spec":{"initContainers":{},"containers":[{"name":"a"}]}})",
       "spec.template.spec.initContainers: not an array"},
      {R"({"spec":{"initContainers":[{}],"containers":[{"name":"a"}]}})",
       "spec.template.spec.initContainers[0].name: required"},
      {R"({"spec":{"nodeName":"n1","containers":[{"name":"a"}]}})",
       "spec.template.spec.nodeName: must not be set"},
      {R"({"metadata":{"labels":{"a":1}},"spec":{"containers":[{"name":"a"}]}})",
       "spec.template.metadata.labels[a]: not a string"},
      {R"({"metadata":[],"spec":{"containers":[{"name":"a"}]}})",
       "spec.template.metadata: not an object"},
      {R"({"spec":{"nodeSelector":"x","containers":[{"name":"a"}]}})",
       "spec.template.spec.nodeSelector: not an object"},
      {R"({"spec":{"tolerations":{},"containers":[{"name":"a"}]}})",
       "spec.template.spec.tolerations: not an array"},
      {R"({"spec":{"restartPolicy":"Sometimes","containers":[{"name":"a"}]}})",
       "spec.template.spec.restartPolicy"},
      {R"(not json)", "spec.template: invalid JSON"},
  };
  PodContext flavor = P5(2);
  for (const auto& [tmpl, message] : cases) {
    SCOPED_TRACE(tmpl);
    EXPECT_THAT(BuildPod(Job(tmpl), flavor, 0),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(message)));
  }
}

TEST(BuildPodTest, RanksAndContextOutsideTheGangAreRejected) {
  kube::TrainingJob job = Job(kTrainer);
  PodContext ctx;
  ctx.world_size = 4;
  EXPECT_THAT(BuildPod(job, ctx, 3), IsOk());
  EXPECT_THAT(BuildPod(job, ctx, 4),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank: 4 is outside [0, 4)")));
  EXPECT_THAT(BuildPod(job, ctx, -1), StatusIs(absl::StatusCode::kInvalidArgument));
  ctx.world_size = 0;
  EXPECT_THAT(BuildPod(job, ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("world size")));
  ctx.world_size = 4;
  ctx.master_port = 70000;
  EXPECT_THAT(BuildPod(job, ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("master port")));
  ctx.master_port = kDefaultMasterPort;
  ctx.restart = -1;
  EXPECT_THAT(BuildPod(job, ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("restart")));
  ctx.restart = 0;
  job.meta.uid.clear();
  EXPECT_THAT(BuildPod(job, ctx, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.uid")));
}

// The operator writes the labels; phalanx-scheduler reads them (scheduler/server): both sides
// must agree on the gang and rank of every pod, and the pod must go to the Phalanx profile.
TEST(BuildPodTest, SchedulerReadsTheGangAndRankOfTheBuiltPod) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  for (int rank : {0, 5, 7}) {
    SCOPED_TRACE(rank);
    rapidjson::Document doc = Parse(BuildPod(job, P5(8), rank));
    // As the API server returns it once kube-scheduler has bound it.
    doc["spec"].AddMember("nodeName", "p5-0042", doc.GetAllocator());
    QuantitiesAsStrings(doc["spec"], doc.GetAllocator());
    absl::StatusOr<kube::Pod> pod = kube::Decode<kube::Pod>(kube::ToJson(doc));
    ASSERT_THAT(pod, IsOk());
    EXPECT_EQ(pod->scheduler_name, "phalanx");
    ASSERT_NE(pod->meta.ControllerRef(), nullptr);
    EXPECT_EQ(pod->meta.ControllerRef()->name, "llama-pretrain-64");
    EXPECT_EQ(pod->meta.ControllerRef()->kind, "TrainingJob");
    std::optional<placement::PodInfo> info = scheduler::PodInfoFrom(*pod);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->job, "team-llm/llama-pretrain-64");
    EXPECT_EQ(info->rank, rank);
    EXPECT_EQ(info->key, absl::StrCat("team-llm/llama-pretrain-64-", rank));
    EXPECT_EQ(info->requests.at("nvidia.com/gpu"), 8);
  }
}

TEST(BuildHeadlessServiceTest, ServiceGivesEveryRankADnsName) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  rapidjson::Document service = Parse(BuildHeadlessService(job, 29400));
  rapidjson::Document want;
  want.Parse(R"({
    "apiVersion": "v1", "kind": "Service",
    "metadata": {
      "name": "llama-pretrain-64", "namespace": "team-llm",
      "labels": {"phalanx.dev/job": "llama-pretrain-64"},
      "ownerReferences": [{"apiVersion": "phalanx.dev/v1alpha1", "kind": "TrainingJob",
                           "name": "llama-pretrain-64", "uid": "0b8e6a52-uid",
                           "controller": true, "blockOwnerDeletion": true}]
    },
    "spec": {
      "clusterIP": "None",
      "publishNotReadyAddresses": true,
      "ports": [{"name": "master", "protocol": "TCP", "port": 29400, "targetPort": 29400}]
    }
  })");
  EXPECT_TRUE(service == want) << kube::ToJson(service);
  // The pods' subdomain is the Service's name; no selector, so kube-controller-manager's
  // endpoint controllers leave the Service to the operator's EndpointSlices.
  rapidjson::Document pod = Parse(BuildPod(job, P5(8), 0));
  EXPECT_EQ(std::string(pod["spec"]["subdomain"].GetString()),
            service["metadata"]["name"].GetString());
  EXPECT_FALSE(service["spec"].HasMember("selector"));

  EXPECT_THAT(BuildHeadlessService(job, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("master port")));
  job.meta.namespace_.clear();
  EXPECT_THAT(BuildHeadlessService(job),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.namespace")));
}

RankAddress Rank(int32_t rank, std::string ip, std::string node = "p5-0001") {
  return {.rank = rank,
          .pod = absl::StrCat("llama-pretrain-64-", rank),
          .uid = absl::StrCat("pod-uid-", rank),
          .ip = std::move(ip),
          .node = std::move(node)};
}

// What kube-controller-manager writes for a headless Service with publishNotReadyAddresses, as
// the DNS server reads it: every address ready, the pod's hostname, node and targetRef.
TEST(BuildEndpointSlicesTest, OneSliceListsEveryRankWithAnAddress) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  ASSERT_OK_AND_ASSIGN(
      std::vector<EndpointSliceBody> slices,
      BuildEndpointSlices(job, {Rank(1, "10.0.0.8"), Rank(0, "10.0.0.7", "p5-0000"), Rank(2, "")},
                          29400));
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].name, "llama-pretrain-64-0b8e6a52-ipv4-0");
  EXPECT_THAT(slices[0].hash, MatchesRegex("[0-9a-f]{16}"));
  rapidjson::Document slice;
  slice.Parse(slices[0].json.c_str());
  rapidjson::Document want;
  want.Parse(absl::StrCat(R"({
    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
    "metadata": {
      "name": "llama-pretrain-64-0b8e6a52-ipv4-0", "namespace": "team-llm",
      "labels": {"phalanx.dev/job": "llama-pretrain-64",
                 "kubernetes.io/service-name": "llama-pretrain-64",
                 "endpointslice.kubernetes.io/managed-by": "phalanx-operator.phalanx.dev"},
      "ownerReferences": [{"apiVersion": "phalanx.dev/v1alpha1", "kind": "TrainingJob",
                           "name": "llama-pretrain-64", "uid": "0b8e6a52-uid",
                           "controller": true, "blockOwnerDeletion": true}],
      "annotations": {"phalanx.dev/endpoints-hash": ")", slices[0].hash, R"("}
    },
    "addressType": "IPv4",
    "ports": [{"name": "master", "protocol": "TCP", "port": 29400}],
    "endpoints": [
      {"addresses": ["10.0.0.7"], "conditions": {"ready": true, "serving": true, "terminating": false},
       "hostname": "llama-pretrain-64-0", "nodeName": "p5-0000",
       "targetRef": {"kind": "Pod", "namespace": "team-llm", "name": "llama-pretrain-64-0",
                     "uid": "pod-uid-0"}},
      {"addresses": ["10.0.0.8"], "conditions": {"ready": true, "serving": true, "terminating": false},
       "hostname": "llama-pretrain-64-1", "nodeName": "p5-0001",
       "targetRef": {"kind": "Pod", "namespace": "team-llm", "name": "llama-pretrain-64-1",
                     "uid": "pod-uid-1"}}
    ]
  })").c_str());
  ASSERT_FALSE(want.HasParseError());
  EXPECT_TRUE(slice == want) << slices[0].json;
  // The hostname is the pod's own spec.hostname, and the slice names the pod's Service.
  rapidjson::Document pod = Parse(BuildPod(job, P5(8), 1));
  EXPECT_EQ(std::string(pod["spec"]["hostname"].GetString()),
            slice["endpoints"][1]["hostname"].GetString());
  rapidjson::Document service = Parse(BuildHeadlessService(job, 29400));
  EXPECT_EQ(std::string(service["metadata"]["name"].GetString()),
            slice["metadata"]["labels"]["kubernetes.io/service-name"].GetString());
}

TEST(BuildEndpointSlicesTest, HashChangesWithAnyAddressAndOnlyThen) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  auto hash = [&](std::vector<RankAddress> ranks) {
    absl::StatusOr<std::vector<EndpointSliceBody>> slices = BuildEndpointSlices(job, ranks);
    EXPECT_THAT(slices, IsOk());
    return slices.ok() && slices->size() == 1 ? (*slices)[0].hash : std::string("none");
  };
  const std::string base = hash({Rank(0, "10.0.0.7"), Rank(1, "10.0.0.8")});
  EXPECT_EQ(hash({Rank(1, "10.0.0.8"), Rank(0, "10.0.0.7")}), base);  // order given is not content
  EXPECT_NE(hash({Rank(0, "10.0.0.7"), Rank(1, "10.0.0.9")}), base);  // a rank's new pod
  EXPECT_NE(hash({Rank(0, "10.0.0.7")}), base);                       // a rank gone
  EXPECT_NE(hash({Rank(0, "10.0.0.7"), Rank(1, "10.0.0.8", "p5-0009")}), base);
  // A job of the same name applied again: other slices, not the old job's rewritten.
  kube::TrainingJob again = job;
  again.meta.uid = "7c1d2e3f-other";
  ASSERT_OK_AND_ASSIGN(std::vector<EndpointSliceBody> slices,
                       BuildEndpointSlices(again, {Rank(0, "10.0.0.7")}));
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].name, "llama-pretrain-64-7c1d2e3f-ipv4-0");
}

TEST(BuildEndpointSlicesTest, ThousandRanksPerSliceAndOneSlicePerAddressFamily) {
  kube::TrainingJob job = ExampleJob("10-trainingjob-pretrain-64gpu.yaml");
  std::vector<RankAddress> ranks;
  for (int32_t rank = 0; rank < 2500; ++rank) {
    ranks.push_back(Rank(rank, absl::StrCat("10.", rank / 250, ".", rank % 250, ".1")));
  }
  ranks[1700].ip = "fd00::1700";  // one rank of another family
  ranks[2100].ip.clear();         // one without an address yet
  ASSERT_OK_AND_ASSIGN(std::vector<EndpointSliceBody> slices, BuildEndpointSlices(job, ranks));
  std::vector<std::pair<std::string, size_t>> got;
  for (const EndpointSliceBody& s : slices) {
    rapidjson::Document doc;
    doc.Parse(s.json.c_str());
    got.emplace_back(s.name, doc["endpoints"].Size());
    EXPECT_LE(doc["endpoints"].Size(), 1000u);
  }
  EXPECT_THAT(got, UnorderedElementsAre(Pair("llama-pretrain-64-0b8e6a52-ipv4-0", 1000u),
                                        Pair("llama-pretrain-64-0b8e6a52-ipv4-1", 999u),
                                        Pair("llama-pretrain-64-0b8e6a52-ipv6-1", 1u),
                                        Pair("llama-pretrain-64-0b8e6a52-ipv4-2", 499u)));
  ASSERT_OK_AND_ASSIGN(std::vector<EndpointSliceBody> none, BuildEndpointSlices(job, {}));
  EXPECT_THAT(none, IsEmpty());
  EXPECT_THAT(BuildEndpointSlices(job, {Rank(3, "10.0.0.1"), Rank(3, "10.0.0.2")}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank 3 is given twice")));
  EXPECT_THAT(BuildEndpointSlices(job, {Rank(0, "10.0.0.1")}, 70000),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("master port")));
  job.meta.uid.clear();
  EXPECT_THAT(BuildEndpointSlices(job, {Rank(0, "10.0.0.1")}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadata.uid")));
}

// The API server names the pod's fields; the user wrote the TrainingJob's.
TEST(TemplateDecodingErrorTest, NamesTheFieldsAsTheJobHasThem) {
  EXPECT_EQ(TemplateDecodingError(
                "POST /api/v1/namespaces/ml/pods: Pod in version \"v1\" cannot be handled as a "
                "Pod: strict decoding error: unknown field \"spec.nodeSelectr\", unknown field "
                "\"spec.containers[0].imagePullPolicyy\", unknown field \"metadata.lables\""),
            "spec.template: unknown field \"spec.template.spec.nodeSelectr\", unknown field "
            "\"spec.template.spec.containers[0].imagePullPolicyy\", unknown field "
            "\"spec.template.metadata.lables\"");
  // Another wording is kept whole.
  EXPECT_EQ(TemplateDecodingError("duplicate field \"spec.hostname\""),
            "spec.template: duplicate field \"spec.template.spec.hostname\"");
}

// A dry run of a pending job's pod: what the API server's answer says of the template.
TEST(JudgePodDryRunTest, RefusalsOfTheBodyStandAndNameTheJobsFields) {
  using Kind = TemplateVerdict::Kind;
  TemplateVerdict strict = JudgePodDryRun(kube::MakeKubeStatus(
      400, "BadRequest",
      "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field "
      "\"spec.restartPolicyy\""));
  EXPECT_EQ(strict.kind, Kind::kRefused);
  EXPECT_EQ(strict.message, "spec.template: unknown field \"spec.template.spec.restartPolicyy\"");
  // kube-apiserver 1.34's 422 for two invalid values, with a cause for each.
  TemplateVerdict invalid = JudgePodDryRun(kube::MakeKubeStatus(
      422, "Invalid",
      "Pod \"llama-0\" is invalid: [spec.containers[0].imagePullPolicy: Unsupported value: "
      "\"Sometimes\", metadata.labels: Invalid value: \"-x\"]",
      absl::ZeroDuration(),
      {"spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\"",
       "metadata.labels: Invalid value: \"-x\""}));
  EXPECT_EQ(invalid.kind, Kind::kRefused);
  EXPECT_EQ(invalid.message,
            "spec.template.spec.containers[0].imagePullPolicy: Unsupported value: \"Sometimes\"; "
            "spec.template.metadata.labels: Invalid value: \"-x\"");
}

TEST(JudgePodDryRunTest, AdmissionRefusalsAreForNowQuotasAndRbacDeferredAndRetriesPass) {
  using Kind = TemplateVerdict::Kind;
  TemplateVerdict security = JudgePodDryRun(kube::MakeKubeStatus(
      403, "Forbidden",
      "pods \"llama-0\" is forbidden: violates PodSecurity \"baseline:latest\": privileged"));
  EXPECT_EQ(security.kind, Kind::kRefusedForNow);
  EXPECT_EQ(security.message,
            "pods \"llama-0\" is forbidden: violates PodSecurity \"baseline:latest\": "
            "privileged");
  // The admission controller holds a job back for its namespace's quotas itself.
  for (const char* quota :
       {"pods \"llama-0\" is forbidden: exceeded quota: gpus, requested: "
        "requests.nvidia.com/gpu=8",
        "pods \"llama-0\" is forbidden: failed quota: q: must specify limits.cpu for: trainer"}) {
    const TemplateVerdict verdict = JudgePodDryRun(kube::MakeKubeStatus(403, "Forbidden", quota));
    EXPECT_EQ(verdict.kind, Kind::kDeferred) << quota;
    EXPECT_EQ(verdict.message, "a ResourceQuota of its namespace") << quota;
  }
  // A LimitRange's bounds (the admission controller's LimitRangeRefusal names them) and the
  // operator's own RBAC (a Forbidden event once admitted) are not the template's to answer for.
  for (const char* limit_range :
       {"pods \"llama-0\" is forbidden: maximum cpu usage per Container is 2, but limit is 4",
        "pods \"llama-0\" is forbidden: [minimum memory usage per Pod is 1Gi, but request is "
        "512Mi, cpu max limit to request ratio per Container is 2, but provided ratio is "
        "4.000000]"}) {
    const TemplateVerdict verdict =
        JudgePodDryRun(kube::MakeKubeStatus(403, "Forbidden", limit_range));
    EXPECT_EQ(verdict.kind, Kind::kDeferred) << limit_range;
    EXPECT_EQ(verdict.message, "a LimitRange of its namespace") << limit_range;
  }
  const TemplateVerdict rbac = JudgePodDryRun(kube::MakeKubeStatus(
      403, "Forbidden",
      "pods is forbidden: User \"system:serviceaccount:phalanx-system:phalanx-operator\" cannot "
      "create resource \"pods\" in API group \"\" in the namespace \"team-vision\""));
  EXPECT_EQ(rbac.kind, Kind::kDeferred);
  EXPECT_EQ(rbac.message, "the operator's RBAC, which does not let it create pods there");
  // Created, the name taken (the API server checks that last), or no verdict at all.
  EXPECT_EQ(JudgePodDryRun(absl::OkStatus()).kind, Kind::kPassed);
  EXPECT_EQ(JudgePodDryRun(kube::MakeKubeStatus(409, "AlreadyExists", "exists")).kind,
            Kind::kPassed);
  EXPECT_EQ(JudgePodDryRun(kube::MakeKubeStatus(500, "InternalError", "etcd")).kind, Kind::kPassed);
  EXPECT_EQ(JudgePodDryRun(absl::UnavailableError("connection refused")).kind, Kind::kPassed);
  EXPECT_EQ(JudgePodDryRun(kube::MakeKubeStatus(
                               400, "BadRequest",
                               "admission webhook \"x.example.com\" does not support dry run"))
                .kind,
            Kind::kPassed);
}

}  // namespace
}  // namespace phalanx::controller
