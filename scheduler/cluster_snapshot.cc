#include "scheduler/cluster_snapshot.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/counted_noun.h"
#include "common/status.h"
#include "scheduler/node_affinity.h"
#include "scheduler/gang_search.h"
#include "scheduler/node_replacement.h"
#include "scheduler/preemption_planner.h"

namespace phalanx::placement {
namespace {

std::string Quote(std::string_view s) {
  return absl::StrCat("\"", absl::string_view(s.data(), s.size()), "\"");
}

std::vector<std::string> NodeNames(const ClusterSnapshot& snapshot, const std::vector<int>& ids) {
  std::vector<std::string> names;
  names.reserve(ids.size());
  for (int id : ids) names.push_back(snapshot.nodes()[id].info.name);
  return names;
}

// Searches for `shape` and, when it fits, fills `rank_nodes`; otherwise explains why not.
// The most pods of `shape` one domain of its required level holds with every node's usage
// (bound pods and reservations) given back: what no amount of waiting can exceed.
int32_t MaxFitEmpty(const ClusterSnapshot& snapshot, GangShape shape) {
  shape.excluded.clear();  // backfill exclusions are temporary too
  // The search cache's key leaves the required level out (its results hold every level).
  const std::string key = absl::StrCat(ShapeCacheKey(shape), "required:", shape.required_level);
  return snapshot.MaxFitEmpty(key, [&] {
    GangSearch search(snapshot, shape, 0, nullptr, nullptr, /*as_if_empty=*/true);
    search.Run(0);
    return static_cast<int32_t>(
        std::min<int64_t>(search.MaxCount(), std::numeric_limits<int32_t>::max()));
  });
}

// Why the gang does not fit, from the cached search of the live cluster (with `overlay`'s
// resources freed on top): equal to a fresh search's Explain, recomputing only the overlay.
Explanation Unplaced(const ClusterSnapshot& snapshot, const GangShape& shape,
                     const GangSearch& today, const GangSearch::FreeOverlay* overlay) {
  Explanation why = today.Explain(shape.min_count, overlay);
  why.max_fit_empty = MaxFitEmpty(snapshot, shape);
  return why;
}

PlacementResult Search(const ClusterSnapshot& snapshot, const GangRequest& request,
                       const GangShape& shape, std::vector<int>& rank_nodes,
                       const GangSearch::FreeOverlay* overlay = nullptr) {
  PlacementResult result;
  GangSearch search(snapshot, shape, 0, overlay);
  search.Run(shape.min_count);
  int32_t count = LargestCount(shape, search.MaxCount());
  std::optional<GangSearch::Choice> choice;
  if (count > 0) choice = search.Tightest(count);
  if (!choice.has_value()) {
    search.Run(0);
    result.explanation = search.Explain(shape.min_count);
    result.explanation.max_fit_empty = MaxFitEmpty(snapshot, shape);
    return result;
  }
  rank_nodes = search.Allocate(*choice, count);
  result.placed = true;
  result.placement.job = request.job;
  result.placement.domain = snapshot.LowestCommonDomain(rank_nodes);
  result.placement.nodes = NodeNames(snapshot, rank_nodes);
  return result;
}

}  // namespace

ClusterSnapshot::ClusterSnapshot(Topology topology)
    : topology_(std::move(topology)), by_level_(topology_.depth() + 1) {
  domains_.emplace_back();
  by_level_[0].push_back(0);
}

absl::Status ClusterSnapshot::ValidateNode(const NodeInfo& node) const {
  if (node.name.empty()) return absl::InvalidArgumentError("node.name is empty");
  for (const auto& [name, amount] : node.allocatable) {
    if (amount < 0) {
      return absl::InvalidArgumentError(absl::StrCat("node[", node.name, "].allocatable[", name,
                                                     "] must not be negative, got ", amount));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ResourceVector> ClusterSnapshot::NodeAllocatable(const NodeInfo& node) {
  ASSIGN_OR_RETURN(ResourceVector allocatable,
                   resources_.ToVector(node.allocatable, "node", node.name, "allocatable"));
  if (node.allocatable.find(kResourcePods) == node.allocatable.end()) {
    allocatable[kPodsIndex] = kDefaultPodsPerNode;
  }
  return allocatable;
}

namespace {

void SetFlags(ClusterSnapshot::Node& node) {
  auto health = node.info.labels.find(std::string(kNodeHealthLabel));
  if (!node.info.ready) {
    node.condition = NodeCondition::kNotReady;
  } else if (node.info.unschedulable) {
    node.condition = NodeCondition::kUnschedulable;
  } else if (health != node.info.labels.end() && health->second != kNodeHealthSchedulable) {
    node.condition = NodeCondition::kUnhealthy;
  } else {
    node.condition = NodeCondition::kSchedulable;
  }
  node.hard_tainted = std::any_of(node.info.taints.begin(), node.info.taints.end(),
                                  [](const Taint& t) {
                                    return t.effect == "NoSchedule" || t.effect == "NoExecute";
                                  });
}

}  // namespace

absl::Status ClusterSnapshot::AddNode(const NodeInfo& info) {
  ++nodes_generation_;
  RETURN_IF_ERROR(ValidateNode(info));
  auto it = node_index_.find(info.name);
  if (it != node_index_.end() && !nodes_[it->second].removed) {
    return absl::InvalidArgumentError(
        absl::StrCat("node.name (", Quote(info.name), ") already exists"));
  }
  ASSIGN_OR_RETURN(ResourceVector allocatable, NodeAllocatable(info));
  int index;
  if (it != node_index_.end()) {
    index = it->second;  // a removed node coming back keeps the usage still charged to it
  } else {
    index = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    node_index_.emplace(info.name, index);
  }
  Node& node = nodes_[index];
  node.info = info;
  node.allocatable = allocatable;
  node.removed = false;
  SetFlags(node);
  Attach(index);
  IndexLabels(index, +1);
  return absl::OkStatus();
}

absl::Status ClusterSnapshot::UpdateNode(const NodeInfo& info) {
  ++nodes_generation_;
  RETURN_IF_ERROR(ValidateNode(info));
  int index = FindNode(info.name);
  if (index < 0) {
    return absl::NotFoundError(absl::StrCat("node.name (", Quote(info.name), ") is not known"));
  }
  // Status updates (Ready, cordon, taints) usually leave labels and allocatable as they were:
  // comparing first skips re-interning resources, re-reading the topology path and copying the
  // maps' long label keys.
  const NodeInfo& old = nodes_[index].info;
  const bool same_labels = old.labels == info.labels;
  const bool same_allocatable = old.allocatable == info.allocatable;
  ResourceVector allocatable = nodes_[index].allocatable;
  if (!same_allocatable) {
    ASSIGN_OR_RETURN(allocatable, NodeAllocatable(info));
  }
  // The node moves in the tree only if the label values along its path changed.
  bool moved = false;
  if (!same_labels) {
    std::vector<std::string_view> path;
    for (const std::string& level : topology_.levels()) {
      auto label = info.labels.find(level);
      if (label == info.labels.end()) break;
      path.push_back(label->second);
    }
    moved = static_cast<int>(path.size()) != nodes_[index].depth;
    for (int d = nodes_[index].domain; !moved && d > 0; d = domains_[d].parent) {
      moved = domains_[d].value != path[domains_[d].level - 1];
    }
  }
  if (moved) {
    Detach(index);
  } else {
    Contribute(index, -1);
  }
  if (!same_labels) IndexLabels(index, -1);
  Node& node = nodes_[index];
  if (!same_labels) node.info.labels = info.labels;
  if (!same_allocatable) node.info.allocatable = info.allocatable;
  if (!std::equal(node.info.taints.begin(), node.info.taints.end(), info.taints.begin(),
                  info.taints.end(), [](const Taint& a, const Taint& b) {
                    return a.key == b.key && a.value == b.value && a.effect == b.effect;
                  })) {
    node.info.taints = info.taints;
  }
  node.info.ready = info.ready;
  node.info.unschedulable = info.unschedulable;
  node.allocatable = allocatable;
  SetFlags(node);
  if (moved) {
    Attach(index);
  } else {
    Contribute(index, +1);
  }
  if (!same_labels) IndexLabels(index, +1);
  return absl::OkStatus();
}

absl::Status ClusterSnapshot::RemoveNode(std::string_view name) {
  ++nodes_generation_;
  int index = FindNode(name);
  if (index < 0) return absl::NotFoundError(absl::StrCat("node ", Quote(name), " is not known"));
  Detach(index);
  IndexLabels(index, -1);
  nodes_[index].removed = true;
  return absl::OkStatus();
}

int ClusterSnapshot::ChildDomain(int parent, const std::string& value) {
  std::string key = absl::StrCat(parent, "/", value);
  auto it = domain_index_.find(key);
  if (it != domain_index_.end()) return it->second;
  int index = static_cast<int>(domains_.size());
  Domain domain;
  domain.parent = parent;
  domain.level = domains_[parent].level + 1;
  domain.value = value;
  domains_.push_back(std::move(domain));
  by_level_[domains_[index].level].push_back(index);
  std::vector<int>& siblings = domains_[parent].children;
  auto at = std::lower_bound(siblings.begin(), siblings.end(), value,
                             [&](int d, const std::string& v) { return domains_[d].value < v; });
  siblings.insert(at, index);
  domain_index_.emplace(std::move(key), index);
  return index;
}

void ClusterSnapshot::Attach(int index) {
  int domain = 0;
  int depth = 0;
  for (const std::string& level : topology_.levels()) {
    auto label = nodes_[index].info.labels.find(level);
    if (label == nodes_[index].info.labels.end()) break;  // deeper labels are meaningless
    domain = ChildDomain(domain, label->second);
    ++depth;
  }
  Node& node = nodes_[index];
  node.domain = domain;
  node.depth = depth;
  std::vector<int>& members = domains_[domain].nodes;
  auto at = std::lower_bound(members.begin(), members.end(), node.info.name,
                             [&](int n, const std::string& name) {
                               return nodes_[n].info.name < name;
                             });
  members.insert(at, index);
  Contribute(index, +1);
}

void ClusterSnapshot::Detach(int index) {
  Contribute(index, -1);
  const Node& node = nodes_[index];
  std::vector<int>& members = domains_[node.domain].nodes;
  auto at = std::lower_bound(members.begin(), members.end(), node.info.name,
                             [&](int n, const std::string& name) {
                               return nodes_[n].info.name < name;
                             });
  if (at != members.end() && *at == index) members.erase(at);
}

void ClusterSnapshot::IndexLabels(int index, int sign) {
  ++labels_generation_;
  for (const auto& [key, value] : nodes_[index].info.labels) {
    std::vector<int>& list = label_index_[key][value];
    auto at = std::lower_bound(list.begin(), list.end(), index);
    if (sign > 0) {
      if (at == list.end() || *at != index) list.insert(at, index);
    } else if (at != list.end() && *at == index) {
      list.erase(at);
    }
  }
}

const std::vector<int>* ClusterSnapshot::NodesWithLabel(const std::string& key,
                                                        const std::string& value) const {
  auto by_key = label_index_.find(key);
  if (by_key == label_index_.end()) return nullptr;
  auto by_value = by_key->second.find(value);
  if (by_value == by_key->second.end() || by_value->second.empty()) return nullptr;
  return &by_value->second;
}

const ClusterSnapshot::SelectorMatch* ClusterSnapshot::MatchSelector(
    const std::vector<std::pair<std::string, std::string>>& selector,
    const std::vector<NodeSelectorTerm>& affinity) const {
  if (selector.empty() && affinity.empty()) return nullptr;
  if (selector_cache_generation_ != labels_generation_) {
    selector_cache_.clear();
    selector_cache_generation_ = labels_generation_;
  }
  std::string key;
  for (const auto& [k, v] : selector) {
    key.append(k).push_back('\0');
    key.append(v).push_back('\0');
  }
  if (!affinity.empty()) {
    key.push_back('\1');
    AppendAffinityKey(affinity, &key);
  }
  if (auto hit = selector_cache_.find(key); hit != selector_cache_.end()) return &hit->second;
  // Bounded against a stream of distinct selectors. Only a new selector clears it, so searches
  // that share one selector (a preemption plan's many searches) never see their entry go away.
  if (selector_cache_.size() >= 256) selector_cache_.clear();
  SelectorMatch& match = selector_cache_[std::move(key)];
  match.node_ok.assign(nodes_.size(), 0);
  match.domain_ok.assign(domains_.size(), 0);
  // The live nodes carrying every selector pair (all live nodes for no selector), then those
  // the affinity admits, which only a look at each node's labels can tell.
  std::vector<int> candidates;
  if (selector.empty()) {
    for (size_t node = 0; node < nodes_.size(); ++node) {
      if (!nodes_[node].removed) candidates.push_back(static_cast<int>(node));
    }
  } else {
    std::vector<const std::vector<int>*> lists;
    for (const auto& [k, v] : selector) {
      const std::vector<int>* list = NodesWithLabel(k, v);
      if (list == nullptr) return &match;  // some pair matches no node: nothing is eligible
      lists.push_back(list);
    }
    // hits[n] = how many of lists[0..l) hold node n, counted only while it held every earlier
    // one.
    std::vector<uint32_t> hits(nodes_.size(), 0);
    for (size_t l = 0; l < lists.size(); ++l) {
      for (int node : *lists[l]) {
        if (hits[node] == l) hits[node] = static_cast<uint32_t>(l + 1);
      }
    }
    for (int node : *lists[0]) {
      if (hits[node] == lists.size()) candidates.push_back(node);
    }
  }
  for (int node : candidates) {
    if (!MatchesNodeAffinity(affinity, nodes_[node].info.labels, nodes_[node].info.name)) {
      continue;
    }
    match.node_ok[node] = 1;
    for (int d = nodes_[node].domain; d >= 0 && !match.domain_ok[d]; d = domains_[d].parent) {
      match.domain_ok[d] = 1;
    }
  }
  return &match;
}

void ClusterSnapshot::Contribute(int index, int sign) {
  // Every change to a node passes through here (twice: out, then back in), so this is where the
  // versions that search caches check are raised, before the early return for nodes that do
  // not count: a node going NotReady changes what it holds too.
  const uint64_t version = ++versions_;
  nodes_[index].version = version;
  for (int d = nodes_[index].domain; d >= 0; d = domains_[d].parent) domains_[d].version = version;
  const Node& node = nodes_[index];
  if (node.removed || node.condition != NodeCondition::kSchedulable) return;
  const int n = resources_.size();
  ResourceVector free;
  for (int r = 0; r < n; ++r) {
    free[r] = sign * std::max<int64_t>(0, node.allocatable[r] - node.used[r]);
  }
  const int64_t gpus = sign * free[kGpuIndex];  // back to a magnitude
  const int bucket = static_cast<int>(std::min<int64_t>(gpus, kGpuBuckets - 1));
  for (int d = node.domain; d >= 0; d = domains_[d].parent) {
    Domain& domain = domains_[d];
    domain.free.Add(free, n);
    domain.gpu_histogram[bucket] += sign;
    if (bucket == kGpuBuckets - 1) domain.gpu_overflow += sign * gpus;
    domain.schedulable_nodes += sign;
  }
}

void ClusterSnapshot::ChangeUsage(int index, const ResourceVector& delta, int sign) {
  Contribute(index, -1);
  if (sign > 0) {
    nodes_[index].used.Add(delta, resources_.size());
  } else {
    nodes_[index].used.Subtract(delta, resources_.size());
  }
  Contribute(index, +1);
}

absl::Status ClusterSnapshot::AddPod(const PodInfo& info) {
  if (info.key.empty()) return absl::InvalidArgumentError("pod.key is empty");
  if (pods_.count(info.key) > 0) {
    return absl::AlreadyExistsError(absl::StrCat("pod ", Quote(info.key), " is already bound"));
  }
  int index = FindNode(info.node);
  if (index < 0) {
    return absl::NotFoundError(
        absl::StrCat("pod[", info.key, "].node (", Quote(info.node), ") is not a known node"));
  }
  Pod pod;
  pod.node = index;
  ASSIGN_OR_RETURN(pod.requests,
                   resources_.ToVector(info.requests, "pod", info.key, "requests"));
  pod.requests[kPodsIndex] = std::max<int64_t>(1, pod.requests[kPodsIndex]);
  pod.job = info.job;
  pod.rank = info.rank;
  ResourceVector delta = pod.requests;
  auto reservation = info.job.empty() ? reservations_.end() : reservations_.find(info.job);
  if (reservation != reservations_.end()) {
    std::vector<ReservedRank>& ranks = reservation->second.ranks;
    auto free_here = [&](int32_t r) { return ranks[r].node == index && ranks[r].pod.empty(); };
    if (info.rank >= 0 && info.rank < static_cast<int32_t>(ranks.size()) && free_here(info.rank)) {
      pod.slot = info.rank;
    } else {
      for (int32_t r = 0; r < static_cast<int32_t>(ranks.size()) && pod.slot < 0; ++r) {
        if (free_here(r)) pod.slot = r;
      }
    }
    if (pod.slot >= 0) {
      ranks[pod.slot].pod = info.key;
      delta.Subtract(reservation->second.per_pod, resources_.size());
    }
  }
  ChangeUsage(index, delta, +1);
  pods_.emplace(info.key, std::move(pod));
  return absl::OkStatus();
}

absl::Status ClusterSnapshot::RemovePod(std::string_view key) {
  auto it = pods_.find(std::string(key));
  if (it == pods_.end()) return absl::NotFoundError(absl::StrCat("pod ", Quote(key), " is not bound"));
  const Pod& pod = it->second;
  if (pod.released) {  // already uncharged when its slot was given up
    pods_.erase(it);
    return absl::OkStatus();
  }
  ResourceVector delta = pod.requests;
  if (pod.slot >= 0) {
    auto reservation = reservations_.find(pod.job);
    if (reservation != reservations_.end()) {
      ReservedRank& rank = reservation->second.ranks[pod.slot];
      rank.pod.clear();  // the reservation keeps the slot for a replacement pod
      delta.Subtract(reservation->second.per_pod, resources_.size());
    }
  }
  ChangeUsage(pod.node, delta, -1);
  pods_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<PlacementResult> ClusterSnapshot::Place(const GangRequest& request) const {
  ASSIGN_OR_RETURN(GangShape shape, ValidateGang(request, *this));
  std::vector<int> rank_nodes;
  return Search(*this, request, shape, rank_nodes);
}

absl::StatusOr<StartEstimate> ClusterSnapshot::EstimateStart(
    const GangRequest& request, const std::vector<EndingGang>& ends) const {
  ASSIGN_OR_RETURN(GangShape shape, ValidateGang(request, *this));
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i].job.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("ends[", i, "].job is empty"));
    }
  }
  StartEstimate estimate;
  std::vector<int> rank_nodes;
  // Today's search, cached: the fit checks below start from it.
  GangSearch today(*this, shape);
  today.Run(0);
  if (today.MaxCount() >= shape.min_count) {
    PlacementResult now = Search(*this, request, shape, rank_nodes);
    estimate.feasible = now.placed;
    estimate.placement = std::move(now.placement);
    estimate.explanation = std::move(now.explanation);
    return estimate;
  }
  // The ending gangs in order of end; those ending at the same time form a group. After a
  // group, every gang of it and of the groups before has gone. A gang named twice ends at its
  // earliest; names without a reservation are skipped. Reservations are looked up only as far
  // as the sweep goes.
  std::vector<const EndingGang*> order;
  order.reserve(ends.size());
  for (const EndingGang& end : ends) order.push_back(&end);
  std::sort(order.begin(), order.end(), [](const EndingGang* a, const EndingGang* b) {
    return std::tie(a->end, a->job) < std::tie(b->end, b->job);
  });
  // Gangs end group by group, each giving back what its ranks charge their nodes now (bound
  // pods' requests, or the reserved amount), until the gang fits; only the freed nodes and the
  // domains above them are recomputed.
  GangSearch::Sweep sweep(today);
  absl::flat_hash_set<std::string_view> seen;
  std::vector<int> recent;  // the nodes of the last group
  bool fits = false;
  for (size_t i = 0; i < order.size() && !fits;) {
    const int64_t end = order[i]->end;
    size_t freed = 0;
    for (; i < order.size() && order[i]->end == end; ++i) {
      const Reservation* reservation = FindReservation(order[i]->job);
      if (reservation == nullptr || reservation->ranks.empty() ||
          !seen.insert(order[i]->job).second) {
        continue;
      }
      if (freed++ == 0) recent.clear();
      for (size_t r = 0; r < reservation->ranks.size(); ++r) {
        sweep.Free(reservation->ranks[r].node, RankUsage(*reservation, r));
        recent.push_back(reservation->ranks[r].node);
      }
    }
    if (freed == 0) continue;
    estimate.start = end;
    fits = sweep.MaxCount() >= shape.min_count;
  }
  if (seen.empty()) {
    estimate.explanation = Unplaced(*this, shape, today, nullptr);
    return estimate;
  }
  if (!fits) {
    estimate.start = 0;
    estimate.explanation = Unplaced(*this, shape, today, &sweep.overlay());
    estimate.explanation.summary =
        absl::StrCat("not even after all ", seen.size(), " ending gangs end: ",
                     estimate.explanation.summary);
    return estimate;
  }
  // Before the last group nothing held the gang, so where it fits now holds a node of that
  // group: the sweep compares those domains alone and searches only the one it picks.
  const int32_t count = LargestCount(shape, sweep.MaxCount());
  std::optional<GangSearch::Choice> choice = sweep.Tightest(count, recent);
  if (!choice.has_value()) return absl::InternalError("start estimate does not fit on replay");
  rank_nodes = sweep.Allocate(*choice, count);
  estimate.feasible = true;
  estimate.ended = static_cast<int32_t>(seen.size());
  estimate.placement.job = request.job;
  estimate.placement.domain = LowestCommonDomain(rank_nodes);
  estimate.placement.nodes = NodeNames(*this, rank_nodes);
  return estimate;
}

void ClusterSnapshot::Hold(const GangRequest& request, const ResourceVector& per_pod,
                           const std::vector<int>& rank_nodes, const DomainId& domain) {
  Reservation reservation;
  reservation.request = request;
  reservation.request.excluded_nodes.clear();  // held for this placement only
  reservation.request.count = static_cast<int32_t>(rank_nodes.size());
  reservation.per_pod = per_pod;
  reservation.domain = domain;
  for (int node : rank_nodes) {
    reservation.ranks.push_back({node, ""});
    ChangeUsage(node, per_pod, +1);
  }
  reservations_[request.job] = std::move(reservation);
}

absl::StatusOr<PlacementResult> ClusterSnapshot::Reserve(const GangRequest& request) {
  ASSIGN_OR_RETURN(GangShape shape, ValidateGang(request, *this));
  if (reservations_.count(request.job) > 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("request.job (", Quote(request.job), ") already holds a reservation"));
  }
  std::vector<int> rank_nodes;
  PlacementResult result = Search(*this, request, shape, rank_nodes);
  if (result.placed) Hold(request, shape.per_pod, rank_nodes, result.placement.domain);
  return result;
}

