// Property tests: thousands of random clusters (the shared synthetic generator with random
// shapes, occupancy and node noise) and random requests, checked against an independent model.
// Each case is seeded by kSeed + case number; a failure prints the seed and the request.
#include <algorithm>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "scheduler/gang_search.h"
#include "scheduler/synthetic_cluster.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

constexpr uint64_t kSeed = 20261122;
constexpr int kClusters = 10000;

using Rng = std::mt19937_64;

int Uniform(Rng& rng, int lo, int hi) {  // inclusive
  return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

// Removes a random element of a non-empty list and returns it.
std::string TakeRandom(Rng& rng, std::vector<std::string>& items) {
  const size_t i = rng() % items.size();
  std::string item = std::move(items[i]);
  items.erase(items.begin() + static_cast<long>(i));
  return item;
}

SyntheticClusterOptions RandomCluster(Rng& rng, uint64_t seed) {
  SyntheticClusterOptions o;
  std::vector<std::string> presets = Topology::PresetNames();
  o.topology = presets[rng() % presets.size()];
  o.nodes = Uniform(rng, 3, 40);
  o.nodes_per_leaf = Uniform(rng, 1, 6);
  o.fanout = Uniform(rng, 1, 3);
  o.gpus_per_node = rng() % 2 ? 8 : 4;
  o.occupancy = Uniform(rng, 0, 95) / 100.0;
  o.not_ready_fraction = 0.05;
  o.cordoned_fraction = 0.03;
  o.unhealthy_fraction = 0.03;
  o.tainted_fraction = 0.1;
  o.missing_label_fraction = 0.1;
  o.seed = seed;
  return o;
}

// A random cluster 60-100 % full, half of its gangs with bound pods: preemption and start
// estimates need gangs to give back.
SyntheticClusterOptions BusyRandomCluster(Rng& rng, uint64_t seed) {
  SyntheticClusterOptions options = RandomCluster(rng, seed);
  options.occupancy = Uniform(rng, 60, 100) / 100.0;
  options.bound_fraction = 0.5;
  return options;
}

GangRequest RandomRequest(Rng& rng, const Topology& topology, const SyntheticClusterOptions& o) {
  const int node_level = topology.node_level();
  std::vector<int64_t> sizes = {0, 1, 2, 4, 8};
  int64_t gpus = std::min<int64_t>(sizes[rng() % sizes.size()], o.gpus_per_node);
  GangRequest r = GpuGang("prop/job", 1, gpus, o);
  if (gpus == 0) r.per_pod = {{"cpu", 16000}, {"memory", int64_t{64} << 30}};
  int group = 1;
  if (rng() % 10 < 3) {
    group = rng() % 2 ? 2 : 4;
    r.group_size = group;
    r.group_level = topology.LevelLabel(Uniform(rng, 1, node_level));
  }
  r.count = group * Uniform(rng, 1, 10 / group + 1);
  if (rng() % 4 == 0) {
    int min = group * Uniform(rng, 1, 3);
    int step = group * Uniform(rng, 1, 2);
    r.elastic = ElasticRange{min, min + step * Uniform(rng, 0, 4), step};
  }
  int required = rng() % 3 == 0 ? 0 : Uniform(rng, 1, node_level);
  r.required_level = topology.LevelLabel(required);
  if (rng() % 2) r.preferred_level = topology.LevelLabel(Uniform(rng, std::max(required, 1), node_level));
  if (rng() % 10 < 3) r.tolerations = {{"example.com/maintenance", "Exists", "", ""}};
  if (rng() % 10 == 0) {
    r.node_selector = {{"node.kubernetes.io/instance-type", rng() % 2 ? "p5.48xlarge" : "p5en"}};
  }
  return r;
}

std::string Describe(const GangRequest& r) {
  return absl::StrCat("count=", r.count,
                      r.elastic ? absl::StrCat(" elastic=", r.elastic->min, "..", r.elastic->max,
                                               "/", r.elastic->step)
                                : "",
                      " per_pod={", FormatResources(r.per_pod), "} required=", r.required_level,
                      " preferred=", r.preferred_level, " group=", r.group_size, "@",
                      r.group_level, " tolerations=", r.tolerations.size(),
                      " selector=", r.node_selector.size());
}

// An independent model of how many pods of a request each node and domain can take, written
// from the rules in docs/placement.md rather than from the search's code.
class Oracle {
 public:
  Oracle(const ClusterSnapshot& snapshot, const GangRequest& r) : snapshot_(snapshot), r_(r) {
    const Topology& t = snapshot.topology();
    depth_ = t.depth();
    required_ = *t.LevelIndex(r.required_level);
    group_level_ = r.group_size > 0 ? *t.LevelIndex(r.group_level) : 0;
    min_depth_ = required_ <= depth_ ? required_ : 0;
    if (r.group_size > 0 && group_level_ <= depth_) min_depth_ = std::max(min_depth_, group_level_);
    for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
      const auto& node = snapshot.nodes()[i];
      if (node.removed) continue;
      std::vector<std::string> path;
      for (const std::string& level : t.levels()) {
        auto it = node.info.labels.find(level);
        if (it == node.info.labels.end()) break;
        path.push_back(it->second);
      }
      path_[node.info.name] = path;
      slots_[node.info.name] = Slots(node, static_cast<int>(path.size()));
    }
  }

  int64_t slots(const std::string& node) const { return slots_.at(node); }

  // The key of a node's domain at `level` (its name at the hostname level). A node lacking the
  // level's label is in no such domain: it gets a key of its own starting "none:".
  std::string Key(const std::string& node, int level) const {
    const std::vector<std::string>& path = path_.at(node);
    if (level > depth_) return "host:" + node;
    if (static_cast<int>(path.size()) < level) return "none:" + node;
    return "d:" + absl::StrJoin(path.begin(), path.begin() + level, "/");
  }

  // Capacity of every domain at `level`, with group rounding.
  std::map<std::string, int64_t> Capacities(int level) const {
    std::map<std::string, int64_t> raw_by_group;  // (domain, group domain) -> slots
    std::map<std::string, int64_t> out;
    for (const auto& [node, slots] : slots_) {
      std::string key = Key(node, level);
      if (key.rfind("none:", 0) == 0) continue;
      out.emplace(key, 0);
      if (slots == 0) continue;
      if (r_.group_size > 0 && group_level_ > level) {
        raw_by_group[key + "|" + Key(node, group_level_)] += slots;
      } else {
        out[key] += slots;
      }
    }
    for (const auto& [both, slots] : raw_by_group) {
      out[both.substr(0, both.find('|'))] += slots - slots % r_.group_size;
    }
    if (r_.group_size > 0 && group_level_ == level) {
      for (auto& [key, cap] : out) cap -= cap % r_.group_size;
    }
    return out;
  }

  int64_t MaxCapacity(int level) const {
    int64_t best = 0;
    for (const auto& [key, cap] : Capacities(level)) best = std::max(best, cap);
    return best;
  }

 private:
  int64_t Slots(const ClusterSnapshot::Node& node, int depth) const {
    const auto& labels = node.info.labels;
    if (!node.info.ready || node.info.unschedulable) return 0;
    auto health = labels.find(std::string(kNodeHealthLabel));
    if (health != labels.end() && health->second != "Schedulable") return 0;
    for (const Taint& taint : node.info.taints) {
      bool hard = taint.effect == "NoSchedule" || taint.effect == "NoExecute";
      bool tolerated = false;
      for (const Toleration& t : r_.tolerations) tolerated |= t.op == "Exists" && t.key == taint.key;
      if (hard && !tolerated) return 0;
    }
    for (const auto& [key, value] : r_.node_selector) {
      auto it = labels.find(key);
      if (it == labels.end() || it->second != value) return 0;
    }
    if (depth < min_depth_) return 0;
    ResourceList free = *snapshot_.NodeFree(node.info.name);
    ResourceList need = r_.per_pod;
    need.emplace("pods", 1);
    int64_t slots = std::numeric_limits<int64_t>::max();
    for (const auto& [name, amount] : need) {
      if (amount <= 0) continue;
      auto it = free.find(name);
      slots = std::min(slots, it == free.end() ? 0 : it->second / amount);
    }
    return slots;
  }

  const ClusterSnapshot& snapshot_;
  const GangRequest& r_;
  int depth_ = 0;
  int required_ = 0;
  int group_level_ = 0;
  int min_depth_ = 0;
  std::map<std::string, std::vector<std::string>> path_;
  std::map<std::string, int64_t> slots_;
};

