#include "scheduler/gang_search.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counted_noun.h"
#include "common/status.h"
#include "scheduler/node_affinity.h"

namespace phalanx::placement {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

bool IsHardTaint(const Taint& taint) {
  return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
}

absl::Status LevelError(std::string_view field, const std::string& value,
                        const Topology& topology) {
  return absl::InvalidArgumentError(absl::StrCat(
      absl::string_view(field.data(), field.size()), " (\"", value,
      "\") is not a level of the topology; levels: ",
      absl::StrJoin(topology.levels(), ", "), ", ", std::string(kHostnameLabel)));
}

// Resolves an optional level field to its index (0 when empty).
absl::StatusOr<int> ResolveLevel(std::string_view field, const std::string& value,
                                 const Topology& topology) {
  std::optional<int> index = topology.LevelIndex(value);
  if (!index.has_value()) return LevelError(field, value, topology);
  return *index;
}

// Chooses how many pods each entry takes so that the amounts sum to `need`:
//  - if one entry holds everything, the best fit (smallest capacity that holds it);
//  - otherwise the fewest entries possible, and among those the fullest ones (smallest
//    capacities), each taken whole except the last, so that large free entries stay whole.
// Equal capacities go to the entry with fewer free GPUs (`gpus`), then to topology order.
// Returns (entry position, amount) pairs. Requires sum(capacities) >= need.
std::vector<std::pair<size_t, int64_t>> SelectAmounts(const std::vector<int64_t>& capacities,
                                                      const std::vector<int64_t>& gpus,
                                                      int64_t need) {
  std::vector<size_t> pool(capacities.size());
  std::iota(pool.begin(), pool.end(), 0);
  std::stable_sort(pool.begin(), pool.end(), [&](size_t a, size_t b) {
    return capacities[a] != capacities[b] ? capacities[a] < capacities[b] : gpus[a] < gpus[b];
  });
  std::vector<std::pair<size_t, int64_t>> picks;
  while (need > 0 && !pool.empty()) {
    // The smallest entry that holds the rest on its own ends the selection.
    auto holds = std::find_if(pool.begin(), pool.end(),
                              [&](size_t i) { return capacities[i] >= need; });
    if (holds != pool.end()) {
      picks.emplace_back(*holds, need);
      break;
    }
    // m = the fewest entries (largest first) that cover the rest; suffix[j] = sum of pool[j..].
    const size_t n = pool.size();
    std::vector<int64_t> suffix(n + 1, 0);
    for (size_t j = n; j-- > 0;) suffix[j] = suffix[j + 1] + capacities[pool[j]];
    size_t m = 1;
    while (m < n && suffix[n - m] < need) ++m;
    // Take whole the smallest entry that still lets the m-1 largest others cover the rest.
    auto largest_others = [&](size_t skip, size_t count) {
      if (skip < n - count) return suffix[n - count];
      return suffix[n - count - 1] - capacities[pool[skip]];
    };
    size_t chosen = n - 1;
    for (size_t j = 0; j < n; ++j) {
      if (capacities[pool[j]] + largest_others(j, m - 1) >= need) {
        chosen = j;
        break;
      }
    }
    picks.emplace_back(pool[chosen], capacities[pool[chosen]]);
    need -= capacities[pool[chosen]];
    pool.erase(pool.begin() + static_cast<long>(chosen));
  }
  return picks;
}

}  // namespace