absl::StatusOr<PlacementResult> ClusterSnapshot::Restore(const GangRequest& request,
                                                         const Placement& placement) {
  ASSIGN_OR_RETURN(GangShape shape, ValidateGang(request, *this));
  if (reservations_.count(request.job) > 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("request.job (", Quote(request.job), ") already holds a reservation"));
  }
  const int32_t count = static_cast<int32_t>(placement.nodes.size());
  if (count < shape.min_count || count > shape.max_count) {
    return absl::InvalidArgumentError(absl::StrCat("placement.nodes has ", count,
                                                   " ranks; the request allows ", shape.min_count,
                                                   "..", shape.max_count));
  }
  std::vector<int> rank_nodes;
  std::unordered_map<int, int64_t> pods_per_node;
  for (size_t rank = 0; rank < placement.nodes.size(); ++rank) {
    int node = FindNode(placement.nodes[rank]);
    if (node < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "placement.nodes[", rank, "] (", Quote(placement.nodes[rank]), ") is not a known node"));
    }
    rank_nodes.push_back(node);
    ++pods_per_node[node];
  }
  for (const auto& [node, pods] : pods_per_node) {
    for (int r : shape.resources) {
      if (nodes_[node].used[r] + pods * shape.per_pod[r] > nodes_[node].allocatable[r]) {
        return absl::FailedPreconditionError(
            absl::StrCat("node ", Quote(nodes_[node].info.name), " has no room for ",
                         CountedNoun(pods, "pod"), " of ", request.job, " (",
                         resources_.Name(r), ")"));
      }
    }
  }
  DomainId domain = LowestCommonDomain(rank_nodes);
  Hold(request, shape.per_pod, rank_nodes, domain);
  PlacementResult result;
  result.placed = true;
  result.placement = {request.job, domain, placement.nodes};
  return result;
}

