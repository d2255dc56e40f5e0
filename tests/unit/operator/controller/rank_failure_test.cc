// spec.failurePolicy.rules matched against failed pods as a Job's podFailurePolicy matches
// onExitCodes (pkg/controller/job/pod_failure_policy.go in kubernetes/kubernetes): first rule
// wins, exit code 0 never matches, containerName narrows, containers before init containers;
// unlike a Job's, a sidecar only when a rule names it. Of a gang's failed ranks, the ones that
// ended first decide.
#include "operator/controller/rank_failure.h"

#include <deque>

#include "gtest/gtest.h"
#include "kube/interned.h"

namespace phalanx::controller {
namespace {

kube::StringPool pool;

kube::ContainerExit Exit(const char* name, int32_t code, bool init = false,
                         const char* reason = "", const char* finished = "") {
  return {.name = pool.Intern(name), .init = init, .exit_code = code,
          .reason = pool.Intern(reason), .finished_at = finished};
}

kube::ContainerExit Sidecar(const char* name, int32_t code, const char* finished = "") {
  kube::ContainerExit exit = Exit(name, code, /*init=*/true, "Error", finished);
  exit.sidecar = true;
  return exit;
}

kube::TrainingJobFailureRule Rule(const char* action, std::vector<int32_t> values,
                                  bool not_in = false, const char* container = "") {
  return {.action = action, .container_name = container, .not_in = not_in,
          .values = std::move(values)};
}

TEST(MatchFailureRules, FirstMatchingRuleDecides) {
  kube::Pod pod;
  pod.exits = {Exit("trainer", 42)};
  const std::vector<kube::TrainingJobFailureRule> rules = {
      Rule("Ignore", {1, 2}), Rule("FailJob", {42}), Rule("Count", {42})};
  std::optional<FailureRuleMatch> m = MatchFailureRules(rules, pod);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->index, 1u);
  EXPECT_EQ(m->action, "FailJob");
  EXPECT_EQ(m->exit, &pod.exits[0]);
  EXPECT_FALSE(MatchFailureRules({Rule("Ignore", {1, 2})}, pod).has_value());
  EXPECT_FALSE(MatchFailureRules({}, pod).has_value());
}

TEST(MatchFailureRules, NotInMatchesAnyOtherNonZeroCode) {
  kube::Pod oom;
  oom.exits = {Exit("trainer", 137)};
  EXPECT_TRUE(MatchFailureRules({Rule("Ignore", {1}, /*not_in=*/true)}, oom).has_value());
  EXPECT_FALSE(MatchFailureRules({Rule("Ignore", {137}, /*not_in=*/true)}, oom).has_value());
  // A pod with no non-zero exit (evicted, or its node lost) has nothing to match, NotIn too.
  kube::Pod evicted;
  EXPECT_FALSE(MatchFailureRules({Rule("Ignore", {1}, /*not_in=*/true)}, evicted).has_value());
}

TEST(MatchFailureRules, ContainerNameNarrowsAndInitContainersCount) {
  kube::Pod pod;
  pod.exits = {Exit("sidecar", 3), Exit("setup", 42, /*init=*/true)};
  EXPECT_FALSE(MatchFailureRules({Rule("FailJob", {42}, false, "trainer")}, pod).has_value());
  std::optional<FailureRuleMatch> m =
      MatchFailureRules({Rule("FailJob", {42}, false, "setup")}, pod);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->exit->name, "setup");
  // Without a name the containers are looked at first: the sidecar's 3 is NotIn {42}.
  m = MatchFailureRules({Rule("Count", {42}, /*not_in=*/true)}, pod);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->exit->name, "sidecar");
}