absl::StatusOr<GangShape> ValidateGang(const GangRequest& request,
                                       const ClusterSnapshot& snapshot) {
  const Topology& topology = snapshot.topology();
  GangShape shape;
  if (request.job.empty()) return absl::InvalidArgumentError("request.job is empty");
  if (request.elastic.has_value()) {
    const ElasticRange& e = *request.elastic;
    if (e.min < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("request.elastic.min (", e.min, ") must be at least 1"));
    }
    if (e.min > e.max) {
      return absl::InvalidArgumentError(absl::StrCat("request.elastic.min (", e.min,
                                                     ") > request.elastic.max (", e.max, ")"));
    }
    if (e.step < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("request.elastic.step (", e.step, ") must be at least 1"));
    }
    shape.min_count = e.min;
    shape.max_count = e.max;
    shape.step = e.step;
  } else {
    if (request.count < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("request.count (", request.count, ") must be at least 1"));
    }
    shape.min_count = shape.max_count = request.count;
  }

  ASSIGN_OR_RETURN(shape.required_level,
                   ResolveLevel("request.required_level", request.required_level, topology));
  ASSIGN_OR_RETURN(shape.preferred_level,
                   ResolveLevel("request.preferred_level", request.preferred_level, topology));
  if (shape.preferred_level != 0 && shape.preferred_level < shape.required_level) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request.preferred_level (", request.preferred_level,
        ") is coarser than request.required_level (", request.required_level, ")"));
  }

  if (request.group_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("request.group_size (", request.group_size, ") must not be negative"));
  }
  if (request.group_size == 0 && !request.group_level.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("request.group_level (", request.group_level,
                                                   ") is set but request.group_size is 0"));
  }
  if (request.group_size > 0) {
    if (request.group_level.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request.group_size (", request.group_size, ") needs request.group_level"));
    }
    ASSIGN_OR_RETURN(shape.group_level,
                     ResolveLevel("request.group_level", request.group_level, topology));
    if (shape.group_level == 0) {
      return absl::InvalidArgumentError("request.group_level must name a topology level");
    }
    shape.group_size = request.group_size;
    auto check_divides = [&](std::string_view field, int32_t value) -> absl::Status {
      if (value % shape.group_size == 0) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat("request.group_size (", shape.group_size, ") does not divide ",
                       absl::string_view(field.data(), field.size()), " (", value, ")"));
    };
    if (request.elastic.has_value()) {
      RETURN_IF_ERROR(check_divides("request.elastic.min", shape.min_count));
      RETURN_IF_ERROR(check_divides("request.elastic.step", shape.step));
    } else {
      RETURN_IF_ERROR(check_divides("request.count", shape.min_count));
    }
  }
  RETURN_IF_ERROR(ValidateNodeAffinity(request.node_affinity, "request.node_affinity"));
  if (request.max_pods_per_node < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "request.max_pods_per_node must not be negative, got ", request.max_pods_per_node));
  }
  shape.max_per_node = request.max_pods_per_node;

  bool pods_given = false;
  for (const auto& [name, amount] : request.per_pod) {
    if (amount < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("request.per_pod[", name, "] must not be negative, got ", amount));
    }
    if (name.empty()) return absl::InvalidArgumentError("request.per_pod has an empty name");
    if (amount > 0) shape.per_pod_list[name] = amount;
    int index = snapshot.resources().Find(name);
    if (index < 0) {
      if (amount > 0 && shape.missing_resource.empty()) shape.missing_resource = name;
      continue;
    }
    shape.per_pod[index] = amount;
    if (index == kPodsIndex) pods_given = true;
  }
  // Every pod takes one `pods` unit, as kube-scheduler counts it.
  if (!pods_given || shape.per_pod[kPodsIndex] < 1) shape.per_pod[kPodsIndex] = 1;
  if (shape.per_pod[kGpuIndex] > 0) shape.resources.push_back(kGpuIndex);
  for (int i = 0; i < snapshot.resources().size(); ++i) {
    if (i != kGpuIndex && shape.per_pod[i] > 0) shape.resources.push_back(i);
  }

  int depth = topology.depth();
  shape.min_node_depth = shape.required_level <= depth ? shape.required_level : 0;
  if (shape.group_size > 0 && shape.group_level <= depth) {
    shape.min_node_depth = std::max(shape.min_node_depth, shape.group_level);
  }
  shape.node_selector.assign(request.node_selector.begin(), request.node_selector.end());
  shape.node_affinity = request.node_affinity;
  shape.tolerations = request.tolerations;
  for (const std::string& name : request.excluded_nodes) {
    if (int node = snapshot.FindNode(name); node >= 0) shape.excluded.push_back(node);
  }
  std::sort(shape.excluded.begin(), shape.excluded.end());
  shape.excluded.erase(std::unique(shape.excluded.begin(), shape.excluded.end()),
                       shape.excluded.end());
  return shape;
}

int32_t LargestCount(const GangShape& shape, int64_t limit) {
  if (limit < shape.min_count) return 0;
  int64_t top = std::min<int64_t>(shape.max_count, limit);
  return static_cast<int32_t>(shape.min_count + (top - shape.min_count) / shape.step * shape.step);
}

bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint) {
  for (const Toleration& t : tolerations) {
    if (!t.effect.empty() && t.effect != taint.effect) continue;
    if (t.op == "Exists") {
      if (t.key.empty() || t.key == taint.key) return true;
    } else if (t.key == taint.key && t.value == taint.value) {
      return true;
    }
  }
  return false;
}

std::string ShapeCacheKey(const GangShape& shape) {
  std::string key;
  auto add = [&key](std::string_view part) {
    key.append(part.data(), part.size());
    key.push_back('\0');
  };
  for (int r : shape.resources) add(absl::StrCat(r, "=", shape.per_pod[r]));
  add(absl::StrCat(shape.min_node_depth, "/", shape.group_size, "@", shape.group_level, "/",
                   shape.max_per_node));
  add(shape.missing_resource);
  for (const auto& [k, v] : shape.node_selector) {
    add(k);
    add(v);
  }
  std::string affinity;
  AppendAffinityKey(shape.node_affinity, &affinity);
  add(affinity);
  add("tolerations");
  for (const Toleration& t : shape.tolerations) {
    for (const std::string* part : {&t.key, &t.op, &t.value, &t.effect}) add(*part);
  }
  if (!shape.excluded.empty()) add(absl::StrCat("excluded:", absl::StrJoin(shape.excluded, ",")));
  return key;
}

GangSearch::GangSearch(const ClusterSnapshot& snapshot, const GangShape& shape, int root,
                       const FreeOverlay* overlay, Scratch* scratch, bool as_if_empty)
    : snapshot_(snapshot),
      shape_(shape),
      root_(root),
      overlay_(overlay),
      as_if_empty_(as_if_empty),
      scratch_(scratch != nullptr ? scratch : &own_scratch_),
      selector_(snapshot.MatchSelector(shape.node_selector, shape.node_affinity)),
      visited_(snapshot.topology().depth() + 1) {
  const int64_t per = shape.per_pod[kGpuIndex];
  for (int k = 0; k < kGpuBuckets; ++k) pods_per_bucket_[k] = per > 0 ? k / per : 0;
  if (overlay == nullptr && !as_if_empty && scratch == nullptr && root == 0) {
    cache_ = &snapshot.CacheFor(ShapeCacheKey(shape));
    return;
  }
  const size_t nodes = snapshot.nodes().size();
  const size_t domains = snapshot.domains().size();
  if (scratch_->slots.size() < nodes) {
    scratch_->slots.resize(nodes);
    scratch_->slots_epoch.resize(nodes, 0);
  }
  if (scratch_->capacity.size() < domains) {
    scratch_->capacity.resize(domains);
    scratch_->capacity_epoch.resize(domains, 0);
  }
}

