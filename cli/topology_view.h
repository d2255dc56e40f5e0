// `phalanx topology` without a scheduler: the view phalanx-scheduler would have, built from the
// cluster's API objects by the scheduler's own code (scheduler/server/live_snapshot.h): nodes,
// then the reservations recorded in TrainingJob status.placement, then the bound pods that have
// not finished, into a ClusterSnapshot that Summarize() reads. Pure: objects in, view out.
//
//   ClusterObjects objects{.nodes = nodes.items, .pods = pods.items, .jobs = jobs.items};
//   ASSIGN_OR_RETURN(TopologyView view, TopologyFromObjects(topology, objects, {.nodes = true}));
//   std::cout << FormatTopology(view, {});
//
// What it cannot see: reservations the operator made but has not written into a job's status
// yet (the Snapshot RPC of a running phalanx-scheduler knows those).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/cluster_format.h"
#include "scheduler/topology.h"

namespace phalanx::cli {

// JSON text of each object, as the API server lists them.
struct ClusterObjects {
  std::vector<std::string> nodes;
  std::vector<std::string> pods;  // bound pods; finished ones are skipped anyway
  std::vector<std::string> jobs;  // TrainingJobs, for their recorded reservations
};

struct TopologyViewOptions {
  // Deepest level listed as a level index (0 = the cluster only); -1 = every label level.
  int max_level = -1;
  // Also list every node under its domain.
  bool nodes = false;
  // Where the levels come from, for the output ("preset eks, the default").
  std::string levels_source;
  // The levels are phalanx-scheduler's own: no hint that they may not be the cluster's.
  bool levels_from_scheduler = false;
};

// InvalidArgument names an object that does not decode. The view's notes name the nodes whose
// deeper topology labels are ignored (a coarser level's label is missing) and, unless the levels
// are the scheduler's, topology labels the nodes carry and levels the TrainingJobs name that the
// levels used here lack, with the preset that has them.
absl::StatusOr<TopologyView> TopologyFromObjects(const placement::Topology& topology,
                                                 const ClusterObjects& objects,
                                                 const TopologyViewOptions& options);

// What Summarize() is asked for by `phalanx topology`: every domain down to `max_level`.
placement::SummaryOptions TopologySummaryOptions(int max_level);

}  // namespace phalanx::cli
