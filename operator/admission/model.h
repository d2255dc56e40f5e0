// The admission configuration compiled for one cycle: names resolved to dense indices, every
// (flavor, resource) pair given an id, and every bad object reported as an ObjectError instead
// of failing the whole cycle. Objects that depend on a bad object are marked inactive with the
// reason; everything else admits as usual.
//
//   Model model = CompileModel(snapshot);
//   for (const ObjectError& e : model.errors) spdlog::warn("{} {}: {}", e.kind, e.name, e.message);
//   int cq = model.cq_index.at("team-a");
//   if (!model.cqs[cq].inactive.empty()) ...;  // admits nothing; the reason says why
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "operator/admission/types.h"

namespace phalanx::admission {

// Dense id of a (flavor, resource) pair, the unit in which quota is counted.
using FrId = int;

struct CompiledGroup {
  std::vector<std::string> resources;  // covered resources
  std::vector<int> flavors;            // Model::flavors indices, in preference order
  std::vector<std::vector<FrId>> fr;   // fr[flavor position][resource position]
};

struct CompiledClusterQueue {
  const ClusterQueue* spec = nullptr;
  int cohort = -1;  // Model::cohorts index, -1 without a cohort
  std::vector<CompiledGroup> groups;
  // resource -> (group, position of the resource in the group)
  std::map<std::string, std::pair<int, int>, std::less<>> resource_index;
  std::string inactive;  // non-empty: admits nothing, and this says why
  // Non-empty for a valid queue that admits and grows nothing by choice, saying why: its
  // deletion was requested (spec->terminating) or it has a stopPolicy. Its running workloads
  // keep their quota (HoldAndDrain evicts them).
  std::string held;
};

// A LocalQueue with a stopPolicy other than None, and the message its workloads wait with.
struct LocalQueueStop {
  StopPolicy policy = StopPolicy::kNone;
  std::string message;
};

struct Model {
  std::vector<const ResourceFlavor*> flavors;
  std::map<std::string, int, std::less<>> flavor_index;
  std::vector<CompiledClusterQueue> cqs;
  std::map<std::string, int, std::less<>> cq_index;
  std::vector<std::string> cohorts;
  std::vector<std::vector<int>> cohort_members;  // cohort -> ClusterQueue indices
  // (namespace, name) -> ClusterQueue index; -1 when the LocalQueue is broken (see errors).
  std::map<std::pair<std::string, std::string>, int> local_queues;
  // (namespace, name) -> the LocalQueues that have a stopPolicy other than None.
  std::map<std::pair<std::string, std::string>, LocalQueueStop> local_queue_stops;
  // (namespace, name) -> the ClusterQueue a broken LocalQueue (index -1) names, which is missing.
  std::map<std::pair<std::string, std::string>, std::string> missing_cluster_queues;
  std::map<std::string, const Namespace*, std::less<>> namespaces;
  std::vector<std::pair<int, std::string>> frs;  // FrId -> (flavor, resource)
  std::map<std::pair<int, std::string>, FrId> fr_ids;  // (flavor, resource) -> FrId
  std::vector<ObjectError> errors;
};

// Never fails: every problem becomes an ObjectError and, where it matters, an inactive reason.
Model CompileModel(const Snapshot& snapshot);

// "Hold" or "HoldAndDrain" (kNone: "None").
const char* ToString(StopPolicy policy);

}  // namespace phalanx::admission
