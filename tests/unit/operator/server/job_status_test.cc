// TrainingJob status as the operator writes it: conditions merge without losing transition
// times, and each controller's apply body carries exactly the fields it owns.
#include "operator/server/job_status.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/json.h"

namespace phalanx::operator_server {
namespace {

using ::testing::HasSubstr;

kube::ObjectMeta Meta() {
  kube::ObjectMeta meta;
  meta.name = "llama";
  meta.namespace_ = "ml";
  meta.uid = "uid-1";
  return meta;
}

TEST(Rfc3339, FormatsAndParsesUtcSeconds) {
  absl::Time t = absl::FromUnixSeconds(1795460400);  // 2026-11-23T19:00:00Z
  EXPECT_EQ(Rfc3339(t), "2026-11-23T19:00:00Z");
  EXPECT_EQ(ParseUnixSeconds("2026-11-23T19:00:00Z"), 1795460400);
  EXPECT_EQ(ParseUnixSeconds(""), 0);
  EXPECT_EQ(ParseUnixSeconds("yesterday"), 0);
}

TEST(ReadConditions, ReadsStatusConditionsAndStrings) {
  const std::string json = R"({"status":{"startTime":"2026-11-23T19:00:00Z","conditions":[
      {"type":"Queued","status":"False","reason":"Admitted","message":"m",
       "lastTransitionTime":"2026-11-23T19:00:00Z"}]}})";
  std::vector<Condition> conditions = ReadConditions(json);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].type, "Queued");
  EXPECT_EQ(conditions[0].status, "False");
  EXPECT_EQ(conditions[0].reason, "Admitted");
  EXPECT_EQ(conditions[0].last_transition_time, "2026-11-23T19:00:00Z");
  EXPECT_EQ(ReadStatusString(json, "startTime"), "2026-11-23T19:00:00Z");
  EXPECT_EQ(ReadStatusString(json, "completionTime"), "");
  EXPECT_TRUE(ReadConditions("{}").empty());
  EXPECT_TRUE(ReadConditions("not json").empty());
}

// What the admission controller reads of a job the decoder refuses: enough to tell a job to
// keep (admitted, finished) from one to report as Invalid in its queue.
TEST(ReadUnreadableJob, ReadsQueueAdmissionAndPhaseWhateverTheRest) {
  const UnreadableJob failed = ReadUnreadableJob(
      R"({"spec":{"queueName":"training","replicas":"four"},)"
      R"("status":{"phase":"Failed","admission":{"clusterQueue":"cq","replicas":2}}})");
  EXPECT_EQ(failed.queue_name, "training");
  EXPECT_TRUE(failed.admitted);
  EXPECT_EQ(failed.phase, "Failed");
  const UnreadableJob fresh = ReadUnreadableJob(R"({"spec":{"queueName":"q","replicas":[]}})");
  EXPECT_EQ(fresh.queue_name, "q");
  EXPECT_FALSE(fresh.admitted);
  EXPECT_EQ(fresh.phase, "");
}

TEST(MergeConditions, KeepsTransitionTimeWhenStatusUnchanged) {
  std::vector<Condition> current = {
      {"Queued", "True", "InsufficientQuota", "old", "2026-11-23T18:00:00Z"},
      {"Running", "True", "AllRanksRunning", "x", "2026-11-23T18:30:00Z"}};
  std::vector<Condition> merged = MergeConditions(
      current, {kConditionQueued, kConditionAdmitted, kConditionEvicted},
      {{.type = "Queued", .status = "True", .reason = "CannotBePlaced", .message = "new"},
       {.type = "Admitted", .status = "False", .reason = "Preempted", .message = "p"}},
      "2026-11-23T19:00:00Z", 3);
  ASSERT_EQ(merged.size(), 2u);  // Running is not this manager's: left out
  EXPECT_EQ(merged[0].type, "Queued");
  EXPECT_EQ(merged[0].reason, "CannotBePlaced");
  EXPECT_EQ(merged[0].last_transition_time, "2026-11-23T18:00:00Z");  // still True
  EXPECT_EQ(merged[1].type, "Admitted");
  EXPECT_EQ(merged[1].last_transition_time, "2026-11-23T19:00:00Z");  // new
}