struct CapacityState {
  std::vector<ResourceVector> used;
  std::vector<ClusterSnapshot::Domain> domains;
};

CapacityState Capture(const ClusterSnapshot& snapshot) {
  CapacityState state;
  for (const auto& node : snapshot.nodes()) state.used.push_back(node.used);
  state.domains = snapshot.domains();
  return state;
}

void ExpectSameCapacity(const CapacityState& a, const CapacityState& b) {
  ASSERT_EQ(a.used.size(), b.used.size());
  for (size_t i = 0; i < a.used.size(); ++i) EXPECT_TRUE(a.used[i] == b.used[i]) << "node " << i;
  ASSERT_EQ(a.domains.size(), b.domains.size());
  for (size_t d = 0; d < a.domains.size(); ++d) {
    EXPECT_TRUE(a.domains[d].free == b.domains[d].free) << "domain " << d;
    EXPECT_EQ(a.domains[d].gpu_histogram, b.domains[d].gpu_histogram) << "domain " << d;
    EXPECT_EQ(a.domains[d].gpu_overflow, b.domains[d].gpu_overflow) << "domain " << d;
    EXPECT_EQ(a.domains[d].schedulable_nodes, b.domains[d].schedulable_nodes) << "domain " << d;
  }
}

void CheckOneCase(uint64_t seed) {
  Rng rng(seed);
  SyntheticClusterOptions options = RandomCluster(rng, seed);
  ASSERT_OK_AND_ASSIGN(SyntheticCluster cluster, BuildSyntheticCluster(options));
  ClusterSnapshot& snapshot = cluster.snapshot;
  const Topology& topology = snapshot.topology();
  const int node_level = topology.node_level();
  GangRequest request = RandomRequest(rng, topology, options);
  SCOPED_TRACE(absl::StrCat("seed=", seed, " topology=", options.topology, " nodes=",
                            options.nodes, " request: ", Describe(request)));

  // Invariant: the incremental aggregates equal a from-scratch recomputation (also after the
  // churn of building the cluster: reservations, bound pods, releases).
  ASSERT_OK(snapshot.CheckConsistency());

  Oracle oracle(snapshot, request);
  const int required = *topology.LevelIndex(request.required_level);
  const int32_t min = request.elastic ? request.elastic->min : request.count;
  const int32_t max = request.elastic ? request.elastic->max : request.count;
  const int32_t step = request.elastic ? request.elastic->step : 1;
  const int64_t best_at_ceiling = oracle.MaxCapacity(required);
  CapacityState before = Capture(snapshot);

  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(request));

  if (!result.placed) {
    // All-or-nothing: a refused gang holds nothing, and it was refused only because no domain
    // of the required level (the whole cluster if none) holds its minimum.
    ExpectSameCapacity(before, Capture(snapshot));
    EXPECT_LT(best_at_ceiling, min) << result.explanation.summary;
    EXPECT_EQ(result.explanation.fit_in_best, std::max<int64_t>(0, best_at_ceiling));
    return;
  }
  const std::vector<std::string>& nodes = result.placement.nodes;
  const int32_t count = static_cast<int32_t>(nodes.size());

  // Elastic: the count is the largest min + k*step <= max that fits in one ceiling domain.
  int64_t limit = std::min<int64_t>(max, best_at_ceiling);
  EXPECT_EQ(count, min + (limit - min) / step * step);

  // No node over-committed in any resource, and every rank is on a node that may run it: the
  // ranks on a node never exceed the pods of this shape the node could take before.
  std::map<std::string, int64_t> per_node;
  for (const std::string& node : nodes) ++per_node[node];
  for (const auto& [node, pods] : per_node) EXPECT_LE(pods, oracle.slots(node)) << node;
  for (const auto& node : snapshot.nodes()) {
    if (node.removed) continue;
    for (int r = 0; r < snapshot.resources().size(); ++r) {
      EXPECT_LE(node.used[r], node.allocatable[r]) << node.info.name << " "
                                                   << snapshot.resources().Name(r);
    }
  }

  // The reported domain is the lowest common domain of the ranks, no coarser than required.
  const int level = *topology.LevelIndex(result.placement.domain.level);
  EXPECT_GE(level, required);
  std::string domain_key = oracle.Key(nodes[0], level);
  for (const std::string& node : nodes) EXPECT_EQ(oracle.Key(node, level), domain_key);

  // Tightest: no domain of any finer level (down to a single node) could hold the gang.
  for (int finer = level + 1; finer <= node_level; ++finer) {
    EXPECT_LT(oracle.MaxCapacity(finer), count) << "level " << finer << " would hold it";
  }

  // Groups: every block of group_size consecutive ranks lies in one group-level domain.
  if (request.group_size > 0) {
    const int group_level = *topology.LevelIndex(request.group_level);
    for (int32_t g = 0; g < count; g += request.group_size) {
      for (int32_t r = g; r < g + request.group_size; ++r) {
        EXPECT_EQ(oracle.Key(nodes[r], group_level), oracle.Key(nodes[g], group_level))
            << "rank " << r;
      }
    }
  }

  // Ranks in topology order: at every level, the ranks placed inside any one domain form one
  // contiguous interval (checked as "once the rank sequence leaves a domain it never re-enters
  // it"). Equivalently, for ranks i < j < k the lowest common domain of i and j is never coarser
  // than that of i and k: a ring over consecutive ranks leaves each domain only once.
  for (int l = 1; l <= node_level; ++l) {
    std::set<std::string> left;
    for (int32_t r = 1; r < count; ++r) {
      std::string previous = oracle.Key(nodes[r - 1], l);
      std::string current = oracle.Key(nodes[r], l);
      if (previous != current) {
        left.insert(previous);
        EXPECT_EQ(left.count(current), 0u) << "rank " << r << " re-enters " << current;
      }
    }
  }

  ASSERT_OK(snapshot.CheckConsistency());
  // Release returns every node's usage and every aggregate to exactly the prior state.
  ASSERT_OK(snapshot.Release(request.job));
  ExpectSameCapacity(before, Capture(snapshot));
  ASSERT_OK(snapshot.CheckConsistency());
}

