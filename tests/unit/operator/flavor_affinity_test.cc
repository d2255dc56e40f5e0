// ResourceFlavor choice against a workload's required node affinity, by Kueue's rule
// (kubernetes-sigs/kueue pkg/scheduler/flavorassigner/flavorassigner.go, flavorSelector): only
// the keys a flavor's nodeLabels define are looked at, and the gang's placement request carries
// the full affinity.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "operator/admission/admission_cycle.h"
#include "operator/admission/matching.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::AdmissionFor;
using testing::FakePlacementService;
using testing::Gpu;
using testing::GpuQueue;
using testing::Job;
using testing::PendingFor;
using testing::World;

const std::string kType = "node.kubernetes.io/instance-type";
const std::string kZone = "topology.kubernetes.io/zone";
const std::string kLayer3 = "topology.k8s.aws/network-node-layer-3";

placement::NodeSelectorTerm Term(std::vector<placement::NodeSelectorRequirement> expressions) {
  return {.match_expressions = std::move(expressions)};
}

bool Admits(const ResourceFlavor& flavor, std::vector<placement::NodeSelectorTerm> affinity) {
  return FlavorMismatch(flavor, {}, affinity, {}).empty();
}

TEST(FlavorAffinityTest, OnlyTheFlavorsOwnLabelKeysAreLookedAt) {
  const ResourceFlavor p5{.name = "p5", .node_labels = {{kType, "p5.48xlarge"}, {kZone, "a"}}};
  EXPECT_TRUE(Admits(p5, {Term({{kType, "In", {"p5.48xlarge", "p5en.48xlarge"}}})}));
  EXPECT_FALSE(Admits(p5, {Term({{kType, "In", {"p6e-gb200.36xlarge"}}})}));
  EXPECT_FALSE(Admits(p5, {Term({{kType, "NotIn", {"p5.48xlarge"}}})}));
  EXPECT_FALSE(Admits(p5, {Term({{kZone, "DoesNotExist", {}}})}));
  // A key the flavor does not define says nothing about it: it is dropped from the term.
  EXPECT_TRUE(Admits(p5, {Term({{kLayer3, "NotIn", {"nn-1"}}})}));
  EXPECT_TRUE(Admits(p5, {Term({{kLayer3, "Exists", {}}, {kType, "In", {"p5.48xlarge"}}})}));
  EXPECT_FALSE(Admits(p5, {Term({{kLayer3, "Exists", {}}, {kType, "In", {"trn1.32xlarge"}}})}));
  // A flavor without labels admits every affinity.
  EXPECT_TRUE(Admits(ResourceFlavor{.name = "any"}, {Term({{kType, "In", {"x"}}})}));
}

TEST(FlavorAffinityTest, TermsAreOredAndATermLeftEmptyAdmitsEveryFlavor) {
  const ResourceFlavor p5{.name = "p5", .node_labels = {{kType, "p5.48xlarge"}}};
  EXPECT_TRUE(
      Admits(p5, {Term({{kType, "In", {"gb200"}}}), Term({{kType, "In", {"p5.48xlarge"}}})}));
  EXPECT_FALSE(Admits(p5, {Term({{kType, "In", {"gb200"}}}), Term({{kType, "In", {"trn1"}}})}));
  // The second term names only keys p5 does not define: Kueue drops the whole affinity.
  EXPECT_TRUE(Admits(p5, {Term({{kType, "In", {"gb200"}}}), Term({{kZone, "In", {"a"}}})}));
  // matchFields are never looked at, so a term of only matchFields admits everything too.
  placement::NodeSelectorTerm by_name{.match_fields = {{"metadata.name", "In", {"n1"}}}};
  EXPECT_TRUE(Admits(p5, {Term({{kType, "In", {"gb200"}}}), by_name}));
}

