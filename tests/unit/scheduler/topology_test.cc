#include "scheduler/topology.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TopologyTest, PresetsListLevelsCoarsestFirst) {
  ASSERT_OK_AND_ASSIGN(Topology eks, Topology::Preset("eks"));
  EXPECT_THAT(eks.levels(), ElementsAre("topology.k8s.aws/network-node-layer-1",
                                        "topology.k8s.aws/network-node-layer-2",
                                        "topology.k8s.aws/network-node-layer-3"));
  ASSERT_OK_AND_ASSIGN(Topology four, Topology::Preset("eks-4layer"));
  EXPECT_EQ(four.depth(), 4);
  EXPECT_EQ(four.levels().back(), "topology.k8s.aws/network-node-layer-4");
  ASSERT_OK_AND_ASSIGN(Topology gb200, Topology::Preset("gb200"));
  EXPECT_EQ(gb200.depth(), 4);
  EXPECT_EQ(gb200.levels().back(), "nvidia.com/gpu.clique");
}

TEST(TopologyTest, LevelIndicesCoverClusterLabelsAndHostname) {
  ASSERT_OK_AND_ASSIGN(Topology eks, Topology::Preset("eks"));
  EXPECT_EQ(eks.LevelIndex(""), 0);
  EXPECT_EQ(eks.LevelIndex("topology.k8s.aws/network-node-layer-2"), 2);
  EXPECT_EQ(eks.LevelIndex("kubernetes.io/hostname"), 4);
  EXPECT_EQ(eks.LevelIndex("nvidia.com/gpu.clique"), std::nullopt);
  EXPECT_EQ(eks.LevelLabel(4), "kubernetes.io/hostname");
  EXPECT_EQ(eks.LevelLabel(0), "");
}

TEST(TopologyTest, ALabelGapNamesTheFirstMissingLevelAndTheLabelsItMakesIgnored) {
  ASSERT_OK_AND_ASSIGN(Topology gb200, Topology::Preset("gb200"));
  const std::string l1 = "topology.k8s.aws/network-node-layer-1";
  const std::string l2 = "topology.k8s.aws/network-node-layer-2";
  const std::string l3 = "topology.k8s.aws/network-node-layer-3";
  const std::string clique = "nvidia.com/gpu.clique";
  // Levels carried as a prefix (none, some, all) are no gap: the node hangs where they end.
  EXPECT_EQ(gb200.FindLabelGap({}), std::nullopt);
  EXPECT_EQ(gb200.FindLabelGap({{l1, "a"}, {l2, "b"}, {"other", "x"}}), std::nullopt);
  EXPECT_EQ(gb200.FindLabelGap({{l1, "a"}, {l2, "b"}, {l3, "c"}, {clique, "d"}}), std::nullopt);
  // GFD's clique label without the EC2 network labels (audit 2026-11-30, finding 6).
  std::optional<Topology::LabelGap> gap = gb200.FindLabelGap({{clique, "gfd-uuid.7"}});
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->missing, l1);
  EXPECT_THAT(gap->ignored, ElementsAre(clique));
  // A layer missing in the middle: the deeper ones are ignored.
  gap = gb200.FindLabelGap({{l1, "a"}, {l3, "c"}, {clique, "d"}});
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->missing, l2);
  EXPECT_THAT(gap->ignored, ElementsAre(l3, clique));
}

TEST(TopologyTest, RejectsBadLevels) {
  EXPECT_THAT(Topology::Preset("eks-9layer"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("eks-4layer")));
  EXPECT_THAT(Topology::Create({"a", "a"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("topology.levels[1]")));
  EXPECT_THAT(Topology::Create({"kubernetes.io/hostname"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("implicit")));
  EXPECT_THAT(Topology::Create({""}), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace phalanx::placement
