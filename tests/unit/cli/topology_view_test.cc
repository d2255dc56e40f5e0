#include "cli/topology_view.h"

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "cli/cluster_format.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/json.h"
#include "scheduler/server/topology_loader.h"
#include "tests/unit/cli/testdata.h"

namespace phalanx::cli {
namespace {

using ::phalanx::cli::testing::Items;
using ::phalanx::cli::testing::Testdata;
using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// The recorded cluster: 16 kwok p5.48xlarge nodes in one layer-3 block, p5-0015 cordoned; the
// TrainingJob llama-pretrain-64 records a reservation of p5-0000..p5-0007 in status.placement;
// one pod of 2 GPUs runs on p5-0008.
ClusterObjects Recorded() {
  return {
      .nodes = Items("nodes.json"), .pods = Items("pods.json"), .jobs = Items("trainingjobs.json")};
}

placement::Topology Eks() { return *placement::Topology::Preset("eks"); }

TEST(TopologyFromObjects, CountsReservationsFromJobStatusAndBoundPodsAsTheSchedulerDoes) {
  ASSERT_OK_AND_ASSIGN(TopologyView view, TopologyFromObjects(Eks(), Recorded(), {}));
  const placement::SnapshotSummary& s = view.summary;
  EXPECT_EQ(s.nodes, 16);
  EXPECT_EQ(s.schedulable_nodes, 15);
  EXPECT_EQ(s.nodes_by_condition.at("Unschedulable"), 1);
  EXPECT_EQ(s.pods, 1);
  EXPECT_EQ(s.reservations, 1);
  EXPECT_EQ(s.gpus, 15 * 8);
  EXPECT_EQ(s.free_gpus, 15 * 8 - 8 * 8 - 2);
  EXPECT_TRUE(view.nodes.empty());
  EXPECT_EQ(FormatTopology(view, {}),
            "source: " + view.source +
                "\n"
                "levels: layer-1 > layer-2 > layer-3 > node\n"
                "16 nodes (15 schedulable), 1 pod, 1 reservation, free 54/120 GPUs\n"
                "\n"
                "cluster                    16 nodes   free 54/120 GPUs   1 not schedulable\n"
                "  layer-1 nn-p5-l1-0       16 nodes   free 54/120 GPUs   1 not schedulable\n"
                "    layer-2 nn-p5-l2-0     16 nodes   free 54/120 GPUs   1 not schedulable\n"
                "      layer-3 nn-p5-l3-0   16 nodes   free 54/120 GPUs   1 not schedulable\n");
}

TEST(TopologyFromObjects, NodesSitUnderTheDeepestDomainListed) {
  ASSERT_OK_AND_ASSIGN(TopologyView view,
                       TopologyFromObjects(Eks(), Recorded(), {.max_level = 2, .nodes = true}));
  ASSERT_EQ(view.nodes.size(), 16u);
  EXPECT_EQ(view.nodes[8].name, "p5-0008");
  EXPECT_THAT(view.nodes[8].domain.path,
              ElementsAre("nn-p5-l1-0", "nn-p5-l2-0", "nn-p5-l3-0", "p5-0008"));
  std::string out = FormatTopology(view, {});
  EXPECT_THAT(out, HasSubstr("    layer-2 nn-p5-l2-0   16 nodes   free 54/120 GPUs   1 not "
                             "schedulable\n"
                             "      node p5-0000                  free 0/8 GPUs\n"));
  EXPECT_THAT(out, HasSubstr("      node p5-0008                  free 6/8 GPUs\n"));
  EXPECT_THAT(out, HasSubstr("      node p5-0015                  free 8/8 GPUs      "
                             "Unschedulable\n"));
  EXPECT_THAT(out, Not(HasSubstr("layer-3 nn-")));
}

TEST(TopologyFromObjects, LevelsOfARecordedTopologyObject) {
  ASSERT_OK_AND_ASSIGN(placement::Topology gb200,
                       scheduler::TopologyFromObject(Testdata("topology_gb200.json"), "gb200"));
  EXPECT_THAT(
      gb200.levels(),
      ElementsAre("topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
                  "topology.k8s.aws/network-node-layer-3", "nvidia.com/gpu.clique"));
  // The kwok nodes carry no clique label: they stop at layer-3, and so does the tree.
  ASSERT_OK_AND_ASSIGN(TopologyView view, TopologyFromObjects(gb200, Recorded(), {}));
  EXPECT_THAT(FormatTopology(view, {}),
              HasSubstr("levels: layer-1 > layer-2 > layer-3 > gpu.clique > node\n"));
  EXPECT_EQ(view.summary.domains.size(), 4u);
  EXPECT_THAT(scheduler::TopologyFromObject(R"({"spec":{"levels":[{"name":"x"}]}})", "bad"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("NetworkTopology bad: spec.levels[].nodeLabel missing")));
}

// The recorded objects with `from` replaced by `to` in item `index` of `items`.
std::vector<std::string> Edited(std::vector<std::string> items, size_t index,
                                const std::string& from, const std::string& to) {
  EXPECT_THAT(items.at(index), HasSubstr(from));
  items.at(index) = absl::StrReplaceAll(items.at(index), {{from, to}});
  return items;
}

const std::string kLayer2Label = R"("topology.k8s.aws/network-node-layer-2":"nn-p5-l2-0",)";
const std::string kLayer3Label = R"("topology.k8s.aws/network-node-layer-3":"nn-p5-l3-0",)";

TEST(TopologyFromObjects, NodesWithoutTheNextLevelsLabelGetARowUnderTheirDomain) {
  // Audit 2026-11-30 (finding 9): a node without layer-3 was counted in its layer-2 domain but
  // shown nowhere without --nodes. p5-0009 lacks layer-3 (it hangs under layer-2); p5-0010
  // lacks layer-2 but carries layer-3, which is then ignored (it hangs under layer-1).
  ClusterObjects objects = Recorded();
  objects.nodes = Edited(objects.nodes, 9, kLayer3Label, "");
  objects.nodes = Edited(objects.nodes, 10, kLayer2Label, "");
  ASSERT_OK_AND_ASSIGN(TopologyView view, TopologyFromObjects(Eks(), objects, {}));
  EXPECT_THAT(view.notes,
              ElementsAre("1 node carries a topology label but lacks a coarser level's, so its "
                          "deeper labels are ignored: p5-0010 without "
                          "topology.k8s.aws/network-node-layer-2"));
  std::string out = FormatTopology(view, {});
  EXPECT_THAT(out, HasSubstr("note: 1 node carries a topology label"));
  EXPECT_THAT(out, HasSubstr("  layer-1 nn-p5-l1-0             16 nodes   free 54/120 GPUs   1 not "
                             "schedulable\n"
                             "    layer-2 nn-p5-l2-0           15 nodes   free 46/112 GPUs   1 not "
                             "schedulable\n"
                             "      layer-3 nn-p5-l3-0         14 nodes   free 38/104 GPUs   1 not "
                             "schedulable\n"
                             "      (1 node without layer-3)              free 8/8 GPUs\n"
                             "    (1 node without layer-2)                free 8/8 GPUs\n"));
  // Nothing below the deepest level listed, and nothing when the labels are complete.
  view.max_level = 2;
  EXPECT_THAT(FormatTopology(view, {}), Not(HasSubstr("without layer-3")));
  ASSERT_OK_AND_ASSIGN(view, TopologyFromObjects(Eks(), Recorded(), {}));
  EXPECT_THAT(FormatTopology(view, {}), Not(HasSubstr("node without")));
  EXPECT_THAT(view.notes, IsEmpty());
  // With --nodes the node follows its row.
  ASSERT_OK_AND_ASSIGN(view, TopologyFromObjects(Eks(), objects, {.nodes = true}));
  EXPECT_THAT(FormatTopology(view, {}),
              HasSubstr("      (1 node without layer-3)              free 8/8 GPUs\n"
                        "      node p5-0009                          free 8/8 GPUs\n"));
}

TEST(TopologyFromObjects, SaysWhenNodesOrPlacedJobsUseLevelsTheseLack) {
  // Audit 2026-11-30 (finding 9): on a GB200 cluster the default eks preset gave a tree without
  // cliques and warnings about reservations that could not be restored.
  ClusterObjects objects = Recorded();
  const std::string clique = R"("nvidia.com/gpu.clique":"c0",)";
  objects.nodes = Edited(objects.nodes, 1, kLayer3Label, kLayer3Label + clique);
  objects.nodes = Edited(objects.nodes, 2, kLayer3Label, kLayer3Label + clique);
  objects.jobs = Edited(objects.jobs, 0, R"("preferred":"topology.k8s.aws/network-node-layer-3")",
                        R"("preferred":"nvidia.com/gpu.clique")");
  TopologyViewOptions options{.levels_source = "preset eks, the default"};
  ASSERT_OK_AND_ASSIGN(TopologyView view, TopologyFromObjects(Eks(), objects, options));
  EXPECT_THAT(view.notes,
              ElementsAre("2 nodes carry nvidia.com/gpu.clique, 1 placed TrainingJob uses "
                          "nvidia.com/gpu.clique, which the levels used here (preset eks, the "
                          "default) lack: phalanx-scheduler may use other levels; pass --server "
                          "to use its levels, or --topology-preset gb200 or --topology NAME"));
  EXPECT_THAT(FormatTopology(view, {}),
              HasSubstr("levels: layer-1 > layer-2 > layer-3 > node (preset eks, the default)\n"
                        "note: 2 nodes carry nvidia.com/gpu.clique"));
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(FormatTopology(view, {.json = true}));
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_STREQ((*doc)["levelsSource"].GetString(), "preset eks, the default");
  EXPECT_EQ((*doc)["notes"].Size(), 1u);

  // The scheduler's own levels need no such hint; levels that have the label give none.
  options.levels_from_scheduler = true;
  ASSERT_OK_AND_ASSIGN(view, TopologyFromObjects(Eks(), objects, options));
  EXPECT_THAT(view.notes, IsEmpty());
  ASSERT_OK_AND_ASSIGN(view, TopologyFromObjects(*placement::Topology::Preset("gb200"), objects,
                                                 {.levels_source = "preset gb200"}));
  EXPECT_THAT(view.notes, IsEmpty());
  // A job that names a level but holds no reservation (moe-gb200-tp16, waiting) is no sign.
  ASSERT_OK_AND_ASSIGN(view, TopologyFromObjects(Eks(), Recorded(),
                                                 {.levels_source = "preset eks, the default"}));
  EXPECT_THAT(view.notes, IsEmpty());
}

TEST(TopologyFromObjects, Json) {
  ASSERT_OK_AND_ASSIGN(TopologyView view,
                       TopologyFromObjects(Eks(), Recorded(), {.max_level = 1, .nodes = true}));
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(FormatTopology(view, {.json = true}));
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ((*doc)["freeGpus"].GetInt(), 54);
  EXPECT_EQ((*doc)["domains"].Size(), 2u);
  EXPECT_EQ((*doc)["domains"][1]["gpus"].GetInt(), 120);
  EXPECT_STREQ((*doc)["domains"][1]["level"].GetString(), "topology.k8s.aws/network-node-layer-1");
  EXPECT_EQ((*doc)["nodeList"].Size(), 16u);
  EXPECT_STREQ((*doc)["nodeList"][15]["condition"].GetString(), "Unschedulable");
}

TEST(TopologyFromObjects, MalformedObjectIsNamed) {
  EXPECT_THAT(TopologyFromObjects(Eks(), {.nodes = {"{\"metadata\":"}}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Node #0")));
}

}  // namespace
}  // namespace phalanx::cli