void GangSearch::Run(int64_t prune_below) {
  if (cache_ != nullptr) {
    // Exact results are cheap to keep, so the cache never prunes: every domain's capacity is
    // exact, which gives the same choices as a pruned search (a pruned domain cannot hold the
    // gang either way).
    ShapeCache& c = *cache_;
    const int levels = snapshot_.topology().node_level() + 1;
    if (c.labels_generation != snapshot_.labels_generation() || c.levels != levels) {
      c = ShapeCache{};  // node labels moved: selector matches may have changed anywhere
      c.labels_generation = snapshot_.labels_generation();
      c.levels = levels;
    }
    const size_t nodes = snapshot_.nodes().size();
    const size_t domains = snapshot_.domains().size();
    if (c.node_seen.size() < nodes) {
      c.node_seen.resize(nodes, 0);  // versions start at 1: a new node is always recomputed
      c.slots.resize(nodes, 0);
      c.reason.resize(nodes, kRejectNone);
    }
    if (c.domain_seen.size() < domains) {
      // A new domain with version 0 has never held a node: its zeros are right.
      c.domain_seen.resize(domains, 0);
      c.capacity.resize(domains, 0);
      c.best.resize(domains * static_cast<size_t>(levels), 0);
      c.reasons.resize(domains * static_cast<size_t>(kRejectCodes), 0);
    }
    Refresh(0);
    return;
  }
  ++scratch_->epoch;  // forget every earlier result
  for (auto& level : visited_) level.clear();
  visited_nodes_.clear();
  Visit(root_, prune_below);
}

int GangSearch::CeilingLevel() const {
  return std::max(shape_.required_level, snapshot_.domains()[root_].level);
}

int64_t GangSearch::UpperBound(int domain) const {
  const ClusterSnapshot::Domain& d = snapshot_.domains()[domain];
  if (d.schedulable_nodes == 0 || !shape_.missing_resource.empty()) return 0;
  int64_t bound = kUnbounded;
  for (int r : shape_.resources) {
    int64_t per = shape_.per_pod[r];
    if (r == kGpuIndex) {
      // Pods cannot straddle nodes, so the histogram bounds far tighter than the GPU sum.
      int64_t pods = d.gpu_overflow / per;
      for (int k = static_cast<int>(per); k < kGpuBuckets - 1; ++k) {
        pods += d.gpu_histogram[k] * pods_per_bucket_[k];
      }
      bound = std::min(bound, pods);
    } else {
      bound = std::min(bound, d.free[r] / per);
    }
  }
  return bound;
}

int64_t GangSearch::Visit(int domain, int64_t prune_below) {
  const ClusterSnapshot::Domain& d = snapshot_.domains()[domain];
  if (overlay_ == nullptr && !as_if_empty_) {
    // No node of the subtree matches the selector: nothing to compute below.
    if (!Selected(domain, false)) return 0;
    int64_t bound = UpperBound(domain);
    if (bound == 0) return 0;
    // A domain at or above the required level that cannot hold the gang holds no candidate.
    if (d.level <= shape_.required_level && bound < prune_below) return 0;
  }
  visited_[d.level].push_back(domain);
  int64_t sum = 0;
  for (int child : d.children) sum += Visit(child, prune_below);
  for (int node : d.nodes) {
    int64_t slots = ComputeSlots(node);
    scratch_->slots[node] = slots;
    scratch_->slots_epoch[node] = scratch_->epoch;
    if (slots > 0) {
      visited_nodes_.push_back(node);
      sum += NodeCapacity(node);
    }
  }
  if (shape_.group_size > 0 && shape_.group_level == d.level) sum -= sum % shape_.group_size;
  scratch_->capacity[domain] = sum;
  scratch_->capacity_epoch[domain] = scratch_->epoch;
  return sum;
}

void GangSearch::Refresh(int domain) {
  ShapeCache& c = *cache_;
  const ClusterSnapshot::Domain& d = snapshot_.domains()[domain];
  if (c.domain_seen[domain] == d.version) return;
  const int levels = c.levels;
  const int node_level = levels - 1;
  int64_t* best = &c.best[static_cast<size_t>(domain) * levels];
  int32_t* reasons = &c.reasons[static_cast<size_t>(domain) * kRejectCodes];
  std::fill(best, best + levels, 0);
  std::fill(reasons, reasons + kRejectCodes, 0);
  int64_t sum = 0;
  for (int child : d.children) {
    Refresh(child);
    sum += c.capacity[child];
    const int64_t* child_best = &c.best[static_cast<size_t>(child) * levels];
    for (int l = d.level + 1; l < levels; ++l) best[l] = std::max(best[l], child_best[l]);
    const int32_t* child_reasons = &c.reasons[static_cast<size_t>(child) * kRejectCodes];
    for (int k = 0; k < kRejectCodes; ++k) reasons[k] += child_reasons[k];
  }
  for (int node : d.nodes) {
    const uint64_t version = snapshot_.nodes()[node].version;
    if (c.node_seen[node] != version) {
      c.slots[node] = ComputeSlots(node);
      // A node holding a pod passes every check RejectReason makes.
      c.reason[node] = static_cast<uint8_t>(c.slots[node] > 0 ? kRejectNone : RejectReason(node));
      c.node_seen[node] = version;
    }
    const int64_t capacity = NodeCapacity(node);
    sum += capacity;
    best[node_level] = std::max(best[node_level], capacity);
    ++reasons[c.reason[node]];
  }
  if (shape_.group_size > 0 && shape_.group_level == d.level) sum -= sum % shape_.group_size;
  c.capacity[domain] = sum;
  best[d.level] = sum;
  c.domain_seen[domain] = d.version;
}

