// ClusterSnapshot: the placement core's model of a cluster — nodes, the pods bound to them and
// the gangs' reservations — organised as a topology tree whose domains carry free-capacity
// aggregates. Every change (node add/update/remove, pod bind/unbind, reserve/release/resize)
// updates the aggregates along one root-to-node path, so it costs O(depth), not a rebuild.
//
//   ASSIGN_OR_RETURN(Topology topology, Topology::Preset("eks"));
//   ClusterSnapshot snapshot(std::move(topology));
//   RETURN_IF_ERROR(snapshot.AddNode({.name = "ip-10-0-0-1", .labels = {...},
//                                     .allocatable = {{"nvidia.com/gpu", 8}}}));
//   ASSIGN_OR_RETURN(PlacementResult result, snapshot.Reserve(request));
//   // kube-scheduler binds the gang's pods: each consumes its reserved slot, no double count.
//   RETURN_IF_ERROR(snapshot.AddPod({.key = "team-a/llama-0", .node = "ip-10-0-0-1",
//                                    .requests = {{"nvidia.com/gpu", 8}},
//                                    .job = "team-a/llama", .rank = 0}));
//
// Pure data: no I/O, no clocks, deterministic. Not thread-safe: callers serialise access (the
// InProcessPlacementService holds a mutex).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scheduler/placement_types.h"
#include "scheduler/resource_vector.h"
#include "scheduler/topology.h"

namespace phalanx::placement {

// SageMaker HyperPod's node health label; any value other than kNodeHealthSchedulable excludes
// the node (docs/scheduler.md).
inline constexpr std::string_view kNodeHealthLabel = "sagemaker.amazonaws.com/node-health-status";
inline constexpr std::string_view kNodeHealthSchedulable = "Schedulable";

struct NodeInfo {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  bool unschedulable = false;  // spec.unschedulable (cordoned)
  bool ready = true;           // Ready condition is True
  ResourceList allocatable;    // canonical units; `pods` defaults to kDefaultPodsPerNode
};

// A pod bound to a node. Every pod also takes one `pods` unit, as in kube-scheduler.
struct PodInfo {
  std::string key;        // "namespace/name"
  std::string node;       // the node it is bound to
  ResourceList requests;  // summed container requests, canonical units
  std::string job;        // owning gang ("namespace/name"), "" if none
  int32_t rank = -1;      // rank within the gang, -1 if unknown
};

// Why a node cannot run a pod of a given gang; also the keys of Explanation::nodes_rejected.
enum class NodeCondition : uint8_t { kSchedulable, kNotReady, kUnschedulable, kUnhealthy };

// Histogram buckets of per-node free GPUs: 0..kGpuBuckets-2 exactly, the last one "or more".
inline constexpr int kGpuBuckets = 17;

struct ShapeCache;  // gang_search.h

class ClusterSnapshot {
 public:
  // The snapshot's view of one node. Index = position in nodes(); indices are never reused (a
  // removed node stays as a tombstone so that pods and reservations can still refer to it).
  struct Node {
    NodeInfo info;
    ResourceVector allocatable;
    ResourceVector used;  // bound pods + reserved slots not yet taken by a pod
    int domain = 0;       // deepest domain holding the node (0 = the cluster)
    int depth = 0;        // level of `domain`: how many topology labels the node carries in order
    bool removed = false;
    NodeCondition condition = NodeCondition::kSchedulable;
    bool hard_tainted = false;  // has a NoSchedule / NoExecute taint
    // Raised (to a snapshot-wide counter, so never back to an old value) on every change that
    // can alter what the node holds: usage, allocatable, condition, taints, its place in the
    // tree. Search caches compare it to what they saw.
    uint64_t version = 0;
  };

  // A topology domain. Index 0 is the whole cluster. Aggregates cover the schedulable nodes
  // (Ready, not cordoned, healthy) of the subtree; taints and selectors depend on the request so
  // they are not folded in: aggregates are upper bounds used for pruning.
  struct Domain {
    int parent = -1;
    int level = 0;
    std::string value;           // label value ("" for the cluster)
    std::vector<int> children;   // child domains, sorted by value
    std::vector<int> nodes;      // nodes whose deepest domain this is, sorted by name
    ResourceVector free;         // sum over schedulable nodes of max(0, allocatable - used)
    std::array<int32_t, kGpuBuckets> gpu_histogram{};  // schedulable nodes by free GPUs
    int64_t gpu_overflow = 0;    // free GPUs summed over nodes in the last bucket
    int32_t schedulable_nodes = 0;
    uint64_t version = 0;        // raised with any node's version below it, or a new child
  };

  struct ReservedRank {
    int node = 0;
    std::string pod;  // key of the bound pod that took this slot, "" while only reserved
  };

  struct Reservation {
    GangRequest request;     // as reserved; `count` is the current size
    ResourceVector per_pod;  // interned, including one `pods` unit
    std::vector<ReservedRank> ranks;
    DomainId domain;
  };

  explicit ClusterSnapshot(Topology topology);

