// A small synthetic cluster for admission tests against the real in-process placement service.
#pragma once

#include <memory>

#include "gtest/gtest.h"
#include "scheduler/in_process_placement_service.h"
#include "scheduler/synthetic_cluster.h"

namespace phalanx::admission::testing {

// `nodes` p5 nodes (8 GPUs), 4 per layer-3 block, 2 blocks per layer-2 domain, all free.
inline std::unique_ptr<placement::InProcessPlacementService> EmptyCluster(int nodes) {
  placement::SyntheticClusterOptions options{.topology = "eks",
                                             .nodes = nodes,
                                             .nodes_per_leaf = 4,
                                             .fanout = 2,
                                             .occupancy = 0,
                                             .churn = 0};
  auto cluster = placement::BuildSyntheticCluster(options);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return std::make_unique<placement::InProcessPlacementService>(std::move(cluster->snapshot));
}

}  // namespace phalanx::admission::testing
