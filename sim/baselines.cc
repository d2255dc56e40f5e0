#include "sim/baselines.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "common/status.h"

namespace phalanx::sim {

// ---- FreeCapacity ------------------------------------------------------------------------------

FreeCapacity::FreeCapacity(const ClusterModel& cluster, std::vector<int32_t> shapes)
    : cluster_(cluster) {
  std::sort(shapes.begin(), shapes.end());
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  shapes.erase(std::remove_if(shapes.begin(), shapes.end(), [](int32_t g) { return g <= 0; }),
               shapes.end());
  shapes_ = std::move(shapes);
  const size_t n = cluster.nodes.size();
  capacity_.resize(n);
  used_.assign(n, 0);
  pods_.assign(n, 0);
  up_.assign(n, 1);
  domain_fit_.assign(shapes_.size(), std::vector<int64_t>(cluster.domains.size(), 0));
  group_fit_.assign(shapes_.size(), std::vector<int64_t>(cluster.groups.size(), 0));
  domain_free_.assign(cluster.domains.size(), 0);
  domain_capacity_.assign(cluster.domains.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    capacity_[i] = cluster.nodes[i].type->gpus;
    for (int32_t d : cluster.nodes[i].domains) domain_capacity_[d] += capacity_[i];
    Shift(static_cast<int32_t>(i), 0, 0);
  }
}

int FreeCapacity::ShapeIndex(int32_t gpus_per_pod) const {
  auto it = std::lower_bound(shapes_.begin(), shapes_.end(), gpus_per_pod);
  return it != shapes_.end() && *it == gpus_per_pod ? static_cast<int>(it - shapes_.begin()) : -1;
}

int32_t FreeCapacity::Free(int32_t node) const {
  return up_[node] ? std::max(0, capacity_[node] - used_[node]) : 0;
}

int32_t FreeCapacity::PodRoom(int32_t node) const {
  return up_[node] ? std::max(0, kMaxPodsPerNode - pods_[node]) : 0;
}

namespace {

// Pods of `gpus_per_pod` that `free` GPUs and `room` pod slots hold: the one rule every
// baseline places by (the engine checks both bounds).
int32_t PodsFitting(int32_t free, int32_t room, int32_t gpus_per_pod) {
  return gpus_per_pod <= 0 ? room : std::min(room, free / gpus_per_pod);
}

}  // namespace

int32_t FreeCapacity::NodeFit(int32_t node, int32_t gpus_per_pod) const {
  return PodsFitting(Free(node), PodRoom(node), gpus_per_pod);
}

void FreeCapacity::Shift(int32_t node, int32_t free_before, int32_t room_before) {
  const int32_t free_after = Free(node);
  const int32_t room_after = PodRoom(node);
  if (free_after == free_before && room_after == room_before) return;
  const SimNode& n = cluster_.nodes[node];
  for (size_t s = 0; s < shapes_.size(); ++s) {
    const int64_t delta = PodsFitting(free_after, room_after, shapes_[s]) -
                          PodsFitting(free_before, room_before, shapes_[s]);
    if (delta == 0) continue;
    for (int32_t d : n.domains) domain_fit_[s][d] += delta;
    group_fit_[s][n.group] += delta;
  }
  for (int32_t d : n.domains) domain_free_[d] += free_after - free_before;
}

void FreeCapacity::Use(int32_t node, int32_t gpus, int32_t pods) {
  const int32_t free = Free(node), room = PodRoom(node);
  used_[node] += gpus;
  pods_[node] += pods;
  Shift(node, free, room);
}

void FreeCapacity::SetUp(int32_t node, bool up) {
  const int32_t free = Free(node), room = PodRoom(node);
  up_[node] = up ? 1 : 0;
  Shift(node, free, room);
}

int64_t FreeCapacity::RangeFit(int32_t begin, int32_t end, int32_t gpus_per_pod) const {
  int64_t fit = 0;
  for (int32_t i = begin; i < end; ++i) fit += NodeFit(i, gpus_per_pod);
  return fit;
}

int64_t FreeCapacity::DomainFit(int32_t domain, int32_t gpus_per_pod) const {
  const int s = ShapeIndex(gpus_per_pod);
  const Domain& d = cluster_.domains[domain];
  return s >= 0 ? domain_fit_[s][domain] : RangeFit(d.begin, d.end, gpus_per_pod);
}

int64_t FreeCapacity::GroupFit(int32_t group, int32_t gpus_per_pod) const {
  const int s = ShapeIndex(gpus_per_pod);
  const NodeGroup& g = cluster_.groups[group];
  return s >= 0 ? group_fit_[s][group] : RangeFit(g.begin, g.end, gpus_per_pod);
}

// ---- Topology view ------------------------------------------------------------------------------

namespace {

void AppendPods(std::vector<int32_t>& out, int32_t node, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out.push_back(node);
}

}  // namespace

Topo::Topo(const ClusterModel& cluster, const FreeCapacity& free, int32_t group)
    : cluster_(cluster),
      free_(free),
      group_(group),
      node_level_(static_cast<int32_t>(cluster.groups[group].levels.size())) {}

int32_t Topo::Level(const std::string& level) const {
  if (level.empty()) return kNoLevel;
  if (level == kHostnameLabel) return node_level_;
  const int32_t l = cluster_.LevelIndex(group_, level);
  return l < 0 ? kUnknownLevel : l;
}

std::pair<int32_t, int32_t> Topo::Range(int32_t level, int32_t unit) const {
  if (level < 0) return {cluster_.groups[group_].begin, cluster_.groups[group_].end};
  if (level == node_level_) return {unit, unit + 1};
  return {cluster_.domains[unit].begin, cluster_.domains[unit].end};
}

std::vector<int32_t> Topo::UnitsIn(int32_t level, int32_t begin, int32_t end) const {
  std::vector<int32_t> out;
  if (level == node_level_) {
    for (int32_t n = begin; n < end; ++n) out.push_back(n);
    return out;
  }
  const std::vector<int32_t>& all = cluster_.groups[group_].level_domains[level];
  auto it = std::lower_bound(all.begin(), all.end(), begin, [&](int32_t d, int32_t b) {
    return cluster_.domains[d].begin < b;
  });
  for (; it != all.end() && cluster_.domains[*it].begin < end; ++it) {
    if (cluster_.domains[*it].end <= end) out.push_back(*it);
  }
  return out;
}

std::vector<int32_t> Topo::Units(int32_t level) const {
  const NodeGroup& g = cluster_.groups[group_];
  return UnitsIn(level, g.begin, g.end);
}

std::vector<int32_t> Topo::Children(int32_t level, int32_t unit) const {
  const auto [begin, end] = Range(level, unit);
  return UnitsIn(level + 1, begin, end);
}

int32_t Topo::UnitOf(int32_t node, int32_t level) const {
  return level == node_level_ ? node : cluster_.nodes[node].domains[level];
}

int32_t Topo::NodeFree(int32_t node) const {
  if (taken_.empty()) return free_.Free(node);
  auto it = taken_.find(node);
  return free_.Free(node) - (it == taken_.end() ? 0 : it->second);
}

int64_t Topo::NodeFit(int32_t node, int32_t gpus_per_pod) const {
  if (taken_.empty()) return free_.NodeFit(node, gpus_per_pod);
  auto it = taken_pods_.find(node);
  const int32_t room = free_.PodRoom(node) - (it == taken_pods_.end() ? 0 : it->second);
  return PodsFitting(NodeFree(node), room, gpus_per_pod);
}

int64_t Topo::Fit(int32_t level, int32_t unit, int32_t gpus_per_pod) const {
  const int32_t g = gpus_per_pod;
  if (level == node_level_) return NodeFit(unit, g);
  if (taken_.empty()) {
    return level < 0 ? free_.GroupFit(group_, g) : free_.DomainFit(unit, g);
  }
  const auto [begin, end] = Range(level, unit);
  int64_t fit = 0;
  for (int32_t n = begin; n < end; ++n) fit += NodeFit(n, g);
  return fit;
}

int64_t Topo::Free(int32_t level, int32_t unit) const {
  if (level == node_level_) return NodeFree(unit);
  if (level >= 0) {
    auto it = taken_units_.find({level, unit});
    return free_.DomainFree(unit) - (it == taken_units_.end() ? 0 : it->second);
  }
  const auto [begin, end] = Range(level, unit);
  int64_t free = 0;
  for (int32_t n = begin; n < end; ++n) free += NodeFree(n);
  return free;
}

int64_t Topo::Capacity(int32_t level, int32_t unit) const {
  if (level == node_level_) return free_.Capacity(unit);
  if (level >= 0) return free_.DomainCapacity(unit);
  const auto [begin, end] = Range(level, unit);
  int64_t capacity = 0;
  for (int32_t n = begin; n < end; ++n) capacity += free_.Capacity(n);
  return capacity;
}

void Topo::Take(int32_t node, int32_t gpus) {
  taken_[node] += gpus;
  ++taken_pods_[node];
  for (int32_t l = 0; l < node_level_; ++l) taken_units_[{l, UnitOf(node, l)}] += gpus;
}

// ---- Placement rules
// -----------------------------------------------------------------------------

namespace {

// Binpack node order (kube-scheduler MostAllocated, Volcano binpack, KAI's default): the
// fullest node first, ties by topology order.
std::vector<int32_t> BinpackOrder(const Topo& topo, int32_t begin, int32_t end,
                                  int32_t gpus_per_pod) {
  std::vector<int32_t> nodes;
  for (int32_t i = begin; i < end; ++i) {
    if (topo.Fit(topo.node_level(), i, gpus_per_pod) > 0) nodes.push_back(i);
  }
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](int32_t a, int32_t b) { return topo.NodeFree(a) < topo.NodeFree(b); });
  return nodes;
}

// Takes pods from `nodes` in the given order, filling each node before the next, and records
// them in `topo`; all `pods` or nothing (topo unchanged).
std::vector<int32_t> FillInOrder(Topo& topo, const std::vector<int32_t>& nodes,
                                 int32_t gpus_per_pod, int32_t pods) {
  std::vector<int32_t> out;
  for (int32_t node : nodes) {
    if (static_cast<int32_t>(out.size()) >= pods) break;
    const int64_t take = std::min<int64_t>(topo.Fit(topo.node_level(), node, gpus_per_pod),
                                           pods - static_cast<int64_t>(out.size()));
    AppendPods(out, node, take);
  }
  if (static_cast<int32_t>(out.size()) < pods) return {};
  for (int32_t node : out) topo.Take(node, gpus_per_pod);
  return out;
}

// TP groups (spec.topology.groupSize / groupLevel): every block of group_size consecutive ranks
// in one unit of the group level. Returns the level (kNoLevel when the job has no groups).
int32_t GroupLevel(const Topo& topo, const TraceJob& job) {
  if (job.group_size <= 1 || job.group_level.empty()) return Topo::kNoLevel;
  return topo.Level(job.group_level);
}

// ---- Kueue TAS (pkg/cache/scheduler/tas_flavor_snapshot.go: findTopologyAssignment) ----------

struct KueueRequest {
  bool valid = true;
  int32_t level = 0;  // the PodSet's topology level
  bool required = false;
  bool unconstrained = false;
  int32_t slice_level = 0;
  int32_t slice_size = 1;
};

// The annotations a Kueue user writes for the job (docs/baselines.md, "kueue-tas").
KueueRequest KueueRequestFor(const Topo& topo, const TraceJob& job) {
  KueueRequest r;
  const int32_t nl = topo.node_level();
  const int32_t required = topo.Level(job.required_level);
  const int32_t preferred = topo.Level(job.preferred_level);
  const int32_t group = GroupLevel(topo, job);
  if (required == Topo::kUnknownLevel || group == Topo::kUnknownLevel) r.valid = false;
  r.slice_level = nl;
  if (group >= 0) {
    r.slice_level = group;
    r.slice_size = job.group_size;
  }
  if (required >= 0) {
    r.level = required;
    r.required = true;
    // A slice level above the PodSet's required level is implied by it (Kueue rejects the
    // combination, so the user leaves the slice annotations out).
    if (r.slice_level < required) {
      r.slice_level = nl;
      r.slice_size = 1;
    }
  } else if (preferred >= 0) {
    // podset-preferred-topology; the slice level may not be above it, so a coarser group level
    // becomes the preferred level.
    r.level = std::min(preferred, r.slice_level);
  } else if (r.slice_size > 1) {
    r.level = 0;  // slice-only request: the highest level, unconstrained
    r.unconstrained = true;
  } else {
    r.level = nl;  // implicit podset-unconstrained-topology at the lowest level
    r.unconstrained = true;
  }
  return r;
}

