// GangSearch: one placement search over a ClusterSnapshot for one validated gang shape. It is
// the engine behind Place / Reserve / Resize / PlanPreemption:
//
//   ASSIGN_OR_RETURN(GangShape shape, ValidateGang(request, snapshot));
//   GangSearch search(snapshot, shape);
//   search.Run(shape.min_count);                   // exact capacities, pruned by aggregates
//   if (auto choice = search.Tightest(shape.min_count)) {
//     std::vector<int> rank_nodes = search.Allocate(*choice, shape.min_count);
//   } else {
//     Explanation why = search.Explain(shape.min_count);  // after an unpruned Run(0)
//   }
//
// Capacity of a domain = how many pods of the shape it can hold with group constraints applied:
// raw per-node slots summed below the group level, rounded down to a multiple of group_size at
// the group level, summed above it. See docs/placement.md for the algorithm and its invariants.
//
// A search of the whole live cluster (no overlay, no root) keeps its per-node and per-domain
// results in the snapshot's ShapeCache for that shape, and the next search of the same shape
// recomputes only the subtrees whose version moved: an admission cycle reserving a thousand
// gangs of a few shapes touches a few dozen nodes per gang instead of every node.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/placement_types.h"

namespace phalanx::placement {

// A GangRequest checked and translated to level indices and interned resources.
struct GangShape {
  int32_t min_count = 0;  // fixed-size gangs: min = max = count, step = 1
  int32_t max_count = 0;
  int32_t step = 1;
  ResourceVector per_pod;       // includes one `pods` unit
  std::vector<int> resources;   // indices with per_pod > 0, GPU first (it usually binds)
  std::string missing_resource; // a requested resource no node has advertised, "" if none
  int required_level = 0;       // 0 = the whole cluster
  int preferred_level = 0;      // 0 = none
  int group_size = 0;           // 0 = no groups
  int group_level = 0;
  int min_node_depth = 0;       // nodes carrying fewer topology labels cannot be used
  std::vector<std::pair<std::string, std::string>> node_selector;
  std::vector<NodeSelectorTerm> node_affinity;  // GangRequest::node_affinity, validated
  std::vector<Toleration> tolerations;
  std::vector<int> excluded;    // node indices never used (GangRequest::excluded_nodes), sorted
  int64_t max_per_node = 0;     // GangRequest::max_pods_per_node; 0 = no limit
  ResourceList per_pod_list;    // as requested, for messages
};

// InvalidArgument naming the field for bad input; never crashes on any request.
absl::StatusOr<GangShape> ValidateGang(const GangRequest& request, const ClusterSnapshot& snapshot);

// The largest count in [shape.min_count, min(shape.max_count, limit)] of the form min + k*step,
// or 0 if even the minimum exceeds `limit`.
int32_t LargestCount(const GangShape& shape, int64_t limit);

// Why a node holds no pod of a shape, as a small code (names in GangSearch::Explain):
// kRejectNone if it holds some, kRejectInsufficient + r when resource r is short now (busy),
// kRejectTooSmall + r when even the empty node has less of r than one pod requests.
enum RejectCode : int {
  kRejectNone,
  kRejectNotReady,
  kRejectUnschedulable,
  kRejectUnhealthy,
  kRejectTainted,
  kRejectSelector,
  kRejectMissingLabel,
  kRejectMissingResource,
  kRejectExcluded,
  kRejectInsufficient,
  kRejectTooSmall = kRejectInsufficient + kMaxResources,
};
inline constexpr int kRejectCodes = kRejectTooSmall + kMaxResources;

// The cache key of a shape: every field that changes what a node can hold (not the levels a
// search looks at, except through min_node_depth).
std::string ShapeCacheKey(const GangShape& shape);

// One shape's search results over the whole live cluster, valid for the node and domain versions
// it records (ClusterSnapshot::Node::version / Domain::version) under one labels generation.
struct ShapeCache {
  uint64_t labels_generation = ~uint64_t{0};
  int levels = 0;                   // topology levels + the node level
  std::vector<uint64_t> node_seen;  // per node: the version slots/reason were computed at
  std::vector<int64_t> slots;       // per node: raw pods of the shape it holds
  std::vector<uint8_t> reason;      // per node: RejectCode
  std::vector<uint64_t> domain_seen;
  std::vector<int64_t> capacity;    // per domain, group-aware
  // per domain x level (>= the domain's own): the largest capacity of one domain of that level
  // in the subtree (at the node level: of one node). Lets a search skip whole subtrees.
  std::vector<int64_t> best;
  std::vector<int32_t> reasons;     // per domain x RejectCode: nodes of the subtree
};

// True if a NoSchedule/NoExecute taint is tolerated (Kubernetes toleration matching).
bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint);

class GangSearch {
 public:
  // Extra free resources per node index, as if some gangs were gone (preemption planning).
  // Open addressing: planners build one per fit check, and a node-based map allocated per node.
  using FreeOverlay = absl::flat_hash_map<int, ResourceVector>;

  // A placement domain: a topology domain, or a single node (is_node) at the hostname level.
  struct Choice {
    int level = 0;
    int index = 0;  // domain index, or node index when is_node
    bool is_node = false;
  };