TEST(MergeConditions, WhatItSetsObservesTheGenerationWhatItLeavesKeepsItsOwn) {
  // Queued decided at generation 2; the spec is edited (generation 5) and the job admitted.
  const std::vector<Condition> current = {
      {.type = "Queued", .status = "True", .reason = "InsufficientQuota", .message = "m",
       .last_transition_time = "2026-11-23T18:00:00Z", .observed_generation = 2},
      {.type = "Evicted", .status = "False", .reason = "Admitted", .message = "Previously: x",
       .last_transition_time = "2026-11-23T17:00:00Z", .observed_generation = 1}};
  const std::vector<Condition> merged = MergeConditions(
      current, {kConditionQueued, kConditionAdmitted, kConditionEvicted},
      {{.type = "Queued", .status = "False", .reason = "Admitted", .message = "a"},
       {.type = "Admitted", .status = "True", .reason = "Admitted", .message = "a"}},
      "2026-11-23T19:00:00Z", 5);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].observed_generation, 5);
  EXPECT_EQ(merged[1].observed_generation, 5);
  EXPECT_EQ(merged[2], current[1]);  // not decided again: generation 1 still
}

TEST(Conditions, ObservedGenerationIsWrittenAndReadBack) {
  AdmissionStatus status;
  status.conditions = {{.type = "Queued", .status = "True", .reason = "InsufficientQuota",
                        .message = "m", .last_transition_time = "2026-11-23T18:00:00Z",
                        .observed_generation = 7},
                       {.type = "Evicted", .status = "False", .reason = "Admitted",
                        .message = "x", .last_transition_time = "2026-11-23T18:00:00Z"}};
  const std::string body = AdmissionStatusApply(Meta(), status);
  EXPECT_THAT(body, HasSubstr(R"("observedGeneration":7)"));
  // A condition set before observedGeneration was written has none (not 0: the CRD allows 0).
  EXPECT_EQ(body.find("observedGeneration"), body.rfind("observedGeneration"));
  EXPECT_EQ(ReadConditions(body), status.conditions);
}

TEST(MergeConditions, FlippedStatusGetsNow) {
  std::vector<Condition> merged =
      MergeConditions({{"Queued", "True", "InsufficientQuota", "m", "2026-11-23T18:00:00Z"}},
                      {kConditionQueued}, {{.type = "Queued", .status = "False", .reason = "Admitted"}},
                      "2026-11-23T19:00:00Z", 1);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].last_transition_time, "2026-11-23T19:00:00Z");
}

TEST(Deactivate, TrueConditionsTurnFalseWithTheirPreviousMessage) {
  const std::vector<Condition> current = {
      {"Evicted", "True", "Preempted", "evicted to make room for a/b", "2026-11-23T18:00:00Z"},
      {"Shrunk", "False", "Admitted", "Previously: shrunk", "2026-11-23T17:00:00Z"},
      {"Admitted", "False", "Preempted", "evicted", "2026-11-23T18:00:00Z"}};
  const std::vector<Condition> updates =
      Deactivate(current, {kConditionEvicted, "NodesReplaced", "Shrunk"}, "Admitted");
  // Only the True one; an absent or already False condition is left as it is.
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].type, "Evicted");
  EXPECT_EQ(updates[0].status, "False");
  EXPECT_EQ(updates[0].reason, "Admitted");
  EXPECT_EQ(updates[0].message, "Previously: evicted to make room for a/b");
  // Merged as an admission writes it: the eviction's transition time moves to now.
  const std::vector<Condition> merged =
      MergeConditions(current, {kConditionEvicted}, updates, "2026-11-23T19:00:00Z", 1);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].last_transition_time, "2026-11-23T19:00:00Z");

  // The API server's message limit holds, cut on a character boundary ("é" is 2 bytes).
  std::string long_message(32766, 'x');
  long_message += "ééé";
  const std::vector<Condition> cut =
      Deactivate({{"Evicted", "True", "Preempted", long_message, ""}}, {kConditionEvicted}, "A");
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_LE(cut[0].message.size(), 32768u);
  EXPECT_NE(static_cast<unsigned char>(cut[0].message.back()) & 0xC0, 0xC0);
  EXPECT_EQ(cut[0].message.rfind("Previously: xxx", 0), 0u);
}