void ClusterSnapshot::FreeSlot(const Reservation& reservation, const ReservedRank& rank) {
  if (rank.pod.empty()) {
    ChangeUsage(rank.node, reservation.per_pod, -1);
  } else if (auto pod = pods_.find(rank.pod); pod != pods_.end()) {
    // The pod took the slot, so the node was charged its requests: its owner is deleting it,
    // and the room goes back now rather than when the pod is gone.
    pod->second.slot = -1;
    pod->second.released = true;
    ChangeUsage(rank.node, pod->second.requests, -1);
  }
}

void ClusterSnapshot::ReleaseRanks(Reservation& reservation, size_t from) {
  for (size_t r = from; r < reservation.ranks.size(); ++r) {
    FreeSlot(reservation, reservation.ranks[r]);
  }
  reservation.ranks.resize(from);
}

absl::Status ClusterSnapshot::Release(std::string_view job) {
  if (job.empty()) return absl::InvalidArgumentError("job is empty");
  auto it = reservations_.find(absl::string_view(job.data(), job.size()));
  if (it == reservations_.end()) {
    return absl::NotFoundError(absl::StrCat("job ", Quote(job), " holds no reservation"));
  }
  ReleaseRanks(it->second, 0);
  reservations_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<PlacementResult> ClusterSnapshot::Resize(std::string_view job, int32_t new_count) {
  // The arguments first: a request that is wrong in itself says so whatever the job's state.
  if (job.empty()) return absl::InvalidArgumentError("job is empty");
  if (new_count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("new_count (", new_count, ") must be at least 1"));
  }
  auto it = reservations_.find(absl::string_view(job.data(), job.size()));
  if (it == reservations_.end()) {
    return absl::NotFoundError(absl::StrCat("job ", Quote(job), " holds no reservation"));
  }
  Reservation& reservation = it->second;
  const GangRequest& request = reservation.request;
  if (request.group_size > 0 && new_count % request.group_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("request.group_size (", request.group_size,
                                                   ") does not divide new_count (", new_count,
                                                   ")"));
  }
  // Growing past request.elastic.max is allowed: the range given to Reserve bounds the first
  // placement (admission passes the quota-limited count as max), and admission grows a running
  // gang toward the job's own maximum as quota frees. Shrinking stays above the minimum.
  if (request.elastic.has_value() && new_count < request.elastic->min) {
    return absl::InvalidArgumentError(absl::StrCat("new_count (", new_count,
                                                   ") is below request.elastic.min (",
                                                   request.elastic->min, ")"));
  }
  const size_t current = reservation.ranks.size();
  std::vector<int> rank_nodes;
  for (const ReservedRank& rank : reservation.ranks) rank_nodes.push_back(rank.node);
  PlacementResult result;
  if (static_cast<size_t>(new_count) > current) {
    GangRequest grow = request;
    grow.elastic.reset();
    grow.count = new_count - static_cast<int32_t>(current);
    if (grow.max_pods_per_node > 0) {
      // One rank per node (a pod anti-affinity): the new ranks keep off the gang's nodes.
      for (int node : rank_nodes) grow.excluded_nodes.push_back(nodes_[node].info.name);
    }
    ASSIGN_OR_RETURN(GangShape shape, ValidateGang(grow, *this));
    GangSearch search(*this, shape);
    search.Run(grow.count);
    std::vector<int> anchors = rank_nodes;
    std::sort(anchors.begin(), anchors.end());
    anchors.erase(std::unique(anchors.begin(), anchors.end()), anchors.end());
    std::optional<GangSearch::Choice> choice = search.TightestNear(anchors, grow.count);
    if (!choice.has_value()) {
      search.Run(0);
      result.explanation = search.Explain(grow.count);
      result.explanation.summary =
          absl::StrCat("cannot grow ", request.job, " from ", current, " to ", new_count,
                       " pods next to its ranks: ", result.explanation.summary);
      return result;
    }
    for (int node : search.Allocate(*choice, grow.count)) {
      reservation.ranks.push_back({node, ""});
      ChangeUsage(node, reservation.per_pod, +1);
      rank_nodes.push_back(node);
    }
  } else {
    ReleaseRanks(reservation, static_cast<size_t>(new_count));
    rank_nodes.resize(static_cast<size_t>(new_count));
  }
  reservation.request.count = new_count;
  if (reservation.request.elastic.has_value()) {
    reservation.request.elastic->max = std::max(reservation.request.elastic->max, new_count);
  }
  reservation.domain = LowestCommonDomain(rank_nodes);
  result.placed = true;
  result.placement = {std::string(job), reservation.domain, NodeNames(*this, rank_nodes)};
  return result;
}