  // Node changes. AddNode rejects a duplicate name; UpdateNode replaces labels, taints, flags and
  // allocatable of an existing node (moving it in the tree if its topology labels changed).
  // RemoveNode keeps the pods and reservations that refer to it, but it no longer counts.
  absl::Status AddNode(const NodeInfo& node);
  absl::Status UpdateNode(const NodeInfo& node);
  absl::Status RemoveNode(std::string_view name);

  // Pod changes. A pod of a reserved job bound to a node holding one of the job's free slots
  // takes that slot (preferring its own rank): the reservation turns into real usage instead of
  // being counted twice. Removing it gives the slot back to the reservation.
  //
  // When the gang gives up a slot its pod holds (Release, Resize down, ReplaceNodes), the pod
  // stops counting as used at once, though it stays bound until its owner has deleted it: the
  // room is promised to whoever reserves it next — in particular the preemptor reserved in the
  // cycle that released its victims — and kube-scheduler itself binds nothing there until the
  // pod is gone. A pod that never took a slot counts as used until it is removed.
  absl::Status AddPod(const PodInfo& pod);
  absl::Status RemovePod(std::string_view key);

  // See PlacementService for the contracts.
  absl::StatusOr<PlacementResult> Place(const GangRequest& request) const;
  absl::StatusOr<StartEstimate> EstimateStart(const GangRequest& request,
                                              const std::vector<EndingGang>& ends) const;
  absl::StatusOr<PlacementResult> Reserve(const GangRequest& request);
  absl::Status Release(std::string_view job);
  absl::StatusOr<PlacementResult> Resize(std::string_view job, int32_t new_count);
  absl::StatusOr<PlacementResult> ReplaceNodes(std::string_view job,
                                               const std::vector<std::string>& nodes);
  absl::StatusOr<PreemptionPlan> PlanPreemption(const GangRequest& request,
                                                const std::vector<RunningGang>& candidates) const;
  // Re-creates a reservation at known nodes (after a scheduler restart, from a TrainingJob's
  // .status.placement). All or nothing; FailedPrecondition if the nodes no longer have room.
  absl::StatusOr<PlacementResult> Restore(const GangRequest& request, const Placement& placement);