TEST(AdmittedSince, TheAdmittedConditionsLastTurnToTrue) {
  EXPECT_EQ(AdmittedSince({}), 0);
  EXPECT_EQ(AdmittedSince({{.type = "Queued", .status = "True",
                            .last_transition_time = "2026-11-23T19:00:00Z"}}),
            0);
  EXPECT_EQ(AdmittedSince({{.type = "Admitted", .status = "True", .reason = "Admitted",
                            .last_transition_time = "2026-11-23T19:00:00Z"}}),
            1795460400);
  // Evicted or suspended: not admitted, whatever the time.
  EXPECT_EQ(AdmittedSince({{.type = "Admitted", .status = "False", .reason = "Preempted",
                            .last_transition_time = "2026-11-23T19:00:00Z"}}),
            0);
  EXPECT_EQ(AdmittedSince({{.type = "Admitted", .status = "True", .last_transition_time = ""}}),
            0);
}

TEST(NotRunningSince, FromTheAdmissionOrTheLastTimeTheGangStoppedRunning) {
  const Condition admitted{.type = "Admitted", .status = "True", .reason = "Admitted",
                           .last_transition_time = "2026-11-23T19:00:00Z"};
  EXPECT_EQ(NotRunningSince({}), 0);
  // Admitted, no Running condition yet: since the admission.
  EXPECT_EQ(NotRunningSince({admitted}), 1795460400);
  // Every rank running: ready, whenever it was admitted.
  EXPECT_EQ(NotRunningSince({admitted, {.type = "Running", .status = "True",
                                        .last_transition_time = "2026-11-23T19:01:00Z"}}),
            0);
  // Running and resizing (an elastic growth's new ranks must come up too): since the resize
  // began; a resize that ended does not count.
  const Condition running{
      .type = "Running", .status = "True", .last_transition_time = "2026-11-23T19:01:00Z"};
  EXPECT_EQ(NotRunningSince({admitted,
                             running,
                             {.type = "Resizing",
                              .status = "True",
                              .reason = "Resizing",
                              .last_transition_time = "2026-11-23T21:00:00Z"}}),
            1795467600);
  EXPECT_EQ(NotRunningSince({admitted,
                             running,
                             {.type = "Resizing",
                              .status = "False",
                              .reason = "Resized",
                              .last_transition_time = "2026-11-23T21:00:00Z"}}),
            0);
  // Stopped running after the admission (a restart): since then.
  EXPECT_EQ(NotRunningSince({admitted, {.type = "Running", .status = "False", .reason = "PodFailed",
                                        .last_transition_time = "2026-11-23T20:00:00Z"}}),
            1795464000);
  // A Running=False from an earlier admission (evicted, admitted again since): the admission.
  EXPECT_EQ(NotRunningSince({admitted, {.type = "Running", .status = "False", .reason = "Evicted",
                                        .last_transition_time = "2026-11-23T18:00:00Z"}}),
            1795460400);
  // Shrunk to the ranks that ran by the pods-ready timeout: the clock starts again there; a
  // shrink after node failures leaves it to the Running condition.
  const Condition not_running{.type = "Running", .status = "False", .reason = "RanksNotRunning",
                              .last_transition_time = "2026-11-23T19:00:10Z"};
  EXPECT_EQ(NotRunningSince({admitted, not_running,
                             {.type = "Shrunk", .status = "True", .reason = "PodsReadyTimeout",
                              .last_transition_time = "2026-11-23T19:05:00Z"}}),
            1795460700);
  EXPECT_EQ(NotRunningSince({admitted, not_running,
                             {.type = "Shrunk", .status = "True", .reason = "NodeNotReady",
                              .last_transition_time = "2026-11-23T19:05:00Z"}}),
            1795460410);
  // Not admitted: nothing to time.
  EXPECT_EQ(NotRunningSince({{.type = "Admitted", .status = "False", .reason = "PodsReadyTimeout",
                              .last_transition_time = "2026-11-23T19:00:00Z"}}),
            0);
}

TEST(RequeueDelaySeconds, DoublesFromTheBaseUpToTheMax) {
  const PodsReadyPolicy policy{.timeout_seconds = 300, .backoff_base_seconds = 60,
                               .backoff_max_seconds = 3600};
  EXPECT_EQ(RequeueDelaySeconds(policy, 1), 60);
  EXPECT_EQ(RequeueDelaySeconds(policy, 2), 120);
  EXPECT_EQ(RequeueDelaySeconds(policy, 3), 240);
  EXPECT_EQ(RequeueDelaySeconds(policy, 6), 1920);
  EXPECT_EQ(RequeueDelaySeconds(policy, 7), 3600);
  EXPECT_EQ(RequeueDelaySeconds(policy, 1000), 3600);  // no overflow
}