absl::StatusOr<PlacementResult> ClusterSnapshot::ReplaceNodes(
    std::string_view job, const std::vector<std::string>& nodes) {
  if (job.empty()) return absl::InvalidArgumentError("job is empty");
  if (nodes.empty()) return absl::InvalidArgumentError("nodes is empty: name the failed nodes");
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("nodes[", i, "] is empty"));
    }
  }
  auto it = reservations_.find(absl::string_view(job.data(), job.size()));
  if (it == reservations_.end()) {
    return absl::NotFoundError(absl::StrCat("job ", Quote(job), " holds no reservation"));
  }
  Reservation& reservation = it->second;
  ReplacementPlan plan = PlanNodeReplacement(*this, reservation, nodes);
  PlacementResult result;
  if (!plan.feasible) {
    result.explanation = std::move(plan.explanation);
    return result;
  }
  for (const auto& [rank, node] : plan.moves) {
    ReservedRank& slot = reservation.ranks[rank];
    FreeSlot(reservation, slot);
    slot = {node, ""};
    ChangeUsage(node, reservation.per_pod, +1);
  }
  std::vector<int> rank_nodes;
  for (const ReservedRank& rank : reservation.ranks) rank_nodes.push_back(rank.node);
  reservation.domain = LowestCommonDomain(rank_nodes);
  result.placed = true;
  result.placement = {std::string(job), reservation.domain, NodeNames(*this, rank_nodes)};
  return result;
}