class KueueTasSolver {
 public:
  KueueTasSolver(const Topo& topo, const TraceJob& job, const KueueRequest& r, int32_t count)
      : topo_(topo), g_(job.gpus_per_pod), r_(r), count_(count),
        best_fit_(!r.unconstrained) {  // TASProfileMixed: LeastFreeCapacity for unconstrained
    if (r_.slice_level < topo_.node_level() || r_.slice_size > 1) {
      // sliceState of every domain above the slice level: the sum of its slice units'.
      for (int32_t s : topo_.Units(r_.slice_level)) {
        const int64_t slices = topo_.Fit(r_.slice_level, s, g_) / r_.slice_size;
        if (slices == 0) continue;
        const int32_t node = topo_.Range(r_.slice_level, s).first;
        for (int32_t l = 0; l < r_.slice_level; ++l) slices_[{l, topo_.UnitOf(node, l)}] += slices;
        slices_[{r_.slice_level, s}] = slices;
      }
      aggregated_slices_ = true;
    }
  }

  std::vector<int32_t> Solve() {
    if (!r_.valid || count_ % r_.slice_size != 0) return {};
    std::vector<int32_t> fit;
    int32_t fit_level = 0;
    if (!FindLevel(r_.level, fit_level, fit)) return {};
    // Phase 2b: down the tree. Above the slice level children of every chosen domain are pooled
    // and filled greedily without looking at what their parents got; at and below it, each
    // parent's count is split among its own children.
    std::vector<int32_t> current = UpdateCounts(fit, fit_level, count_, r_.slice_size, true);
    int32_t level = fit_level;
    for (; level < std::min(topo_.node_level(), r_.slice_level); ++level) {
      std::vector<int32_t> lower;
      for (int32_t u : current) {
        for (int32_t c : topo_.Children(level, u)) lower.push_back(c);
      }
      Sort(lower, level + 1);
      current = UpdateCounts(lower, level + 1, count_, r_.slice_size, true);
    }
    for (; level < topo_.node_level(); ++level) {
      const int32_t slice = level >= r_.slice_level ? 1 : r_.slice_size;
      std::vector<int32_t> next;
      for (int32_t u : current) {
        std::vector<int32_t> children = topo_.Children(level, u);
        Sort(children, level + 1);
        for (int32_t c : UpdateCounts(children, level + 1, assigned_[{level, u}], slice, slice > 1))
          next.push_back(c);
      }
      current = std::move(next);
    }
    // The assignment lists nodes in topology order; ranks fill it in that order.
    std::sort(current.begin(), current.end());
    std::vector<int32_t> out;
    for (int32_t node : current) AppendPods(out, node, assigned_[{topo_.node_level(), node}]);
    if (static_cast<int32_t>(out.size()) != count_) return {};
    return out;
  }

 private:
  int64_t State(int32_t level, int32_t unit) const { return topo_.Fit(level, unit, g_); }
  int64_t Slices(int32_t level, int32_t unit) const {
    if (!aggregated_slices_) return State(level, unit);
    if (level > r_.slice_level) return 0;
    auto it = slices_.find({level, unit});
    return it == slices_.end() ? 0 : it->second;
  }
  // BestFit: sliceState descending, state ascending, topology order; LeastFreeCapacity: both
  // ascending (sortedDomains).
  // Each unit's keys are read once (a comparison would read them O(log n) times).
  void Sort(std::vector<int32_t>& units, int32_t level) const {
    struct Keyed {
      int64_t slices, state;
      int32_t first_node, unit;
    };
    std::vector<Keyed> keyed;
    keyed.reserve(units.size());
    for (int32_t u : units) {
      keyed.push_back({Slices(level, u), State(level, u), topo_.Range(level, u).first, u});
    }
    std::sort(keyed.begin(), keyed.end(), [&](const Keyed& a, const Keyed& b) {
      if (a.slices != b.slices) return best_fit_ ? a.slices > b.slices : a.slices < b.slices;
      if (a.state != b.state) return a.state < b.state;
      return a.first_node < b.first_node;  // distinct units start at distinct nodes
    });
    for (size_t i = 0; i < units.size(); ++i) units[i] = keyed[i].unit;
  }
  // findBestFitDomainBy: from units[from], the first one with the lowest metric that still
  // covers `needed`.
  size_t BestFit(const std::vector<int32_t>& units, size_t from, int32_t level, int64_t needed,
                 bool slices) const {
    auto metric = [&](int32_t u) { return slices ? Slices(level, u) : State(level, u); };
    size_t best = from;
    for (size_t i = from; i < units.size(); ++i) {
      if (metric(units[i]) >= needed && metric(units[i]) < metric(units[best])) best = i;
    }
    return best;
  }

  // Phase 2a (findLevelWithFitDomains).
  bool FindLevel(int32_t level, int32_t& fit_level, std::vector<int32_t>& fit) const {
    std::vector<int32_t> sorted = topo_.Units(level);
    if (sorted.empty()) return false;
    const int64_t slice_count = count_ / r_.slice_size;
    // One domain that holds it: BestFit takes, of the domains sorted by sliceState descending,
    // the first with the fewest slices that still cover the count; LeastFreeCapacity, of the
    // domains sorted ascending, the first that covers it. Both are the covering domain with
    // the least (sliceState, state, topology order), found without sorting them all.
    std::optional<std::tuple<int64_t, int64_t, int32_t>> least;
    int32_t least_unit = -1;
    for (int32_t u : sorted) {
      const int64_t slices = Slices(level, u);
      if (slices < slice_count) continue;
      const std::tuple<int64_t, int64_t, int32_t> key{slices, State(level, u),
                                                      topo_.Range(level, u).first};
      if (!least.has_value() || key < *least) {
        least = key;
        least_unit = u;
      }
    }
    if (least.has_value()) {
      fit_level = level;
      fit = {least_unit};
      return true;
    }
    if (r_.required) return false;
    if (level > 0 && !r_.unconstrained) return FindLevel(level - 1, fit_level, fit);
    // Several domains at this level, taken in sorted order.
    Sort(sorted, level);
    int64_t remaining = slice_count;
    fit.clear();
    for (size_t i = 0; i < sorted.size() && remaining > 0; ++i) {
      int32_t u = sorted[i];
      if (best_fit_ && Slices(level, u) >= remaining) {
        u = sorted[BestFit(sorted, i, level, remaining, true)];
      }
      fit.push_back(u);
      remaining -= Slices(level, u);
    }
    fit_level = level;
    return remaining <= 0;
  }

  // updateCountsToMinimumGeneric (no leader pods).
  std::vector<int32_t> UpdateCounts(const std::vector<int32_t>& units, int32_t level,
                                    int64_t count, int32_t slice_size, bool slices) {
    std::vector<int32_t> out;
    int64_t remaining = slices ? count / slice_size : count;
    auto metric = [&](int32_t u) { return slices ? Slices(level, u) : State(level, u); };
    for (size_t i = 0; i < units.size() && remaining > 0; ++i) {
      int32_t u = units[i];
      if (best_fit_ && metric(u) >= remaining) u = units[BestFit(units, i, level, remaining, slices)];
      const int64_t take = std::min(metric(u), remaining);
      assigned_[{level, u}] = slices ? take * slice_size : take;
      remaining -= take;
      out.push_back(u);
    }
    return out;
  }

  const Topo& topo_;
  int32_t g_;
  KueueRequest r_;
  int32_t count_;
  bool best_fit_;
  bool aggregated_slices_ = false;
  std::map<std::pair<int32_t, int32_t>, int64_t> slices_;
  std::map<std::pair<int32_t, int32_t>, int64_t> assigned_;
};

// ---- Volcano (plugins/network-topology-aware, actions/allocate) -------------------------------


// The hyperNode binpack score of putting `gpus` more into a unit: (used + request) / allocatable,
// 0 if it does not fit (getSubJobHyperNodeBinPackingScore).
double HyperNodeBinpack(const Topo& topo, int32_t level, int32_t unit, int64_t gpus) {
  const double capacity = static_cast<double>(std::max<int64_t>(topo.Capacity(level, unit), 1));
  const int64_t used = topo.Capacity(level, unit) - topo.Free(level, unit);
  if (used + gpus > topo.Capacity(level, unit)) return 0;
  return static_cast<double>(used + gpus) / capacity;
}

// Volcano's node order, pod by pod (SelectBestNode over the summed plugin scores): the binpack
// plugin's (used + request) / allocatable of the node, plus network-topology-aware's score —
// for a pod with a network topology, the share of its (sub)job's pods already in the node's
// tier-1 hyperNode (scoreWithTaskNum; every node of the job's hyperNode ties on the LCA score);
// for a pod without one, the hyperNode binpack of every tier the node belongs to, tier t weighted
// 0.8^(t-1) (batchNodeOrderFnForNormalPods, hypernode.binpack.normal-pod.fading). Highest score
// first, ties in topology order.
std::vector<int32_t> VolcanoNodes(Topo& topo, int32_t g, int32_t pods, int32_t begin, int32_t end,
                                  bool network_aware) {
  std::vector<int32_t> out;
  const int32_t nl = topo.node_level();
  std::map<int32_t, int32_t> in_lowest;  // tier-1 hyperNode -> pods placed there
  for (int32_t k = 0; k < pods; ++k) {
    int32_t best = -1;
    double best_score = -1;
    for (int32_t n = begin; n < end; ++n) {
      if (topo.NodeFit(n, g) == 0) continue;
      const double cap = static_cast<double>(std::max<int64_t>(topo.Capacity(nl, n), 1));
      double score = (cap - topo.NodeFree(n) + g) / cap;
      if (network_aware) {
        if (nl > 0) score += static_cast<double>(in_lowest[topo.UnitOf(n, nl - 1)]) / pods;
      } else if (nl > 0) {
        double total = 0, weights = 0, w = 1;
        for (int32_t l = nl - 1; l >= 0; --l, w *= 0.8) {
          total += w * HyperNodeBinpack(topo, l, topo.UnitOf(n, l), g);
          weights += w;
        }
        score += total / weights;
      }
      if (score > best_score + 1e-12) {
        best = n;
        best_score = score;
      }
    }
    if (best < 0) return {};
    out.push_back(best);
    topo.Take(best, g);
    if (nl > 0) ++in_lowest[topo.UnitOf(best, nl - 1)];
  }
  return out;
}

// One (sub)job inside [begin, end): tiers from the lowest up to `highest` (a level index), at the
// first tier where some hyperNode can take it, the one with the best binpack score; nodes
// binpacked. `highest` < 0: the whole range when no hyperNode holds it (soft mode / no topology).
std::vector<int32_t> VolcanoSubJob(Topo& topo, int32_t g, int32_t pods, int32_t begin,
                                   int32_t end, int32_t highest, bool hard) {
  const int64_t gpus = int64_t{pods} * g;
  for (int32_t level = topo.node_level() - 1; level >= std::max(highest, 0); --level) {
    int32_t best = -1;
    double best_score = -1;
    for (int32_t u : topo.UnitsIn(level, begin, end)) {
      if (topo.Free(level, u) < gpus || topo.Fit(level, u, g) < pods) continue;
      const double score = HyperNodeBinpack(topo, level, u, gpus);
      if (score > best_score) {
        best = u;
        best_score = score;
      }
    }
    if (best >= 0) {
      const auto [b, e] = topo.Range(level, best);
      return VolcanoNodes(topo, g, pods, b, e, true);
    }
  }
  if (hard) return {};
  return VolcanoNodes(topo, g, pods, begin, end, false);
}