TEST(PlacementPropertyTest, RandomClustersAndRequestsKeepEveryInvariant) {
  for (int i = 0; i < kClusters; ++i) {
    CheckOneCase(kSeed + static_cast<uint64_t>(i));
    if (::testing::Test::HasFailure()) {
      FAIL() << "first failing seed: " << kSeed + static_cast<uint64_t>(i)
             << " (re-run CheckOneCase with it)";
    }
  }
}

// Random sequences of every kind of change. Invariant: after each one, the incrementally kept
// per-node usage and domain aggregates equal a recomputation from the pods and reservations, and
// any failed mutation (bad input, no fit) left the state exactly as it was.
TEST(PlacementPropertyTest, RandomChangeSequencesKeepAggregatesExact) {
  for (int i = 0; i < 300; ++i) {
    const uint64_t seed = kSeed * 7 + static_cast<uint64_t>(i);
    Rng rng(seed);
    SyntheticClusterOptions options = RandomCluster(rng, seed);
    ASSERT_OK_AND_ASSIGN(SyntheticCluster cluster, BuildSyntheticCluster(options));
    ClusterSnapshot& snapshot = cluster.snapshot;
    const Topology& topology = snapshot.topology();
    std::vector<std::string> jobs = cluster.jobs;
    std::vector<std::string> pods;
    for (int op = 0; op < 40; ++op) {
      SCOPED_TRACE(absl::StrCat("seed=", seed, " op=", op));
      int node = Uniform(rng, 0, options.nodes - 1);
      std::string name = absl::StrFormat("node-%05d", node);
      CapacityState before = Capture(snapshot);
      absl::Status status;
      switch (rng() % 8) {
        case 0: {  // reserve a random gang
          GangRequest request = RandomRequest(rng, topology, options);
          request.job = absl::StrCat("seq/", op);
          absl::StatusOr<PlacementResult> result = snapshot.Reserve(request);
          ASSERT_OK(result.status());
          if (result->placed) {
            jobs.push_back(request.job);
          } else {
            ExpectSameCapacity(before, Capture(snapshot));
          }
          break;
        }
        case 1:  // release
          if (!jobs.empty()) {
            ASSERT_OK(snapshot.Release(TakeRandom(rng, jobs)));
          }
          break;
        case 2:  // resize up or down
          if (!jobs.empty()) {
            const std::string& job = jobs[rng() % jobs.size()];
            const auto* reservation = snapshot.FindReservation(job);
            int32_t unit = std::max(1, reservation->request.group_size);
            int32_t target = unit * Uniform(rng, 1, 4);
            absl::StatusOr<PlacementResult> result = snapshot.Resize(job, target);
            if (!result.ok() || !result->placed) ExpectSameCapacity(before, Capture(snapshot));
          }
          break;
        case 3: {  // bind a pod, sometimes of a reserved job
          std::string job = !jobs.empty() && rng() % 2 ? jobs[rng() % jobs.size()] : "";
          std::string key = absl::StrCat("seq/pod-", op);
          if (snapshot.FindNode(name) >= 0) {
            ASSERT_OK(snapshot.AddPod({key, name, {{"nvidia.com/gpu", Uniform(rng, 0, 2)}}, job,
                                       Uniform(rng, -1, 3)}));
            pods.push_back(key);
          }
          break;
        }
        case 4:  // unbind
          if (!pods.empty()) {
            ASSERT_OK(snapshot.RemovePod(TakeRandom(rng, pods)));
          }
          break;
        case 5: {  // node condition / label / capacity change
          if (snapshot.FindNode(name) < 0) break;
          NodeInfo info = SyntheticNode(options, topology, node);
          info.ready = rng() % 4 != 0;
          if (rng() % 4 == 0) info.taints.push_back({"example.com/maintenance", "", "NoSchedule"});
          if (rng() % 4 == 0 && topology.depth() > 0) info.labels.erase(topology.levels().back());
          if (rng() % 4 == 0) info.allocatable["nvidia.com/gpu"] = Uniform(rng, 0, 8);
          ASSERT_OK(snapshot.UpdateNode(info));
          break;
        }
        case 6:  // node goes away
          if (snapshot.FindNode(name) >= 0) {
            ASSERT_OK(snapshot.RemoveNode(name));
          }
          break;
        case 7:  // node comes back
          if (snapshot.FindNode(name) < 0) {
            ASSERT_OK(snapshot.AddNode(SyntheticNode(options, topology, node)));
          }
          break;
      }
      ASSERT_OK(snapshot.CheckConsistency());
    }
  }
}