absl::StatusOr<PreemptionPlan> ClusterSnapshot::PlanPreemption(
    const GangRequest& request, const std::vector<RunningGang>& candidates) const {
  return PlanGangPreemption(*this, request, candidates);
}

ResourceVector ClusterSnapshot::RankUsage(const Reservation& reservation, size_t rank) const {
  const ReservedRank& slot = reservation.ranks[rank];
  if (slot.pod.empty()) return reservation.per_pod;
  auto pod = pods_.find(slot.pod);
  return pod == pods_.end() ? reservation.per_pod : pod->second.requests;
}

int ClusterSnapshot::FindNode(std::string_view name) const {
  auto it = node_index_.find(std::string(name));
  if (it == node_index_.end() || nodes_[it->second].removed) return -1;
  return it->second;
}

const ClusterSnapshot::Reservation* ClusterSnapshot::FindReservation(std::string_view job) const {
  auto it = reservations_.find(absl::string_view(job.data(), job.size()));
  return it == reservations_.end() ? nullptr : &it->second;
}

std::vector<std::string> ClusterSnapshot::ReservedJobs() const {
  std::vector<std::string> jobs;
  for (const auto& [job, reservation] : reservations_) jobs.push_back(job);
  std::sort(jobs.begin(), jobs.end());
  return jobs;
}