// Volcano's subgroups (PodGroup subGroupPolicy: subGroupSize + a hard networkTopology per
// subgroup) inside the job's range.
std::vector<int32_t> VolcanoJobIn(Topo& topo, const TraceJob& job, int32_t pods, int32_t begin,
                                  int32_t end, bool network_aware) {
  const int32_t g = job.gpus_per_pod;
  const int32_t group = GroupLevel(topo, job);
  if (group == Topo::kNoLevel) return VolcanoNodes(topo, g, pods, begin, end, network_aware);
  std::vector<int32_t> out;
  for (int32_t first = 0; first < pods; first += job.group_size) {
    std::vector<int32_t> part = VolcanoSubJob(topo, g, job.group_size, begin, end, group, true);
    if (part.empty()) return {};
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace

std::vector<int32_t> PlaceKueueTas(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods) {
  if (free.GroupFit(group, job.gpus_per_pod) < pods) return {};
  Topo topo(cluster, free, group);
  return KueueTasSolver(topo, job, KueueRequestFor(topo, job), pods).Solve();
}

std::vector<int32_t> PlaceVolcano(const ClusterModel& cluster, const FreeCapacity& free,
                                  const TraceJob& job, int32_t group, int32_t pods,
                                  int32_t domain) {
  if (free.GroupFit(group, job.gpus_per_pod) < pods) return {};
  Topo topo(cluster, free, group);
  const int32_t required = topo.Level(job.required_level);
  const int32_t group_level = GroupLevel(topo, job);
  // No HyperNode tier stands for a single node, and an unknown level cannot be honoured.
  if (required == topo.node_level() || required == Topo::kUnknownLevel ||
      group_level == topo.node_level() || group_level == Topo::kUnknownLevel) {
    return {};
  }
  const auto [begin, end] = domain < 0 ? topo.Range(-1, -1) : topo.Range(cluster.domains[domain].level, domain);
  const bool hard = required >= 0;
  const bool soft = !hard && !job.preferred_level.empty();
  const int32_t g = job.gpus_per_pod;
  const int64_t gpus = int64_t{pods} * g;
  if (hard || soft) {
    const int32_t highest = hard ? required : 0;
    // Job-level hyperNode: tiers from the lowest; at the first tier where some hyperNode can
    // hold the job (all its subgroups), the best binpack score.
    for (int32_t level = topo.node_level() - 1; level >= highest; --level) {
      int32_t best = -1;
      double best_score = -1;
      std::vector<int32_t> best_nodes;
      for (int32_t u : topo.UnitsIn(level, begin, end)) {
        if (topo.Free(level, u) < gpus) continue;
        const auto [b, e] = topo.Range(level, u);
        Topo trial = topo;
        std::vector<int32_t> nodes = VolcanoJobIn(trial, job, pods, b, e, true);
        if (nodes.empty()) continue;
        const double score = HyperNodeBinpack(topo, level, u, gpus);
        if (score > best_score) {
          best = u;
          best_score = score;
          best_nodes = std::move(nodes);
        }
      }
      if (best >= 0) return best_nodes;
    }
    if (hard) return {};
  }
  return VolcanoJobIn(topo, job, pods, begin, end, false);
}

std::vector<int32_t> PlaceKai(const ClusterModel& cluster, const FreeCapacity& free,
                              const TraceJob& job, int32_t group, int32_t pods) {
  const int32_t g = job.gpus_per_pod;
  if (free.GroupFit(group, g) < pods) return {};
  Topo topo(cluster, free, group);
  const int32_t required = topo.Level(job.required_level);
  const int32_t preferred = topo.Level(job.preferred_level);
  const int32_t group_level = GroupLevel(topo, job);
  if (required == Topo::kUnknownLevel || group_level == Topo::kUnknownLevel) return {};
  // Candidate domains (job_filtering.go getJobAllocatableDomains): every domain from the
  // preferred level (or the required one) up to the required level (or the root) that can hold
  // the job, deepest level first; within a level the tree is sorted for bin-packing, parents
  // and then children by job-to-free ratio, highest first (the fewest free GPUs).
  const bool constrained = required >= 0 || preferred >= 0;
  const int32_t deepest = preferred >= 0 ? preferred : required;
  const int32_t ceiling = required >= 0 ? required : -1;
  auto pack_key = [&](int32_t level, int32_t u) {
    // Parents first (hierarchical order), then own free GPUs; topology order breaks ties.
    std::vector<int64_t> key;
    const int32_t node = topo.Range(level, u).first;
    for (int32_t l = 0; l <= level; ++l) {
      const int32_t a = topo.UnitOf(node, l);
      key.push_back(topo.Free(l, a));
      key.push_back(topo.Range(l, a).first);
    }
    return key;
  };
  struct Candidate {
    int32_t level, unit;
  };
  std::vector<Candidate> candidates;
  if (constrained) {
    for (int32_t level = deepest; level >= std::max(ceiling, 0); --level) {
      std::vector<int32_t> units = topo.Units(level);
      std::vector<std::pair<std::vector<int64_t>, int32_t>> keyed;
      for (int32_t u : units) {
        if (topo.Fit(level, u, g) >= pods) keyed.push_back({pack_key(level, u), u});
      }
      std::sort(keyed.begin(), keyed.end());
      for (const auto& [key, u] : keyed) candidates.push_back({level, u});
    }
    if (ceiling < 0) candidates.push_back({-1, -1});  // the root
  } else {
    candidates.push_back({-1, -1});
  }
  for (const Candidate& c : candidates) {
    const auto [begin, end] = topo.Range(c.level, c.unit);
    Topo trial = topo;
    std::vector<int32_t> out;
    if (group_level >= 0) {
      // Segments (kai.scheduler/segment-size, segment-topology-required-placement): each
      // segment of group_size pods in the fullest domain of the group level that holds it.
      for (int32_t first = 0; first < pods; first += job.group_size) {
        int32_t best = -1;
        for (int32_t u : trial.UnitsIn(group_level, begin, end)) {
          if (trial.Fit(group_level, u, g) < job.group_size) continue;
          if (best < 0 || trial.Free(group_level, u) < trial.Free(group_level, best)) best = u;
        }
        if (best < 0) break;
        const auto [b, e] = trial.Range(group_level, best);
        std::vector<int32_t> part = FillInOrder(trial, BinpackOrder(trial, b, e, g), g, job.group_size);
        out.insert(out.end(), part.begin(), part.end());
      }
    } else if (preferred >= 0 && c.level < preferred) {
      // Node scoring toward the preferred level: its sub-domains with more room first, nodes
      // binpacked inside each.
      std::vector<int32_t> subs = topo.UnitsIn(preferred, begin, end);
      std::stable_sort(subs.begin(), subs.end(), [&](int32_t a, int32_t b) {
        return topo.Fit(preferred, a, g) > topo.Fit(preferred, b, g);
      });
      std::vector<int32_t> nodes;
      for (int32_t s : subs) {
        const auto [b, e] = topo.Range(preferred, s);
        std::vector<int32_t> part = BinpackOrder(trial, b, e, g);
        nodes.insert(nodes.end(), part.begin(), part.end());
      }
      out = FillInOrder(trial, nodes, g, pods);
    } else {
      out = FillInOrder(trial, BinpackOrder(trial, begin, end, g), g, pods);
    }
    if (static_cast<int32_t>(out.size()) == pods) return out;
  }
  return {};
}

namespace {

// The pod-affinity terms of a first-fit gang, as level indices (docs/baselines.md).
struct AffinityTerms {
  int32_t node_level = 0;
  int32_t required = -1;  // gang-wide requiredDuringScheduling term, -1 none
  int32_t preferred = -1;
  int32_t group = -1;  // TP group term
  int32_t group_size = 0;
};

AffinityTerms TermsOf(const ClusterModel& cluster, const TraceJob& job, int32_t group) {
  AffinityTerms t;
  t.node_level = static_cast<int32_t>(cluster.groups[group].levels.size());
  auto level_of = [&](const std::string& level) {
    if (level.empty()) return -1;
    if (level == kHostnameLabel) return t.node_level;
    return cluster.LevelIndex(group, level);
  };
  t.required = level_of(job.required_level);
  t.preferred = level_of(job.preferred_level);
  if (job.group_size > 1) {
    t.group = level_of(job.group_level);
    t.group_size = job.group_size;
  }
  return t;
}

int32_t UnitOfNode(const ClusterModel& cluster, const AffinityTerms& t, int32_t node,
                   int32_t level) {
  return level == t.node_level ? node : cluster.nodes[node].domains[level];
}

// requiredDuringScheduling pod affinity: the gang's required level, and the pod's TP group (pods
// of one group share a label and an affinity term on the group level). The first pod matching a
// term may go anywhere.
bool Allows(const ClusterModel& cluster, const AffinityTerms& t,
            const std::vector<int32_t>& placed, int32_t node) {
  if (t.required >= 0 && !placed.empty() &&
      UnitOfNode(cluster, t, node, t.required) != UnitOfNode(cluster, t, placed[0], t.required)) {
    return false;
  }
  if (t.group >= 0) {
    const int32_t rank = static_cast<int32_t>(placed.size());
    const int32_t first = rank - rank % t.group_size;
    if (first < rank &&
        UnitOfNode(cluster, t, node, t.group) != UnitOfNode(cluster, t, placed[first], t.group)) {
      return false;
    }
  }
  return true;
}

// The unit the next pod (rank placed.size()) is confined to by its required terms: the required
// term's unit of the first pod, or its TP group's unit of the group's first pod, the finer of the
// two (units nest, and Allows() admits no node outside either); level -1: none, the whole node
// group. The unit is a node range, so a scan for the pod can stop at its ends.
struct PodUnit {
  int32_t level = -1;
  int32_t anchor = -1;  // a node inside the unit
};
PodUnit NextPodUnit(const AffinityTerms& t, const std::vector<int32_t>& placed) {
  PodUnit unit;
  if (t.required >= 0 && !placed.empty()) unit = {t.required, placed[0]};
  const int32_t rank = static_cast<int32_t>(placed.size());
  if (t.group > unit.level && rank % t.group_size != 0) {
    unit = {t.group, placed[rank - rank % t.group_size]};
  }
  return unit;
}
std::pair<int32_t, int32_t> UnitRange(const ClusterModel& cluster, const AffinityTerms& t,
                                      int32_t group, const PodUnit& unit) {
  if (unit.level < 0) return {cluster.groups[group].begin, cluster.groups[group].end};
  if (unit.level == t.node_level) return {unit.anchor, unit.anchor + 1};
  const Domain& d = cluster.domains[cluster.nodes[unit.anchor].domains[unit.level]];
  return {d.begin, d.end};
}

}  // namespace

std::vector<int32_t> PlaceFirstFit(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods,
                                   const std::vector<int32_t>& placed) {
  const AffinityTerms terms = TermsOf(cluster, job, group);
  if (terms.required < -1 || terms.group < -1) return {};
  if ((!job.required_level.empty() && terms.required < 0) ||
      (job.group_size > 1 && terms.group < 0)) {
    return {};  // a level this node group does not have
  }
  const int32_t g = job.gpus_per_pod;
  const int32_t leaf = static_cast<int32_t>(cluster.groups[group].levels.size()) - 1;
  // GPUs and pods this call has taken per node, in per-thread arrays cleared again on return.
  thread_local std::vector<int32_t> taken, taken_pods;
  if (taken.size() < cluster.nodes.size()) taken.resize(cluster.nodes.size(), 0);
  if (taken_pods.size() < cluster.nodes.size()) taken_pods.resize(cluster.nodes.size(), 0);
  std::vector<int32_t> all = placed;
  std::vector<int32_t> out;
  // The first node in [from, to) with g GPUs free that the required terms allow, or `to`.
  auto first_fit = [&](int32_t from, int32_t to) {
    for (int32_t n = from; n < to; ++n) {
      // A domain where no node has g GPUs free is passed over whole, the coarsest first: the
      // scan's answer is the same (this call's takes only lower what is free), without visiting
      // its nodes one by one.
      bool skipped = false;
      for (int32_t level = 0; g > 0 && level <= leaf && !skipped; ++level) {
        const int32_t domain = cluster.nodes[n].domains[level];
        const Domain& d = cluster.domains[domain];
        if ((n == d.begin || n == from) && free.DomainFit(domain, g) == 0) {
          n = d.end - 1;
          skipped = true;
        }
      }
      if (skipped) continue;
      if (PodsFitting(free.Free(n) - taken[n], free.PodRoom(n) - taken_pods[n], g) > 0 &&
          Allows(cluster, terms, all, n)) {
        return n;
      }
    }
    return to;
  };
  // Scans resume where the last scan of the same range stopped: Allows() admits exactly the
  // nodes of the range (every placed pod obeys the same terms), and free capacity only shrinks
  // during the call, so no node before that point can fit a later pod.
  struct Cursor {
    int32_t from = -1, to = -1, next = -1;
  };
  Cursor preferred_cursor, any_cursor;
  auto scan = [&](Cursor& cursor, int32_t from, int32_t to) {
    if (cursor.from != from || cursor.to != to) cursor = {from, to, from};
    cursor.next = first_fit(cursor.next, to);
    return cursor.next < to ? cursor.next : -1;
  };
  for (int32_t k = 0; k < pods; ++k) {
    int32_t chosen = -1;
    // The scan visits the node range of the unit the pod is confined to, with the same answer.
    const auto [lo, hi] = UnitRange(cluster, terms, group, NextPodUnit(terms, all));
    // preferredDuringScheduling pod affinity on the preferred level: the first node that fits in
    // the unit of the gang's first pod, else the first that fits anywhere (units are node ranges).
    if (terms.preferred >= 0 && !all.empty()) {
      const auto [plo, phi] = UnitRange(cluster, terms, group, {terms.preferred, all[0]});
      chosen = scan(preferred_cursor, std::max(lo, plo), std::min(hi, phi));
    }
    if (chosen < 0) chosen = scan(any_cursor, lo, hi);
    if (chosen < 0) break;
    taken[chosen] += g;
    ++taken_pods[chosen];
    all.push_back(chosen);
    out.push_back(chosen);
  }
  for (int32_t node : out) taken[node] = taken_pods[node] = 0;
  return out;
}

// ---- The shared quota book and the policy
// ----------------------------------------------------------

namespace {

constexpr double kPermitTimeoutS = 60;  // coscheduling's default permitWaitingTimeSeconds
constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;

enum class Kind { kFirstFit, kKueueTas, kVolcano, kKai };

// Kueue-style GPU quota: per ClusterQueue and flavor (node group), nominal quota, borrowing limit
// and lending limit. A queue's nominal quota minus its lendingLimit is guaranteed to it; the
// rest (all of it without a lendingLimit) goes to the cohort's pool, and usage above the
// guaranteed part counts against that pool (Kueue pkg/cache/scheduler/resource_node.go).
class QuotaBook {
 public:
  void Init(const ClusterModel& cluster) {
    const size_t groups = cluster.groups.size();
    std::map<std::string, int32_t> cohorts;
    for (const QueueSpec& q : cluster.spec.queues) {
      Queue queue;
      queue.name = q.name;
      queue.cohort = -1;
      if (!q.cohort.empty()) {
        auto [it, added] = cohorts.emplace(q.cohort, static_cast<int32_t>(cohorts.size()));
        queue.cohort = it->second;
      }
      queue.nominal.assign(groups, 0);
      queue.borrow_limit.assign(groups, 0);
      queue.guaranteed.assign(groups, 0);
      queue.usage.assign(groups, 0);
      queue.flavors.clear();
      queue.within_cq = q.within_cluster_queue != "Never";
      queue.reclaim_any = q.reclaim_within_cohort == "Any";
      queue.reclaim_lower = q.reclaim_within_cohort == "LowerPriority";
      queue.borrow_lower = q.borrow_within_cohort == "LowerPriority";
      queue.borrow_threshold = q.borrow_max_priority_threshold;
      queue.strict_fifo = q.queueing_strategy == "StrictFIFO";
      queue.weight = q.fair_sharing_weight;
      for (const FlavorQuota& f : q.flavors) {
        int32_t g = 0;
        while (g < static_cast<int32_t>(groups) && cluster.groups[g].spec.name != f.flavor) ++g;
        if (g == static_cast<int32_t>(groups)) continue;
        queue.flavors.push_back(g);
        auto gpus = [](const ResourceList& list) {
          auto it = list.find(kResourceGpu);
          return it == list.end() ? int64_t{0} : it->second;
        };
        queue.nominal[g] = gpus(f.nominal);
        queue.borrow_limit[g] = f.borrowing_limit ? gpus(*f.borrowing_limit) : kUnlimited;
        if (f.lending_limit) {
          queue.guaranteed[g] = std::max<int64_t>(0, queue.nominal[g] - gpus(*f.lending_limit));
        }
      }
      queues_.push_back(std::move(queue));
    }
    cohort_nominal_.assign(cohorts.size(), std::vector<int64_t>(groups, 0));
    cohort_usage_.assign(cohorts.size(), std::vector<int64_t>(groups, 0));
    for (const Queue& q : queues_) {
      if (q.cohort < 0) continue;
      for (size_t g = 0; g < groups; ++g) {
        cohort_nominal_[q.cohort][g] += q.nominal[g] - q.guaranteed[g];
      }
    }
  }

  int32_t queue_count() const { return static_cast<int32_t>(queues_.size()); }
  int32_t QueueIndex(const std::string& name) const {
    for (size_t i = 0; i < queues_.size(); ++i) {
      if (queues_[i].name == name) return static_cast<int32_t>(i);
    }
    return -1;
  }

  bool Fits(int32_t q, int32_t g, int64_t gpus) const {
    const Queue& queue = queues_[q];
    if (queue.cohort < 0) return queue.usage[g] + gpus <= queue.nominal[g];
    return queue.usage[g] + gpus <= queue.nominal[g] + queue.borrow_limit[g] &&
           cohort_usage_[queue.cohort][g] + PoolDelta(q, g, gpus) <= cohort_nominal_[queue.cohort][g];
  }

  void Charge(int32_t q, int32_t g, int64_t gpus) {
    if (queues_[q].cohort >= 0) cohort_usage_[queues_[q].cohort][g] += PoolDelta(q, g, gpus);
    queues_[q].usage[g] += gpus;
  }

  // The capability check of a queue alone (nominal + borrowing limit), without the cohort:
  // Volcano's enqueue admits a job its queue's capability allows, and reclaim frees the rest.
  bool WithinCapability(int32_t q, int32_t g, int64_t gpus) const {
    const Queue& queue = queues_[q];
    const int64_t cap = queue.cohort < 0 ? queue.nominal[g] : queue.nominal[g] + queue.borrow_limit[g];
    return queue.usage[g] + gpus <= cap;
  }

  bool Borrowing(int32_t q, int32_t g) const { return queues_[q].usage[g] > queues_[q].nominal[g]; }
  bool WithinNominal(int32_t q, int32_t g, int64_t gpus) const {
    return queues_[q].usage[g] + gpus <= queues_[q].nominal[g];
  }
  const std::vector<int32_t>& Flavors(int32_t q) const { return queues_[q].flavors; }
  bool SameCohort(int32_t a, int32_t b) const {
    return queues_[a].cohort >= 0 && queues_[a].cohort == queues_[b].cohort;
  }
  bool WithinCq(int32_t q) const { return queues_[q].within_cq; }
  // reclaimWithinCohort: Any, LowerPriority (else Never).
  bool ReclaimAny(int32_t q) const { return queues_[q].reclaim_any; }
  bool ReclaimLower(int32_t q) const { return queues_[q].reclaim_lower; }
  bool StrictFifo(int32_t q) const { return queues_[q].strict_fifo; }
  // borrowWithinCohort: LowerPriority lets a borrowing preemptor take other queues' borrowers
  // of lower priority, up to the threshold (the admission core's rule, preemption.cc).
  bool MayPreemptWhileBorrowing(int32_t q, int32_t preemptor, int32_t victim) const {
    const Queue& queue = queues_[q];
    return queue.borrow_lower && victim < preemptor &&
           (!queue.borrow_threshold || victim <= *queue.borrow_threshold);
  }

  // Kueue's dominant resource share under fair sharing, for the one resource simulated: the
  // GPUs queue q borrows beyond its nominal quota, summed over flavors, over the GPUs its
  // cohort can lend, divided by its weight (weight 0: infinite), with `gpus` more (less, if
  // negative) charged in flavor g. 0 outside a cohort or without borrowing. The same definition
  // as the admission core's QuotaTree::Share (operator/admission/quota.cc), which cites Kueue.
  double Share(int32_t q, int32_t g, int64_t gpus) const {
    const Queue& queue = queues_[q];
    if (queue.cohort < 0) return 0;
    int64_t borrowed = 0;
    int64_t lendable = 0;
    for (size_t f = 0; f < queue.usage.size(); ++f) {
      const int64_t usage = queue.usage[f] + (static_cast<int32_t>(f) == g ? gpus : 0);
      borrowed += std::max<int64_t>(0, usage - queue.nominal[f]);
      lendable += cohort_nominal_[queue.cohort][f];
    }
    if (borrowed == 0) return 0;
    if (queue.weight == 0) return std::numeric_limits<double>::infinity();
    if (lendable == 0) return 0;
    return static_cast<double>(borrowed) / static_cast<double>(lendable) / queue.weight;
  }

 private:
  struct Queue {
    std::string name;
    int32_t cohort = -1;
    std::vector<int32_t> flavors;  // node groups in order of preference
    std::vector<int64_t> nominal, borrow_limit, guaranteed, usage;
    bool within_cq = true;
    bool reclaim_any = false, reclaim_lower = false;
    bool borrow_lower = false;  // borrowWithinCohort: LowerPriority
    std::optional<int32_t> borrow_threshold;
    bool strict_fifo = false;
    double weight = 1;  // fairSharing.weight
  };
  // How much more (or less, gpus < 0) of the cohort's pool a change of usage takes.
  int64_t PoolDelta(int32_t q, int32_t g, int64_t gpus) const {
    const Queue& queue = queues_[q];
    const int64_t before = std::max<int64_t>(0, queue.usage[g] - queue.guaranteed[g]);
    const int64_t after = std::max<int64_t>(0, queue.usage[g] + gpus - queue.guaranteed[g]);
    return after - before;
  }

  std::vector<Queue> queues_;
  // Per cohort and flavor: the pool (lendable quota of its queues) and its usage.
  std::vector<std::vector<int64_t>> cohort_nominal_, cohort_usage_;
};

// A sorted vector as a small ordered set: ids stay unique and ascending.
void InsertSorted(std::vector<int32_t>& ids, int32_t id) {
  auto at = std::lower_bound(ids.begin(), ids.end(), id);
  if (at == ids.end() || *at != id) ids.insert(at, id);
}
void EraseSorted(std::vector<int32_t>& ids, int32_t id) {
  auto at = std::lower_bound(ids.begin(), ids.end(), id);
  if (at != ids.end() && *at == id) ids.erase(at);
}

class BaselinePolicy : public Policy {
 public:
  BaselinePolicy(Kind kind, Kind preempt_kind, std::string name, const BaselineOptions& options)
      : kind_(kind), preempt_kind_(preempt_kind), name_(std::move(name)), options_(options) {}

  std::string name() const override { return name_; }

  absl::Status Init(const ClusterModel& cluster, const std::vector<JobStatus>& jobs) override {
    cluster_ = &cluster;
    std::vector<int32_t> shapes;
    for (const JobStatus& job : jobs) shapes.push_back(job.spec->gpus_per_pod);
    free_ = std::make_unique<FreeCapacity>(cluster, shapes);
    quota_.Init(cluster);
    state_.assign(jobs.size(), JobBook{});
    pending_book_.assign(jobs.size(), PendingBook{});
    preempt_epochs_.assign(jobs.size(), -1);
    running_.assign(cluster.groups.size(), {});
    for (const JobStatus& job : jobs) priorities_.push_back(job.spec->priority);
    std::sort(priorities_.begin(), priorities_.end());
    priorities_.erase(std::unique(priorities_.begin(), priorities_.end()), priorities_.end());
    pending_lists_.assign(static_cast<size_t>(quota_.queue_count()) * priorities_.size(), {});
    const UnitStamps fresh{0, std::vector<int64_t>(priorities_.size(), 0)};
    group_stamps_.assign(cluster.groups.size(), fresh);
    domain_stamps_.assign(cluster.domains.size(), fresh);
    node_stamps_.assign(cluster.nodes.size(), fresh);
    std::map<std::string, int32_t> job_shapes;
    std::map<std::array<int32_t, 6>, int32_t> requests;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const TraceJob& job = *jobs[i].spec;
      state_[i].queue = quota_.QueueIndex(job.queue);
      state_[i].priority_rank = static_cast<int32_t>(PriorityRank(job.priority));
      state_[i].pods = job.pods;
      state_[i].min_pods = job.min_pods();
      state_[i].gpus_per_pod = job.gpus_per_pod;
      state_[i].priority = job.priority;
      if (!job.node_group.empty()) {
        state_[i].node_group = kNoGroup;
        for (size_t g = 0; g < cluster.groups.size(); ++g) {
          if (cluster.groups[g].spec.name == job.node_group) {
            state_[i].node_group = static_cast<int32_t>(g);
          }
        }
      }
      const std::string shape = absl::StrCat(job.gpus_per_pod, "/", job.required_level, "/",
                                             job.preferred_level, "/", job.group_size, "/",
                                             job.group_level);
      state_[i].shape =
          job_shapes.try_emplace(shape, static_cast<int32_t>(job_shapes.size())).first->second;
      const std::array<int32_t, 6> request{state_[i].queue,    state_[i].node_group,
                                           state_[i].shape,    job.priority,
                                           state_[i].pods,     state_[i].min_pods};
      pending_book_[i].request =
          requests.try_emplace(request, static_cast<int32_t>(requests.size())).first->second;
      pending_book_[i].rank = state_[i].priority_rank;
      pending_book_[i].queue = state_[i].queue;
      if (state_[i].queue < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(jobs[i].spec->name, ": unknown queue ", jobs[i].spec->queue));
      }
    }
    request_books_.assign(requests.size(), RequestBook{});
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    jobs_ = view.jobs;
    now_ = view.now;
    strict_heads_.clear();
    failed_placements_.clear();
    failed_preemptions_.clear();
    ++change_;
    std::vector<Action> actions;
    // Admitted jobs still waiting for nodes (first-fit; preemptors) go first, in admission order.
    for (int32_t id : WaitingInAdmissionOrder()) TryPlaceAdmitted(id, actions);
    // Each queue's pending jobs by priority, then submit order (Kueue BestEffortFIFO /
    // StrictFIFO). Few distinct priorities: bucket instead of sorting every cycle.
    for (std::vector<PendingJob>& list : pending_lists_) list.clear();
    const size_t ranks = priorities_.size();
    for (int32_t id : view.pending) {
      const PendingBook& b = pending_book_[id];
      if (b.rank >= 0) pending_lists_[b.queue * ranks + b.rank].push_back({id, b.request});
    }
    HeadsPass(view, actions);
    return actions;
  }

  absl::Status JobFinished(int32_t job) override {
    ++natural_epoch_;
    Drop(job);
    return absl::OkStatus();
  }
  absl::Status JobInterrupted(int32_t job) override {
    ++natural_epoch_;
    Drop(job);
    return absl::OkStatus();
  }
  absl::Status NodeChanged(int32_t node, bool up) override {
    free_->SetUp(node, up);
    ++epoch_;
    ++natural_epoch_;
    return absl::OkStatus();
  }

  double NextWakeup() const override {
    double wake = std::numeric_limits<double>::infinity();
    for (int32_t id : waiting_) {
      if (state_[id].permit_deadline > 0) wake = std::min(wake, state_[id].permit_deadline);
    }
    return wake;
  }

  // Between cycles the books hold, beyond the jobs' phases and what they hold: caches stamped
  // with change_ (moved by every cycle, so stale at the next one), the preemption gates (a bit
  // each here) and the Idle() stamps (a bit each: whether the job's next attempt is skipped).
  // The quota books and the free capacity follow from what admitted jobs hold when none runs.
  std::optional<std::string> RestState(const CycleView& view) const override {
    for (const std::map<int32_t, std::vector<int32_t>>& group : running_) {
      for (const auto& [priority, ids] : group) {
        if (!ids.empty()) return std::nullopt;
      }
    }
    std::string out;
    auto put = [&out](auto v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
    for (int32_t id : view.pending) {
      put(id);
      put(static_cast<int8_t>(state_[id].phase));
      put(preempt_epochs_[id] == epoch_);
    }
    put(int32_t{-1});
    for (int32_t id : WaitingInAdmissionOrder()) {
      const JobBook& b = state_[id];
      put(id);
      put(b.group);
      put(b.count);
      put(b.nodes.size());
      for (int32_t node : b.nodes) put(node);
      put(b.permit_deadline > 0 ? b.permit_deadline - view.now : -1.0);
      put(b.preempted_this_attempt);
      put(b.pod_preempt_epoch == natural_epoch_);
      put(StillIdle(b));
    }
    return out;
  }

  // The baselines keep no message of their own: what their books say as the run ended, checked
  // then (quota, placement on the free nodes), so that it is true of the end, if of no other time.
  std::string PendingReason(int32_t id) const override {
    if (jobs_ == nullptr) return "";
    const JobBook& b = state_[id];
    const TraceJob& job = Spec(id);
    const auto group_name = [&](int32_t g) { return cluster_->groups[g].spec.name; };
    if (b.phase == Phase::kAdmitted) {
      return absl::StrCat("admitted by quota: ", b.count, " pods in node group ",
                          group_name(b.group), ", of which ", b.nodes.size(),
                          kind_ == Kind::kFirstFit ? " held a node at Permit" : " were placed",
                          " when the run ended");
    }
    if (b.phase != Phase::kNone) return "";
    const int32_t head = StrictFifoHead(b.queue);
    if (head >= 0 && head != id) {
      return absl::StrCat("behind ", Spec(head).name, ", the head of StrictFIFO queue ", job.queue,
                          ", when the run ended");
    }
    const int64_t gpus = int64_t{b.min_pods} * b.gpus_per_pod;
    std::vector<std::string> short_of_quota, no_room;
    for (int32_t g : quota_.Flavors(b.queue)) {
      if (b.node_group != kAnyGroup && g != b.node_group) continue;
      // First-fit admits by quota alone (kube-scheduler places afterwards).
      if (!quota_.Fits(b.queue, g, gpus)) {
        short_of_quota.push_back(group_name(g));
      } else if (kind_ != Kind::kFirstFit &&
                 PlaceNow(id, g, b.min_pods).size() < static_cast<size_t>(b.min_pods)) {
        no_room.push_back(group_name(g));
      } else {
        return absl::StrCat(kind_ == Kind::kFirstFit ? "quota" : "quota and free nodes",
                            " could hold it in node group ", group_name(g),
                            " when the run ended; it was not tried again");
      }
    }
    std::vector<std::string> parts;
    if (!short_of_quota.empty()) {
      parts.push_back(absl::StrCat("queue ", job.queue, " could not hold its ", gpus,
                                   " GPUs in node group ", absl::StrJoin(short_of_quota, ", ")));
    }
    if (!no_room.empty()) {
      parts.push_back(absl::StrCat(name_, " found no placement for its ", b.min_pods,
                                   " pods in node group ", absl::StrJoin(no_room, ", "),
                                   ", where its quota could hold them"));
    }
    if (parts.empty()) return absl::StrCat("queue ", job.queue, " has no quota for its node group");
    return absl::StrCat(absl::StrJoin(parts, "; "), ", when the run ended");
  }

 private:
  enum class Phase { kNone, kAdmitted, kRunning };
  struct JobBook {
    Phase phase = Phase::kNone;
    int32_t queue = -1;
    int32_t group = -1;          // flavor
    int32_t count = 0;           // pods charged to quota
    std::vector<int32_t> nodes;  // running, or held at Permit (first-fit)
    double permit_deadline = 0;
    int64_t admitted_seq = 0;
    int64_t pod_preempt_epoch = -1;  // natural_epoch_ when its pods last preempted (first-fit)
    bool preempted_this_attempt = false;  // its pods preempted since it last timed out
    // First-fit: seq_ and natural_epoch_ when its last attempt changed nothing, or -1.
    int64_t idle_seq = -1;
    int64_t idle_natural_epoch = -1;
    AffinityTerms terms;  // its pod-affinity terms in its node group (first-fit)
    int32_t shape = -1;   // jobs of equal shape (GPUs per pod, levels, TP groups) share it
    int32_t priority_rank = 0;  // index of its priority in priorities_
    // Copied from the trace at Init: what admission reads of every pending job every cycle.
    int32_t pods = 0, min_pods = 0, gpus_per_pod = 0, priority = 0;
    int32_t node_group = kAnyGroup;  // its node group's index; kNoGroup if the cluster lacks it
  };
  // What the pending pass reads of every pending job in every cycle, apart from JobBook so that
  // the pass touches 24 bytes a job.
  struct PendingBook {
    int32_t rank = 0;      // its priority rank while in Phase::kNone, else -1
    int32_t request = -1;  // jobs asking for the same (queue, group, shape, priority, sizes)
    int32_t queue = -1;
  };
  static constexpr int32_t kAnyGroup = -1;
  static constexpr int32_t kNoGroup = -2;

  const TraceJob& Spec(int32_t id) const { return *(*jobs_)[id].spec; }

  // Admitted jobs still waiting for nodes, in admission order (the order they are placed in).
  std::vector<int32_t> WaitingInAdmissionOrder() const {
    std::vector<int32_t> waiting(waiting_.begin(), waiting_.end());
    std::sort(waiting.begin(), waiting.end(), [&](int32_t a, int32_t b) {
      return state_[a].admitted_seq < state_[b].admitted_seq;
    });
    return waiting;
  }

  // The first job a StrictFIFO queue would try (highest priority, then earliest submit) among
  // those pending and not admitted; -1 for a BestEffortFIFO queue or none pending. Found for
  // every queue at once when first asked after a cycle.
  int32_t StrictFifoHead(int32_t q) const {
    if (strict_heads_.empty()) {
      strict_heads_.assign(quota_.queue_count(), -1);
      for (const JobStatus& job : *jobs_) {  // in submit order
        const JobBook& b = state_[job.id];
        if (job.state != JobState::kPending || b.phase != Phase::kNone) continue;
        int32_t& head = strict_heads_[b.queue];
        if (head < 0 || b.priority_rank > state_[head].priority_rank) head = job.id;
      }
    }
    return quota_.StrictFifo(q) ? strict_heads_[q] : -1;
  }

  // Admission among the queues' heads (each queue in priority, then submit order; a
  // StrictFIFO queue stops at its first refusal), the best head first, heads taken again after
  // every admission:
  // - Kueue with fairSharing.enable (pkg/scheduler/fair_sharing_iterator.go): the head whose
  //   queue would hold the smallest share with it admitted, then higher priority, then the
  //   earlier submit.
  // - Kueue's classic order (pkg/scheduler/scheduler.go, entryOrdering): heads that fit within
  //   their queue's nominal quota before heads that need to borrow, then priority, then the
  //   earlier submit. The admission core's Cycle::Pass has the same two orders.
  // pending_lists_ holds this cycle's pending jobs.
  // The pass reads per job only its list entry (id and request; ranks order as priorities do)
  // and preempt_epochs_, and JobBook only for a head's key, once per request and change of the
  // books: most pending jobs of a busy cluster are refused from request_books_ without their
  // JobBook (reading it for every head made the pass twice as slow on `simulate --nodes 4096
  // --jobs 100000`; reading PendingBook for every head cost first-fit a tenth of that run).
  // Each head's place in the order is one number, so the choice between heads is a minimum
  // without branches to mispredict (queues' heads interleave by submit order).
  void HeadsPass(const CycleView& view, std::vector<Action>& actions) {
    if (options_.fair_sharing) {
      HeadsPassFor<true>(view, actions);
    } else {
      HeadsPassFor<false>(view, actions);
    }
  }
  // Place is (key, then higher rank, then lower id), lower goes first: 128 bits for a share,
  // 64 for the classic order's 0 or 1 (one bit).
  template <bool kFair>
  void HeadsPassFor(const CycleView& view, std::vector<Action>& actions) {
    using Place = std::conditional_t<kFair, unsigned __int128, uint64_t>;
    constexpr Place kDone = ~Place{0};
    const int32_t queues = quota_.queue_count();
    const int32_t ranks = static_cast<int32_t>(priorities_.size());
    struct Cursor {
      int32_t rank = -1;  // the priority rank of the list the head is in; -1: none left
      size_t next = 0;    // the head's place in that list
      int32_t head = -1;
      int32_t request = -1;  // the head's
    };
    std::vector<Cursor> cursors(queues);
    std::vector<Place> places(queues, kDone);
    // The head's key: its share, or 1 for a head that borrows and 0 for one that does not.
    auto place = [&](const Cursor& c) {
      if (c.head < 0) return kDone;
      RequestBook& k = request_books_[c.request];  // one per change_
      if (k.key_change != change_) {
        k.key = kFair ? HeadShare(c.head) : HeadBorrows(c.head) ? 1 : 0;
        k.key_change = change_;
      }
      const Place rest =
          (Place{static_cast<uint32_t>(ranks - 1 - c.rank)} << 32) | static_cast<uint32_t>(c.head);
      if constexpr (kFair) {
        uint64_t bits;  // a double's order as an unsigned integer's
        std::memcpy(&bits, &k.key, sizeof bits);
        bits = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
        return (Place{bits} << 64) | rest;
      } else {
        return (Place{k.key != 0} << 63) | rest;  // ranks and ids are below 2^31
      }
    };
    auto take_head = [&](int32_t q) {
      Cursor& c = cursors[q];
      c.head = -1;
      for (; c.rank >= 0; --c.rank, c.next = 0) {
        const std::vector<PendingJob>& list = pending_lists_[q * ranks + c.rank];
        if (c.next < list.size()) {
          c.head = list[c.next].id;
          c.request = list[c.next].request;
          break;
        }
      }
      places[q] = place(c);
    };
    for (int32_t q = 0; q < queues; ++q) {
      cursors[q].rank = ranks - 1;
      take_head(q);
    }
    int64_t placed_at = change_;  // keys move only with change_
    while (true) {
      if (placed_at != change_) {
        for (int32_t q = 0; q < queues; ++q) places[q] = place(cursors[q]);
        placed_at = change_;
      }
      // The first smallest place, without a branch to mispredict (which queue's head goes next
      // is close to random): a conditional move per queue.
      int32_t best = 0;
      Place least = places[0];
      for (int32_t q = 1; q < queues; ++q) {
        const bool less = places[q] < least;
        least = less ? places[q] : least;
        best = less ? q : best;
      }
      if (least == kDone) return;
      Cursor& c = cursors[best];
      const int32_t head = c.head;
      ++c.next;
      if (!TryAdmit(head, c.request, view, actions) && quota_.StrictFifo(best)) {
        c.rank = -1;  // a StrictFIFO queue stops at its first refusal
      }
      take_head(best);
    }
  }

  // Whether job id, admitted as TryAdmitAnew would admit it now (the first flavor whose quota
  // holds it, at its full size, else its smallest), takes its queue beyond its nominal quota.
  // A job no flavor's quota holds would borrow in its first flavor if it needed more than the
  // queue's nominal quota left there (it can then only preempt).
  bool HeadBorrows(int32_t id) const {
    const JobBook& b = state_[id];
    const int32_t counts[] = {b.pods, b.min_pods};
    const int n_counts = b.min_pods < b.pods ? 2 : 1;
    int32_t first = -1;
    for (int32_t g : quota_.Flavors(b.queue)) {
      if (b.node_group != kAnyGroup && g != b.node_group) continue;
      if (first < 0) first = g;
      for (int i = 0; i < n_counts; ++i) {
        const int64_t gpus = int64_t{counts[i]} * b.gpus_per_pod;
        if (quota_.Fits(b.queue, g, gpus)) return !quota_.WithinNominal(b.queue, g, gpus);
      }
    }
    return first >= 0 &&
           !quota_.WithinNominal(b.queue, first, int64_t{b.min_pods} * b.gpus_per_pod);
  }

  // The share job id's queue would have with the job admitted in the first flavor whose quota
  // holds it (at its smallest size); infinite if none does, so it goes after every other head.
  double HeadShare(int32_t id) const {
    const JobBook& b = state_[id];
    const int64_t gpus = int64_t{b.min_pods} * b.gpus_per_pod;
    for (int32_t g : quota_.Flavors(b.queue)) {
      if (b.node_group != kAnyGroup && g != b.node_group) continue;
      if (quota_.Fits(b.queue, g, gpus)) return quota_.Share(b.queue, g, gpus);
    }
    return std::numeric_limits<double>::infinity();
  }

  // Fair sharing's rule for taking a job of another queue (Kueue's preemption strategies,
  // LessThanOrEqualToFinalShare then LessThanInitialShare): the preemptor's queue, with the
  // preemptor admitted, would hold no more than the victim's queue without the victim, or less
  // than the victim's queue holds now. The admission core's Cycle::AllowedByFairSharing.
  bool AllowedByFairSharing(int32_t q, int32_t g, int64_t gpus, int32_t victim) const {
    const double mine = quota_.Share(q, g, gpus);
    const int32_t vq = state_[victim].queue;
    const int64_t freed = int64_t{state_[victim].count} * Spec(victim).gpus_per_pod;
    return mine <= quota_.Share(vq, state_[victim].group, -freed) ||
           mine < quota_.Share(vq, state_[victim].group, 0);
  }

  // Whether job id (q, g, gpus) may still take `victim` with the victims taken so far off the
  // books: another queue's job only while that queue borrows and, under fair sharing, while
  // the share rule still holds. Checking each victim against the books as they stand, not as
  // they stood before the first, is what keeps two queues from taking the same GPUs back and
  // forth (Kueue re-computes the shares after each victim; so does the admission core's take()).
  bool MayStillTake(int32_t q, int32_t g, int64_t gpus, int32_t victim) const {
    const int32_t vq = state_[victim].queue;
    if (vq == q) return true;
    return quota_.Borrowing(vq, g) &&
           (!options_.fair_sharing || AllowedByFairSharing(q, g, gpus, victim));
  }

  void Hold(int32_t id, const std::vector<int32_t>& nodes) {
    for (int32_t n : nodes) free_->Use(n, Spec(id).gpus_per_pod, 1);
  }
  void Unhold(int32_t id, const std::vector<int32_t>& nodes) {
    for (int32_t n : nodes) free_->Use(n, -Spec(id).gpus_per_pod, -1);
    if (nodes.empty()) return;
    ++seq_;
    for (int32_t n : nodes) {
      ForUnitsOf(n, [&](UnitStamps& unit) { unit.released = seq_; });
    }
  }

  // Releases everything the job holds: nodes and quota.
  void Drop(int32_t id) {
    JobBook& b = state_[id];
    if (b.phase == Phase::kRunning) EraseSorted(running_[b.group][b.priority], id);
    Unhold(id, b.nodes);
    b.nodes.clear();
    if (b.phase != Phase::kNone) {
      quota_.Charge(b.queue, b.group, -int64_t{b.count} * Spec(id).gpus_per_pod);
    }
    b.phase = Phase::kNone;
    pending_book_[id].rank = b.priority_rank;
    b.permit_deadline = 0;
    waiting_.erase(id);
    ++epoch_;
  }

  // The kind's placement rule on the current free capacity, no memo. `domain` >= 0 confines
  // Volcano to one hyperNode (gangpreempt's BuildNominationPlanInDomain).
  std::vector<int32_t> PlaceNow(int32_t id, int32_t group, int32_t pods,
                                int32_t domain = -1) const {
    const TraceJob& job = Spec(id);
    switch (kind_) {
      case Kind::kKueueTas:
        return PlaceKueueTas(*cluster_, *free_, job, group, pods);
      case Kind::kVolcano:
        return PlaceVolcano(*cluster_, *free_, job, group, pods, domain);
      case Kind::kKai:
        return PlaceKai(*cluster_, *free_, job, group, pods);
      case Kind::kFirstFit:
        break;
    }
    return PlaceFirstFit(*cluster_, *free_, job, group, pods);
  }

  // Within a cycle free capacity only shrinks (until an eviction), so a shape that failed to
  // place fails again for as many or more pods: remember the smallest failure per shape.
  std::vector<int32_t> Place(int32_t id, int32_t group, int32_t pods) {
    const std::pair<int32_t, int32_t> shape{group, state_[id].shape};
    auto failed = failed_placements_.find(shape);
    if (failed != failed_placements_.end() && pods >= failed->second) return {};
    std::vector<int32_t> nodes = PlaceNow(id, group, pods);
    if (nodes.empty()) {
      int32_t& smallest = failed_placements_.try_emplace(shape, pods).first->second;
      smallest = std::min(smallest, pods);
    }
    return nodes;
  }

  void Start(int32_t id, std::vector<Action>& actions) {
    JobBook& b = state_[id];
    b.phase = Phase::kRunning;
    b.permit_deadline = 0;
    waiting_.erase(id);
    InsertSorted(running_[b.group][b.priority], id);
    ++seq_;
    for (int32_t n : b.nodes) {
      ForUnitsOf(n, [&](UnitStamps& unit) { unit.started[b.priority_rank] = seq_; });
    }
    ++epoch_;
    actions.push_back(Action{Action::Kind::kStart, id, b.nodes});
  }

  // First-fit: pods go one by one onto the first node with room (within their pod-affinity
  // terms) and wait at Permit, holding it, until the gang is complete or the permit times out;
  // a pod that finds no node may preempt lower-priority pods (kube-scheduler's PostFilter).
  // Others: the whole gang or nothing.
  void TryPlaceAdmitted(int32_t id, std::vector<Action>& actions) {
    JobBook& b = state_[id];
    const TraceJob& job = Spec(id);
    if (kind_ != Kind::kFirstFit) {
      std::vector<int32_t> nodes = Place(id, b.group, b.count);
      if (nodes.empty()) return;
      b.nodes = std::move(nodes);
      Hold(id, b.nodes);
      Start(id, actions);
      return;
    }
    if (b.permit_deadline > 0 && now_ >= b.permit_deadline) {
      Unhold(id, b.nodes);  // Permit timed out: the waiting pods are rejected and retried
      b.nodes.clear();
      b.permit_deadline = 0;
      if (b.preempted_this_attempt) b.pod_preempt_epoch = natural_epoch_;
      b.preempted_this_attempt = false;
    }
    if (Idle(id)) return;
    const size_t had_nodes = b.nodes.size();
    const size_t had_actions = actions.size();
    int32_t missing = b.count - static_cast<int32_t>(b.nodes.size());
    // Coscheduling's PreFilter rejects a gang the cluster cannot hold right now (a single pod is
    // no gang: it goes on to the PostFilter, and may preempt).
    if (b.count > 1 && b.nodes.empty() && free_->GroupFit(b.group, job.gpus_per_pod) < missing) {
      MarkIdle(id);
      return;
    }
    while (true) {
      std::vector<int32_t> more =
          PlaceFirstFit(*cluster_, *free_, job, b.group, missing, b.nodes);
      Hold(id, more);
      b.nodes.insert(b.nodes.end(), more.begin(), more.end());
      missing = b.count - static_cast<int32_t>(b.nodes.size());
      if (missing == 0 || !PodPreemption(id, actions)) break;
      --missing;  // the preempting pod took its node
      if (missing == 0) break;
    }
    if (static_cast<int32_t>(b.nodes.size()) == b.count) {
      Start(id, actions);
    } else if (b.permit_deadline == 0 && !b.nodes.empty()) {
      b.permit_deadline = now_ + kPermitTimeoutS;
    }
    if (b.nodes.size() == had_nodes && actions.size() == had_actions) MarkIdle(id);
  }

  // A first-fit attempt that placed and preempted nothing does the same again until capacity is
  // released in its node group, a lower-priority job starts there (a new victim), or a node or
  // the preemption gate (natural_epoch_) changes: Idle() skips the repeats. Waiting gangs
  // outnumber these events by far on a busy cluster.
  void MarkIdle(int32_t id) {
    state_[id].idle_seq = seq_;
    state_[id].idle_natural_epoch = natural_epoch_;
  }
  // Changes count only inside the unit the gang's next pod is confined to (NextPodUnit).
  bool Idle(int32_t id) {
    JobBook& b = state_[id];
    const bool idle = StillIdle(b);
    if (!idle) b.idle_seq = -1;
    if (idle && options_.skipped_attempts != nullptr) ++*options_.skipped_attempts;
    return idle;
  }
  bool StillIdle(const JobBook& b) const {
    if (b.idle_seq < 0 || !options_.skip_idle_attempts) return false;
    bool idle = b.idle_natural_epoch == natural_epoch_;
    if (idle) {
      const PodUnit next = NextPodUnit(b.terms, b.nodes);
      const UnitStamps* unit = &group_stamps_[b.group];
      if (next.level == b.terms.node_level) {
        unit = &node_stamps_[next.anchor];
      } else if (next.level >= 0) {
        unit = &domain_stamps_[cluster_->nodes[next.anchor].domains[next.level]];
      }
      idle = unit->released <= b.idle_seq;
      // Starts of lower priorities only: their pods are the new victims.
      for (int32_t p = 0; idle && p < b.priority_rank; ++p) idle = unit->started[p] <= b.idle_seq;
    }
    return idle;
  }

  // Change stamps for Idle(), per unit (node group, domain, node): seq_ at the last release of
  // capacity there, and per priority rank at the last start of a job with pods there.
  struct UnitStamps {
    int64_t released = 0;
    std::vector<int64_t> started;
  };
  // Calls f on the stamps of the node, its domains and its node group.
  template <typename F>
  void ForUnitsOf(int32_t node, F f) {
    f(node_stamps_[node]);
    f(group_stamps_[cluster_->nodes[node].group]);
    for (int32_t d : cluster_->nodes[node].domains) f(domain_stamps_[d]);
  }
  size_t PriorityRank(int32_t priority) const {
    return std::lower_bound(priorities_.begin(), priorities_.end(), priority) - priorities_.begin();
  }

  // kube-scheduler's DefaultPreemption for the gang's next pod (pkg/scheduler/framework/plugins/
  // defaultpreemption, SelectVictimsOnNode + pickOneNodeForPreemption): on every node the pod's
  // affinity allows, the lower-priority pods whose removal lets it fit, keeping back the
  // highest-priority ones that need not go; the node whose victims have the lowest highest
  // priority, then the lowest priority sum, then the fewest victims, then the latest-started
  // highest-priority victims. A victim pod's job loses a pod and is evicted whole. Pods of one
  // gang preempt one by one, blind to each other; a pod that coscheduling's PreFilter rejects
  // (the gang does not fit the free capacity) still runs the PostFilter.
  bool PodPreemption(int32_t id, std::vector<Action>& actions) {
    JobBook& b = state_[id];
    // Once per change of the cluster the gang did not cause: a gang whose pods preempted and
    // then timed out at Permit would otherwise evict the restarted victims again every minute
    // forever (the real scheduler's timing breaks such loops; the simulator's clock does not).
    if (b.pod_preempt_epoch == natural_epoch_) return false;
    const TraceJob& job = Spec(id);
    const int32_t g = job.gpus_per_pod;
    const NodeGroup& ng = cluster_->groups[b.group];
    // (node, lower-priority running job) pairs, sorted: by node, each node's jobs in id order,
    // each job once. A pair is one integer, node in the high half, so that sorting is cheap.
    std::vector<uint64_t> pairs;
    const AffinityTerms& terms = b.terms;
    const auto [lo, hi] = UnitRange(*cluster_, terms, b.group, NextPodUnit(terms, b.nodes));
    const auto& by_priority = running_[b.group];
    for (auto it = by_priority.begin(); it != by_priority.end() && it->first < job.priority; ++it) {
      for (int32_t r : it->second) {
        for (int32_t n : state_[r].nodes) {
          if (n < lo || n >= hi) continue;  // Allows() would refuse it
          pairs.push_back(uint64_t{static_cast<uint32_t>(n)} << 32 | static_cast<uint32_t>(r));
        }
      }
    }
    if (pairs.empty()) return false;
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    auto node_of = [](uint64_t pair) { return static_cast<int32_t>(pair >> 32); };
    auto job_of = [](uint64_t pair) { return static_cast<int32_t>(pair & 0xffffffffu); };
    struct Choice {
      int32_t node = -1;
      std::vector<int32_t> victims;
      int32_t max_priority = 0;
      int64_t sum_priority = 0;
      int64_t earliest_top = 0;  // start order of the earliest highest-priority victim
    };
    Choice best;
    std::vector<int32_t> candidates;
    for (size_t i = 0; i < pairs.size();) {
      const int32_t node = node_of(pairs[i]);
      candidates.clear();
      for (; i < pairs.size() && node_of(pairs[i]) == node; ++i) {
        candidates.push_back(job_of(pairs[i]));
      }
      if (node < ng.begin || node >= ng.end || !free_->up(node)) continue;
      // Affinity: would the next pod be allowed here?
      if (!Allows(*cluster_, terms, b.nodes, node)) continue;
      auto gpus_on = [&](int32_t r) {
        const auto& nodes = state_[r].nodes;
        return Spec(r).gpus_per_pod * static_cast<int32_t>(std::count(nodes.begin(), nodes.end(), node));
      };
      int32_t room = free_->Free(node);
      for (int32_t r : candidates) room += gpus_on(r);
      if (room < g) continue;
      // Reprieve from the highest priority down while the pod still fits.
      std::vector<int32_t> sorted = candidates;
      std::sort(sorted.begin(), sorted.end(), [&](int32_t x, int32_t y) {
        return Spec(x).priority > Spec(y).priority;
      });
      Choice c;
      c.node = node;
      for (int32_t r : sorted) {
        if (room - gpus_on(r) >= g) {
          room -= gpus_on(r);
          continue;
        }
        c.victims.push_back(r);
        c.max_priority = std::max(c.max_priority, Spec(r).priority);
        c.sum_priority += Spec(r).priority;
      }
      if (c.victims.empty()) continue;
      c.earliest_top = std::numeric_limits<int64_t>::max();
      for (int32_t r : c.victims) {
        if (Spec(r).priority == c.max_priority) {
          c.earliest_top = std::min(c.earliest_top, state_[r].admitted_seq);
        }
      }
      auto better = [](const Choice& x, const Choice& y) {
        if (x.max_priority != y.max_priority) return x.max_priority < y.max_priority;
        if (x.sum_priority != y.sum_priority) return x.sum_priority < y.sum_priority;
        if (x.victims.size() != y.victims.size()) return x.victims.size() < y.victims.size();
        return x.earliest_top > y.earliest_top;  // the most recently started victims
      };
      if (best.node < 0 || better(c, best)) best = std::move(c);
    }
    if (best.node < 0) return false;
    Evict(best.victims, actions);
    b.preempted_this_attempt = true;
    Hold(id, {best.node});
    b.nodes.push_back(best.node);
    return true;
  }

  void Evict(const std::vector<int32_t>& victims, std::vector<Action>& actions) {
    failed_placements_.clear();  // evictions free capacity and quota
    failed_preemptions_.clear();
    ++change_;
    for (int32_t v : victims) {
      Drop(v);
      actions.push_back(Action{Action::Kind::kEvict, v, {}});
    }
  }

  void Admit(int32_t id, int32_t group, int32_t count) {
    JobBook& b = state_[id];
    b.phase = Phase::kAdmitted;
    pending_book_[id].rank = -1;
    b.group = group;
    b.count = count;
    b.admitted_seq = next_seq_++;
    b.idle_seq = -1;
    if (kind_ == Kind::kFirstFit) b.terms = TermsOf(*cluster_, Spec(id), group);
    quota_.Charge(b.queue, group, int64_t{count} * Spec(id).gpus_per_pod);
    waiting_.insert(id);
  }

  // Admits and starts a gang on the placement found for it.
  void StartOn(int32_t id, int32_t group, int32_t count, std::vector<int32_t> nodes,
               std::vector<Action>& actions) {
    Admit(id, group, count);
    state_[id].nodes = std::move(nodes);
    Hold(id, state_[id].nodes);
    Start(id, actions);
  }

  // A request identical to one refused since the last change is refused again (the same quota
  // checks, the same placement and preemption searches on the same state). Most pending jobs of
  // a busy cluster end here, in every cycle. Records what the job's own refused preemption
  // search would have recorded.
  bool RefusedAgain(int32_t id, int32_t request) {
    const RequestBook& refusal = request_books_[request];
    if (!options_.skip_repeated_refusals || refusal.refusal_change != change_) return false;
    int64_t& preempt_epoch = preempt_epochs_[id];
    if (!refusal.preempt_searched && preempt_epoch != epoch_) return false;
    preempt_epoch = epoch_;
    if (options_.skipped_refusals != nullptr) ++*options_.skipped_refusals;
    return true;
  }

  // Admission of one pending job. Quota only for first-fit (Kueue without TAS; placement happens
  // later in kube-scheduler); quota plus placement for the topology-aware schedulers.
  // `request` is pending_book_[id].request, which the caller has at hand: most calls end at
  // request_books_ and only write the job's own book.
  bool TryAdmit(int32_t id, int32_t request, const CycleView& view,
                std::vector<Action>& actions) {
    if (RefusedAgain(id, request)) return false;
    int64_t& preempt_epoch = preempt_epochs_[id];
    RequestBook& refusal = request_books_[request];
    const int64_t change = change_;
    const bool gated = preempt_epoch == epoch_;  // its own search already failed this epoch
    const bool admitted = TryAdmitAnew(id, view, actions);
    if (admitted) {
      ++change_;
    } else if (change_ == change) {  // (a failed commit evicts: then nothing is recorded)
      if (refusal.refusal_change != change_) {
        refusal.refusal_change = change_;
        refusal.preempt_searched = false;
      }
      // Refused without being gated, the job searched for victims and found none.
      refusal.preempt_searched = refusal.preempt_searched || !gated;
    }
    return admitted;
  }

  bool TryAdmitAnew(int32_t id, const CycleView& view, std::vector<Action>& actions) {
    const JobBook& b = state_[id];  // the trace is not read
    const int32_t q = b.queue;
    const int32_t counts[] = {b.pods, b.min_pods};
    const int n_counts = b.min_pods < b.pods ? 2 : 1;
    for (int32_t g : quota_.Flavors(q)) {
      if (b.node_group != kAnyGroup && g != b.node_group) continue;
      for (int i = 0; i < n_counts; ++i) {
        const int32_t count = counts[i];
        const int64_t gpus = int64_t{count} * b.gpus_per_pod;
        if (!quota_.Fits(q, g, gpus)) continue;
        if (kind_ == Kind::kFirstFit) {
          Admit(id, g, count);
          TryPlaceAdmitted(id, actions);
          return true;
        }
        std::vector<int32_t> nodes = Place(id, g, count);
        if (nodes.empty()) continue;
        StartOn(id, g, count, std::move(nodes), actions);
        return true;
      }
    }
    // Preemption is retried only when something changed since the last failed attempt.
    if (preempt_epochs_[id] == epoch_) return false;
    const bool done = Preempt(id, view, actions);
    if (!done) preempt_epochs_[id] = epoch_;
    return done;
  }

  // ---- Preemption: each peer's own rule (docs/baselines.md "Preemption") ----------------------

  struct Candidate {
    int32_t id;
    bool other_queue;
  };

  // Running jobs of flavor g the queue's policy lets job `id` preempt: its own queue's lower
  // priorities (withinClusterQueue), and jobs of queues in its cohort that are borrowing: when
  // it would stay within its nominal quota as reclaimWithinCohort says (Any, or LowerPriority),
  // else as borrowWithinCohort says (LowerPriority, up to its threshold).
  // With fair sharing the preemptor need not stay within its nominal quota; the share rule is
  // checked as each victim is taken (MayStillTake): taking victims only lowers their queues'
  // shares, so one that fails before the first victim fails after it too.
  std::vector<Candidate> QuotaCandidates(int32_t id, int32_t g, int64_t gpus) const {
    const TraceJob& job = Spec(id);
    const int32_t q = state_[id].queue;
    const bool reclaiming = options_.fair_sharing || quota_.WithinNominal(q, g, gpus);
    std::vector<Candidate> out;
    const bool any_priority = reclaiming && quota_.ReclaimAny(q);
    for (const auto& [p, ids] : running_[g]) {
      if (p >= job.priority && !any_priority) break;  // nothing below can be a candidate
      for (int32_t r : ids) {
        const int32_t rq = state_[r].queue;
        if (rq == q) {
          if (quota_.WithinCq(q) && p < job.priority) out.push_back({r, false});
        } else if (quota_.SameCohort(q, rq) && quota_.Borrowing(rq, g)) {
          if (reclaiming ? quota_.ReclaimAny(q) || (quota_.ReclaimLower(q) && p < job.priority)
                         : quota_.MayPreemptWhileBorrowing(q, job.priority, p)) {
            out.push_back({r, true});
          }
        }
      }
    }
    return out;
  }

  // Takes a job off the books (quota and nodes) for a simulation, and back.
  void Remove(int32_t v) {
    quota_.Charge(state_[v].queue, state_[v].group,
                  -int64_t{state_[v].count} * Spec(v).gpus_per_pod);
    Unhold(v, state_[v].nodes);
  }
  void Restore(int32_t v) {
    quota_.Charge(state_[v].queue, state_[v].group,
                  int64_t{state_[v].count} * Spec(v).gpus_per_pod);
    Hold(v, state_[v].nodes);
  }

  // Evicts the victims and starts the preemptor on the placement found for it.
  bool Commit(int32_t id, int32_t g, int32_t count, const std::vector<int32_t>& victims,
              std::vector<Action>& actions, int32_t domain = -1) {
    Evict(victims, actions);
    if (kind_ == Kind::kFirstFit) {
      Admit(id, g, count);
      TryPlaceAdmitted(id, actions);
      return true;
    }
    std::vector<int32_t> nodes = PlaceNow(id, g, count, domain);
    if (nodes.empty()) {
      ++failed_commits_;  // cannot happen: the simulation found this placement
      return false;
    }
    StartOn(id, g, count, std::move(nodes), actions);
    return true;
  }

  bool Preempt(int32_t id, const CycleView& view, std::vector<Action>& actions) {
    (void)view;
    const JobBook& b = state_[id];
    const int32_t q = b.queue;
    for (int32_t g : quota_.Flavors(q)) {
      if (b.node_group != kAnyGroup && g != b.node_group) continue;
      const int32_t count = b.min_pods;
      const int64_t gpus = int64_t{count} * b.gpus_per_pod;
      const std::tuple<int32_t, int32_t, int32_t> key{q, g, b.shape};
      auto known = failed_preemptions_.find(key);
      if (known != failed_preemptions_.end() && b.priority <= known->second.first &&
          gpus >= known->second.second) {
        continue;
      }
      bool done = false;
      switch (preempt_kind_) {
        case Kind::kFirstFit:
          done = PreemptKueue(id, g, count, /*topology=*/false, actions);
          break;
        case Kind::kKueueTas:
          done = PreemptKueue(id, g, count, /*topology=*/true, actions);
          break;
        case Kind::kVolcano:
          done = PreemptVolcano(id, g, count, actions);
          break;
        case Kind::kKai:
          done = PreemptKai(id, g, count, actions);
          break;
      }
      if (done) return true;
      auto& entry = failed_preemptions_[key];
      if (entry.second == 0 || (b.priority >= entry.first && gpus <= entry.second)) {
        entry = {b.priority, gpus};
      }
    }
    return false;
  }

  // Kueue (pkg/scheduler/preemption/preemption.go): candidates in CandidatesOrdering (other
  // queues first, lower priority, most recently admitted), removed one by one until the
  // workload fits — quota, and with TAS a topology assignment (workloadTopologyFits) — then
  // fillBackWorkloads adds back, newest removal first except the last, every victim it can do
  // without. Without TAS (first-fit) only quota counts: a workload that fits quota is admitted
  // and never preempts.
  bool PreemptKueue(int32_t id, int32_t g, int32_t count, bool topology,
                    std::vector<Action>& actions) {
    const int32_t q = state_[id].queue;
    const int64_t gpus = int64_t{count} * Spec(id).gpus_per_pod;
    if (!topology && quota_.Fits(q, g, gpus)) return false;
    std::vector<Candidate> candidates = QuotaCandidates(id, g, gpus);
    if (candidates.empty()) return false;
    // Under fair sharing, of other queues' jobs those of the queue with the largest share
    // first (Kueue's fairsharing.MakeClusterQueueOrdering).
    std::vector<double> share;
    if (options_.fair_sharing) {
      share.resize(quota_.queue_count());
      for (size_t k = 0; k < share.size(); ++k) {
        share[k] = quota_.Share(static_cast<int32_t>(k), g, 0);
      }
    }
    std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
      if (a.other_queue != b.other_queue) return a.other_queue;
      if (!share.empty()) {
        const double sa = share[state_[a.id].queue], sb = share[state_[b.id].queue];
        if (sa != sb) return sa > sb;
      }
      const int32_t pa = Spec(a.id).priority, pb = Spec(b.id).priority;
      if (pa != pb) return pa < pb;
      return state_[a.id].admitted_seq > state_[b.id].admitted_seq;
    });
    auto fits = [&] {
      return quota_.Fits(q, g, gpus) && (!topology || !PlaceNow(id, g, count).empty());
    };
    std::vector<int32_t> victims;
    bool ok = false;
    for (const Candidate& c : candidates) {
      if (!MayStillTake(q, g, gpus, c.id)) continue;
      Remove(c.id);
      victims.push_back(c.id);
      if (fits()) {
        ok = true;
        break;
      }
    }
    if (ok) {
      for (int i = static_cast<int>(victims.size()) - 2; i >= 0; --i) {
        Restore(victims[i]);
        if (fits()) {
          victims.erase(victims.begin() + i);  // spared
        } else {
          Remove(victims[i]);
        }
      }
    }
    for (int32_t v : victims) Restore(v);
    if (!ok) return false;
    return Commit(id, g, count, victims, actions);
  }

  // Volcano gangpreempt / gangreclaim (pkg/scheduler/actions/gangpreempt/gangpreempt.go,
  // gangevict): candidate domains are the hyperNodes the job's topology allows whose
  // allocatable holds it, highest tier first, at most 8 (the root for a job without hard
  // topology). In each, victims are jobs with pods there — same queue and lower priority
  // (preempt), else other queues over their quota (reclaim) — lowest priority and newest first,
  // then the largest share of the job inside the domain; added until the domain's idle GPUs plus
  // theirs cover the need, then the job is placed inside that domain with them gone.
  bool PreemptVolcano(int32_t id, int32_t g, int32_t count, std::vector<Action>& actions) {
    const TraceJob& job = Spec(id);
    const int32_t q = state_[id].queue;
    const int64_t gpus = int64_t{count} * job.gpus_per_pod;
    // Only an enqueued job (its queue's capability allows it) is a preemptor.
    if (!quota_.WithinCapability(q, g, gpus)) return false;
    Topo topo(*cluster_, *free_, g);
    const int32_t required = topo.Level(job.required_level);
    std::vector<int32_t> domains;  // -1 = the whole node group
    if (required >= 0 && required < topo.node_level()) {
      constexpr size_t kMaxDomains = 8;
      for (int32_t level = required; level < topo.node_level() && domains.size() < kMaxDomains;
           ++level) {
        std::vector<int32_t> tier;
        for (int32_t u : topo.Units(level)) {
          if (topo.Capacity(level, u) >= gpus) tier.push_back(u);
        }
        const size_t room = kMaxDomains - domains.size();
        if (tier.size() > room) tier.erase(tier.begin(), tier.end() - room);
        domains.insert(domains.end(), tier.begin(), tier.end());
      }
    } else {
      domains.push_back(-1);
    }
    std::vector<Candidate> all = QuotaCandidates(id, g, gpus);
    for (bool reclaim : {false, true}) {
      for (int32_t d : domains) {
        const auto [begin, end] = d < 0 ? topo.Range(-1, -1) : topo.Range(cluster_->domains[d].level, d);
        auto inside = [&](int32_t r) {
          int64_t n = 0;
          for (int32_t node : state_[r].nodes) n += node >= begin && node < end;
          return n;
        };
        std::vector<int32_t> candidates;
        for (const Candidate& c : all) {
          if (c.other_queue == reclaim && inside(c.id) > 0) candidates.push_back(c.id);
        }
        std::sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
          if (Spec(a).priority != Spec(b).priority) return Spec(a).priority < Spec(b).priority;
          if (state_[a].admitted_seq != state_[b].admitted_seq)
            return state_[a].admitted_seq > state_[b].admitted_seq;
          const double ra = static_cast<double>(inside(a)) / state_[a].nodes.size();
          const double rb = static_cast<double>(inside(b)) / state_[b].nodes.size();
          return ra > rb;
        });
        int64_t available = 0;
        for (int32_t n = begin; n < end; ++n) available += free_->Free(n);
        std::vector<int32_t> victims;
        bool ok = false;
        for (int32_t v : candidates) {
          if (!MayStillTake(q, g, gpus, v)) continue;
          Remove(v);
          victims.push_back(v);
          available += inside(v) * Spec(v).gpus_per_pod;
          if (available < gpus) continue;
          ok = quota_.Fits(q, g, gpus) && !PlaceNow(id, g, count, d).empty();
          if (ok) break;
        }
        for (int32_t x : victims) Restore(x);
        if (ok) return Commit(id, g, count, victims, actions, d);
      }
    }
    return false;
  }

  // KAI preempt / reclaim (pkg/scheduler/actions/preempt/preempt.go, reclaim, common/solvers):
  // victims in victim order — same queue and lower priority for preempt, other queues over their
  // quota for reclaim — added job by job, each scenario simulated with the job placed by the
  // topology plugin; the first scenario where it fits is committed.
  bool PreemptKai(int32_t id, int32_t g, int32_t count, std::vector<Action>& actions) {
    const int32_t q = state_[id].queue;
    const int64_t gpus = int64_t{count} * Spec(id).gpus_per_pod;
    std::vector<Candidate> all = QuotaCandidates(id, g, gpus);
    for (bool reclaim : {false, true}) {
      std::vector<int32_t> candidates;
      for (const Candidate& c : all) {
        if (c.other_queue == reclaim) candidates.push_back(c.id);
      }
      std::sort(candidates.begin(), candidates.end(), [&](int32_t a, int32_t b) {
        if (Spec(a).priority != Spec(b).priority) return Spec(a).priority < Spec(b).priority;
        return state_[a].admitted_seq > state_[b].admitted_seq;
      });
      std::vector<int32_t> victims;
      bool ok = false;
      for (int32_t v : candidates) {
        if (!MayStillTake(q, g, gpus, v)) continue;
        Remove(v);
        victims.push_back(v);
        if (quota_.Fits(q, g, gpus) && !PlaceNow(id, g, count).empty()) {
          ok = true;
          break;
        }
      }
      for (int32_t v : victims) Restore(v);
      if (!ok) continue;
      if (!Commit(id, g, count, victims, actions)) return false;
      // The simulation also re-allocates the victims (GetJobsToAllocate): those that fit again
      // are pipelined, restarted elsewhere at once; the rest wait.
      for (int32_t v : victims) {
        const int32_t pods = state_[v].count;  // the size it ran at
        const int64_t need = int64_t{pods} * Spec(v).gpus_per_pod;
        for (int32_t vg : quota_.Flavors(state_[v].queue)) {
          if (vg != g || !quota_.Fits(state_[v].queue, vg, need)) continue;
          std::vector<int32_t> nodes = PlaceNow(v, vg, pods);
          if (nodes.empty()) continue;
          StartOn(v, vg, pods, std::move(nodes), actions);
          break;
        }
      }
      return true;
    }
    return false;
  }

  Kind kind_;
  Kind preempt_kind_;  // whose preemption rule (BaselineOptions::preemption_rule)
  std::string name_;
  BaselineOptions options_;
  const ClusterModel* cluster_ = nullptr;
  const std::vector<JobStatus>* jobs_ = nullptr;
  std::unique_ptr<FreeCapacity> free_;
  QuotaBook quota_;
  std::vector<JobBook> state_;
  std::vector<PendingBook> pending_book_;
  // Per job, epoch_ of its last preemption attempt that found nothing. Apart from PendingBook:
  // the heads pass writes it for nearly every pending job and reads nothing else of the book.
  std::vector<int64_t> preempt_epochs_;
  std::set<int32_t> waiting_;
  mutable std::vector<int32_t> strict_heads_;  // StrictFifoHead's, per queue; built on demand
  // Per node group, per priority (ascending): its running jobs, ids ascending.
  std::vector<std::map<int32_t, std::vector<int32_t>>> running_;
  // this cycle: (node group, shape) -> fewest pods failed
  std::map<std::pair<int32_t, int32_t>, int32_t> failed_placements_;
  // this cycle: queue/flavor/shape -> (priority, GPUs) for which preemption found nothing
  std::map<std::tuple<int32_t, int32_t, int32_t>, std::pair<int32_t, int64_t>> failed_preemptions_;
  // Per request, stamped with change_, which moves at every cycle, admission and eviction:
  // TryAdmit's refusal (when, and whether a preemption search was part of it) and HeadsPass's
  // key (JobBook is not read for a head whose request has one). One 32-byte record holds both:
  // the pass reads them for every pending job.
  struct RequestBook {
    int64_t refusal_change = -1;
    bool preempt_searched = false;
    int64_t key_change = -1;
    double key = 0;
  };
  std::vector<RequestBook> request_books_;
  int64_t change_ = 0;
  double now_ = 0;
  int64_t next_seq_ = 0;
  int64_t epoch_ = 0;  // bumped by every start, end and node change
  int64_t natural_epoch_ = 0;  // bumped by ends and node changes only (not by evictions)
  int64_t failed_commits_ = 0;
  int64_t seq_ = 0;  // counts releases of capacity and starts, for Idle()
  std::vector<int32_t> priorities_;  // the trace's distinct priorities, ascending
  // Cycle's pending jobs, per queue and priority rank (queue * ranks + rank), in submit order
  struct PendingJob {
    int32_t id;
    int32_t request;  // pending_book_[id].request, so that the pass need not read the book
  };
  std::vector<std::vector<PendingJob>> pending_lists_;
  std::vector<UnitStamps> group_stamps_, domain_stamps_, node_stamps_;
};

}  // namespace

