#include "cli/cluster_format.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api/training_job.h"
#include "kube/json.h"
#include "tests/unit/cli/testdata.h"

namespace phalanx::cli {
namespace {

using ::phalanx::cli::testing::Items;
using ::phalanx::testing::IsOk;
using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// The recorded jobs were created at 19:22:32; their conditions changed at 19:22:41.
absl::Time Now() {
  absl::Time t;
  EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, "2026-11-23T19:27:32Z", &t, nullptr));
  return t;
}

rapidjson::Document Json(const std::string& text) {
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(text);
  EXPECT_TRUE(doc.ok()) << doc.status() << "\n" << text;
  return doc.ok() ? *std::move(doc) : rapidjson::Document();
}

TEST(HumanAge, ReadsLikeKubectl) {
  EXPECT_EQ(HumanAge(absl::Seconds(-5)), "<invalid>");
  EXPECT_EQ(HumanAge(absl::Seconds(0)), "0s");
  EXPECT_EQ(HumanAge(absl::Seconds(119)), "119s");
  EXPECT_EQ(HumanAge(absl::Seconds(150)), "2m30s");
  EXPECT_EQ(HumanAge(absl::Minutes(5)), "5m");
  EXPECT_EQ(HumanAge(absl::Minutes(47)), "47m");
  EXPECT_EQ(HumanAge(absl::Hours(5) + absl::Minutes(3)), "5h3m");
  EXPECT_EQ(HumanAge(absl::Hours(47)), "47h");
  EXPECT_EQ(HumanAge(absl::Hours(3 * 24 + 4)), "3d4h");
  EXPECT_EQ(HumanAge(absl::Hours(400 * 24)), "400d");
  EXPECT_EQ(HumanAge(absl::Hours((2 * 365 + 30) * 24)), "2y30d");
  EXPECT_EQ(HumanAge(absl::Hours(9 * 365 * 24)), "9y");
}

TEST(ShortLevel, NamesLevelsAsPeopleSayThem) {
  EXPECT_EQ(ShortLevel("topology.k8s.aws/network-node-layer-3"), "layer-3");
  EXPECT_EQ(ShortLevel("nvidia.com/gpu.clique"), "gpu.clique");
  EXPECT_EQ(ShortLevel("kubernetes.io/hostname"), "node");
  EXPECT_EQ(ShortLevel(""), "cluster");
  EXPECT_EQ(ShortLevel("rack"), "rack");
}

// ---- queues ----------------------------------------------------------------------------------

TEST(FormatQueues, GpuQuotaPerFlavorWithUsageWhereTheStatusHasIt) {
  // llm: status written (64 of 256 p5 GPUs used, nothing borrowed, Active); research: borrowing
  // 16 and inactive, gb200 missing from its usage (none used); vision: no status at all.
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatQueues(Items("clustertrainingqueues.json"),
                                    Items("trainingqueues.json"),
                                    {.all_namespaces = true, .now = Now()}));
  EXPECT_EQ(out,
            "CLUSTERTRAININGQUEUE   COHORT      PENDING   ADMITTED   GPUS USED/NOMINAL             "
            "                        ACTIVE\n"
            "llm                    gpu-fleet   1         1          p5 64/256 (+0 borrowed), "
            "gb200 0/72 (+0 borrowed)     True\n"
            "research               gpu-fleet   1         0          p5 144/128 (+16 borrowed), "
            "gb200 0/36 (+0 borrowed)   False (FlavorNotFound)\n"
            "vision                 gpu-fleet   -         -          p5 -/128, gb200 -/36        "
            "                          -\n"
            "\n"
            "NAMESPACE       TRAININGQUEUE   CLUSTERTRAININGQUEUE   PENDING   ADMITTED   ACTIVE\n"
            "team-llm        training        llm                    1         1          -\n"
            "team-research   training        research               -         -          -\n"
            "team-vision     training        vision                 -         -          -\n");
}

TEST(FormatQueues, OneNamespaceHasNoNamespaceColumn) {
  std::vector<std::string> local = Items("trainingqueues.json");
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatQueues({}, {local[0]}, {.ns = "team-llm", .now = Now()}));
  EXPECT_EQ(out,
            "No ClusterTrainingQueues found.\n\n"
            "TRAININGQUEUE   CLUSTERTRAININGQUEUE   PENDING   ADMITTED   ACTIVE\n"
            "training        llm                    1         1          -\n");
  // A stopped TrainingQueue (stopPolicy) says why in ACTIVE.
  const std::string stopped = R"({"metadata":{"name":"held","namespace":"team-llm"},
      "spec":{"clusterQueue":"llm","stopPolicy":"Hold"},
      "status":{"pendingWorkloads":2,"admittedWorkloads":0,"conditions":[{"type":"Active",
        "status":"False","reason":"Stopped",
        "message":"TrainingQueue team-llm/held is stopped"}]}})";
  ASSERT_OK_AND_ASSIGN(out, FormatQueues({}, {stopped}, {.ns = "team-llm", .now = Now()}));
  EXPECT_THAT(out, HasSubstr("held            llm                    2         0          "
                             "False (Stopped)\n"));
  ASSERT_OK_AND_ASSIGN(out, FormatQueues({}, {}, {.ns = "default"}));
  EXPECT_EQ(out, "No ClusterTrainingQueues found.\n\nNo TrainingQueues in namespace default.\n");
}