std::vector<std::pair<int, ResourceVector>> ClusterSnapshot::DroppedRankPods(
    std::string_view job) const {
  std::vector<std::pair<int, ResourceVector>> out;
  const Reservation* reservation = FindReservation(job);
  if (reservation == nullptr) return out;
  const auto size = static_cast<int32_t>(reservation->ranks.size());
  for (const auto& [key, pod] : pods_) {
    if (pod.slot < 0 && !pod.released && pod.rank >= size && pod.job == job) {
      out.emplace_back(pod.node, pod.requests);
    }
  }
  return out;
}

std::optional<ResourceList> ClusterSnapshot::NodeFree(std::string_view name) const {
  int index = FindNode(name);
  if (index < 0) return std::nullopt;
  const Node& node = nodes_[index];
  ResourceList free;
  for (int r = 0; r < resources_.size(); ++r) {
    if (node.allocatable[r] == 0 && node.used[r] == 0) continue;
    free[resources_.Name(r)] = std::max<int64_t>(0, node.allocatable[r] - node.used[r]);
  }
  return free;
}

struct ClusterSnapshot::ShapeCaches::Entry {
  ShapeCache cache;
  uint64_t last_use = 0;
};

ClusterSnapshot::ShapeCaches::ShapeCaches() = default;
ClusterSnapshot::ShapeCaches::ShapeCaches(const ShapeCaches&) {}
ClusterSnapshot::ShapeCaches::ShapeCaches(ShapeCaches&&) noexcept = default;
ClusterSnapshot::ShapeCaches& ClusterSnapshot::ShapeCaches::operator=(const ShapeCaches& other) {
  if (this != &other) entries_.clear();
  return *this;
}
ClusterSnapshot::ShapeCaches& ClusterSnapshot::ShapeCaches::operator=(ShapeCaches&&) noexcept =
    default;