int64_t GangSearch::NodeGroupRound(int64_t slots) const {
  if (shape_.group_size > 0 && shape_.group_level == snapshot_.topology().node_level()) {
    slots -= slots % shape_.group_size;
  }
  return slots;
}

int64_t GangSearch::NodeCapacity(int node) const { return NodeGroupRound(Slots(node)); }

int64_t GangSearch::CapacityWith(const Choice& target, const FreeOverlay& overlay) const {
  if (target.is_node) {
    auto extra = overlay.find(target.index);
    return extra == overlay.end()
               ? NodeCapacity(target.index)
               : NodeGroupRound(ComputeSlots(target.index, &extra->second));
  }
  return CapacityWith(target.index, DirtyDomains(target.index, overlay), overlay);
}

std::vector<uint8_t> GangSearch::DirtyDomains(int top, const FreeOverlay& overlay) const {
  // A mask, and each walk up stops at the first domain already marked: an overlay of most of
  // the cluster (preemption's "all of them gone") costs O(nodes), not O(nodes x depth x log).
  std::vector<uint8_t> dirty(snapshot_.domains().size(), 0);
  const int level = snapshot_.domains()[top].level;
  for (const auto& [node, extra] : overlay) {
    const ClusterSnapshot::Node& n = snapshot_.nodes()[node];
    if (n.removed || n.depth < level || snapshot_.AncestorAt(n.domain, level) != top) continue;
    for (int d = n.domain; d >= 0 && snapshot_.domains()[d].level >= level && !dirty[d];
         d = snapshot_.domains()[d].parent) {
      dirty[d] = 1;
    }
  }
  return dirty;
}

int64_t GangSearch::CapacityWith(int domain, const std::vector<uint8_t>& dirty,
                                 const FreeOverlay& overlay) const {
  if (!dirty[domain]) return Capacity(domain);
  const ClusterSnapshot::Domain& d = snapshot_.domains()[domain];
  int64_t sum = 0;
  for (int child : d.children) sum += CapacityWith(child, dirty, overlay);
  for (int node : d.nodes) {
    auto extra = overlay.find(node);
    sum += extra == overlay.end() ? NodeCapacity(node)
                                  : NodeGroupRound(ComputeSlots(node, &extra->second));
  }
  if (shape_.group_size > 0 && shape_.group_level == d.level) sum -= sum % shape_.group_size;
  return sum;
}

const ResourceVector* GangSearch::Extra(int node) const {
  if (as_if_empty_) return &snapshot_.nodes()[node].used;  // free = allocatable
  if (overlay_ == nullptr) return nullptr;
  auto it = overlay_->find(node);
  return it == overlay_->end() ? nullptr : &it->second;
}

int64_t GangSearch::ComputeSlots(int index, const ResourceVector* extra) const {
  const ClusterSnapshot::Node& node = snapshot_.nodes()[index];
  if (node.removed || node.condition != NodeCondition::kSchedulable) return 0;
  if (node.depth < shape_.min_node_depth || !shape_.missing_resource.empty()) return 0;
  if (node.hard_tainted) {
    for (const Taint& taint : node.info.taints) {
      if (IsHardTaint(taint) && !Tolerates(shape_.tolerations, taint)) return 0;
    }
  }
  if (!Selected(index, true)) return 0;
  if (IsExcluded(index)) return 0;
  // One division for the first (usually binding) resource; the others are checked with a
  // multiplication and divided only when they bind tighter.
  int64_t slots = kUnbounded;
  for (int r : shape_.resources) {
    int64_t free = node.allocatable[r] - node.used[r] + (extra ? (*extra)[r] : 0);
    int64_t per = shape_.per_pod[r];
    if (free < per) return 0;
    int64_t needed;
    if (slots == kUnbounded || __builtin_mul_overflow(slots, per, &needed) || free < needed) {
      slots = free / per;
    }
  }
  return shape_.max_per_node > 0 ? std::min(slots, shape_.max_per_node) : slots;
}