TEST(RequeueStateApply, CarriesTheStateOrNothing) {
  auto doc = kube::ParseJson(RequeueStateApply(
      Meta(), kube::TrainingJobRequeueState{.count = 2, .requeue_at = "2026-11-23T19:02:00Z"}));
  ASSERT_TRUE(doc.ok());
  const auto& s = (*doc)["status"];
  EXPECT_EQ(s["requeueState"]["count"].GetInt(), 2);
  EXPECT_STREQ(s["requeueState"]["requeueAt"].GetString(), "2026-11-23T19:02:00Z");
  EXPECT_FALSE(s.HasMember("conditions"));  // the admission manager's
  // At the limit: a count and no time.
  doc = kube::ParseJson(RequeueStateApply(Meta(), kube::TrainingJobRequeueState{.count = 4}));
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE((*doc)["status"]["requeueState"].HasMember("requeueAt"));
  // Cleared: under server-side apply, leaving it out removes it.
  doc = kube::ParseJson(RequeueStateApply(Meta(), std::nullopt));
  ASSERT_TRUE(doc.ok());
  EXPECT_TRUE((*doc)["status"].IsObject());
  EXPECT_FALSE((*doc)["status"].HasMember("requeueState"));
}

TEST(SuspendApply, SetsSpecSuspendOnly) {
  auto doc = kube::ParseJson(SuspendApply(Meta()));
  ASSERT_TRUE(doc.ok());
  EXPECT_TRUE((*doc)["spec"]["suspend"].GetBool());
  EXPECT_EQ((*doc)["spec"].MemberCount(), 1u);
  EXPECT_FALSE(doc->HasMember("status"));
  EXPECT_STREQ((*doc)["metadata"]["name"].GetString(), "llama");
}

// kube::ActiveDeadline (kube/api/training_job.h) is the one rule: the job controller enforces it
// and `phalanx explain` prints it, each from the Admitted condition it reads.
TEST(ActiveDeadline, CountsFromTheCurrentAdmission) {
  auto deadline = [](const kube::TrainingJob& job, const std::vector<Condition>& conditions) {
    return kube::ActiveDeadline(job, AdmittedAt(conditions));
  };
  kube::TrainingJob job;
  const std::vector<Condition> admitted = {
      {.type = "Admitted", .status = "True", .last_transition_time = "2026-11-23T19:00:00Z"}};
  job.status.admission = kube::TrainingJobAdmission{"llm", "p5", 4};
  EXPECT_EQ(deadline(job, admitted), std::nullopt);  // no deadline set
  job.active_deadline_seconds = 3600;
  EXPECT_EQ(deadline(job, admitted), absl::FromUnixSeconds(1795460400 + 3600));
  // Re-admitted after an eviction: the clock starts again (a resumed Job's startTime is reset).
  EXPECT_EQ(deadline(job, {{.type = "Admitted", .status = "True",
                            .last_transition_time = "2026-11-23T21:30:00Z"}}),
            absl::FromUnixSeconds(1795460400 + 9000 + 3600));
  // Queued again, or admitted by a write the informer has not shown yet: no deadline yet.
  EXPECT_EQ(deadline(job, {{.type = "Admitted", .status = "False"}}), std::nullopt);
  EXPECT_EQ(deadline(job, {}), std::nullopt);
  // Finished: none (explain printed none, the operator never looks at a finished job's).
  job.status.phase = "Failed";
  EXPECT_EQ(deadline(job, admitted), std::nullopt);
  job.status.phase = "Running";
  job.status.admission.reset();
  EXPECT_EQ(deadline(job, admitted), std::nullopt);
}

TEST(QueuedSince, WaitStartsAtTheLastTimeTheJobWasQueued) {
  const std::string created = "2026-11-23T19:00:00Z";  // 1795460400
  const int64_t now = 1795460400 + 7200;
  // Not written yet (its first cycle): waiting since creation.
  EXPECT_EQ(QueuedSince({}, created, now), 1795460400);
  // Queued since creation, reason changes keep the transition time.
  EXPECT_EQ(QueuedSince({{.type = "Queued", .status = "True", .reason = "InsufficientQuota",
                          .last_transition_time = "2026-11-23T19:00:01Z"}},
                        created, now),
            1795460401);
  // Evicted after an hour of running: waiting since the eviction, not since creation.
  EXPECT_EQ(QueuedSince({{.type = "Admitted", .status = "False"},
                         {.type = "Queued", .status = "True", .reason = "Preempted",
                          .last_transition_time = "2026-11-23T20:00:00Z"}},
                        created, now),
            1795460400 + 3600);
  // Resumed after a suspension (Queued=False until this cycle writes True): from now.
  EXPECT_EQ(QueuedSince({{.type = "Queued", .status = "False", .reason = "Suspended",
                          .last_transition_time = "2026-11-23T19:00:05Z"}},
                        created, now),
            now);
  // Never before creation (a clock skew or a recreated object of the same name).
  EXPECT_EQ(QueuedSince({{.type = "Queued", .status = "True",
                          .last_transition_time = "2026-11-22T00:00:00Z"}},
                        created, now),
            1795460400);
}