// The cached search (a ShapeCache per shape in the snapshot, refreshed only where versions
// moved) against a search computed from scratch, after every kind of change. Each sequence keeps
// a few fixed shapes so that the caches live through many changes. Invariant: every capacity,
// the chosen domain, the rank order and the explanation are identical.
TEST(PlacementPropertyTest, CachedSearchesEqualFreshOnesAcrossChanges) {
  for (int i = 0; i < 200; ++i) {
    const uint64_t seed = kSeed * 11 + static_cast<uint64_t>(i);
    Rng rng(seed);
    SyntheticClusterOptions options = RandomCluster(rng, seed);
    ASSERT_OK_AND_ASSIGN(SyntheticCluster cluster, BuildSyntheticCluster(options));
    ClusterSnapshot& snapshot = cluster.snapshot;
    const Topology& topology = snapshot.topology();
    std::vector<GangShape> shapes;
    for (int s = 0; s < 4; ++s) {
      ASSERT_OK_AND_ASSIGN(GangShape shape,
                           ValidateGang(RandomRequest(rng, topology, options), snapshot));
      shapes.push_back(std::move(shape));
    }
    std::vector<std::string> jobs = cluster.jobs;
    std::vector<std::string> pods;
    for (int op = 0; op < 30; ++op) {
      SCOPED_TRACE(absl::StrCat("seed=", seed, " op=", op));
      const int node = Uniform(rng, 0, options.nodes - 1);
      const std::string name = absl::StrFormat("node-%05d", node);
      switch (rng() % 7) {
        case 0: {
          GangRequest request = RandomRequest(rng, topology, options);
          request.job = absl::StrCat("cache/", op);
          ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Reserve(request));
          if (result.placed) jobs.push_back(request.job);
          break;
        }
        case 1:
          if (!jobs.empty()) {
            ASSERT_OK(snapshot.Release(TakeRandom(rng, jobs)));
          }
          break;
        case 2:
          if (snapshot.FindNode(name) >= 0) {
            const std::string key = absl::StrCat("cache/pod-", op);
            ASSERT_OK(snapshot.AddPod({key, name, {{"nvidia.com/gpu", Uniform(rng, 0, 4)}}, "", -1}));
            pods.push_back(key);
          }
          break;
        case 3:
          if (!pods.empty()) {
            ASSERT_OK(snapshot.RemovePod(TakeRandom(rng, pods)));
          }
          break;
        case 4: {  // condition, taint, topology label, selector label, capacity
          if (snapshot.FindNode(name) < 0) break;
          NodeInfo info = SyntheticNode(options, topology, node);
          info.ready = rng() % 4 != 0;
          if (rng() % 4 == 0) info.taints.push_back({"example.com/maintenance", "", "NoSchedule"});
          if (rng() % 4 == 0 && topology.depth() > 0) info.labels.erase(topology.levels().back());
          if (rng() % 4 == 0) info.labels["node.kubernetes.io/instance-type"] = "p5en";
          if (rng() % 4 == 0) info.allocatable["nvidia.com/gpu"] = Uniform(rng, 0, 8);
          ASSERT_OK(snapshot.UpdateNode(info));
          break;
        }
        case 5:
          if (snapshot.FindNode(name) >= 0) {
            ASSERT_OK(snapshot.RemoveNode(name));
          }
          break;
        case 6:
          if (snapshot.FindNode(name) < 0) {
            ASSERT_OK(snapshot.AddNode(SyntheticNode(options, topology, node)));
          }
          break;
      }
      for (const GangShape& shape : shapes) {
        GangSearch cached(snapshot, shape);
        GangSearch::Scratch scratch;
        GangSearch fresh(snapshot, shape, 0, nullptr, &scratch);
        cached.Run(shape.min_count);
        fresh.Run(0);
        for (int d = 0; d < static_cast<int>(snapshot.domains().size()); ++d) {
          ASSERT_EQ(cached.Capacity(d), fresh.Capacity(d)) << "domain " << d;
        }
        for (int n = 0; n < static_cast<int>(snapshot.nodes().size()); ++n) {
          if (snapshot.nodes()[n].removed) continue;
          ASSERT_EQ(cached.NodeCapacity(n), fresh.NodeCapacity(n)) << "node " << n;
        }
        ASSERT_EQ(cached.MaxCount(), fresh.MaxCount());
        for (int64_t count : {int64_t{shape.min_count}, int64_t{1}, cached.MaxCount()}) {
          if (count < 1) continue;  // callers never ask for zero pods
          std::optional<GangSearch::Choice> a = cached.Tightest(count);
          std::optional<GangSearch::Choice> b = fresh.Tightest(count);
          ASSERT_EQ(a.has_value(), b.has_value()) << "count " << count;
          if (!a.has_value()) continue;
          EXPECT_EQ(a->level, b->level);
          EXPECT_EQ(a->index, b->index);
          EXPECT_EQ(a->is_node, b->is_node);
          EXPECT_EQ(cached.Allocate(*a, count), fresh.Allocate(*b, count));
        }
        Explanation x = cached.Explain(shape.min_count);
        Explanation y = fresh.Explain(shape.min_count);
        EXPECT_EQ(x.summary, y.summary);
        EXPECT_EQ(x.nodes_rejected, y.nodes_rejected);
        EXPECT_EQ(x.fit_in_best, y.fit_in_best);
        // Preemption's fit check: a few reservations' ranks freed, one target domain or node.
        GangSearch::FreeOverlay overlay;
        for (const std::string& job : jobs) {
          if (rng() % 3 != 0) continue;
          const ClusterSnapshot::Reservation* r = snapshot.FindReservation(job);
          for (size_t rank = 0; rank < r->ranks.size(); ++rank) {
            overlay[r->ranks[rank].node].Add(snapshot.RankUsage(*r, rank),
                                             snapshot.resources().size());
          }
        }
        GangSearch::Scratch whole_scratch;
        GangSearch whole(snapshot, shape, 0, &overlay, &whole_scratch);
        whole.Run(0);
        Explanation with = cached.Explain(shape.min_count, &overlay);
        Explanation expected = whole.Explain(shape.min_count);
        EXPECT_EQ(with.summary, expected.summary);
        EXPECT_EQ(with.nodes_rejected, expected.nodes_rejected);
        const int level = Uniform(rng, 0, topology.node_level());
        GangSearch::Choice target{level, 0, level == topology.node_level()};
        if (target.is_node) {
          target.index = Uniform(rng, 0, static_cast<int>(snapshot.nodes().size()) - 1);
          if (snapshot.nodes()[target.index].removed) continue;
        } else {
          const std::vector<int>& at = snapshot.domains_at_level(level);
          if (at.empty()) continue;
          target.index = at[rng() % at.size()];
        }
        const int root = target.is_node ? snapshot.nodes()[target.index].domain : target.index;
        GangSearch::Scratch overlay_scratch;
        GangSearch replay(snapshot, shape, root, &overlay, &overlay_scratch);
        replay.Run(0);
        EXPECT_EQ(cached.CapacityWith(target, overlay),
                  target.is_node ? replay.NodeCapacity(target.index) : replay.Capacity(target.index))
            << "level " << level << " index " << target.index;
      }
    }
  }
}