int GangSearch::RejectReason(int index, const ResourceVector* extra) const {
  const ClusterSnapshot::Node& node = snapshot_.nodes()[index];
  switch (node.condition) {
    case NodeCondition::kNotReady: return kRejectNotReady;
    case NodeCondition::kUnschedulable: return kRejectUnschedulable;
    case NodeCondition::kUnhealthy: return kRejectUnhealthy;
    case NodeCondition::kSchedulable: break;
  }
  if (node.hard_tainted) {
    for (const Taint& taint : node.info.taints) {
      if (IsHardTaint(taint) && !Tolerates(shape_.tolerations, taint)) return kRejectTainted;
    }
  }
  if (!Selected(index, true)) return kRejectSelector;
  if (node.depth < shape_.min_node_depth) return kRejectMissingLabel;
  if (!shape_.missing_resource.empty()) return kRejectMissingResource;
  if (IsExcluded(index)) return kRejectExcluded;
  // Too small even when empty (a 4-GPU node for an 8-GPU pod): no amount of waiting helps, so
  // it is told apart from a node that is busy now.
  for (int r : shape_.resources) {
    if (node.allocatable[r] < shape_.per_pod[r]) return kRejectTooSmall + r;
  }
  // A node that has at least one pod's worth of every resource holds a pod: not rejected.
  for (int r : shape_.resources) {
    if (node.allocatable[r] - node.used[r] + (extra ? (*extra)[r] : 0) < shape_.per_pod[r]) {
      return kRejectInsufficient + r;
    }
  }
  return kRejectNone;
}

std::string GangSearch::RejectName(int reason) const {
  switch (reason) {
    case kRejectNotReady: return "NotReady";
    case kRejectUnschedulable: return "Unschedulable";
    case kRejectUnhealthy: return "Unhealthy";
    case kRejectTainted: return "Tainted";
    case kRejectSelector: return "NodeSelectorMismatch";
    case kRejectMissingLabel: return "MissingTopologyLabel";
    case kRejectMissingResource: return "TooSmall " + shape_.missing_resource;  // no node has it
    case kRejectExcluded: return "ReservedForBackfill";
    default: break;
  }
  if (reason >= kRejectTooSmall) {
    return "TooSmall " + snapshot_.resources().Name(reason - kRejectTooSmall);
  }
  return "Insufficient " + snapshot_.resources().Name(reason - kRejectInsufficient);
}

int64_t GangSearch::MaxCount() const {
  int ceiling = CeilingLevel();
  if (cache_ != nullptr) return Best(0, ceiling);
  int64_t best = 0;
  if (ceiling == snapshot_.topology().node_level()) {
    for (int node : visited_nodes_) best = std::max(best, NodeCapacity(node));
  } else {
    for (int domain : visited_[ceiling]) best = std::max(best, Capacity(domain));
  }
  return best;
}

GangSearch::Sweep::Sweep(const GangSearch& search)
    : search_(search),
      snapshot_(search.snapshot_),
      ceiling_(search.CeilingLevel()),
      best_(search.MaxCount()) {}

int64_t GangSearch::Sweep::NodeValue(int node) const {
  auto it = node_capacity_.find(node);
  return it == node_capacity_.end() ? search_.NodeCapacity(node) : it->second;
}

int64_t GangSearch::Sweep::Round(int domain, int64_t sum) const {
  const GangShape& shape = search_.shape_;
  if (shape.group_size > 0 && shape.group_level == snapshot_.domains()[domain].level) {
    sum -= sum % shape.group_size;
  }
  return sum;
}

int64_t GangSearch::Sweep::DomainValue(int domain) const {
  auto it = sum_.find(domain);
  return it == sum_.end() ? search_.Capacity(domain) : Round(domain, it->second);
}

void GangSearch::Sweep::Free(int node, const ResourceVector& extra) {
  const ClusterSnapshot::Node& n = snapshot_.nodes()[node];
  if (n.removed) return;
  const std::vector<ClusterSnapshot::Domain>& domains = snapshot_.domains();
  // The domains above the node start from their capacities now, summed from their children
  // before anything changes (bottom-up; above the first one already tracked, all are).
  for (int d = n.domain; d >= 0 && !sum_.contains(d); d = domains[d].parent) {
    int64_t sum = 0;
    for (int child : domains[d].children) sum += DomainValue(child);
    for (int other : domains[d].nodes) sum += NodeValue(other);
    sum_.emplace(d, sum);
  }
  const int64_t before = NodeValue(node);
  ResourceVector& free = extra_[node];
  free.Add(extra, snapshot_.resources().size());
  const int64_t after = search_.NodeGroupRound(search_.ComputeSlots(node, &free));
  node_capacity_[node] = after;
  if (ceiling_ == snapshot_.topology().node_level()) best_ = std::max(best_, after);
  int64_t delta = after - before;
  for (int d = n.domain; d >= 0 && delta != 0; d = domains[d].parent) {
    int64_t& sum = sum_[d];
    const int64_t was = Round(d, sum);
    sum += delta;
    const int64_t now = Round(d, sum);
    if (domains[d].level == ceiling_) best_ = std::max(best_, now);
    delta = now - was;
  }
}