TEST(FormatQueues, QuantitiesMayBeStrings) {
  const std::string cq = R"({"metadata":{"name":"q"},"spec":{"resourceGroups":[
      {"coveredResources":["cpu"],"flavors":[{"name":"cpu-only","resources":[
          {"name":"cpu","nominalQuota":"1k"}]}]},
      {"coveredResources":["nvidia.com/gpu"],"flavors":[{"name":"h100","resources":[
          {"name":"nvidia.com/gpu","nominalQuota":"1k"}]}]}]},
    "status":{"flavorsUsage":[{"name":"h100","resources":[
        {"name":"nvidia.com/gpu","total":"1500m","borrowed":"0"}]}]}})";
  ASSERT_OK_AND_ASSIGN(std::string out, FormatQueues({cq}, {}, {.json = true}));
  // A flavor without GPUs is not a GPU flavor; 1.5 GPUs round up like Kubernetes' Value().
  EXPECT_EQ(out,
            R"({"clusterTrainingQueues":[{"name":"q","cohort":null,"pending":null,"admitted":null,)"
            R"("active":null,"gpus":[{"flavor":"h100","nominal":1000,"used":2,"borrowed":0}]}],)"
            R"("trainingQueues":[]})"
            "\n");
}

TEST(FormatQueues, JsonKeepsAbsentAsNull) {
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatQueues(Items("clustertrainingqueues.json"),
                                    Items("trainingqueues.json"),
                                    {.json = true, .all_namespaces = true}));
  rapidjson::Document doc = Json(out);
  const rapidjson::Value& llm = doc["clusterTrainingQueues"][0];
  EXPECT_STREQ(llm["name"].GetString(), "llm");
  EXPECT_EQ(llm["gpus"][0]["used"].GetInt(), 64);
  EXPECT_EQ(llm["gpus"][0]["nominal"].GetInt(), 256);
  EXPECT_STREQ(llm["active"].GetString(), "True");
  const rapidjson::Value& vision = doc["clusterTrainingQueues"][2];
  EXPECT_TRUE(vision["pending"].IsNull());
  EXPECT_TRUE(vision["gpus"][0]["used"].IsNull());
  EXPECT_EQ(doc["trainingQueues"].Size(), 3u);
  EXPECT_STREQ(doc["trainingQueues"][1]["clusterQueue"].GetString(), "research");
}

// Without a cohort nothing is borrowed: usage above nominal (the quota lowered under running
// jobs) is said as that, and nothing is said while there is none.
TEST(FormatQueues, AQueueWithoutACohortIsOverNominalNotBorrowing) {
  const std::string queue = R"({"metadata":{"name":"solo"},
    "spec":{"namespaceSelector":{},"resourceGroups":[{"coveredResources":["nvidia.com/gpu"],
      "flavors":[{"name":"p5","resources":[{"name":"nvidia.com/gpu","nominalQuota":32}]},
                 {"name":"gb200","resources":[{"name":"nvidia.com/gpu","nominalQuota":8}]}]}]},
    "status":{"flavorsUsage":[
      {"name":"p5","resources":[{"name":"nvidia.com/gpu","total":"96","borrowed":"64"}]},
      {"name":"gb200","resources":[{"name":"nvidia.com/gpu","total":"4","borrowed":"0"}]}]}})";
  ASSERT_OK_AND_ASSIGN(std::string out, FormatQueues({queue}, {}, {}));
  EXPECT_THAT(out, HasSubstr("p5 96/32 (64 over nominal), gb200 4/8 "));
  EXPECT_THAT(out, Not(HasSubstr("borrowed")));
}

TEST(FormatQueues, MalformedObjectIsNamed) {
  EXPECT_THAT(FormatQueues({}, {"{}", "{"}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("TrainingQueue #1")));
  EXPECT_THAT(FormatQueues({R"({"metadata":{"name":"q"},"spec":{"cohort":7}})"}, {}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ClusterTrainingQueue q")));
}

// ---- jobs ------------------------------------------------------------------------------------

TEST(FormatJobs, PhaseSizeDomainAndWhyNotAdmitted) {
  // llama: Running on 8 nodes of layer-3 block nn-p5-l3-0, restarted once; moe: no status
  // (no operator ran); mistral: Queued with the operator's reason.
  ASSERT_OK_AND_ASSIGN(std::string out, FormatJobs(Items("trainingjobs.json"),
                                                   {.all_namespaces = true, .now = Now()}));
  EXPECT_EQ(out,
            "NAMESPACE       NAME                QUEUE      PHASE     SIZE   DOMAIN               "
            "RESTARTS   AGE   REASON\n"
            "team-llm        llama-pretrain-64   training   Running   8/8    layer-3 nn-p5-l3-0   "
            "1          5m\n"
            "team-llm        moe-gb200-tp16      training   -         -/16   -                    "
            "0          5m    no status yet\n"
            "team-research   mistral-finetune    training   Queued    -/8    -                    "
            "0          5m    InsufficientQuota: needs 16 nvidia.com/gpu in flavor p5 o...\n");
}

TEST(FormatJobs, OneNamespaceAndNone) {
  std::vector<std::string> jobs = Items("trainingjobs.json");
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatJobs({jobs[2]}, {.ns = "team-research", .now = Now()}));
  EXPECT_THAT(out, HasSubstr("\nmistral-finetune   training   Queued   -/8"));
  EXPECT_THAT(out, Not(HasSubstr("team-research")));
  ASSERT_OK_AND_ASSIGN(out, FormatJobs({}, {.ns = "default"}));
  EXPECT_EQ(out, "No TrainingJobs in namespace default.\n");
  ASSERT_OK_AND_ASSIGN(out, FormatJobs({}, {.all_namespaces = true}));
  EXPECT_EQ(out, "No TrainingJobs found.\n");
}

TEST(FormatJobs, FailedJobShowsTheFailedConditionAndConditionsAreShownWhateverTheirType) {
  const std::string job = R"({"metadata":{"name":"j","namespace":"ns"},
    "spec":{"queueName":"q","replicas":4},
    "status":{"phase":"Failed","restarts":3,"admission":{"replicas":4},
      "conditions":[{"type":"Queued","status":"False","reason":"Admitted","message":"old"},
                    {"type":"Failed","status":"True","reason":"BackoffLimitExceeded",
                     "message":"rank 2 exited 1 after 3 restarts"}]}})";
  ASSERT_OK_AND_ASSIGN(std::string out, FormatJobs({job}, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("j      q       Failed   -      -        3          -     "
                             "BackoffLimitExceeded: rank 2 exited 1 after 3 restarts\n"));
}