// A sidecar SIGKILLed at the pod's end (137) says nothing about the training: a rule without
// containerName does not look at it (audit 2026-11-30: `Ignore In [137]` matched a log shipper's
// 137 and left a trainer's exit 1 uncounted, for ever); a rule that names it does.
TEST(MatchFailureRules, ASidecarIsLookedAtOnlyByARuleThatNamesIt) {
  kube::Pod pod;
  pod.exits = {Exit("trainer", 1, false, "Error"), Sidecar("log-shipper", 137)};
  EXPECT_FALSE(MatchFailureRules({Rule("Ignore", {137})}, pod).has_value());
  std::optional<FailureRuleMatch> m =
      MatchFailureRules({Rule("Ignore", {137}, false, "log-shipper")}, pod);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->exit, &pod.exits[1]);
  // NotIn without a name: the trainer's 1, not the sidecar's 137.
  m = MatchFailureRules({Rule("FailJob", {1}, /*not_in=*/true), Rule("Count", {1})}, pod);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->index, 1u);
  EXPECT_EQ(m->exit, &pod.exits[0]);
}

// The message names the exit that matched, not only the pod's first.
TEST(DescribeRuleMatch, NamesTheContainerAndCodeThatMatched) {
  kube::Pod pod;
  pod.exits = {Exit("trainer", 1, false, "Error"), Sidecar("log-shipper", 137)};
  const std::vector<kube::TrainingJobFailureRule> rules = {
      Rule("Ignore", {137}, false, "log-shipper")};
  EXPECT_EQ(DescribeRuleMatch(pod, *MatchFailureRules(rules, pod)),
            "container trainer exited with code 1 (Error); sidecar log-shipper exited with code "
            "137 (Error), which spec.failurePolicy.rules[0] (Ignore) matches");
  const std::vector<kube::TrainingJobFailureRule> on_trainer = {Rule("FailJob", {1})};
  EXPECT_EQ(DescribeRuleMatch(pod, *MatchFailureRules(on_trainer, pod)),
            "container trainer exited with code 1 (Error), which spec.failurePolicy.rules[0] "
            "(FailJob) matches");
}

// The end of a failure: its earliest container exit, a sidecar's aside (stopped after the rest).
TEST(FailureEnded, EarliestExitOfAContainerNotASidecar) {
  kube::Pod pod;
  EXPECT_EQ(FailureEnded(pod), "");
  pod.exits = {Exit("trainer", 1, false, "Error", "2026-11-30T11:13:20Z"),
               Exit("setup", 2, true, "Error", "2026-11-30T11:13:05Z"),
               Sidecar("log-shipper", 137, "2026-11-30T11:13:00Z")};
  EXPECT_EQ(FailureEnded(pod), "2026-11-30T11:13:05Z");
}

// The failed ranks of a torchrun cascade: rank 2 OOM-killed first, its peers exiting 1 on NCCL
// errors 20 s later.
class CascadeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pods_.resize(4);
    for (int r = 0; r < 4; ++r) {
      pods_[r].exits = {r == 2 ? Exit("trainer", 137, false, "OOMKilled", "2026-11-30T11:13:00Z")
                               : Exit("trainer", 1, false, "Error", "2026-11-30T11:13:20Z")};
    }
  }
  // The failures point into the rules they matched: those are kept for the whole test (a deque
  // does not move its elements as it grows).
  std::vector<RankFailure> Judge(std::vector<kube::TrainingJobFailureRule> rules) {
    const std::vector<kube::TrainingJobFailureRule>& kept = rules_.emplace_back(std::move(rules));
    std::vector<RankFailure> failures;
    for (int r = 0; r < 4; ++r) {
      failures.push_back({.rank = r, .pod = &pods_[r], .rule = MatchFailureRules(kept, pods_[r])});
    }
    return failures;
  }
  std::vector<kube::Pod> pods_;
  std::deque<std::vector<kube::TrainingJobFailureRule>> rules_;
};