  // Per-node and per-domain results of an overlay or subtree search, reusable across searches
  // of one snapshot so that many small searches (preemption planning) do not each allocate and
  // clear cluster-sized arrays.
  // An entry is valid only if its stamp equals the current epoch.
  struct Scratch {
    std::vector<int64_t> slots;
    std::vector<int64_t> capacity;
    std::vector<uint32_t> slots_epoch;
    std::vector<uint32_t> capacity_epoch;
    uint32_t epoch = 0;
  };

  // Searches the subtree of `root` (0 = the whole cluster). With an overlay, aggregates are no
  // longer upper bounds, so pruning is off. `scratch`, if given, must outlive the search and not
  // be shared with a live search. Without overlay, root and scratch the search uses (and
  // updates) the snapshot's ShapeCache, so the snapshot must not change during the search.
  // With `as_if_empty`, every node counts as holding nothing (bound pods and reservations given
  // back; `overlay` is then ignored): what no amount of waiting can exceed.
  GangSearch(const ClusterSnapshot& snapshot, const GangShape& shape, int root = 0,
             const FreeOverlay* overlay = nullptr, Scratch* scratch = nullptr,
             bool as_if_empty = false);
  GangSearch(const GangSearch&) = delete;
  GangSearch& operator=(const GangSearch&) = delete;

  // Computes per-node slots and per-domain capacities. Subtrees that cannot hold a single pod,
  // and candidate-level domains whose aggregate bound is below `prune_below`, are skipped (their
  // capacity reads 0). Run(0) computes everything exactly.
  void Run(int64_t prune_below);

  int64_t Capacity(int domain) const {
    if (cache_ != nullptr) return cache_->capacity[domain];
    return scratch_->capacity_epoch[domain] == scratch_->epoch ? scratch_->capacity[domain] : 0;
  }
  int64_t NodeCapacity(int node) const;
  // The largest capacity of one placement domain no coarser than the required level.
  int64_t MaxCount() const;

  // Cached mode, after Run(0) of the whole cluster: gives resources back node by node and keeps
  // MaxCount() up to date as if they were free, touching only the freed nodes and the domains
  // above them. Backfill's start estimate frees gang after gang, in order of expected end,
  // until the shape fits: the cost is the nodes freed, not the cluster times the steps.
  class Sweep {
   public:
    explicit Sweep(const GangSearch& search);
    void Free(int node, const ResourceVector& extra);
    int64_t MaxCount() const { return best_; }
    // Everything freed so far, for an overlay search of the same state.
    const FreeOverlay& overlay() const { return extra_; }
    // What an overlay search of everything freed so far would pick for `count` pods (Tightest)
    // and the ranks it would give them (Allocate), without searching the cluster: only the
    // ancestors of `recent` are candidates, and only the chosen domain's subtree is searched.
    // Exact when every domain that holds `count` contains a node of `recent`: true of the nodes
    // freed since MaxCount() was last below `count`, as a domain none of them is in holds what
    // it held then.
    std::optional<Choice> Tightest(int64_t count, const std::vector<int>& recent) const;
    std::vector<int> Allocate(const Choice& choice, int64_t count) const;

   private:
    int64_t NodeValue(int node) const;
    int64_t DomainValue(int domain) const;
    int64_t Round(int domain, int64_t sum) const;

    const GangSearch& search_;
    const ClusterSnapshot& snapshot_;
    int ceiling_;
    FreeOverlay extra_;
    absl::flat_hash_map<int, int64_t> node_capacity_;  // freed nodes
    absl::flat_hash_map<int, int64_t> sum_;            // domains above them, before rounding
    int64_t best_;
  };

  // The tightest placement domain holding `count` pods: the finest level with a feasible
  // candidate, best fit among those (least capacity left over, then fewest free GPUs, then the
  // one in fuller domains, nearest first, so that small gangs fill partly used domains and keep
  // empty ones whole; then topology order). nullopt if none.
  std::optional<Choice> Tightest(int64_t count) const;
  // Like Tightest but only among domains that contain one of `anchors` (node indices): grows a
  // gang next to its existing ranks.
  std::optional<Choice> TightestNear(const std::vector<int>& anchors, int64_t count) const;
  // Rank -> node for `count` pods inside `choice`, in topology order, packed fullest-first.
  std::vector<int> Allocate(const Choice& choice, int64_t count) const;

  // Why `wanted` pods do not fit. Needs Run(0) for exact numbers. With `overlay` (cached mode
  // only): as if its extra resources were free, recomputing only the overlay's nodes.
  Explanation Explain(int64_t wanted, const FreeOverlay* overlay = nullptr) const;

  // Cached mode, after Run: the capacity of `target` if `overlay`'s extra resources were free.
  // Equal to an overlay search's, but only the overlay's nodes and the domains above them are
  // recomputed; everything else comes from the cache. Preemption planning asks this hundreds
  // of times per plan with a few gangs' ranks freed.
  int64_t CapacityWith(const Choice& target, const FreeOverlay& overlay) const;

