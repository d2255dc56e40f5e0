// spec.failurePolicy.rules matched against failed pods as a Job's podFailurePolicy matches
// onExitCodes (pkg/controller/job/pod_failure_policy.go in kubernetes/kubernetes): first rule
// wins, exit code 0 never matches, containerName narrows, containers before init containers.
#include "operator/controller/rank_failure.h"

#include "gtest/gtest.h"
#include "kube/interned.h"

namespace phalanx::controller {
namespace {

kube::StringPool pool;

kube::ContainerExit Exit(const char* name, int32_t code, bool init = false,
                         const char* reason = "") {
  return {.name = pool.Intern(name), .init = init, .exit_code = code,
          .reason = pool.Intern(reason)};
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