// Kubeflow's restartPolicy ExitCode as a rule (FailJob NotIn the retryable codes) matches every
// peer's exit 1; the OOM kill that ended first decides: the restart counts, the job goes on.
TEST_F(CascadeTest, TheFailureThatEndedFirstDecidesNotItsPeers) {
  const std::vector<RankFailure> failures = Judge({Rule("FailJob", {137, 143}, /*not_in=*/true)});
  EXPECT_EQ(FirstToFail(failures)->rank, 2);
  EXPECT_EQ(DecidingFailure(failures), nullptr);
  // An Ignore on 137 decides for the OOM kill; a FailJob on 137 fails the job.
  const std::vector<RankFailure> ignored = Judge({Rule("Ignore", {137})});
  ASSERT_NE(DecidingFailure(ignored), nullptr);
  EXPECT_EQ(DecidingFailure(ignored)->rank, 2);
  EXPECT_EQ(DecidingFailure(ignored)->rule->action, kActionIgnore);
  const std::vector<RankFailure> failed = Judge({Rule("Ignore", {1}), Rule("FailJob", {137})});
  ASSERT_NE(DecidingFailure(failed), nullptr);
  EXPECT_EQ(DecidingFailure(failed)->rule->action, kActionFailJob);
  // A Count rule on 137 decides too: the restart counts, and the message can name the rule.
  const std::vector<RankFailure> counted = Judge({Rule("Count", {137}), Rule("Ignore", {1})});
  ASSERT_NE(DecidingFailure(counted), nullptr);
  EXPECT_EQ(DecidingFailure(counted)->rank, 2);
  EXPECT_EQ(DecidingFailure(counted)->rule->action, kActionCount);
}

// Failures that ended in the same second are judged together: a FailJob among them wins.
TEST_F(CascadeTest, FailuresThatEndedTogetherAreJudgedTogether) {
  pods_[3].exits = {Exit("trainer", 42, false, "Error", "2026-11-30T11:13:00Z")};
  const std::vector<RankFailure> failures = Judge({Rule("Ignore", {137}), Rule("FailJob", {42})});
  ASSERT_NE(DecidingFailure(failures), nullptr);
  EXPECT_EQ(DecidingFailure(failures)->rank, 3);
  EXPECT_EQ(DecidingFailure(failures)->rule->action, kActionFailJob);
}

// Without finish times nothing says which failure came first: any FailJob match, else any
// Ignore match, decides (as before finish times were read).
TEST_F(CascadeTest, WithoutTimesAnyFailJobElseAnyIgnoreDecides) {
  for (kube::Pod& pod : pods_) pod.exits[0].finished_at.clear();
  const std::vector<RankFailure> failures =
      Judge({Rule("FailJob", {137, 143}, /*not_in=*/true), Rule("Ignore", {137})});
  EXPECT_EQ(FirstToFail(failures)->rank, 0);
  ASSERT_NE(DecidingFailure(failures), nullptr);
  EXPECT_EQ(DecidingFailure(failures)->rank, 0);
  EXPECT_EQ(DecidingFailure(failures)->rule->action, kActionFailJob);
  const std::vector<RankFailure> ignored = Judge({Rule("Ignore", {137})});
  ASSERT_NE(DecidingFailure(ignored), nullptr);
  EXPECT_EQ(DecidingFailure(ignored)->rank, 2);
  EXPECT_EQ(DecidingFailure({}), nullptr);
}

TEST(DescribePodFailure, ExitCodeElsePodReasonElseNothing) {
  kube::Pod pod;
  EXPECT_EQ(DescribePodFailure(pod), "");
  pod.status_reason = pool.Intern("Evicted");
  EXPECT_EQ(DescribePodFailure(pod), "Evicted");
  pod.status_message = "The node was low on resource: memory.";
  EXPECT_EQ(DescribePodFailure(pod), "Evicted: The node was low on resource: memory.");
  pod.exits = {Exit("trainer", 137, false, "OOMKilled")};
  EXPECT_EQ(DescribePodFailure(pod), "container trainer exited with code 137 (OOMKilled)");
  pod.exits = {Exit("setup", 1, /*init=*/true)};
  EXPECT_EQ(DescribePodFailure(pod), "init container setup exited with code 1");
}

}  // namespace
}  // namespace phalanx::controller