// Preemption plans over random clusters. Invariants:
//  - every victim was offered, has a priority strictly below the request's, and holds at least
//    one rank inside the required-level domain the gang lands in;
//  - a shrink keeps at least the victim's elastic minimum and takes at least one pod;
//  - carrying the plan out (deleting the victims' pods of the dropped ranks, then Release or
//    Resize) makes the gang fit, in that same required-level domain;
//  - "infeasible" is honest: even with every eligible gang evicted, the gang does not fit.
// "Fits" is the independent model's capacity (Oracle), not Place: the search does not judge
// itself. Optimality (the smallest victim set) is oracle_test.cc's job, on smaller clusters.
TEST(PlacementPropertyTest, PreemptionPlansAreSoundAndHonest) {
  int with_victims = 0;
  int infeasible = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t seed = kSeed * 13 + static_cast<uint64_t>(i);
    Rng rng(seed);
    SyntheticClusterOptions options = BusyRandomCluster(rng, seed);
    ASSERT_OK_AND_ASSIGN(SyntheticCluster cluster, BuildSyntheticCluster(options));
    ClusterSnapshot& snapshot = cluster.snapshot;
    const Topology& topology = snapshot.topology();
    GangRequest request = RandomRequest(rng, topology, options);
    request.priority = 5;
    std::vector<RunningGang> candidates;
    std::map<std::string, RunningGang> offered;
    for (const std::string& job : cluster.jobs) {
      RunningGang gang{job, Uniform(rng, 0, 8), std::nullopt};
      int32_t count = static_cast<int32_t>(snapshot.FindReservation(job)->ranks.size());
      if (count >= 2 && rng() % 3 == 0) gang.elastic = ElasticRange{Uniform(rng, 1, count - 1), count, 1};
      candidates.push_back(gang);
      offered[job] = gang;
    }
    std::shuffle(candidates.begin(), candidates.end(), rng);
    SCOPED_TRACE(absl::StrCat("seed=", seed, " topology=", options.topology, " nodes=",
                              options.nodes, " request: ", Describe(request)));
    ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, snapshot.PlanPreemption(request, candidates));
    const int required = *topology.LevelIndex(request.required_level);

    // Carries out `victims` on a copy of the snapshot, as the operator would.
    auto carry_out = [&](const std::vector<Victim>& victims) {
      ClusterSnapshot after = snapshot;
      for (const Victim& v : victims) {
        int32_t count = static_cast<int32_t>(after.FindReservation(v.job)->ranks.size());
        for (int32_t rank = v.new_count; rank < count; ++rank) {
          absl::Status removed = after.RemovePod(absl::StrCat(v.job, "-", rank));
          EXPECT_TRUE(removed.ok() || absl::IsNotFound(removed)) << removed;
        }
        if (v.new_count == 0) {
          EXPECT_OK(after.Release(v.job));
        } else {
          EXPECT_OK(after.Resize(v.job, v.new_count).status());
        }
      }
      return after;
    };

    // Whether the gang fits is judged by the independent model, not by Place.
    const int32_t min = request.elastic ? request.elastic->min : request.count;
    if (!plan.feasible) {
      std::vector<Victim> everyone;
      for (const RunningGang& gang : candidates) {
        if (gang.priority < request.priority) everyone.push_back({gang.job, 0});
      }
      ClusterSnapshot emptied = carry_out(everyone);
      EXPECT_LT(Oracle(emptied, request).MaxCapacity(required), min)
          << "a plan existed: evicting every eligible gang fits it";
      ++infeasible;
      continue;
    }
    ASSERT_FALSE(plan.placement.nodes.empty());
    with_victims += !plan.victims.empty();
    Oracle oracle(snapshot, request);
    std::string domain = oracle.Key(plan.placement.nodes[0], required);
    for (const Victim& v : plan.victims) {
      ASSERT_EQ(offered.count(v.job), 1u) << v.job;
      const RunningGang& gang = offered[v.job];
      EXPECT_LT(gang.priority, request.priority) << v.job;
      const auto* reservation = snapshot.FindReservation(v.job);
      int32_t count = static_cast<int32_t>(reservation->ranks.size());
      if (v.new_count > 0) {
        ASSERT_TRUE(gang.elastic.has_value()) << v.job << " shrunk but not elastic";
        EXPECT_GE(v.new_count, gang.elastic->min);
        EXPECT_LT(v.new_count, count);
      }
      bool inside = false;
      for (const auto& rank : reservation->ranks) {
        inside |= oracle.Key(snapshot.nodes()[rank.node].info.name, required) == domain;
      }
      EXPECT_TRUE(inside) << v.job << " holds nothing in " << domain;
    }
    ClusterSnapshot after = carry_out(plan.victims);
    EXPECT_GE(Oracle(after, request).Capacities(required)[domain], min)
        << "the plan does not make room in " << domain;
    if (::testing::Test::HasFailure()) FAIL() << "first failing seed: " << seed;
  }
  // The seeds exercise both outcomes, not only gangs that fit without preemption.
  std::printf("preemption cases: %d with victims, %d infeasible of 1000\n", with_victims,
              infeasible);
  EXPECT_GE(with_victims, 100);
  EXPECT_GE(infeasible, 50);
}