TEST(FormatJobs, AFinishedJobHoldsNoSizeOrDomainButItsJsonKeepsTheStatus) {
  // Admitted at 4 of 2 (spec edited after), placed in a layer-3 block, then finished: the
  // operator released the nodes and the quota but status.admission and placement stay.
  auto job = [](const std::string& name, const std::string& phase) {
    return R"({"metadata":{"name":")" + name + R"(","namespace":"ns"},
      "spec":{"queueName":"q","replicas":2},
      "status":{"phase":")" + phase + R"(","admission":{"replicas":4},
        "placement":{"level":"topology.k8s.aws/network-node-layer-3","domain":"nn-1"}}})";
  };
  const std::vector<std::string> jobs = {job("failed", "Failed"), job("done", "Succeeded"),
                                         job("running", "Running")};
  ASSERT_OK_AND_ASSIGN(std::string out, FormatJobs(jobs, {.now = Now()}));
  EXPECT_EQ(out,
            "NAME      QUEUE   PHASE       SIZE   DOMAIN         RESTARTS   AGE   REASON\n"
            "done      q       Succeeded   -      -              0          -\n"
            "failed    q       Failed      -      -              0          -\n"
            "running   q       Running     4/2    layer-3 nn-1   0          -\n");
  ASSERT_OK_AND_ASSIGN(out, FormatJobs(jobs, {.json = true, .now = Now()}));
  rapidjson::Document doc = Json(out);
  const rapidjson::Value& failed = doc["trainingJobs"][1];
  EXPECT_STREQ(failed["name"].GetString(), "failed");
  EXPECT_EQ(failed["admittedReplicas"].GetInt(), 4);
  EXPECT_STREQ(failed["domain"].GetString(), "nn-1");
}

// Hundreds of jobs (audit 32): sorted as a person reads numbered names, filtered by queue and
// phase, the whole reason on request.
TEST(FormatJobs, NumberedNamesInOrderFilteredByQueueAndPhase) {
  auto job = [](const std::string& name, const std::string& queue, const std::string& phase) {
    return R"({"metadata":{"name":")" + name + R"(","namespace":"ns"},
      "spec":{"queueName":")" + queue + R"(","replicas":1},
      "status":{"phase":")" + phase + R"(","conditions":[{"type":"Queued","status":"True",
        "reason":"InsufficientQuota","message":")" + std::string(100, 'x') + R"("}]}})";
  };
  const std::vector<std::string> jobs = {job("sc-100", "a", "Queued"), job("sc-9", "b", "Queued"),
                                         job("sc-10", "a", "Running"), job("sc-09x", "a", "Queued")};
  auto names = [](const std::string& table) {
    std::vector<std::string> out;
    for (absl::string_view line : absl::StrSplit(table, '\n', absl::SkipEmpty())) {
      out.emplace_back(line.substr(0, line.find(' ')));
    }
    return out;
  };
  ASSERT_OK_AND_ASSIGN(std::string out, FormatJobs(jobs, {.now = Now()}));
  EXPECT_THAT(names(out), ElementsAre("NAME", "sc-9", "sc-09x", "sc-10", "sc-100"));
  ASSERT_OK_AND_ASSIGN(out, FormatJobs(jobs, {.now = Now(), .queues = {"a"},
                                              .phases = {"queued"}}));
  EXPECT_THAT(names(out), ElementsAre("NAME", "sc-09x", "sc-100"));
  EXPECT_THAT(out, HasSubstr("InsufficientQuota: " + std::string(38, 'x') + "...\n"));
  ASSERT_OK_AND_ASSIGN(out, FormatJobs(jobs, {.now = Now(), .phases = {"Running", "Queued"},
                                              .wide = true}));
  EXPECT_THAT(names(out), ElementsAre("NAME", "sc-9", "sc-09x", "sc-10", "sc-100"));
  EXPECT_THAT(out, HasSubstr("InsufficientQuota: " + std::string(100, 'x') + "\n"));
  ASSERT_OK_AND_ASSIGN(out, FormatJobs(jobs, {.ns = "ns", .now = Now(), .queues = {"c"},
                                              .phases = {"Failed"}}));
  EXPECT_EQ(out, "No TrainingJobs with queue c and phase Failed in namespace ns.\n");
}

TEST(FormatJobs, Json) {
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatJobs(Items("trainingjobs.json"), {.json = true, .now = Now()}));
  rapidjson::Document doc = Json(out);
  const rapidjson::Value& llama = doc["trainingJobs"][0];
  EXPECT_STREQ(llama["phase"].GetString(), "Running");
  EXPECT_EQ(llama["admittedReplicas"].GetInt(), 8);
  EXPECT_STREQ(llama["level"].GetString(), "topology.k8s.aws/network-node-layer-3");
  EXPECT_STREQ(llama["domain"].GetString(), "nn-p5-l3-0");
  EXPECT_EQ(llama["ageSeconds"].GetInt(), 300);
  const rapidjson::Value& moe = doc["trainingJobs"][1];
  EXPECT_TRUE(moe["phase"].IsNull());
  EXPECT_TRUE(moe["admittedReplicas"].IsNull());
  EXPECT_EQ(moe["replicas"].GetInt(), 16);
  EXPECT_THAT(doc["trainingJobs"][2]["reason"].GetString(), HasSubstr("waiting for llm"));
  EXPECT_STREQ(doc["trainingJobs"][2]["conditionReason"].GetString(), "InsufficientQuota");
  EXPECT_TRUE(llama["conditionReason"].IsNull());
}

// ---- explain ---------------------------------------------------------------------------------