ClusterSnapshot::ShapeCaches::~ShapeCaches() = default;

ShapeCache& ClusterSnapshot::ShapeCaches::Get(const std::string& key) {
  // Enough for the shapes of one admission cycle (per-pod GPUs x required level x flavor
  // selector); past that the least recently used goes, so a stream of one-off shapes costs a
  // cold search each instead of unbounded memory (each cache is ~17 bytes per node plus ~230
  // per domain: ~21 MB for 64 shapes on 10,000 nodes). Evicting the least recently used also
  // means a live search's cache is never the one evicted while fewer than 63 others are alive.
  constexpr size_t kMaxShapes = 64;
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxShapes) {
      auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                     [](const auto& a, const auto& b) {
                                       return a.second->last_use < b.second->last_use;
                                     });
      entries_.erase(oldest);
    }
    it = entries_.emplace(key, std::make_unique<Entry>()).first;
  }
  it->second->last_use = ++uses_;
  return it->second->cache;
}

int32_t ClusterSnapshot::MaxFitEmpty(const std::string& key,
                                     const std::function<int32_t()>& compute) const {
  if (max_fit_empty_generation_ != nodes_generation_) {
    max_fit_empty_.clear();
    max_fit_empty_generation_ = nodes_generation_;
  }
  if (auto hit = max_fit_empty_.find(key); hit != max_fit_empty_.end()) return hit->second;
  if (max_fit_empty_.size() >= 4096) max_fit_empty_.clear();  // bounded against distinct shapes
  const int32_t value = compute();
  max_fit_empty_.emplace(key, value);
  return value;
}

ShapeCache& ClusterSnapshot::CacheFor(const std::string& key) const {
  return shape_caches_.Get(key);
}

DomainId ClusterSnapshot::DomainIdOf(int domain) const {
  DomainId id;
  id.level = topology_.LevelLabel(domains_[domain].level);
  for (int d = domain; d > 0; d = domains_[d].parent) id.path.push_back(domains_[d].value);
  std::reverse(id.path.begin(), id.path.end());
  return id;
}

DomainId ClusterSnapshot::NodeDomainId(int node) const {
  DomainId id = DomainIdOf(nodes_[node].domain);
  id.level = std::string(kHostnameLabel);
  id.path.push_back(nodes_[node].info.name);
  return id;
}

int ClusterSnapshot::AncestorAt(int domain, int level) const {
  while (domains_[domain].level > level) domain = domains_[domain].parent;
  return domain;
}