// The start estimate's sweep frees gangs group by group on the cached search and, once the gang
// fits, compares only the domains above the last group's nodes and searches only the one it
// picks. Invariant: the choice and the ranks are exactly those of an overlay search of the
// whole cluster with the same resources freed (the capacities and the tie-breaks are equal).
TEST(PlacementPropertyTest, SweepChoosesWhatAWholeOverlaySearchChooses) {
  int compared = 0;
  for (int i = 0; i < 500; ++i) {
    const uint64_t seed = kSeed * 19 + static_cast<uint64_t>(i);
    Rng rng(seed);
    SyntheticClusterOptions options = BusyRandomCluster(rng, seed);
    ASSERT_OK_AND_ASSIGN(SyntheticCluster cluster, BuildSyntheticCluster(options));
    const ClusterSnapshot& snapshot = cluster.snapshot;
    GangRequest request = RandomRequest(rng, snapshot.topology(), options);
    SCOPED_TRACE(absl::StrCat("seed=", seed, " topology=", options.topology, " nodes=",
                              options.nodes, " request: ", Describe(request)));
    ASSERT_OK_AND_ASSIGN(GangShape shape, ValidateGang(request, snapshot));
    GangSearch today(snapshot, shape);
    today.Run(0);
    if (today.MaxCount() >= shape.min_count) continue;
    std::vector<std::string> jobs = cluster.jobs;
    std::shuffle(jobs.begin(), jobs.end(), rng);
    GangSearch::Sweep sweep(today);
    std::vector<int> recent;
    for (size_t j = 0; j < jobs.size() && sweep.MaxCount() < shape.min_count;) {
      recent.clear();
      for (int in_group = Uniform(rng, 1, 3); in_group > 0 && j < jobs.size(); --in_group, ++j) {
        const ClusterSnapshot::Reservation* r = snapshot.FindReservation(jobs[j]);
        for (size_t rank = 0; rank < r->ranks.size(); ++rank) {
          sweep.Free(r->ranks[rank].node, snapshot.RankUsage(*r, rank));
          recent.push_back(r->ranks[rank].node);
        }
      }
    }
    if (sweep.MaxCount() < shape.min_count) continue;
    GangSearch::Scratch scratch;
    GangSearch whole(snapshot, shape, 0, &sweep.overlay(), &scratch);
    whole.Run(0);
    ASSERT_EQ(sweep.MaxCount(), whole.MaxCount());
    for (int64_t count : {int64_t{shape.min_count}, sweep.MaxCount()}) {
      std::optional<GangSearch::Choice> a = sweep.Tightest(count, recent);
      std::optional<GangSearch::Choice> b = whole.Tightest(count);
      ASSERT_TRUE(a.has_value()) << "count " << count;
      ASSERT_TRUE(b.has_value()) << "count " << count;
      EXPECT_EQ(a->level, b->level) << "count " << count;
      EXPECT_EQ(a->index, b->index) << "count " << count;
      EXPECT_EQ(a->is_node, b->is_node) << "count " << count;
      EXPECT_EQ(sweep.Allocate(*a, count), whole.Allocate(*b, count)) << "count " << count;
    }
    ++compared;
  }
  std::printf("sweep choices compared: %d of 500\n", compared);
  EXPECT_GE(compared, 100);
}