std::optional<GangSearch::Choice> GangSearch::Sweep::Tightest(
    int64_t count, const std::vector<int>& recent) const {
  const std::vector<ClusterSnapshot::Domain>& domains = snapshot_.domains();
  const std::vector<ClusterSnapshot::Node>& nodes = snapshot_.nodes();
  const int node_level = snapshot_.topology().node_level();
  // Visit's order: child domains by label value, then the domain's own nodes by name.
  using Path = std::vector<std::pair<int, std::string_view>>;
  auto path_of = [&](const Choice& c) {
    Path path;
    if (c.is_node) path.emplace_back(1, nodes[c.index].info.name);
    for (int d = c.is_node ? nodes[c.index].domain : c.index; d > 0; d = domains[d].parent) {
      path.emplace_back(0, domains[d].value);
    }
    std::reverse(path.begin(), path.end());
    return path;
  };
  std::vector<std::pair<Path, Choice>> candidates;
  for (int level = node_level; level >= ceiling_; --level) {
    candidates.clear();
    for (int node : recent) {
      const ClusterSnapshot::Node& n = nodes[node];
      if (n.removed || (level != node_level && n.depth < level)) continue;
      Choice c = level == node_level ? Choice{level, node, true}
                                     : Choice{level, snapshot_.AncestorAt(n.domain, level), false};
      if (std::none_of(candidates.begin(), candidates.end(),
                       [&](const auto& o) { return o.second.index == c.index; })) {
        candidates.emplace_back(path_of(c), c);
      }
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    // The search's own best-fit rule, with the sweep's capacities. No stop at an "exact fit":
    // free GPUs are the snapshot's, without what the sweep freed, so that floor does not hold.
    Pick pick;
    for (const auto& [path, c] : candidates) {
      const int64_t capacity = c.is_node ? NodeValue(c.index) : DomainValue(c.index);
      search_.Consider(c, capacity, count, pick);
    }
    if (pick.choice) return pick.choice;
  }
  return std::nullopt;
}

std::vector<int> GangSearch::Sweep::Allocate(const Choice& choice, int64_t count) const {
  if (choice.is_node) return std::vector<int>(static_cast<size_t>(count), choice.index);
  Scratch scratch;
  GangSearch within(snapshot_, search_.shape_, choice.index, &extra_, &scratch);
  within.Run(0);
  return within.Allocate(choice, count);
}

int64_t GangSearch::FreeGpus(const Choice& choice) const {
  if (!choice.is_node) return snapshot_.domains()[choice.index].free[kGpuIndex];
  const ClusterSnapshot::Node& node = snapshot_.nodes()[choice.index];
  return node.allocatable[kGpuIndex] - node.used[kGpuIndex];
}

std::optional<GangSearch::Choice> GangSearch::BestFit(const std::vector<Choice>& candidates,
                                                      int64_t count) const {
  Pick pick;
  for (const Choice& c : candidates) {
    Consider(c, c.is_node ? NodeCapacity(c.index) : Capacity(c.index), count, pick);
  }
  return pick.choice;
}

int GangSearch::Enclosing(const Choice& choice) const {
  return choice.is_node ? snapshot_.nodes()[choice.index].domain
                        : snapshot_.domains()[choice.index].parent;
}

bool GangSearch::InFullerDomains(const Choice& a, const Choice& b) const {
  const std::vector<ClusterSnapshot::Domain>& domains = snapshot_.domains();
  int x = Enclosing(a);
  int y = Enclosing(b);
  while (x != y && x >= 0 && y >= 0) {
    // A node without its finer labels hangs higher: compare domains of one level.
    if (domains[x].level > domains[y].level) {
      x = domains[x].parent;
      continue;
    }
    if (domains[y].level > domains[x].level) {
      y = domains[y].parent;
      continue;
    }
    const int64_t fx = domains[x].free[kGpuIndex];
    const int64_t fy = domains[y].free[kGpuIndex];
    if (fx != fy) return fx < fy;
    x = domains[x].parent;
    y = domains[y].parent;
  }
  return false;
}

bool GangSearch::Consider(const Choice& choice, int64_t capacity, int64_t count,
                          Pick& pick) const {
  if (capacity < count) return false;
  const int64_t gpus = FreeGpus(choice);
  if (pick.choice &&
      (capacity > pick.capacity ||
       (capacity == pick.capacity &&
        (gpus > pick.gpus || (gpus == pick.gpus && !InFullerDomains(choice, *pick.choice)))))) {
    return false;  // unchanged, and not unbeatable (the search would have stopped)
  }
  pick = {choice, capacity, gpus};
  return Unbeatable(pick, count);
}

bool GangSearch::AtFloor(const Pick& pick, int64_t count) const {
  // Holding `count` pods of a GPU shape needs at least count x per-pod GPUs free, so (count,
  // that) is the least any candidate can score. (Without GPUs there is no such floor: an
  // over-committed node reports negative free GPUs.)
  const int64_t per = shape_.per_pod[kGpuIndex];
  return per > 0 && pick.choice && pick.capacity == count && pick.gpus == count * per;
}

bool GangSearch::Unbeatable(const Pick& pick, int64_t count) const {
  // A later candidate at the floor wins only inside fuller domains, which it cannot find when
  // every domain enclosing the pick has nothing else free.
  if (!AtFloor(pick, count)) return false;
  for (int d = Enclosing(*pick.choice); d > 0; d = snapshot_.domains()[d].parent) {
    if (snapshot_.domains()[d].free[kGpuIndex] != pick.gpus) return false;
  }
  return true;
}

void GangSearch::CollectParents(int domain, int level, int64_t count, std::vector<int>& out) const {
  const ClusterSnapshot::Domain& d = snapshot_.domains()[domain];
  const bool node_level = level == snapshot_.topology().node_level();
  if (!node_level && d.level == level - 1) {
    out.push_back(domain);
    return;
  }
  for (int child : d.children) {
    if (Best(child, level) >= count) CollectParents(child, level, count, out);
  }
  // Visit's order: child domains first, then the domain's own nodes.
  if (node_level && !d.nodes.empty()) out.push_back(domain);
}

void GangSearch::PickAt(int level, int64_t count, Pick& pick) const {
  const std::vector<ClusterSnapshot::Domain>& domains = snapshot_.domains();
  if (level == 0) {  // the whole cluster, which nothing encloses
    Consider({0, 0, false}, Capacity(0), count, pick);
    return;
  }
  // The candidates' enclosing domains, fullest first (ties in topology order): a pick no later
  // candidate's (capacity, free GPUs) can beat is beaten only inside a fuller enclosing domain,
  // so once the pick is such and the next domain has more free GPUs than the pick's, nothing
  // after it can win (InFullerDomains compares the nearest enclosing domains first). Nodes
  // without their finer labels hang higher, and then every candidate is looked at.
  std::vector<int> parents;
  CollectParents(0, level, count, parents);
  const bool one_level = std::all_of(parents.begin(), parents.end(), [&](int p) {
    return domains[p].level == domains[parents.front()].level;
  });
  // Across levels the comparison skips levels, so the order of looking must stay the search's.
  if (one_level) {
    std::stable_sort(parents.begin(), parents.end(), [&](int a, int b) {
      return domains[a].free[kGpuIndex] < domains[b].free[kGpuIndex];
    });
  }
  const bool node_level = level == snapshot_.topology().node_level();
  for (int parent : parents) {
    const ClusterSnapshot::Domain& d = domains[parent];
    if (one_level && AtFloor(pick, count) &&
        d.free[kGpuIndex] > domains[Enclosing(*pick.choice)].free[kGpuIndex]) {
      return;
    }
    if (node_level) {
      for (int node : d.nodes) {
        if (Consider({level, node, true}, NodeCapacity(node), count, pick)) return;
      }
    } else {
      for (int child : d.children) {
        if (Best(child, level) >= count &&
            Consider({level, child, false}, Capacity(child), count, pick)) {
          return;
        }
      }
    }
  }
}

std::optional<GangSearch::Choice> GangSearch::Tightest(int64_t count) const {
  const int node_level = snapshot_.topology().node_level();
  if (cache_ != nullptr) {
    for (int level = node_level; level >= CeilingLevel(); --level) {
      if (Best(0, level) < count) continue;
      Pick pick;
      PickAt(level, count, pick);
      if (pick.choice) return pick.choice;
    }
    return std::nullopt;
  }
  std::vector<Choice> candidates;
  for (int level = node_level; level >= CeilingLevel(); --level) {
    candidates.clear();
    if (level == node_level) {
      for (int node : visited_nodes_) candidates.push_back({level, node, true});
    } else {
      for (int domain : visited_[level]) candidates.push_back({level, domain, false});
    }
    if (std::optional<Choice> best = BestFit(candidates, count)) return best;
  }
  return std::nullopt;
}

std::optional<GangSearch::Choice> GangSearch::TightestNear(const std::vector<int>& anchors,
                                                           int64_t count) const {
  const int node_level = snapshot_.topology().node_level();
  std::vector<Choice> candidates;
  for (int level = node_level; level >= CeilingLevel(); --level) {
    candidates.clear();
    for (int anchor : anchors) {
      const ClusterSnapshot::Node& node = snapshot_.nodes()[anchor];
      Choice c{level, anchor, true};
      if (level != node_level) {
        if (node.depth < level) continue;
        c = {level, snapshot_.AncestorAt(node.domain, level), false};
      }
      bool seen = std::any_of(candidates.begin(), candidates.end(), [&](const Choice& o) {
        return o.index == c.index && o.is_node == c.is_node;
      });
      if (!seen) candidates.push_back(c);
    }
    if (std::optional<Choice> best = BestFit(candidates, count)) return best;
  }
  return std::nullopt;
}

std::vector<int> GangSearch::Allocate(const Choice& choice, int64_t count) const {
  std::vector<int> out;
  out.reserve(static_cast<size_t>(count));
  if (choice.is_node) {
    out.assign(static_cast<size_t>(count), choice.index);
  } else {
    Fill(choice.index, count, out);
  }
  return out;
}

void GangSearch::Fill(int domain, int64_t count, std::vector<int>& out) const {
  const ClusterSnapshot::Domain& d = snapshot_.domains()[domain];
  // Entries in topology order: child domains by label value, then the domain's own nodes.
  std::vector<Entry> entries;
  std::vector<int64_t> capacities;
  std::vector<int64_t> gpus;
  for (int child : d.children) {
    if (Capacity(child) > 0) entries.push_back({Capacity(child), child, false});
  }
  for (int node : d.nodes) {
    if (NodeCapacity(node) > 0) entries.push_back({NodeCapacity(node), node, true});
  }
  for (const Entry& e : entries) {
    capacities.push_back(e.capacity);
    gpus.push_back(FreeGpus({0, e.index, e.is_node}));
  }
  std::vector<std::pair<size_t, int64_t>> picks = SelectAmounts(capacities, gpus, count);
  std::sort(picks.begin(), picks.end());
  for (const auto& [position, amount] : picks) {
    const Entry& e = entries[position];
    if (e.is_node) {
      out.insert(out.end(), static_cast<size_t>(amount), e.index);
    } else {
      Fill(e.index, amount, out);
    }
  }
}

Explanation GangSearch::Explain(int64_t wanted, const FreeOverlay* overlay) const {
  const Topology& topology = snapshot_.topology();
  const int ceiling = CeilingLevel();
  const int root_level = snapshot_.domains()[root_].level;
  Explanation why;
  why.wanted = static_cast<int32_t>(wanted);

  // Rejection reasons are counted as small codes and named once at the end: this runs over every
  // node each time a gang does not fit, so it must not build strings per node.
  std::array<int32_t, kRejectCodes> counts{};
  // The closest candidate at the ceiling level (a node at the hostname level).
  int64_t best_fit = -1;
  int best_index = -1;
  const bool node_ceiling = ceiling == topology.node_level();
  std::vector<uint8_t> dirty;
  if (cache_ != nullptr) {
    // Counted per domain as the cache was refreshed: the whole tree is the cluster's nodes.
    // An overlay changes only its own nodes' reasons.
    std::copy_n(cache_->reasons.begin(), kRejectCodes, counts.begin());
    if (overlay != nullptr) {
      dirty = DirtyDomains(0, *overlay);
      for (const auto& [node, extra] : *overlay) {
        if (snapshot_.nodes()[node].removed) continue;
        --counts[cache_->reason[node]];
        ++counts[RejectReason(node, &extra)];
      }
    }
  }
  auto node_capacity = [&](int node) {
    if (overlay == nullptr) return NodeCapacity(node);
    return CapacityWith({snapshot_.topology().node_level(), node, true}, *overlay);
  };
  auto capacity = [&](int domain) {
    return overlay == nullptr ? Capacity(domain) : CapacityWith(domain, dirty, *overlay);
  };
  for (size_t i = 0; (cache_ == nullptr || node_ceiling) && i < snapshot_.nodes().size(); ++i) {
    const ClusterSnapshot::Node& node = snapshot_.nodes()[i];
    if (node.removed || node.depth < root_level ||
        snapshot_.AncestorAt(node.domain, root_level) != root_) {
      continue;
    }
    if (cache_ == nullptr) ++counts[RejectReason(static_cast<int>(i))];
    if (node_ceiling && Selected(static_cast<int>(i), true) &&
        node_capacity(static_cast<int>(i)) > best_fit) {
      best_fit = node_capacity(static_cast<int>(i));
      best_index = static_cast<int>(i);
    }
  }
  if (!node_ceiling) {
    for (int domain : snapshot_.domains_at_level(ceiling)) {
      if (snapshot_.AncestorAt(domain, root_level) != root_) continue;
      if (Selected(domain, false) && capacity(domain) > best_fit) {
        best_fit = capacity(domain);
        best_index = domain;
      }
    }
  }
  if (best_index >= 0) {
    why.best_domain =
        node_ceiling ? snapshot_.NodeDomainId(best_index) : snapshot_.DomainIdOf(best_index);
  }
  for (int reason = kRejectNone + 1; reason < static_cast<int>(counts.size()); ++reason) {
    if (counts[reason] > 0) why.nodes_rejected[RejectName(reason)] = counts[reason];
  }
  why.fit_in_best = static_cast<int32_t>(std::max<int64_t>(best_fit, 0));

  // GPUs say what a training pod is; the full list only when it asks for none.
  auto gpus = shape_.per_pod_list.find(kResourceGpu);
  std::string per_pod = gpus != shape_.per_pod_list.end()
                            ? absl::StrCat(gpus->first, "=", gpus->second)
                            : FormatResources(shape_.per_pod_list);
  std::string what =
      absl::StrCat("needs ", CountedNoun(wanted, "pod"), " x ",
                   per_pod.empty() ? "no resources" : per_pod);
  std::string where;
  if (ceiling == 0) {
    where = "in the cluster";
  } else if (ceiling == topology.node_level()) {
    where = "on one node";
  } else {
    where = absl::StrCat("in one ", topology.LevelLabel(ceiling), " domain");
  }
  std::string groups;
  if (shape_.group_size > 0) {
    groups = absl::StrCat(" in groups of ", shape_.group_size, " per ",
                          topology.LevelLabel(shape_.group_level));
  }
  std::string best;
  if (!why.best_domain.has_value() && !Selected(root_, false)) {
    best = "no node matches its node selector and affinity";
  } else if (!why.best_domain.has_value()) {
    best = absl::StrCat("no node ", selector_ != nullptr ? "matching its node selector " : "",
                        "carries ", topology.LevelLabel(ceiling));
  } else if (ceiling == 0) {
    best = absl::StrCat("only ", why.fit_in_best, " fit");
  } else {
    best = absl::StrCat("the best (", why.best_domain->path.back(), ") fits ", why.fit_in_best);
  }
  std::vector<std::pair<std::string, int32_t>> reasons(why.nodes_rejected.begin(),
                                                       why.nodes_rejected.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (size_t i = 0; i < reasons.size() && i < 4; ++i) {
    parts.push_back(absl::StrCat(reasons[i].second, i == 0 ? " nodes " : " ", reasons[i].first));
    if (reasons[i].first == RejectName(kRejectMissingLabel)) {
      // Which labels: a node counts at a level only with every coarser level's label too.
      absl::StrAppend(&parts.back(), " (", shape_.min_node_depth == 1 ? "" : "every label from ",
                      topology.LevelLabel(1),
                      shape_.min_node_depth == 1
                          ? ""
                          : absl::StrCat(" down to ", topology.LevelLabel(shape_.min_node_depth)),
                      " needed)");
    }
  }
  why.summary = absl::StrCat(what, " ", where, groups, "; ", best);
  if (!parts.empty()) absl::StrAppend(&why.summary, "; ", absl::StrJoin(parts, ", "));
  return why;
}

}  // namespace phalanx::placement