DomainId ClusterSnapshot::LowestCommonDomain(const std::vector<int>& nodes) const {
  if (nodes.empty()) return DomainIdOf(0);
  if (std::all_of(nodes.begin(), nodes.end(), [&](int n) { return n == nodes[0]; })) {
    return NodeDomainId(nodes[0]);
  }
  int common = nodes_[nodes[0]].domain;
  for (int node : nodes) {
    int other = nodes_[node].domain;
    while (common != other) {
      int lc = domains_[common].level;
      int lo = domains_[other].level;
      if (lc >= lo) common = domains_[common].parent;
      if (lo >= lc) other = domains_[other].parent;
    }
  }
  return DomainIdOf(common);
}

absl::Status ClusterSnapshot::CheckConsistency() const {
  const int n = resources_.size();
  std::vector<ResourceVector> used(nodes_.size());
  for (const auto& [key, pod] : pods_) {
    if (pod.released) {
      if (pod.slot >= 0) {
        return absl::InternalError(absl::StrCat("released pod ", key, " holds a slot"));
      }
      continue;
    }
    used[pod.node].Add(pod.requests, n);
    if (pod.slot < 0) continue;
    const Reservation* reservation = FindReservation(pod.job);
    if (reservation == nullptr || pod.slot >= static_cast<int32_t>(reservation->ranks.size()) ||
        reservation->ranks[pod.slot].pod != key) {
      return absl::InternalError(absl::StrCat("pod ", key, " claims a slot it does not hold"));
    }
  }
  for (const auto& [job, reservation] : reservations_) {
    for (size_t r = 0; r < reservation.ranks.size(); ++r) {
      const ReservedRank& rank = reservation.ranks[r];
      if (rank.pod.empty()) {
        used[rank.node].Add(reservation.per_pod, n);
        continue;
      }
      auto pod = pods_.find(rank.pod);
      if (pod == pods_.end() || pod->second.slot != static_cast<int32_t>(r) ||
          pod->second.node != rank.node) {
        return absl::InternalError(absl::StrCat(job, " rank ", r, " names pod ", rank.pod,
                                                " which does not hold it"));
      }
    }
  }
  // The label index holds exactly the live nodes under each of their labels, in order.
  size_t indexed = 0;
  for (const auto& [key, values] : label_index_) {
    for (const auto& [value, list] : values) {
      indexed += list.size();
      if (!std::is_sorted(list.begin(), list.end()) ||
          std::adjacent_find(list.begin(), list.end()) != list.end()) {
        return absl::InternalError(absl::StrCat("label index of ", key, "=", value,
                                                " is out of order"));
      }
      for (int node : list) {
        auto label = nodes_[node].info.labels.find(key);
        if (nodes_[node].removed || label == nodes_[node].info.labels.end() ||
            label->second != value) {
          return absl::InternalError(absl::StrCat("label index of ", key, "=", value,
                                                  " holds node ", nodes_[node].info.name));
        }
      }
    }
  }
  size_t live_labels = 0;
  for (const Node& node : nodes_) {
    if (!node.removed) live_labels += node.info.labels.size();
  }
  if (indexed != live_labels) {
    return absl::InternalError(absl::StrCat("label index holds ", indexed, " entries, live nodes ",
                                            "carry ", live_labels, " labels"));
  }
  std::vector<Domain> fresh(domains_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    if (!(used[i] == node.used)) {
      return absl::InternalError(absl::StrCat("node ", node.info.name, " usage drifted"));
    }
    if (node.removed) continue;
    const std::vector<int>& members = domains_[node.domain].nodes;
    if (std::count(members.begin(), members.end(), static_cast<int>(i)) != 1) {
      return absl::InternalError(absl::StrCat("node ", node.info.name, " is not in its domain"));
    }
    if (node.condition != NodeCondition::kSchedulable) continue;
    int64_t gpus = std::max<int64_t>(0, node.allocatable[kGpuIndex] - node.used[kGpuIndex]);
    int bucket = static_cast<int>(std::min<int64_t>(gpus, kGpuBuckets - 1));
    for (int d = node.domain; d >= 0; d = domains_[d].parent) {
      for (int r = 0; r < n; ++r) {
        fresh[d].free[r] += std::max<int64_t>(0, node.allocatable[r] - node.used[r]);
      }
      ++fresh[d].gpu_histogram[bucket];
      if (bucket == kGpuBuckets - 1) fresh[d].gpu_overflow += gpus;
      ++fresh[d].schedulable_nodes;
    }
  }
  for (size_t d = 0; d < domains_.size(); ++d) {
    const Domain& a = domains_[d];
    const Domain& b = fresh[d];
    if (!(a.free == b.free) || a.gpu_histogram != b.gpu_histogram ||
        a.gpu_overflow != b.gpu_overflow || a.schedulable_nodes != b.schedulable_nodes) {
      return absl::InternalError(absl::StrCat("aggregates of ", DomainIdOf(static_cast<int>(d))
                                                                    .ToString(),
                                              " drifted from a recomputation"));
    }
    if (!std::is_sorted(a.children.begin(), a.children.end(), [&](int x, int y) {
          return domains_[x].value < domains_[y].value;
        })) {
      return absl::InternalError("domain children are out of order");
    }
  }
  return absl::OkStatus();
}

}  // namespace phalanx::placement