std::string Job(const std::string& name) {
  for (const std::string& job : Items("trainingjobs.json")) {
    if (job.find(R"("name":")" + name + "\"") != std::string::npos) return job;
  }
  ADD_FAILURE() << "no recorded job " << name;
  return "{}";
}

absl::StatusOr<std::vector<std::string>> NoPods() { return std::vector<std::string>{}; }

PlacementAnswer NotPlaced() {
  placement::PlacementResult result;
  result.explanation.summary = "needs 2 pods x nvidia.com/gpu=8 in one layer; best has 1";
  result.explanation.wanted = 2;
  result.explanation.best_domain =
      placement::DomainId{"topology.k8s.aws/network-node-layer-2", {"nn-p5-l1-0", "nn-p5-l2-0"}};
  result.explanation.fit_in_best = 1;
  result.explanation.nodes_rejected = {{"Unschedulable", 1}, {"insufficient nvidia.com/gpu", 14}};
  placement::GangRequest request;
  request.elastic = placement::ElasticRange{.min = 2, .max = 16, .step = 2};
  request.per_pod = {{"nvidia.com/gpu", 8}};
  return {.server = "127.0.0.1:9443", .request = request, .result = result};
}

TEST(FormatExplain, QueuedJobWithEventsAndTheSchedulersDryRun) {
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatExplain(Job("mistral-finetune"), Items("events_mistral_finetune.json"),
                                     NoPods(), NotPlaced(), 10, {.now = Now()}));
  EXPECT_EQ(out,
            "TrainingJob: team-research/mistral-finetune\n"
            "Queue:       training (TrainingQueue team-research/training)\n"
            "Priority:    training-preemptible\n"
            "Replicas:    8 (elastic 2-16, step 2)\n"
            "Per pod:     cpu=180, memory=1800Gi, nvidia.com/gpu=8, vpc.amazonaws.com/efa=32\n"
            "Topology:    preferred layer-2 (topology.k8s.aws/network-node-layer-2)\n"
            "Phase:       Queued\n"
            "Admission:   not admitted\n"
            "Placement:   -\n"
            "Restarts:    0 of 10 allowed\n"
            "Age:         5m\n"
            "\n"
            "Conditions:\n"
            "  TYPE     STATUS   REASON              AGE     MESSAGE\n"
            "  Queued   True     InsufficientQuota   4m51s   needs 16 nvidia.com/gpu in flavor p5 "
            "of ClusterTrainingQueue research: 0 of 128\n"
            "                                                free after borrowing limits; "
            "waiting for llm to release quota\n"
            "\n"
            "Pods:\n"
            "  <none>\n"
            "\n"
            "Events:\n"
            "  LAST SEEN    TYPE     REASON   FROM               MESSAGE\n"
            "  4m47s (x3)   Normal   Queued   phalanx-operator   waiting in ClusterTrainingQueue "
            "research: needs 16 nvidia.com/gpu in flavor p5\n"
            "\n"
            "Scheduler:   dry run on phalanx-scheduler 127.0.0.1:9443 (holds nothing): 2-16 pods x "
            "nvidia.com/gpu=8\n"
            "  would not place it: needs 2 pods x nvidia.com/gpu=8 in one layer; best has 1\n"
            "  closest: topology.k8s.aws/network-node-layer-2=nn-p5-l2-0 fits 1 of 2 pods\n"
            "  nodes rejected: Unschedulable 1, insufficient nvidia.com/gpu 14\n");
}

TEST(FormatExplain, PlacedJobIsNotAskedAgain) {
  ASSERT_OK_AND_ASSIGN(std::string out, FormatExplain(Job("llama-pretrain-64"), {}, NoPods(),
                                                      std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Topology:    required layer-2 (topology.k8s.aws/network-node-layer-2)"
                             ", preferred layer-3 (topology.k8s.aws/network-node-layer-3)\n"));
  EXPECT_THAT(out, HasSubstr("Admission:   ClusterTrainingQueue llm, flavor p5, 8 replicas\n"));
  EXPECT_THAT(out, HasSubstr("Placement:   layer-3 nn-p5-l3-0 on p5-0000, p5-0001, p5-0002, "
                             "p5-0003, p5-0004, p5-0005, p5-0006, p5-0007\n"));
  EXPECT_THAT(
      out, HasSubstr("  Running    True     AllRanksRunning   4m51s   all 8 ranks are running\n"));
  EXPECT_THAT(out, HasSubstr("Events:\n  <none>\n"));
  EXPECT_THAT(out, HasSubstr("Scheduler:   not asked: the gang holds the nodes under Placement\n"));
}

// A pod of llama-pretrain-64 (uid 145dc9bd-..., 8 ranks, restart 1) as the API server lists it.
std::string RankPodJson(int rank, int restart, const std::string& phase, const std::string& extra,
                        const std::string& uid = "145dc9bd-6883-4465-85b7-eda0e9ee687d") {
  return absl::StrCat(
      R"({"metadata":{"name":"llama-pretrain-64-)", rank,
      R"(","namespace":"team-llm","labels":{"phalanx.dev/job":"llama-pretrain-64",)",
      R"("phalanx.dev/rank":")", rank, R"(","phalanx.dev/restart":")", restart,
      R"("},"ownerReferences":[{"apiVersion":"phalanx.dev/v1alpha1",)",
      R"("kind":"TrainingJob","name":"llama-pretrain-64","uid":")", uid, R"(","controller":true}])",
      extra, R"(},"status":{"phase":")", phase, R"("}})");
}