TEST(FlavorAffinityTest, ANodeSelectorAndAnAffinityMustBothAgree) {
  const ResourceFlavor p5{.name = "p5", .node_labels = {{kType, "p5.48xlarge"}, {kZone, "a"}}};
  const std::vector<placement::NodeSelectorTerm> in_p5 = {Term({{kType, "In", {"p5.48xlarge"}}})};
  EXPECT_TRUE(FlavorMismatch(p5, {{kZone, "a"}}, in_p5, {}).empty());
  EXPECT_THAT(FlavorMismatch(p5, {{kZone, "b"}}, in_p5, {}), HasSubstr("node selector wants"));
}

// Flavors p5 then gb200: the affinity's instance type picks gb200; the request carries it.
TEST(FlavorAffinityTest, TheCycleChoosesTheFlavorTheAffinityAsksFor) {
  FakePlacementService fake({{.name = "p5-block", .labels = {{kType, "p5.48xlarge"}}, .gpus = 64},
                             {.name = "gb-block",
                              .labels = {{kType, "p6e-gb200.36xlarge"}},
                              .gpus = 64}});
  World world(fake);
  world.Flavor("p5", {{kType, "p5.48xlarge"}});
  world.Flavor("gb200", {{kType, "p6e-gb200.36xlarge"}});
  world.Queue(GpuQueue("team-a", "", {{"p5", Gpu(64)}, {"gb200", Gpu(64)}}));
  Workload gb = Job("team-a/gb", 2, 4);
  gb.node_affinity = {Term({{kType, "In", {"p6e-gb200.36xlarge"}}})};
  Workload lost = Job("team-a/lost", 1, 4);
  lost.node_affinity = {Term({{kType, "In", {"trn1.32xlarge"}}})};
  world.Add(gb).Add(lost).Add(Job("team-a/plain", 1, 8));
  CycleResult result = world.Cycle();
  ASSERT_NE(AdmissionFor(result, "team-a/gb"), nullptr);
  EXPECT_EQ(AdmissionFor(result, "team-a/gb")->flavors.at("nvidia.com/gpu"), "gb200");
  ASSERT_NE(AdmissionFor(result, "team-a/plain"), nullptr);
  EXPECT_EQ(AdmissionFor(result, "team-a/plain")->flavors.at("nvidia.com/gpu"), "p5");
  EXPECT_THAT(AdmissionFor(result, "team-a/gb")->placement.domain.path, ElementsAre("gb-block"));
  const PendingDecision* pending = PendingFor(result, "team-a/lost");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kNoFlavor);
  EXPECT_THAT(pending->message,
              HasSubstr("flavor gb200's node labels (node.kubernetes.io/instance-type="
                        "p6e-gb200.36xlarge) do not match the required node affinity"));
}

// The affinity's layer-3 key is no flavor's: flavor choice ignores it, placement honours it.
TEST(FlavorAffinityTest, ThePlacementRequestCarriesTheWholeAffinity) {
  FakePlacementService fake(
      {{.name = "p5-a", .labels = {{kType, "p5.48xlarge"}, {kLayer3, "nn-1"}}, .gpus = 64},
       {.name = "p5-b", .labels = {{kType, "p5.48xlarge"}, {kLayer3, "nn-2"}}, .gpus = 64}});
  World world(fake);
  world.Flavor("p5", {{kType, "p5.48xlarge"}});
  world.Queue(GpuQueue("team-a", "", {{"p5", Gpu(128)}}));
  Workload away = Job("team-a/away", 2, 8);
  away.node_affinity = {Term({{kLayer3, "NotIn", {"nn-1"}}})};
  world.Add(away);
  CycleResult result = world.Cycle();
  const AdmissionDecision* admitted = AdmissionFor(result, "team-a/away");
  ASSERT_NE(admitted, nullptr);
  EXPECT_EQ(admitted->flavors.at("nvidia.com/gpu"), "p5");
  EXPECT_THAT(admitted->placement.domain.path, ElementsAre("p5-b"));
}

}  // namespace
}  // namespace phalanx::admission