  // Introspection.
  const Topology& topology() const { return topology_; }
  const ResourceTable& resources() const { return resources_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Domain>& domains() const { return domains_; }
  const std::vector<int>& domains_at_level(int level) const { return by_level_[level]; }
  int FindNode(std::string_view name) const;  // index or -1 (also -1 for removed nodes)
  const Reservation* FindReservation(std::string_view job) const;
  std::vector<std::string> ReservedJobs() const;  // sorted
  // What rank `rank` of `reservation` charges to its node now: the bound pod's requests once a
  // pod took the slot, the reserved per-pod amount before.
  ResourceVector RankUsage(const Reservation& reservation, size_t rank) const;
  size_t pod_count() const { return pods_.size(); }
  // (node, requests) of every bound pod of `job` whose rank is at or above the size of its
  // reservation and that still counts as used (one bound after the shrink; the pods of the
  // ranks a shrink dropped no longer count): their owner is deleting them. O(pods).
  std::vector<std::pair<int, ResourceVector>> DroppedRankPods(std::string_view job) const;
  // Free resources of a live node: max(0, allocatable - used) for every resource it advertises
  // or uses (zeros included).
  std::optional<ResourceList> NodeFree(std::string_view name) const;

  // The DomainId of a domain index / of a node as a hostname-level domain.
  DomainId DomainIdOf(int domain) const;
  DomainId NodeDomainId(int node) const;
  // The domain index of `domain` at level `level`, walking up (domain's own level >= level).
  int AncestorAt(int domain, int level) const;
  // The lowest domain holding all `nodes` (a hostname-level DomainId if they are one node).
  DomainId LowestCommonDomain(const std::vector<int>& nodes) const;

  // Live nodes carrying label key=value, ascending by index; null if none. Maintained on every
  // node add/update/remove so that a selector is matched against a few lists, not every node.
  const std::vector<int>* NodesWithLabel(const std::string& key, const std::string& value) const;
  // Bumped whenever a live node's labels change or a node comes or goes: selector results
  // computed at one generation stay valid until it moves.
  uint64_t labels_generation() const { return labels_generation_; }

  // Which nodes and domains a node selector and a required node affinity (both optional)
  // admit, computed once per distinct pair and labels generation and then shared by every
  // search (an admission cycle places ~1,000 gangs that mostly share a few ResourceFlavor
  // selectors).
  struct SelectorMatch {
    std::vector<uint8_t> node_ok;    // per node index: live, carries every selector label and
                                     // satisfies the affinity
    std::vector<uint8_t> domain_ok;  // per domain index: holds at least one such node
  };
  // Null for an empty selector and affinity (everything matches). The result stays valid until
  // the next node change or the next call with a selector not seen since (the cache is
  // bounded), so hold it only for one search; not thread-safe (callers serialise access, like
  // every method).
  const SelectorMatch* MatchSelector(
      const std::vector<std::pair<std::string, std::string>>& selector,
      const std::vector<NodeSelectorTerm>& affinity = {}) const;

  // The per-shape search cache of `key` (see GangSearch), created empty on first use. The
  // snapshot keeps a bounded number, least recently used out; a copy of the snapshot starts
  // with none. Valid until the next call; not thread-safe, like every method.
  ShapeCache& CacheFor(const std::string& key) const;
  // Forgets every search cache: the next search of each shape is computed from scratch (cold
  // benchmarks; the results never differ).
  void DropSearchCaches() const {
    shape_caches_ = ShapeCaches();
    max_fit_empty_.clear();
  }
  // The most pods of shape `key` one placement domain could hold with every node empty,
  // remembered until a node is added, changed or removed (usage does not move it): `compute`
  // runs on a miss. Explanations of refusals ask for it every time.
  int32_t MaxFitEmpty(const std::string& key, const std::function<int32_t()>& compute) const;

  // Recomputes every aggregate and every node's usage from scratch and compares them with the
  // incrementally maintained ones. Internal returns name the first difference. For tests.
  absl::Status CheckConsistency() const;

 private:
  struct Pod {
    int node = 0;
    ResourceVector requests;
    std::string job;
    int32_t rank = -1;
    int32_t slot = -1;  // the reservation rank this pod took, -1 if none
    // Its gang gave the slot up (Release, a shrink, a rank moved off a failed node): the owner
    // is deleting the pod, so it no longer counts as used (see AddPod's comment).
    bool released = false;
  };

  absl::StatusOr<ResourceVector> NodeAllocatable(const NodeInfo& node);
  absl::Status ValidateNode(const NodeInfo& node) const;
  // Places node `index` in the tree by its labels and adds its contribution.
  void Attach(int index);
  // Takes node `index` out of its domain's node list, removing its contribution first.
  void Detach(int index);
  // Adds (sign = +1) or removes (-1) node `index` to / from label_index_ under its labels.
  void IndexLabels(int index, int sign);
  int ChildDomain(int parent, const std::string& value);
  // Adds (sign = +1) or removes (-1) a node's contribution to every domain on its path.
  void Contribute(int index, int sign);
  // used += delta (sign +1) or used -= delta (sign -1), keeping the aggregates right.
  void ChangeUsage(int index, const ResourceVector& delta, int sign);
  // Gives back the slots ranks[from..] of `reservation`.
  void ReleaseRanks(Reservation& reservation, size_t from);
  // Gives back one slot: uncharges it, and the pod that took it, if any, as released.
  void FreeSlot(const Reservation& reservation, const ReservedRank& rank);
  // Adds a reservation for already chosen nodes (one per rank) and charges them.
  void Hold(const GangRequest& request, const ResourceVector& per_pod,
            const std::vector<int>& rank_nodes, const DomainId& domain);

  Topology topology_;
  ResourceTable resources_;
  std::vector<Node> nodes_;
  std::vector<Domain> domains_;
  std::vector<std::vector<int>> by_level_;  // domain indices per level, for level scans
  std::unordered_map<std::string, int> node_index_;    // live and removed nodes by name
  std::unordered_map<std::string, int> domain_index_;  // "<parent>/<value>" -> child domain
  std::unordered_map<std::string, Pod> pods_;
  // Node-based: FindReservation's pointers stay valid while others are added; looked up by
  // string_view without a copy (backfill's start estimate looks up every running gang).
  absl::node_hash_map<std::string, Reservation> reservations_;
  // label key -> value -> live nodes carrying it, ascending by index.
  std::unordered_map<std::string, std::unordered_map<std::string, std::vector<int>>>
      label_index_;
  uint64_t labels_generation_ = 0;
  // Selector results of the current labels generation, keyed by the encoded selector.
  mutable uint64_t selector_cache_generation_ = 0;
  mutable std::unordered_map<std::string, SelectorMatch> selector_cache_;
  uint64_t versions_ = 0;  // the last Node/Domain version handed out
  // MaxFitEmpty by shape key, for the nodes as they were at nodes_generation_ (raised by every
  // AddNode, UpdateNode and RemoveNode, not by usage).
  uint64_t nodes_generation_ = 0;
  mutable uint64_t max_fit_empty_generation_ = 0;
  mutable absl::flat_hash_map<std::string, int32_t> max_fit_empty_;
  // Per-shape search caches. A copy starts cold: a cache is only meaningful against the
  // versions of the snapshot that filled it.
  class ShapeCaches {
   public:
    ShapeCaches();
    ShapeCaches(const ShapeCaches&);
    ShapeCaches(ShapeCaches&&) noexcept;
    ShapeCaches& operator=(const ShapeCaches&);
    ShapeCaches& operator=(ShapeCaches&&) noexcept;
    ~ShapeCaches();
    ShapeCache& Get(const std::string& key);

   private:
    struct Entry;
    std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;
    uint64_t uses_ = 0;
  };
  mutable ShapeCaches shape_caches_;
};

}  // namespace phalanx::placement
