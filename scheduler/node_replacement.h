// Node replacement: which healthy free nodes take over the ranks of a reserved gang whose nodes
// failed (NotReady, tainted, unhealthy, deleted), leaving every other rank where it is. The
// engine behind ClusterSnapshot::ReplaceNodes, which plans with it and then moves the slots:
//
//   const ClusterSnapshot::Reservation* held = snapshot.FindReservation("team-a/llama");
//   ReplacementPlan plan = PlanNodeReplacement(snapshot, *held, {"ip-10-0-3-7"});
//   if (!plan.feasible) spdlog::info("{}", plan.explanation.summary);
//
// Each moved rank lands as close to its old node as the topology allows: inside the old node's
// tightest domain if that has room, else its parent, widening only up to the gang's required
// level (the whole gang must still share one such domain). Ranks of one old domain move
// together, so two ranks that shared a block keep sharing one if it can be done. With groups
// (every groupSize consecutive ranks in one groupLevel domain), a rank whose group keeps other
// members stays in the group's domain; a group that loses every member moves as a whole group.
// Pods of the gang whose rank a shrink dropped count as gone: a lost rank may take their node
// (the operator shrinks an elastic gang that way, keeping ranks dense).
// Pure: reads the snapshot, holds nothing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cluster_snapshot.h"
#include "scheduler/placement_types.h"

namespace phalanx::placement {

struct ReplacementPlan {
  bool feasible = false;
  // (rank, new node index), ascending by rank; empty when no rank sits on a named node.
  std::vector<std::pair<int32_t, int>> moves;
  Explanation explanation;  // when not feasible
};

// Plans moving every rank of `reservation` whose node is named in `failed` (by name, so a node
// already deleted from the snapshot still matches). Every named node is also excluded as a
// target, whatever the snapshot thinks of its health: the caller may know more (a GPU error
// signal, a node about to go). All ranks or none: one rank without a node makes the plan
// infeasible, with an explanation naming the ranks and what blocked them.
ReplacementPlan PlanNodeReplacement(const ClusterSnapshot& snapshot,
                                    const ClusterSnapshot::Reservation& reservation,
                                    const std::vector<std::string>& failed);

}  // namespace phalanx::placement