 private:
  struct Entry {
    int64_t capacity;
    int index;
    bool is_node;
  };

  // A best-fit choice being built: the first candidate with the least (capacity, free GPUs),
  // ties going to the one in fuller domains (InFullerDomains).
  struct Pick {
    std::optional<Choice> choice;
    int64_t capacity = 0;
    int64_t gpus = 0;
  };

  int64_t Visit(int domain, int64_t prune_below);
  // Cached mode: brings the cache up to date below `domain` (only subtrees whose version moved).
  void Refresh(int domain);
  int64_t Best(int domain, int level) const {
    return cache_->best[static_cast<size_t>(domain) * cache_->levels + level];
  }
  // Cached mode: best fit among the level-`level` domains (or nodes) holding `count`, looking
  // at their enclosing domains fullest first and stopping once no later candidate can win.
  void PickAt(int level, int64_t count, Pick& pick) const;
  // Cached mode: the domains (in topology order) whose children at `level`, or own nodes at the
  // node level, are candidates, skipping subtrees whose Best is too small.
  void CollectParents(int domain, int level, int64_t count, std::vector<int>& out) const;
  // Adds a candidate to `pick`; true if it became the pick and no later candidate can beat it.
  bool Consider(const Choice& choice, int64_t capacity, int64_t count, Pick& pick) const;
  // True if `pick` has the least (capacity, free GPUs) any candidate can have.
  bool AtFloor(const Pick& pick, int64_t count) const;
  // True if no candidate can beat `pick`: at the floor, and nothing else free in any domain
  // enclosing it.
  bool Unbeatable(const Pick& pick, int64_t count) const;
  // The domain directly enclosing a candidate (a node's deepest domain, a domain's parent).
  int Enclosing(const Choice& choice) const;
  // True if the domains enclosing `a` are fuller than those enclosing `b`: at the first level,
  // nearest first, where they differ, fewer free GPUs. False when they tie.
  bool InFullerDomains(const Choice& a, const Choice& b) const;
  // Exact pods-of-this-shape a node can take with `extra` free on top (may be null); 0 if the
  // node is excluded for any reason.
  int64_t ComputeSlots(int node, const ResourceVector* extra) const;
  int64_t ComputeSlots(int node) const { return ComputeSlots(node, Extra(node)); }
  bool IsExcluded(int node) const {
    return !shape_.excluded.empty() &&
           std::binary_search(shape_.excluded.begin(), shape_.excluded.end(), node);
  }
  // Applies group rounding at the node level to raw slots.
  int64_t NodeGroupRound(int64_t slots) const;
  // CapacityWith below `domain`: dirty[d] is set for the domains holding an overlay node.
  int64_t CapacityWith(int domain, const std::vector<uint8_t>& dirty,
                       const FreeOverlay& overlay) const;
  // The overlay's extra free resources on `node`, or null.
  const ResourceVector* Extra(int node) const;
  // Whether the shape's node selector and affinity admit the node (or some node of the domain):
  // only those can be named as the closest candidate in an explanation.
  bool Selected(int index, bool is_node) const {
    if (selector_ == nullptr) return true;
    return is_node ? selector_->node_ok[index] != 0 : selector_->domain_ok[index] != 0;
  }
  // Why node `node` holds no pod of this shape with `extra` free on top (a RejectCode).
  int RejectReason(int node, const ResourceVector* extra) const;
  int RejectReason(int node) const { return RejectReason(node, Extra(node)); }
  // Per domain: 1 if it holds a node of `overlay` inside `top`'s subtree (`top` included).
  std::vector<uint8_t> DirtyDomains(int top, const FreeOverlay& overlay) const;
  // The Explanation::nodes_rejected key of a reason code.
  std::string RejectName(int reason) const;
  int64_t UpperBound(int domain) const;
  int64_t FreeGpus(const Choice& choice) const;
  void Fill(int domain, int64_t count, std::vector<int>& out) const;
  std::optional<Choice> BestFit(const std::vector<Choice>& candidates, int64_t count) const;
  int CeilingLevel() const;
  int64_t Slots(int node) const {
    if (cache_ != nullptr) return cache_->slots[node];
    return scratch_->slots_epoch[node] == scratch_->epoch ? scratch_->slots[node] : 0;
  }

  const ClusterSnapshot& snapshot_;
  const GangShape& shape_;
  int root_;
  const FreeOverlay* overlay_;
  bool as_if_empty_;
  Scratch own_scratch_;
  Scratch* scratch_;  // slots per node (raw), capacity per domain (group-aware)
  ShapeCache* cache_ = nullptr;  // set in cached mode, when scratch_ is unused
  // Nodes and domains the shape's node selector admits (cached by the snapshot); null = all.
  const ClusterSnapshot::SelectorMatch* selector_;
  std::vector<std::vector<int>> visited_;  // per level: domains computed, in topology order
  std::vector<int> visited_nodes_;         // nodes with slots > 0, in topology order
  std::array<int64_t, kGpuBuckets> pods_per_bucket_{};  // pods a node with k free GPUs takes
};

}  // namespace phalanx::placement