TEST(SameConditions, ComparesOwnedTypesOnly) {
  std::vector<Condition> current = {{"Queued", "True", "InsufficientQuota", "m", "t"},
                                    {"Running", "False", "x", "y", "t"}};
  const std::vector<std::string_view> owned = {kConditionQueued, kConditionAdmitted};
  EXPECT_TRUE(SameConditions(current, owned, {{"Queued", "True", "InsufficientQuota", "m", ""}}));
  EXPECT_FALSE(SameConditions(current, owned, {{"Queued", "True", "InsufficientQuota", "n", ""}}));
  EXPECT_FALSE(SameConditions(current, owned,
                              {{"Queued", "True", "InsufficientQuota", "m", ""},
                               {"Admitted", "False", "Pending", "", ""}}));
  // The same decision for a newer generation of the spec is written again, to say so.
  EXPECT_FALSE(SameConditions(current, owned,
                              {{"Queued", "True", "InsufficientQuota", "m", "", 2}}));
}

TEST(AdmissionStatusApply, CarriesAdmissionPlacementAndConditions) {
  AdmissionStatus status;
  status.admission = kube::TrainingJobAdmission{.cluster_queue = "llm", .flavor = "p5", .replicas = 2};
  status.placement = kube::TrainingJobPlacement{
      .domain = "nn-3", .level = "topology.k8s.aws/network-node-layer-3", .nodes = {"a", "b"}};
  status.conditions = {{"Admitted", "True", "Admitted", "ok", "2026-11-23T19:00:00Z"}};
  auto doc = kube::ParseJson(AdmissionStatusApply(Meta(), status));
  ASSERT_TRUE(doc.ok());
  EXPECT_STREQ((*doc)["apiVersion"].GetString(), "phalanx.dev/v1alpha1");
  EXPECT_STREQ((*doc)["kind"].GetString(), "TrainingJob");
  EXPECT_STREQ((*doc)["metadata"]["namespace"].GetString(), "ml");
  const auto& s = (*doc)["status"];
  EXPECT_STREQ(s["admission"]["clusterQueue"].GetString(), "llm");
  EXPECT_EQ(s["admission"]["replicas"].GetInt(), 2);
  EXPECT_STREQ(s["placement"]["nodes"][1].GetString(), "b");
  EXPECT_STREQ(s["conditions"][0]["lastTransitionTime"].GetString(), "2026-11-23T19:00:00Z");
  EXPECT_FALSE(s.HasMember("phase"));  // the job controller's
}

// The flavor as it was at admission travels in status.admission (and is read back).
TEST(AdmissionStatusApply, RecordsTheFlavorsLabelsAndTolerations) {
  AdmissionStatus status;
  status.admission = kube::TrainingJobAdmission{
      .cluster_queue = "llm", .flavor = "p5", .replicas = 2,
      .node_selector = std::map<std::string, std::string>{{"pool", "a"}},
      .tolerations = std::vector<kube::Toleration>{
          {.key = "spot", .operator_ = "Exists", .effect = "NoSchedule"}}};
  const std::string body = AdmissionStatusApply(Meta(), status);
  auto doc = kube::ParseJson(body);
  ASSERT_TRUE(doc.ok());
  const auto& a = (*doc)["status"]["admission"];
  EXPECT_STREQ(a["nodeSelector"]["pool"].GetString(), "a");
  EXPECT_STREQ(a["tolerations"][0]["operator"].GetString(), "Exists");
  EXPECT_FALSE(a["tolerations"][0].HasMember("value"));
  absl::StatusOr<kube::TrainingJob> back = kube::DecodeTrainingJob(absl::StrCat(
      R"({"metadata":{"name":"llama"},"spec":{"template":{"spec":{"containers":[]}}},)",
      R"("status":)", kube::ToJson((*doc)["status"]), "}"));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->status.admission.has_value());
  EXPECT_EQ(back->status.admission->node_selector, status.admission->node_selector);
  EXPECT_EQ(back->status.admission->tolerations, status.admission->tolerations);
  // Written by an older operator: nothing recorded.
  status.admission->node_selector.reset();
  status.admission->tolerations.reset();
  doc = kube::ParseJson(AdmissionStatusApply(Meta(), status));
  EXPECT_FALSE((*doc)["status"]["admission"].HasMember("nodeSelector"));
}