// Each rank without a running pod is listed with what keeps it (audit 2026-11-30 b: a job
// stuck in Admitted said nothing about its Pending pods).
TEST(FormatExplain, RanksWithoutARunningPodSayWhy) {
  std::vector<std::string> pods;
  for (int rank : {0, 1, 2, 3, 4}) pods.push_back(RankPodJson(rank, 1, "Running", ""));
  // Rank 5: kube-scheduler could not bind it.
  pods.push_back(absl::StrCat(
      R"({"metadata":{"name":"llama-pretrain-64-5","labels":{"phalanx.dev/rank":"5",)",
      R"("phalanx.dev/restart":"1"},"ownerReferences":[{"uid":)",
      R"("145dc9bd-6883-4465-85b7-eda0e9ee687d","controller":true}]},)",
      R"("status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",)",
      R"("reason":"Unschedulable","message":"0/16 nodes are available: 1 node(s) had )",
      R"(untolerated taint."}]}})"));
  // Rank 6: on its node, its image cannot be pulled.
  pods.push_back(absl::StrCat(
      R"({"metadata":{"name":"llama-pretrain-64-6","labels":{"phalanx.dev/rank":"6",)",
      R"("phalanx.dev/restart":"1"},"ownerReferences":[{"uid":)",
      R"("145dc9bd-6883-4465-85b7-eda0e9ee687d","controller":true}]},)",
      R"("spec":{"nodeName":"p5-0006"},"status":{"phase":"Pending","containerStatuses":[)",
      R"({"name":"trainer","state":{"waiting":{"reason":"ImagePullBackOff","message":)",
      R"("Back-off pulling image \"nope:1\""}}}]}})"));
  // Rank 7 has no pod; rank 2 of the restart before is still terminating; a pod of an
  // earlier job of the same name (another uid) is not one of this gang's.
  pods.push_back(RankPodJson(2, 0, "Running", R"(,"deletionTimestamp":"2026-11-23T19:20:00Z")"));
  pods.push_back(RankPodJson(7, 1, "Running", "", "0000-another-job"));

  ASSERT_OK_AND_ASSIGN(std::string out, FormatExplain(Job("llama-pretrain-64"), {}, pods,
                                                      std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(
      out,
      HasSubstr(
          "\nPods:\n"
          "  8 ranks (restart 1): 5 Running, 2 Pending, 1 without a pod, and 2 other pods (below)\n"
          "  RANK   POD                   PHASE                      NODE      DETAIL\n"
          "  5      llama-pretrain-64-5   Pending                    -         Unschedulable: 0/16 "
          "nodes are available: 1 node(s) had untolerated taint.\n"
          "  6      llama-pretrain-64-6   Pending                    p5-0006   container trainer "
          "waiting: ImagePullBackOff (Back-off pulling image \"nope:1\")\n"
          "  7      -                     no pod                     -         -\n"
          "  2      llama-pretrain-64-2   Running (terminating)      -         -\n"
          "  7      llama-pretrain-64-7   Running (not this job's)   -         -\n"
          "\nEvents:\n"));

  ASSERT_OK_AND_ASSIGN(std::string json,
                       FormatExplain(Job("llama-pretrain-64"), {}, pods, std::nullopt, 10,
                                     {.json = true, .now = Now()}));
  EXPECT_THAT(json, HasSubstr(R"("ranks":{"size":8,"restart":1,"phases":{"Pending":2,"Running":5},)"
                              R"("withoutPod":[7],"otherPods":2})"));
  EXPECT_THAT(json, HasSubstr(R"({"name":"llama-pretrain-64-0","rank":0,"restart":1,)"
                              R"("phase":"Running","node":null,"terminating":false,)"
                              R"("notInGang":null,"detail":null})"));
  EXPECT_THAT(json, HasSubstr(R"("node":"p5-0006","terminating":false,"notInGang":null,)"
                              R"("detail":"container trainer waiting: ImagePullBackOff)"));

  // Without the right to list pods, the rest is still shown and the section says why.
  ASSERT_OK_AND_ASSIGN(
      out, FormatExplain(Job("llama-pretrain-64"), {},
                         absl::PermissionDeniedError("pods is forbidden: User \"dev\" cannot list"),
                         std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out,
              HasSubstr("\nPods:\n  not listed: pods is forbidden: User \"dev\" cannot list\n"));
  EXPECT_THAT(out, HasSubstr("Admission:   ClusterTrainingQueue llm"));
}

// A finished job holds nothing: explain says so instead of pointing at its last placement
// (audit 2026-11-30 b, finding 4).
TEST(FormatExplain, AFinishedJobIsSaidToHoldNothing) {
  std::string job = Job("llama-pretrain-64");
  const size_t at = job.find(R"("phase":"Running")");
  ASSERT_NE(at, std::string::npos);
  job.replace(at, 17, R"("phase":"Succeeded")");
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Scheduler:   not asked: the job has finished (Succeeded); its "
                             "reservation was released\n"));
  EXPECT_THAT(out, Not(HasSubstr("the gang holds the nodes")));
}

// A job whose spec cannot be read is explained from what can be: the reason, its conditions and
// events (before 2026-12-01 explain failed on it with the decoder's message alone).
TEST(FormatExplain, AJobWhoseSpecCannotBeReadSaysWhyAndWhatTheOperatorMadeOfIt) {
  std::string job = Job("llama-pretrain-64");
  const std::string image = R"("image":)";
  const size_t at = job.find(image);
  ASSERT_NE(at, std::string::npos);
  job.insert(at, R"("resources":{"limits":{"cpu":"lots"}},)");
  ASSERT_FALSE(kube::DecodeTrainingJob(job).ok());
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Spec:        cannot be read: spec.template.spec.containers[0]."
                             "resources.limits[cpu]: invalid quantity \"lots\""));
  EXPECT_THAT(out, HasSubstr("\nConditions:\n"));
  EXPECT_THAT(out, HasSubstr("phalanx-operator does not admit or run a job it cannot read"));
  ASSERT_OK_AND_ASSIGN(std::string json, FormatExplain(job, {}, NoPods(), std::nullopt, 10,
                                                       {.json = true, .now = Now()}));
  EXPECT_THAT(json, HasSubstr(R"("unreadable":"spec.template.spec.containers[0].resources.)"));
}

