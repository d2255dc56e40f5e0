// The topology levels phalanx-scheduler (and `phalanx topology`) use: a preset, or the levels of
// a phalanx.dev NetworkTopology object read from the API server.
//
//   ASSIGN_OR_RETURN(placement::Topology topology, LoadTopology(client, "", "eks"));   // preset
//   ASSIGN_OR_RETURN(placement::Topology topology, LoadTopology(client, "gb200", ""));  // object
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kube/client.h"
#include "scheduler/topology.h"

namespace phalanx::scheduler {

// The levels of NetworkTopology `name` (spec.levels[].nodeLabel, coarsest first; the hostname
// label is implicit and skipped), or of preset `preset` when `name` is empty. Errors name the
// object: NotFound, or InvalidArgument for a level without nodeLabel or levels Topology::Create
// refuses.
absl::StatusOr<placement::Topology> LoadTopology(kube::Client& client, const std::string& name,
                                                 std::string_view preset);

// The levels of a NetworkTopology object given as JSON (what LoadTopology reads).
absl::StatusOr<placement::Topology> TopologyFromObject(std::string_view json,
                                                       const std::string& name);

}  // namespace phalanx::scheduler