std::vector<std::string> BaselineNames() {
  return {"first-fit", "kueue-tas", "volcano-hypernode", "kai-topology"};
}

absl::StatusOr<std::unique_ptr<Policy>> MakeBaseline(std::string_view name,
                                                     const BaselineOptions& options) {
  constexpr std::array kKinds = {std::pair{Kind::kFirstFit, "first-fit"},
                                 std::pair{Kind::kKueueTas, "kueue-tas"},
                                 std::pair{Kind::kVolcano, "volcano-hypernode"},
                                 std::pair{Kind::kKai, "kai-topology"}};
  // A preemption rule is one of the topology-aware baselines' (all but first-fit).
  const auto rules = absl::MakeConstSpan(kKinds).subspan(1);
  std::optional<Kind> rule;
  if (!options.preemption_rule.empty()) {
    for (const auto& [kind, known] : rules) {
      if (options.preemption_rule == known) rule = kind;
    }
    if (!rule) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown preemption rule \"", options.preemption_rule, "\" (known: ",
          absl::StrJoin(rules, ", ", [](std::string* out, const auto& r) { out->append(r.second); }),
          ")"));
    }
  }
  for (auto [kind, known] : kKinds) {
    if (name != known) continue;
    const Kind preempt = rule && kind != Kind::kFirstFit ? *rule : kind;
    return std::make_unique<BaselinePolicy>(kind, preempt, known, options);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown policy \"", std::string(name),
                                                 "\" (known: phalanx, ",
                                                 absl::StrJoin(BaselineNames(), ", "), ")"));
}

}  // namespace phalanx::sim
