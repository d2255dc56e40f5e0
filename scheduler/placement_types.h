// The vocabulary of the placement core: what a gang asks for, where it was placed, why it was
// not, and what to preempt. Shared by the in-process PlacementService, the admission core, the
// simulator and (later) the gRPC Placement service, so it carries no I/O and no clocks.
//
//   GangRequest request{.job = "team-a/llama-70b", .count = 8,
//                       .per_pod = {{"nvidia.com/gpu", 8}},
//                       .required_level = "topology.k8s.aws/network-node-layer-3"};
//   ASSIGN_OR_RETURN(PlacementResult result, service.Reserve(request));
//   if (!result.placed) spdlog::info("{}", result.explanation.summary);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/resources.h"

namespace phalanx::placement {

// The implicit finest topology level: one domain per node.
inline constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct Toleration {
  std::string key;                // empty with operator Exists tolerates every taint
  std::string op = "Equal";       // Equal | Exists
  std::string value;
  std::string effect;             // empty tolerates every effect
};

// One requirement of a required node affinity term (Kubernetes core/v1 NodeSelectorRequirement).
// As a matchExpressions entry `key` is a node label and `op` one of In, NotIn, Exists,
// DoesNotExist, Gt, Lt (Gt/Lt compare the label's value as an integer); as a matchFields entry
// `key` is "metadata.name" and `op` In or NotIn with one value (scheduler/node_affinity.h).
struct NodeSelectorRequirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

// Its entries are ANDed; a term with none matches no node.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

// Elastic size: candidate counts are min, min+step, min+2*step, ... up to max.
struct ElasticRange {
  int32_t min = 0;
  int32_t max = 0;
  int32_t step = 1;
};

// A gang of identical pods to be placed all-or-nothing.
struct GangRequest {
  std::string job;                        // unique id, "namespace/name"
  int32_t count = 0;                      // pods wanted (ignored when `elastic` is set)
  std::optional<ElasticRange> elastic;    // place the largest feasible count in the range
  ResourceList per_pod;                   // canonical units (common/resources.h)
  std::map<std::string, std::string> node_selector;
  // The pods' spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
  // nodeSelectorTerms, ORed; empty = no node affinity.
  std::vector<NodeSelectorTerm> node_affinity;
  std::vector<Toleration> tolerations;
  // At most this many of the gang's pods on one node (a required pod anti-affinity of the
  // gang's pods to each other on kubernetes.io/hostname is 1); 0 = no limit.
  int32_t max_pods_per_node = 0;
  std::string required_level;             // node label key: hard ceiling; "" = whole cluster
  std::string preferred_level;            // node label key: target, may be exceeded
  int32_t group_size = 0;                 // 0 = no groups
  std::string group_level;                // each block of group_size ranks lies in one such domain
  int32_t priority = 0;
  // Nodes the gang must not use: those a blocked gang's backfill reservation holds for its
  // future start (docs/admission.md "Backfill"). Unknown names are ignored; a reservation does
  // not keep them, so a later Resize may use them.
  std::vector<std::string> excluded_nodes;
};

// A topology domain: the level's label key and the label values from the coarsest level down
// to it. The whole cluster is {level = "", path = {}}.
struct DomainId {
  std::string level;
  std::vector<std::string> path;

  // "topology.k8s.aws/network-node-layer-3=nn-3" (the last path element), or "cluster".
  std::string ToString() const;
  friend bool operator==(const DomainId&, const DomainId&) = default;
};

struct Placement {
  std::string job;
  DomainId domain;                 // the tightest domain holding every rank
  std::vector<std::string> nodes;  // rank -> node name; consecutive ranks share low domains
};

// Why a gang did not fit, in terms a user can act on.
struct Explanation {
  std::string summary;                      // one line: "needs 64 GPUs in one ...; best has 40"
  int32_t wanted = 0;                       // pods wanted (elastic: the minimum)
  std::optional<DomainId> best_domain;      // the domain that came closest
  int32_t fit_in_best = 0;                  // how many pods fit there
  // The most pods one domain of the required level could hold with every reservation and bound
  // pod gone (node conditions, taints and the request's selector as they are now): below
  // `wanted`, no wait for running gangs to finish can ever place the request. Set by Place /
  // Reserve / ReserveBatch; unset when not computed (other calls, an older server).
  std::optional<int32_t> max_fit_empty;
  std::map<std::string, int32_t> nodes_rejected;  // reason -> node count ("NotReady": 3)
};

struct PlacementResult {
  bool placed = false;
  Placement placement;        // set when placed
  Explanation explanation;    // set when not placed
};

// A running gang that admission allows the planner to shrink or evict, in admission's order of
// preference (earlier = preferred victim between plans of as many victims of equal priorities).
struct RunningGang {
  std::string job;
  int32_t priority = 0;
  std::optional<ElasticRange> elastic;  // may shrink down to elastic->min instead of eviction
};

struct Victim {
  std::string job;
  int32_t new_count = 0;  // 0 = evict the whole gang; > 0 = shrink to this many pods
};

struct PreemptionPlan {
  bool feasible = false;
  std::vector<Victim> victims;
  Placement placement;        // where the preemptor lands once the victims are gone
  Explanation explanation;    // why not, when infeasible
};

// A running gang expected to end, for EstimateStart: `end` orders the ends (seconds, as the
// caller counts them). `job` names a string the caller keeps alive for the call (admission
// passes hundreds of these per estimate: views, not copies).
struct EndingGang {
  std::string_view job;
  int64_t end = 0;
};

// When and where a gang that does not fit now is expected to start, as gangs end.
struct StartEstimate {
  bool feasible = false;   // fits now, or once some of the ending gangs have gone
  int32_t ended = 0;       // how many of them must have ended first (0 = fits now)
  int64_t start = 0;       // the latest end among them (0 when ended == 0)
  Placement placement;     // where it goes then
  Explanation explanation; // why not even after every ending gang, when not feasible
};

}  // namespace phalanx::placement