// EstimateStart against carrying the ends out: on a copy of the snapshot the ending gangs' pods
// are deleted and their reservations released, one end time at a time (equal ends together).
// The first end after which the independent model (Oracle) fits the gang must be the
// estimate's start, and the estimate's placement must fit that copy: Place's size, one
// required-level domain, room on every node for the ranks put there.
TEST(PlacementPropertyTest, StartEstimatesEqualCarryingTheEndsOut) {
  int fit_now = 0, waited = 0, never = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t seed = kSeed * 17 + static_cast<uint64_t>(i);
    Rng rng(seed);
    SyntheticClusterOptions options = BusyRandomCluster(rng, seed);
    ASSERT_OK_AND_ASSIGN(SyntheticCluster cluster, BuildSyntheticCluster(options));
    ClusterSnapshot& snapshot = cluster.snapshot;
    const Topology& topology = snapshot.topology();
    GangRequest request = RandomRequest(rng, topology, options);
    // Most gangs have an expected end, in a small range so that ends tie; one name is unknown.
    std::vector<EndingGang> ends;
    std::map<int64_t, std::vector<std::string>> by_end;
    for (const std::string& job : cluster.jobs) {
      if (rng() % 4 == 0) continue;
      ends.push_back({job, Uniform(rng, 0, 10)});
      by_end[ends.back().end].push_back(job);
    }
    ends.push_back({"prop/unknown", 3});
    std::shuffle(ends.begin(), ends.end(), rng);
    SCOPED_TRACE(absl::StrCat("seed=", seed, " topology=", options.topology, " nodes=",
                              options.nodes, " request: ", Describe(request)));
    ASSERT_OK_AND_ASSIGN(StartEstimate estimate, snapshot.EstimateStart(request, ends));

    const int required = *topology.LevelIndex(request.required_level);
    const int32_t min = request.elastic ? request.elastic->min : request.count;
    ClusterSnapshot after = snapshot;
    auto fits = [&] { return Oracle(after, request).MaxCapacity(required) >= min; };
    bool fit = fits();
    std::optional<int64_t> start;
    int32_t ended = 0;
    for (auto it = by_end.begin(); !fit && it != by_end.end(); ++it) {
      for (const std::string& job : it->second) {
        int32_t count = static_cast<int32_t>(after.FindReservation(job)->ranks.size());
        for (int32_t rank = 0; rank < count; ++rank) {
          absl::Status removed = after.RemovePod(absl::StrCat(job, "-", rank));
          EXPECT_TRUE(removed.ok() || absl::IsNotFound(removed)) << removed;
        }
        EXPECT_OK(after.Release(job));
        ++ended;
      }
      start = it->first;
      fit = fits();
    }
    EXPECT_EQ(estimate.feasible, fit);
    if (!fit) {
      if (!by_end.empty()) {
        EXPECT_THAT(estimate.explanation.summary, ::testing::HasSubstr("not even after all"));
      }
      ++never;
    } else {
      ASSERT_OK_AND_ASSIGN(PlacementResult placed, after.Place(request));
      ASSERT_TRUE(placed.placed);
      // The same size, in one domain of the required level that holds it once the ends are
      // carried out, with room on every node for its ranks. Which domain and node order may
      // differ from Place's: ties are broken by the free GPUs of the snapshot before the ends.
      EXPECT_EQ(estimate.placement.nodes.size(), placed.placement.nodes.size());
      ASSERT_FALSE(estimate.placement.nodes.empty());
      Oracle room(after, request);
      const std::string domain = room.Key(estimate.placement.nodes[0], required);
      for (const std::string& node : estimate.placement.nodes) {
        EXPECT_EQ(room.Key(node, required), domain) << node;
      }
      EXPECT_GE(room.Capacities(required)[domain],
                static_cast<int64_t>(estimate.placement.nodes.size()));
      std::map<std::string, int64_t> ranks;
      for (const std::string& node : estimate.placement.nodes) ++ranks[node];
      for (const auto& [node, count] : ranks) EXPECT_LE(count, room.slots(node)) << node;
      if (start.has_value()) {
        EXPECT_EQ(estimate.ended, ended);
        EXPECT_EQ(estimate.start, *start);
        ++waited;
      } else {
        EXPECT_EQ(estimate.ended, 0);
        ++fit_now;
      }
    }
    if (::testing::Test::HasFailure()) FAIL() << "first failing seed: " << seed;
  }
  // The seeds exercise every outcome.
  std::printf("start estimates: %d fit now, %d after some ends, %d never of 1000\n", fit_now,
              waited, never);
  EXPECT_GE(fit_now, 50);
  EXPECT_GE(waited, 100);
  EXPECT_GE(never, 20);
}

}  // namespace
}  // namespace phalanx::placement