TEST(AdmissionStatusApply, EvictionLeavesAdmissionOut) {
  // Under server-side apply, leaving the field out is what removes it.
  auto doc = kube::ParseJson(AdmissionStatusApply(Meta(), {}));
  ASSERT_TRUE(doc.ok());
  EXPECT_FALSE((*doc)["status"].HasMember("admission"));
  EXPECT_FALSE((*doc)["status"].HasMember("placement"));
  EXPECT_TRUE((*doc)["status"]["conditions"].IsArray());
}

TEST(LifecycleStatusApply, CarriesPhaseRestartsAndTimes) {
  LifecycleStatus status{.phase = "Running", .restarts = 1, .start_time = "2026-11-23T19:00:00Z"};
  auto doc = kube::ParseJson(LifecycleStatusApply(Meta(), status));
  ASSERT_TRUE(doc.ok());
  const auto& s = (*doc)["status"];
  EXPECT_STREQ(s["phase"].GetString(), "Running");
  EXPECT_EQ(s["restarts"].GetInt(), 1);
  EXPECT_STREQ(s["startTime"].GetString(), "2026-11-23T19:00:00Z");
  EXPECT_FALSE(s.HasMember("completionTime"));
  EXPECT_FALSE(s.HasMember("admission"));  // the admission controller's
  EXPECT_FALSE(s.HasMember("nodeFaultRestarts"));  // absent until the first
  status.restarts = 3;
  status.node_fault_restarts = 2;
  auto faults = kube::ParseJson(LifecycleStatusApply(Meta(), status));
  ASSERT_TRUE(faults.ok());
  EXPECT_EQ((*faults)["status"]["restarts"].GetInt(), 3);
  EXPECT_EQ((*faults)["status"]["nodeFaultRestarts"].GetInt(), 2);
}

TEST(FinalizerApply, AddsOrDropsOurFinalizerWithUidPrecondition) {
  auto with =
      kube::ParseJson(FinalizerApply(kube::TrainingJobs(), Meta(), kReservationFinalizer, true));
  ASSERT_TRUE(with.ok());
  EXPECT_STREQ((*with)["metadata"]["finalizers"][0].GetString(), "phalanx.dev/reservation");
  EXPECT_STREQ((*with)["metadata"]["uid"].GetString(), "uid-1");
  auto without =
      kube::ParseJson(FinalizerApply(kube::TrainingJobs(), Meta(), kReservationFinalizer, false));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ((*without)["metadata"]["finalizers"].Size(), 0u);
  EXPECT_FALSE((*without).HasMember("spec"));
}

TEST(GangResizing, GrowthAndShrinkNotARankBeingRecreated) {
  EXPECT_TRUE(GangResizing(/*elastic=*/true, 4, {0, 1}, 0));      // growing 2 -> 4
  EXPECT_TRUE(GangResizing(/*elastic=*/true, 3, {0, 1, 2}, 1));   // shrinking 4 -> 3
  EXPECT_TRUE(GangResizing(/*elastic=*/false, 3, {0, 1, 2}, 1));  // a shrink is a shrink
  EXPECT_FALSE(GangResizing(/*elastic=*/true, 4, {0, 2, 3}, 0));  // rank 1 moves to a new node
  EXPECT_FALSE(GangResizing(/*elastic=*/false, 3, {0, 2}, 0));    // the same, not elastic
  EXPECT_FALSE(GangResizing(/*elastic=*/false, 3, {0, 1}, 0));    // rank 2 moves: not elastic
  EXPECT_FALSE(GangResizing(/*elastic=*/true, 3, {0, 1, 2}, 0));  // all there
}

TEST(JobReference, NamesTheTrainingJob) {
  kube::ObjectReference ref = JobReference(Meta());
  EXPECT_EQ(ref.kind, "TrainingJob");
  EXPECT_EQ(ref.api_version, "phalanx.dev/v1alpha1");
  EXPECT_EQ(ref.namespace_, "ml");
  EXPECT_EQ(ref.uid, "uid-1");
}

}  // namespace
}  // namespace phalanx::operator_server