// A pending job's place in its queue, as its TrainingQueue's status.pendingJobs lists it;
// beyond the list it says so; an admitted job, or a queue not read, shows no position.
TEST(FormatExplain, APendingJobShowsItsPositionFromItsTrainingQueue) {
  const std::string queue = R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingQueue",
    "metadata":{"name":"training","namespace":"team-research"},
    "spec":{"clusterQueue":"research"},
    "status":{"pendingWorkloads":3,"pendingJobs":[
      {"name":"other","positionInQueue":1,"positionInClusterQueue":2},
      {"name":"mistral-finetune","positionInQueue":2,"positionInClusterQueue":5}]}})";
  const std::string job = Job("mistral-finetune");
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.now = Now()}, queue));
  EXPECT_THAT(out, HasSubstr("Position:    5 in ClusterTrainingQueue research, 2 in "
                             "TrainingQueue team-research/training\n"));
  ASSERT_OK_AND_ASSIGN(std::string json, FormatExplain(job, {}, NoPods(), std::nullopt, 10,
                                                       {.json = true, .now = Now()}, queue));
  EXPECT_THAT(json, HasSubstr(R"("queuePosition":{"inQueue":2,"inClusterQueue":5})"));

  std::string beyond = queue;
  beyond.replace(beyond.find("mistral-finetune"), 16, "someone-else");
  ASSERT_OK_AND_ASSIGN(out,
                       FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.now = Now()}, beyond));
  EXPECT_THAT(out, HasSubstr("Position:    not among the 2 pending jobs TrainingQueue "
                             "team-research/training lists (status.pendingJobs: the first in "
                             "the queue's order; a job held back by a ResourceQuota or in a "
                             "requeue backoff has no place in it)\n"));
  ASSERT_OK_AND_ASSIGN(json, FormatExplain(job, {}, NoPods(), std::nullopt, 10,
                                           {.json = true, .now = Now()}, beyond));
  EXPECT_THAT(json, Not(HasSubstr("queuePosition")));

  ASSERT_OK_AND_ASSIGN(out, FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, Not(HasSubstr("Position:")));
  ASSERT_OK_AND_ASSIGN(out, FormatExplain(Job("llama-pretrain-64"), {}, NoPods(), std::nullopt, 10,
                                          {.now = Now()}, queue));
  EXPECT_THAT(out, Not(HasSubstr("Position:")));  // admitted
}

// The priority phalanx-operator admits a job at: its pods' class and value, the cluster's
// globalDefault class for a job that names none; without the PriorityClasses, what it names.
TEST(FormatExplain, PriorityIsTheClassItsPodsGetWithItsValue) {
  auto pc = [](const std::string& name, int value, bool global_default) {
    return absl::StrCat(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)",
                        R"("metadata":{"name":")", name, R"("},"value":)", value,
                        global_default ? R"(,"globalDefault":true})" : "}");
  };
  const std::vector<std::string> with_default = {pc("training-preemptible", 100, false),
                                                 pc("standard", 1000, true)};
  const std::string named = Job("mistral-finetune");  // training-preemptible
  auto explain = [](const std::string& job, const std::optional<std::vector<std::string>>& pcs,
                    bool json = false) {
    absl::StatusOr<std::string> out =
        FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.json = json, .now = Now()}, "", pcs);
    EXPECT_THAT(out, IsOk());
    return out.ok() ? *out : "";
  };
  EXPECT_THAT(explain(named, with_default), HasSubstr("Priority:    training-preemptible (100)\n"));
  std::string nameless = named;
  const std::string field = R"("priorityClassName":"training-preemptible",)";
  ASSERT_NE(nameless.find(field), std::string::npos);
  nameless.erase(nameless.find(field), field.size());
  EXPECT_THAT(
      explain(nameless, with_default),
      HasSubstr("Priority:    standard (1000, the cluster's globalDefault PriorityClass)\n"));
  EXPECT_THAT(explain(nameless, with_default, true),
              HasSubstr(R"("effectivePriorityClassName":"standard","priority":1000,)"));
  EXPECT_THAT(explain(nameless, std::vector<std::string>{pc("standard", 1000, false)}),
              HasSubstr("Priority:    0 (no PriorityClass, and none is the cluster's "
                        "globalDefault)\n"));
  EXPECT_THAT(explain(nameless, std::nullopt), HasSubstr("Priority:    -\n"));
}

// An admitted job that names no class is at its pods' priority, fixed when they were created
// (phalanx-operator's KeepPodsPriority): here they predate the default.
TEST(FormatExplain, AnAdmittedJobWithoutAClassIsAtItsPodsPriority) {
  std::string job = Job("llama-pretrain-64");
  const std::string field = R"("priorityClassName":"training-critical",)";
  ASSERT_NE(job.find(field), std::string::npos);
  job.erase(job.find(field), field.size());
  const std::vector<std::string> classes = {
      R"({"metadata":{"name":"standard"},"value":1000,"globalDefault":true})"};
  auto explain = [&](const std::vector<std::string>& pods) {
    absl::StatusOr<std::string> out =
        FormatExplain(job, {}, pods, std::nullopt, 10, {.now = Now()}, "", classes);
    EXPECT_THAT(out, IsOk());
    return out.ok() ? *out : "";
  };
  // Rank 0's pod, created at `priority`.
  auto pod_at = [](int priority) {
    return absl::StrCat(R"({"spec":{"priority":)", priority, "},",
                        RankPodJson(0, 1, "Running", "").substr(1));
  };
  EXPECT_THAT(explain({pod_at(0)}),
              HasSubstr("Priority:    0 (its pods', as created; the cluster's globalDefault "
                        "PriorityClass is now standard)\n"));
  // Pods created at the default agree with it; without pods the default of now holds.
  EXPECT_THAT(explain({pod_at(1000)}),
              HasSubstr("Priority:    standard (1000, the cluster's globalDefault "
                        "PriorityClass)\n"));
  EXPECT_THAT(explain({}), HasSubstr("Priority:    standard (1000, the cluster's globalDefault "
                                     "PriorityClass)\n"));
}

