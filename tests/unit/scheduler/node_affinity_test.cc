// Required node affinity: the matcher (every operator, terms ORed, entries ANDed, missing
// labels, Gt/Lt on non-integers), its validation, and gangs placed only on nodes it admits.
#include "scheduler/node_affinity.h"

#include <map>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace ::phalanx::placement::testing;  // NOLINT

const std::map<std::string, std::string> kNode = {
    {"type", "p5"}, {"zone", "a"}, {"gpus", "8"}, {"bad-int", "8x"}};

NodeSelectorRequirement Expr(std::string key, std::string op,
                             std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

bool Matches(std::vector<NodeSelectorTerm> terms, std::string_view name = "n1") {
  EXPECT_OK(ValidateNodeAffinity(terms, "terms"));
  return MatchesNodeAffinity(terms, kNode, name);
}

bool MatchesOne(NodeSelectorRequirement expression) {
  return Matches({{.match_expressions = {std::move(expression)}}});
}

TEST(NodeAffinityTest, EveryOperatorOnAPresentLabel) {
  EXPECT_TRUE(MatchesOne(Expr("type", "In", {"p4", "p5"})));
  EXPECT_FALSE(MatchesOne(Expr("type", "In", {"p4"})));
  EXPECT_TRUE(MatchesOne(Expr("type", "NotIn", {"p4"})));
  EXPECT_FALSE(MatchesOne(Expr("type", "NotIn", {"p5"})));
  EXPECT_TRUE(MatchesOne(Expr("type", "Exists")));
  EXPECT_FALSE(MatchesOne(Expr("type", "DoesNotExist")));
  EXPECT_TRUE(MatchesOne(Expr("gpus", "Gt", {"4"})));
  EXPECT_FALSE(MatchesOne(Expr("gpus", "Gt", {"8"})));
  EXPECT_TRUE(MatchesOne(Expr("gpus", "Lt", {"+9"})));
  EXPECT_FALSE(MatchesOne(Expr("gpus", "Lt", {"8"})));
  EXPECT_TRUE(MatchesOne(Expr("gpus", "Gt", {"-1"})));
}

TEST(NodeAffinityTest, AMissingLabelSatisfiesOnlyNotInAndDoesNotExist) {
  EXPECT_FALSE(MatchesOne(Expr("rack", "In", {"r1"})));
  EXPECT_TRUE(MatchesOne(Expr("rack", "NotIn", {"r1"})));
  EXPECT_FALSE(MatchesOne(Expr("rack", "Exists")));
  EXPECT_TRUE(MatchesOne(Expr("rack", "DoesNotExist")));
  EXPECT_FALSE(MatchesOne(Expr("rack", "Gt", {"1"})));
  EXPECT_FALSE(MatchesOne(Expr("rack", "Lt", {"1"})));
}

TEST(NodeAffinityTest, GtAndLtNeverMatchALabelThatIsNotAnInteger) {
  EXPECT_FALSE(MatchesOne(Expr("bad-int", "Gt", {"1"})));
  EXPECT_FALSE(MatchesOne(Expr("bad-int", "Lt", {"100"})));
  EXPECT_FALSE(MatchesOne(Expr("type", "Lt", {"100"})));
}

TEST(NodeAffinityTest, TermsAreOredAndTheirEntriesAnded) {
  const NodeSelectorTerm p5_in_a = {
      .match_expressions = {Expr("type", "In", {"p5"}), Expr("zone", "In", {"a"})}};
  const NodeSelectorTerm p5_in_b = {
      .match_expressions = {Expr("type", "In", {"p5"}), Expr("zone", "In", {"b"})}};
  const NodeSelectorTerm p4 = {.match_expressions = {Expr("type", "In", {"p4"})}};
  EXPECT_TRUE(Matches({p5_in_a}));
  EXPECT_FALSE(Matches({p5_in_b}));
  EXPECT_TRUE(Matches({p5_in_b, p5_in_a}));
  EXPECT_FALSE(Matches({p5_in_b, p4}));
}

TEST(NodeAffinityTest, AnEmptyTermMatchesNothingAndNoTermsMatchEverything) {
  EXPECT_FALSE(Matches({NodeSelectorTerm{}}));
  EXPECT_TRUE(Matches({NodeSelectorTerm{}, {.match_expressions = {Expr("zone", "Exists")}}}));
  EXPECT_TRUE(Matches({}));
}

TEST(NodeAffinityTest, MatchFieldsLookAtTheNodeName) {
  const NodeSelectorTerm only_n1 = {.match_fields = {Expr("metadata.name", "In", {"n1"})}};
  const NodeSelectorTerm not_n1 = {.match_fields = {Expr("metadata.name", "NotIn", {"n1"})}};
  EXPECT_TRUE(Matches({only_n1}, "n1"));
  EXPECT_FALSE(Matches({only_n1}, "n2"));
  EXPECT_FALSE(Matches({not_n1}, "n1"));
  EXPECT_TRUE(Matches({not_n1}, "n2"));
  // Fields and expressions of one term are ANDed.
  NodeSelectorTerm both = only_n1;
  both.match_expressions = {Expr("type", "In", {"p4"})};
  EXPECT_FALSE(Matches({both}, "n1"));
}

TEST(NodeAffinityTest, ValidationNamesTheBadEntry) {
  auto invalid = [](NodeSelectorTerm term) {
    return ValidateNodeAffinity({NodeSelectorTerm{}, std::move(term)}, "aff");
  };
  EXPECT_THAT(invalid({.match_expressions = {Expr("k", "Near", {"x"})}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("aff[1].matchExpressions[0].operator: unsupported value")));
  EXPECT_THAT(invalid({.match_expressions = {Expr("k", "In")}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("aff[1].matchExpressions[0].values")));
  EXPECT_THAT(invalid({.match_expressions = {Expr("k", "Exists", {"x"})}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(".values")));
  for (const std::vector<std::string>& values :
       std::vector<std::vector<std::string>>{{}, {"1", "2"}, {"1.5"}, {"x"}, {"+-1"}, {" 1"}}) {
    EXPECT_THAT(invalid({.match_expressions = {Expr("k", "Gt", values)}}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("integer")));
  }
  EXPECT_THAT(invalid({.match_expressions = {Expr("", "Exists")}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(".key")));
  EXPECT_THAT(invalid({.match_fields = {Expr("metadata.namespace", "In", {"x"})}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("aff[1].matchFields[0].key")));
  EXPECT_THAT(invalid({.match_fields = {Expr("metadata.name", "Exists")}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(".operator")));
  EXPECT_THAT(invalid({.match_fields = {Expr("metadata.name", "In", {"a", "b"})}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("one element")));
  EXPECT_OK(invalid({.match_expressions = {Expr("k", "Lt", {"-3"})},
                     .match_fields = {Expr("metadata.name", "NotIn", {"n"})}}));
}

// Two layer-3 blocks; the gang would fit best in nn-1, which its affinity excludes.
TEST(NodeAffinityPlacementTest, NotInOnALayer3BlockKeepsTheGangOutOfIt) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-1"}, "one-", 2);
  AddNodes(snapshot, {"a", "b", "nn-2"}, "two-", 4);
  GangRequest request = Gang("ns/j", 2, 8, kLayer3);
  ASSERT_OK_AND_ASSIGN(PlacementResult free, snapshot.Place(request));
  ASSERT_TRUE(free.placed);
  EXPECT_EQ(free.placement.domain.ToString(), kLayer3 + "=nn-1");

  request.node_affinity = {{.match_expressions = {Expr(kLayer3, "NotIn", {"nn-1"})}}};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(request));
  ASSERT_TRUE(result.placed);
  EXPECT_EQ(result.placement.domain.ToString(), kLayer3 + "=nn-2");
  EXPECT_THAT(result.placement.nodes, Each(HasSubstr("two-")));

  // Four more cannot fit: nn-2 has two nodes left and nn-1 is excluded.
  request.job = "ns/k";
  request.count = 4;
  ASSERT_OK_AND_ASSIGN(PlacementResult refused, snapshot.Place(request));
  EXPECT_FALSE(refused.placed);
  EXPECT_EQ(refused.explanation.nodes_rejected["NodeSelectorMismatch"], 2);
  EXPECT_THAT(refused.explanation.max_fit_empty, ::testing::Optional(4));
}

TEST(NodeAffinityPlacementTest, AffinityAndSelectorMustBothHoldAndTermsAreOred) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-1"}, "one-", 2);
  AddNodes(snapshot, {"a", "b", "nn-2"}, "two-", 2);
  AddNodes(snapshot, {"a", "b", "nn-3"}, "three-", 2);
  GangRequest request = Gang("ns/j", 4, 8);
  request.node_affinity = {{.match_expressions = {Expr(kLayer3, "In", {"nn-1"})}},
                           {.match_expressions = {Expr(kLayer3, "In", {"nn-3"})}}};
  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(request));
  ASSERT_TRUE(result.placed);
  EXPECT_THAT(result.placement.nodes, Each(Not(HasSubstr("two-"))));
  // The selector narrows it further: two nodes left, too few for four pods.
  request.node_selector = {{kLayer3, "nn-1"}};
  ASSERT_OK_AND_ASSIGN(result, snapshot.Place(request));
  EXPECT_FALSE(result.placed);
}

TEST(NodeAffinityPlacementTest, ABadAffinityIsInvalidArgument) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-1"}, "one-", 2);
  GangRequest request = Gang("ns/j", 1, 8);
  request.node_affinity = {{.match_expressions = {Expr(kLayer3, "Gt", {"x"})}}};
  EXPECT_THAT(snapshot.Place(request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("request.node_affinity[0].matchExpressions[0].values")));
}

// A required pod anti-affinity of the gang's own pods per node (max_pods_per_node 1): 4-GPU pods
// that would pack two per 8-GPU node take one node each, a growth and a node replacement keep
// off the nodes the gang holds, and the cap is part of the search cache's shape.
TEST(MaxPodsPerNodeTest, OneRankPerNodeThroughReserveResizeAndReplace) {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-1"}, "n-", 8);
  GangRequest request = Gang("ns/j", 4, 4, kLayer3);
  auto distinct = [](const std::vector<std::string>& nodes) {
    return std::set<std::string>(nodes.begin(), nodes.end()).size();
  };
  ASSERT_OK_AND_ASSIGN(PlacementResult packed, snapshot.Place(request));
  ASSERT_TRUE(packed.placed);
  EXPECT_EQ(distinct(packed.placement.nodes), 2u);  // the same shape without the cap: cached
  request.max_pods_per_node = 1;
  ASSERT_OK_AND_ASSIGN(PlacementResult spread, snapshot.Reserve(request));
  ASSERT_TRUE(spread.placed);
  EXPECT_EQ(distinct(spread.placement.nodes), 4u);
  ASSERT_OK_AND_ASSIGN(PlacementResult grown, snapshot.Resize("ns/j", 6));
  ASSERT_TRUE(grown.placed) << grown.explanation.summary;
  EXPECT_EQ(distinct(grown.placement.nodes), 6u);
  const std::string failed = grown.placement.nodes[0];
  ASSERT_OK_AND_ASSIGN(PlacementResult moved, snapshot.ReplaceNodes("ns/j", {failed}));
  ASSERT_TRUE(moved.placed) << moved.explanation.summary;
  EXPECT_EQ(distinct(moved.placement.nodes), 6u);
  EXPECT_THAT(moved.placement.nodes, Not(Contains(failed)));
  // Eight nodes, one rank each: a gang of 9 never fits, and says so.
  GangRequest nine = Gang("ns/k", 9, 4, kLayer3);
  nine.max_pods_per_node = 1;
  ASSERT_OK_AND_ASSIGN(PlacementResult refused, snapshot.Place(nine));
  EXPECT_FALSE(refused.placed);
  EXPECT_THAT(refused.explanation.max_fit_empty, ::testing::Optional(8));
  nine.max_pods_per_node = -1;
  EXPECT_THAT(snapshot.Place(nine), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("request.max_pods_per_node")));
}

}  // namespace
}  // namespace phalanx::placement
