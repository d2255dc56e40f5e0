// Preemption planning (docs/placement.md, PlanPreemption): which lower-priority gangs to shrink
// or evict so that a gang fits inside one domain of its required level. Pure: reads a
// ClusterSnapshot and changes nothing.
//
//   ASSIGN_OR_RETURN(PreemptionPlan plan,
//                    PlanGangPreemption(snapshot, request, {{"ns/batch-a", 10, std::nullopt},
//                                                           {"ns/elastic-b", 20, ElasticRange{2, 8, 2}}}));
//   for (const Victim& v : plan.victims) ...;  // new_count 0 = evict, > 0 = shrink to it
//
// Rules: victims come only from `candidates` whose priority is below the request's and that hold
// capacity inside the chosen domain; fewest evictions first, then fewest shrinks, then the
// lowest victim priorities (highest victim first), then fewest GPUs and pods taken; remaining
// ties go to the candidates earliest in admission's order, then to the tighter domain. Elastic
// candidates are shrunk (to the largest count that still frees enough, never below their
// minimum) before anything is evicted. docs/placement.md, "PlanPreemption", has the search.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/placement_types.h"

namespace phalanx::placement {

absl::StatusOr<PreemptionPlan> PlanGangPreemption(const ClusterSnapshot& snapshot,
                                                  const GangRequest& request,
                                                  const std::vector<RunningGang>& candidates);

}  // namespace phalanx::placement