// maxRestarts bounds the job's own failures; restarts after node failures are shown apart.
TEST(FormatExplain, RestartsAfterNodeFailuresAreNotCountedAgainstMaxRestarts) {
  ASSERT_OK_AND_ASSIGN(rapidjson::Document doc, kube::ParseJson(Job("llama-pretrain-64")));
  auto& alloc = doc.GetAllocator();
  kube::SetMember(doc["status"], "restarts", rapidjson::Value(3), alloc);
  kube::SetMember(doc["status"], "nodeFaultRestarts", rapidjson::Value(2), alloc);
  const std::string job = kube::ToJson(doc);
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out,
              HasSubstr("Restarts:    1 of 5 allowed, and 2 after node failures (not counted)\n"));
  ASSERT_OK_AND_ASSIGN(std::string json, FormatExplain(job, {}, NoPods(), std::nullopt, 10,
                                                       {.json = true, .now = Now()}));
  EXPECT_THAT(json, HasSubstr(R"("restarts":3,"nodeFaultRestarts":2)"));
}

// A condition's message is shown whole however long it is (it was cut at 200 characters),
// wrapped in lines of at most 80 under the MESSAGE column; so is an Event's. --json has them whole.
TEST(FormatExplain, LongMessagesAreWrappedNotCut) {
  std::string message;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&message, i == 0 ? "" : " ", "word", i);
  message += " end-of-message";
  ASSERT_OK_AND_ASSIGN(rapidjson::Document doc, kube::ParseJson(Job("mistral-finetune")));
  auto& alloc = doc.GetAllocator();
  rapidjson::Value& condition = doc["status"]["conditions"][0];
  kube::SetMember(condition, "message", rapidjson::Value(message.c_str(), alloc), alloc);
  const std::string event = absl::StrCat(
      R"({"reason":"Queued","type":"Normal","message":")", message,
      R"(","lastTimestamp":"2026-11-23T19:22:41Z","source":{"component":"phalanx-operator"}})");
  ASSERT_OK_AND_ASSIGN(std::string out, FormatExplain(kube::ToJson(doc), {event}, NoPods(),
                                                      std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, Not(HasSubstr("...")));
  EXPECT_THAT(out, HasSubstr("  Queued   True     InsufficientQuota   4m51s   word0 word1 "));
  // Continuation lines start under MESSAGE; read across its lines, each table has the message
  // whole.
  EXPECT_THAT(out, HasSubstr("\n                                                word"));
  std::vector<std::string> words = absl::StrSplit(out, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  const std::vector<std::string> tables = absl::StrSplit(absl::StrJoin(words, " "), message);
  EXPECT_EQ(tables.size(), 3u) << out;
  // The widest table's MESSAGE column (Events) starts at column 51.
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StrContains(line, "word")) {
      EXPECT_LE(line.size(), 51u + 80u) << line;
    }
  }
  ASSERT_OK_AND_ASSIGN(std::string json,
                       FormatExplain(kube::ToJson(doc), {event}, NoPods(), std::nullopt, 10,
                                     {.json = true, .now = Now()}));
  EXPECT_THAT(json, HasSubstr(absl::StrCat(R"("message":")", message, R"(")")));
}

// spec.activeDeadlineSeconds: counted from the Admitted condition (19:22:41Z here, 4m51s ago).
TEST(FormatExplain, ShowsWhenTheActiveDeadlineRunsOut) {
  ASSERT_OK_AND_ASSIGN(std::string plain, FormatExplain(Job("llama-pretrain-64"), {}, NoPods(),
                                                        std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(plain, Not(HasSubstr("Deadline:")));
  ASSERT_OK_AND_ASSIGN(rapidjson::Document doc, kube::ParseJson(Job("llama-pretrain-64")));
  kube::SetMember(doc["spec"], "activeDeadlineSeconds", rapidjson::Value(3600),
                  doc.GetAllocator());
  std::string job = kube::ToJson(doc);
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatExplain(job, {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Deadline:    3600s from admission: ends by 2026-11-23T20:22:41Z "
                             "(in 55m)\n"));
  ASSERT_OK_AND_ASSIGN(std::string json, FormatExplain(job, {}, NoPods(), std::nullopt, 10,
                                                       {.json = true, .now = Now()}));
  EXPECT_THAT(json,
              HasSubstr(R"("activeDeadlineSeconds":3600,"deadline":"2026-11-23T20:22:41Z")"));
  // Finished: only the limit (kube::ActiveDeadline, the operator's rule).
  kube::SetMember(doc["status"], "phase", rapidjson::Value("Succeeded"), doc.GetAllocator());
  ASSERT_OK_AND_ASSIGN(
      out, FormatExplain(kube::ToJson(doc), {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Deadline:    3600s from admission\n"));
  // Not admitted: only the limit.
  ASSERT_OK_AND_ASSIGN(rapidjson::Document queued, kube::ParseJson(Job("mistral-finetune")));
  kube::SetMember(queued["spec"], "activeDeadlineSeconds", rapidjson::Value(600),
                  queued.GetAllocator());
  ASSERT_OK_AND_ASSIGN(
      out, FormatExplain(kube::ToJson(queued), {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Deadline:    600s from admission\n"));
}

// A job evicted for pods not ready (phalanx-operator --pods-ready-timeout-seconds): when it may
// be admitted again, or that it is not requeued at the limit (audit 2026-11-30, finding 8).
TEST(FormatExplain, ShowsARequeueBackoff) {
  ASSERT_OK_AND_ASSIGN(rapidjson::Document doc, kube::ParseJson(Job("mistral-finetune")));
  rapidjson::Document state;
  state.Parse(R"({"count":2,"requeueAt":"2026-11-23T19:29:32Z"})");
  kube::SetMember(doc["status"], "requeueState", rapidjson::Value(state, doc.GetAllocator()),
                  doc.GetAllocator());
  ASSERT_OK_AND_ASSIGN(std::string out, FormatExplain(kube::ToJson(doc), {}, NoPods(), std::nullopt,
                                                      10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Requeue:     2 evictions for pods not ready; backing off: not "
                             "admitted before 2026-11-23T19:29:32Z (in 2m)\n"));
  ASSERT_OK_AND_ASSIGN(std::string json,
                       FormatExplain(kube::ToJson(doc), {}, NoPods(), std::nullopt, 10,
                                     {.json = true, .now = Now()}));
  EXPECT_THAT(json, HasSubstr(R"("requeueState":{"count":2,"requeueAt":"2026-11-23T19:29:32Z"})"));
  state.Parse(R"({"count":3})");
  kube::SetMember(doc["status"], "requeueState", rapidjson::Value(state, doc.GetAllocator()),
                  doc.GetAllocator());
  ASSERT_OK_AND_ASSIGN(
      out, FormatExplain(kube::ToJson(doc), {}, NoPods(), std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("Requeue:     3 evictions for pods not ready; not requeued (the "
                             "requeuing limit): resume the job to queue it\n"));
}

TEST(FormatExplain, JobWithoutStatusAndNoScheduler) {
  ASSERT_OK_AND_ASSIGN(std::string out, FormatExplain(Job("moe-gb200-tp16"), {}, NoPods(),
                                                      std::nullopt, 10, {.now = Now()}));
  EXPECT_THAT(out,
              HasSubstr("Topology:    required layer-2 (topology.k8s.aws/network-node-layer-2),"
                        " preferred gpu.clique (nvidia.com/gpu.clique), groups of 4 in one "
                        "gpu.clique (nvidia.com/gpu.clique)\n"));
  EXPECT_THAT(out,
              HasSubstr("Status:      none yet: phalanx-operator has not processed this job\n"));
  EXPECT_THAT(out, HasSubstr("Conditions:\n  <none>\n"));
  EXPECT_THAT(out, HasSubstr("Scheduler:   not asked (give --server HOST:PORT or set "
                             "PHALANX_SCHEDULER_GRPC for a dry run of this gang)\n"));
}

TEST(FormatExplain, SchedulerAnswersPlacedOrFailed) {
  PlacementAnswer answer = NotPlaced();
  placement::PlacementResult placed;
  placed.placed = true;
  placed.placement.domain = {"topology.k8s.aws/network-node-layer-3",
                             {"nn-p5-l1-0", "nn-p5-l2-0", "nn-p5-l3-0"}};
  placed.placement.nodes = {"p5-0008", "p5-0009"};
  answer.result = placed;
  ASSERT_OK_AND_ASSIGN(std::string out, FormatExplain(Job("mistral-finetune"), {}, NoPods(), answer,
                                                      10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("\n  would place 2 pods in layer-3 nn-p5-l3-0: p5-0008, p5-0009\n"));

  answer.result = absl::UnavailableError("Placement.Explain to 127.0.0.1:9443: connection refused");
  ASSERT_OK_AND_ASSIGN(
      out, FormatExplain(Job("mistral-finetune"), {}, NoPods(), answer, 10, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("\n  the call failed: UNAVAILABLE: Placement.Explain to "
                             "127.0.0.1:9443: connection refused\n"));
}

TEST(FormatExplain, KeepsTheLatestEventsOldestFirst) {
  std::vector<std::string> events;
  for (int minute : {3, 1, 4, 2}) {
    events.push_back(absl::StrCat(R"({"type":"Normal","reason":"R)", minute,
                                  R"(","message":"m","lastTimestamp":"2026-11-23T19:2)", minute,
                                  R"(:00Z","source":{"component":"c"}})"));
  }
  ASSERT_OK_AND_ASSIGN(std::string out, FormatExplain(Job("moe-gb200-tp16"), events, NoPods(),
                                                      std::nullopt, 2, {.now = Now()}));
  EXPECT_THAT(out, HasSubstr("  LAST SEEN   TYPE     REASON   FROM   MESSAGE\n"
                             "  4m32s       Normal   R3       c      m\n"
                             "  3m32s       Normal   R4       c      m\n\n"));
}

TEST(FormatExplain, Json) {
  ASSERT_OK_AND_ASSIGN(std::string out,
                       FormatExplain(Job("mistral-finetune"), Items("events_mistral_finetune.json"),
                                     NoPods(), NotPlaced(), 10, {.json = true, .now = Now()}));
  rapidjson::Document doc = Json(out);
  EXPECT_STREQ(doc["name"].GetString(), "mistral-finetune");
  EXPECT_EQ(doc["elastic"]["maxReplicas"].GetInt(), 16);
  EXPECT_STREQ(doc["perPod"]["nvidia.com/gpu"].GetString(), "8");
  EXPECT_STREQ(doc["topology"]["preferred"].GetString(), "topology.k8s.aws/network-node-layer-2");
  EXPECT_TRUE(doc["admission"].IsNull());
  EXPECT_STREQ(doc["conditions"][0]["reason"].GetString(), "InsufficientQuota");
  EXPECT_STREQ(doc["conditions"][0]["lastTransitionTime"].GetString(), "2026-11-23T19:22:41Z");
  EXPECT_EQ(doc["events"][0]["count"].GetInt(), 3);
  EXPECT_FALSE(doc["scheduler"]["placed"].GetBool());
  EXPECT_EQ(doc["scheduler"]["nodesRejected"]["Unschedulable"].GetInt(), 1);
}

}  // namespace
}  // namespace phalanx::cli
