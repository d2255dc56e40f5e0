// Brute-force oracles on small clusters (2–12 nodes, up to 6 running gangs). The test keeps its
// own model of the cluster (each node's topology path and GPUs, each gang's rank positions,
// priority and elastic range), builds the snapshot from it, and then enumerates *every* node set
// or *every* victim set, scoring each by the objective docs/placement.md states. It never calls
// the search it checks to decide what is feasible or best. Seeded (kSeed + case), bounded in
// cases, deterministic; a failure prints the seed and the case.
//
// Invariants, in words:
//  - Place picks a best-scoring placement: its domain is the tightest level where some node set
//    holds the gang, and among that level's domains one with the smallest capacity, then the
//    fewest free GPUs, then the fullest enclosing domains (free GPUs, nearest first); inside it,
//    the ranks use as few child domains at the level below as any node set that holds the gang. A
//    refused gang has no node set at or below its required level that holds its minimum. (Elastic:
//    the largest count on its grid that some domain holds.)
//  - PlanPreemption picks a smallest victim set that makes the gang fit inside one domain of its
//    required level: fewest evictions, then fewest shrinks, then the lowest victim priorities
//    (highest victim first), then fewest GPUs, then fewest pods taken, then admission's order.
//    "Infeasible" means no victim set at all helps.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_snapshot.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using namespace ::phalanx::placement::testing;  // NOLINT

constexpr uint64_t kSeed = 20261125;
using Rng = std::mt19937_64;

int Uniform(Rng& rng, int lo, int hi) {  // inclusive
  return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

struct ModelNode {
  std::string name;
  std::vector<std::string> path;  // label values, coarsest first; shorter = labels missing
  int64_t gpus = 8;
};

struct ModelGang {
  std::string job;
  int64_t gpus_per_pod = 8;
  std::vector<int> ranks;  // rank -> node index
  int32_t priority = 0;
  std::optional<ElasticRange> elastic;
};

// The test's own cluster: levels 0 (cluster) .. depth (topology labels) .. depth + 1 (node).
struct Model {
  std::string preset;
  int depth = 0;
  std::vector<ModelNode> nodes;
  std::vector<ModelGang> gangs;

  int node_level() const { return depth + 1; }

  // The node's domain at `level`, or "" when the node lacks that level's label.
  std::string Key(int node, int level) const {
    if (level == 0) return "cluster";
    if (level > depth) return "host:" + nodes[node].name;
    const std::vector<std::string>& path = nodes[node].path;
    if (static_cast<int>(path.size()) < level) return "";
    return absl::StrJoin(path.begin(), path.begin() + level, "/");
  }

  // Free GPUs per node with gang g keeping only its first keep[g] ranks.
  std::vector<int64_t> Free(const std::vector<int32_t>& keep) const {
    std::vector<int64_t> free;
    for (const ModelNode& n : nodes) free.push_back(n.gpus);
    for (size_t g = 0; g < gangs.size(); ++g) {
      for (int32_t r = 0; r < keep[g]; ++r) free[gangs[g].ranks[r]] -= gangs[g].gpus_per_pod;
    }
    return free;
  }
  std::vector<int32_t> Untouched() const {
    std::vector<int32_t> keep;
    for (const ModelGang& g : gangs) keep.push_back(static_cast<int32_t>(g.ranks.size()));
    return keep;
  }
};

// What a gang of the request can use, from the rules (docs/placement.md, "Capacity"): pods per
// node, rounded to whole groups inside each group-level domain.
struct Shape {
  int64_t gpus = 8;
  int required = 0;     // level; 0 = none
  int group_size = 0;
  int group_level = 0;

  int MinDepth(const Model& m) const {
    int d = required <= m.depth ? required : 0;
    if (group_size > 0 && group_level <= m.depth) d = std::max(d, group_level);
    return d;
  }
  int64_t Slots(const Model& m, const std::vector<int64_t>& free, int node) const {
    if (static_cast<int>(m.nodes[node].path.size()) < MinDepth(m)) return 0;
    return std::max<int64_t>(0, free[node]) / gpus;
  }
  // Pods the nodes `in` can hold, with every group inside one group-level domain.
  int64_t Holds(const Model& m, const std::vector<int64_t>& free,
                const std::vector<int>& in) const {
    std::map<std::string, int64_t> per_group;
    for (int n : in) {
      per_group[group_size > 0 ? m.Key(n, group_level) : ""] += Slots(m, free, n);
    }
    int64_t total = 0;
    for (const auto& [group, slots] : per_group) {
      total += group_size > 0 ? slots - slots % group_size : slots;
    }
    return total;
  }
  // The nodes of every domain at `level` (nodes lacking its label are in none).
  std::map<std::string, std::vector<int>> Domains(const Model& m, int level) const {
    std::map<std::string, std::vector<int>> out;
    for (int n = 0; n < static_cast<int>(m.nodes.size()); ++n) {
      std::string key = m.Key(n, level);
      if (!key.empty()) out[key].push_back(n);
    }
    return out;
  }
  // Some domain of the required level (the cluster without one) holds `count`.
  bool FitsSomewhere(const Model& m, const std::vector<int64_t>& free, int64_t count) const {
    for (const auto& [key, in] : Domains(m, required)) {
      if (Holds(m, free, in) >= count) return true;
    }
    return false;
  }
};

Model RandomModel(Rng& rng) {
  Model m;
  m.preset = std::vector<std::string>{"eks", "eks-4layer", "gb200"}[rng() % 3];
  m.depth = Topology::Preset(m.preset)->depth();
  const int nodes = Uniform(rng, 2, 12);
  std::vector<int> fanout(m.depth + 1);
  for (int l = 1; l <= m.depth; ++l) fanout[l] = Uniform(rng, 1, 3);
  const int64_t gpus = rng() % 4 == 0 ? 4 : 8;
  for (int i = 0; i < nodes; ++i) {
    ModelNode n{absl::StrCat("n", i), {}, gpus};
    std::string value;
    int labels = rng() % 8 == 0 ? Uniform(rng, 0, m.depth - 1) : m.depth;
    for (int l = 1; l <= labels; ++l) {
      value = absl::StrCat(value, l == 1 ? "" : ".", Uniform(rng, 0, fanout[l] - 1));
      n.path.push_back("v" + value);
    }
    m.nodes.push_back(std::move(n));
  }
  // Running gangs at random nodes with room (the test's own placement, not the scheduler's).
  std::vector<int64_t> free = m.Free({});
  const int gangs = Uniform(rng, 0, 6);
  for (int g = 0; g < gangs; ++g) {
    ModelGang gang;
    gang.job = absl::StrCat("run/g", g);
    gang.gpus_per_pod = std::vector<int64_t>{1, 2, 4, 8}[rng() % 4];
    gang.gpus_per_pod = std::min(gang.gpus_per_pod, gpus);
    const int count = Uniform(rng, 1, 4);
    for (int r = 0; r < count; ++r) {
      std::vector<int> room;
      for (int n = 0; n < nodes; ++n) {
        if (free[n] >= gang.gpus_per_pod) room.push_back(n);
      }
      if (room.empty()) break;
      int n = room[rng() % room.size()];
      free[n] -= gang.gpus_per_pod;
      gang.ranks.push_back(n);
    }
    if (gang.ranks.empty()) continue;
    gang.priority = Uniform(rng, 0, 8);
    const int32_t size = static_cast<int32_t>(gang.ranks.size());
    if (size >= 2 && rng() % 3 == 0) {
      gang.elastic = ElasticRange{Uniform(rng, 1, size - 1), size, Uniform(rng, 1, 2)};
    }
    m.gangs.push_back(std::move(gang));
  }
  return m;
}

// The snapshot the placement core sees, built from the model.
ClusterSnapshot Build(const Model& m) {
  ClusterSnapshot snapshot(*Topology::Preset(m.preset));
  for (const ModelNode& n : m.nodes) {
    EXPECT_OK(snapshot.AddNode(GpuNode(snapshot.topology(), n.name, n.path, n.gpus)));
  }
  for (const ModelGang& g : m.gangs) {
    Placement placement{g.job, {}, {}};
    for (int n : g.ranks) placement.nodes.push_back(m.nodes[n].name);
    EXPECT_OK(snapshot.Restore(Gang(g.job, static_cast<int32_t>(g.ranks.size()), g.gpus_per_pod),
                               placement)
                  .status());
  }
  return snapshot;
}

struct Request {
  GangRequest gang;
  Shape shape;
};

Request RandomRequest(Rng& rng, const Model& m, const Topology& topology) {
  Request r;
  r.shape.gpus = std::min<int64_t>(std::vector<int64_t>{1, 2, 4, 8}[rng() % 4], m.nodes[0].gpus);
  r.shape.required = rng() % 3 == 0 ? 0 : Uniform(rng, 1, m.node_level());
  int unit = 1;
  if (rng() % 10 < 3) {
    r.shape.group_size = unit = 2;
    r.shape.group_level = Uniform(rng, 1, m.node_level());
  }
  r.gang = Gang("new/gang", unit * Uniform(rng, 1, 6 / unit), r.shape.gpus,
                topology.LevelLabel(r.shape.required));
  if (r.shape.group_size > 0) {
    r.gang.group_size = r.shape.group_size;
    r.gang.group_level = topology.LevelLabel(r.shape.group_level);
  }
  if (rng() % 5 == 0) {
    int min = unit * Uniform(rng, 1, 2);
    r.gang.elastic = ElasticRange{min, min + unit * Uniform(rng, 0, 3), unit};
  }
  return r;
}

std::string Describe(const Model& m, const Request& r) {
  std::string out = absl::StrCat(m.preset, " nodes:");
  for (const ModelNode& n : m.nodes) {
    absl::StrAppend(&out, " ", n.name, "[", absl::StrJoin(n.path, "/"), "]", n.gpus);
  }
  for (const ModelGang& g : m.gangs) {
    absl::StrAppend(&out, " | ", g.job, " p", g.priority, " ", g.gpus_per_pod, "gpu ranks:");
    for (int n : g.ranks) absl::StrAppend(&out, " n", n);
    if (g.elastic) absl::StrAppend(&out, " elastic ", g.elastic->min, "/", g.elastic->step);
  }
  absl::StrAppend(&out, " || request count=", r.gang.count, " gpus=", r.shape.gpus,
                  " required=", r.shape.required, " group=", r.shape.group_size, "@",
                  r.shape.group_level);
  if (r.gang.elastic) {
    absl::StrAppend(&out, " elastic=", r.gang.elastic->min, "..", r.gang.elastic->max, "/",
                    r.gang.elastic->step);
  }
  return out;
}

// ---- Placement ---------------------------------------------------------------------------

// The documented score of placing into domain `key` at `level` (lower is better): the tighter
// level, then the smallest capacity, then the fewest free GPUs.
using DomainScore = std::tuple<int, int64_t, int64_t>;

// Cases whose tied best domains differed in how full their enclosing domains are.
int enclosing_ties_decided = 0;

void CheckPlacementCase(uint64_t seed) {
  Rng rng(seed);
  Model m = RandomModel(rng);
  ClusterSnapshot snapshot = Build(m);
  Request r = RandomRequest(rng, m, snapshot.topology());
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(m, r)));
  const Shape& shape = r.shape;
  const std::vector<int64_t> free = m.Free(m.Untouched());
  const int n = static_cast<int>(m.nodes.size());

  // Every node set that holds `count`: its lowest common domain, and how many domains of each
  // finer level it spans.
  std::vector<int> usable;
  for (int i = 0; i < n; ++i) {
    if (shape.Slots(m, free, i) > 0) usable.push_back(i);
  }
  auto lowest_common_level = [&](const std::vector<int>& set) {
    if (std::all_of(set.begin(), set.end(), [&](int x) { return x == set[0]; })) {
      return m.node_level();  // one node, labelled or not
    }
    int level = 0;
    for (int l = 1; l <= m.node_level(); ++l) {
      std::string key = m.Key(set[0], l);
      bool same = !key.empty();
      for (int x : set) same = same && m.Key(x, l) == key;
      if (!same) break;
      level = l;
    }
    return level;
  };
  auto capacity_of = [&](int level, const std::string& key) {
    std::vector<int> in;
    int64_t gpus = 0;
    for (int i = 0; i < n; ++i) {
      if (m.Key(i, level) == key) {
        in.push_back(i);
        gpus += std::max<int64_t>(0, free[i]);
      }
    }
    return std::make_pair(shape.Holds(m, free, in), gpus);
  };

  // Elastic: the largest count on the grid that some domain of the required level holds.
  const int32_t min = r.gang.elastic ? r.gang.elastic->min : r.gang.count;
  const int32_t max = r.gang.elastic ? r.gang.elastic->max : r.gang.count;
  const int32_t step = r.gang.elastic ? r.gang.elastic->step : 1;
  int64_t best_at_ceiling = 0;
  for (const auto& [key, in] : shape.Domains(m, shape.required)) {
    best_at_ceiling = std::max(best_at_ceiling, shape.Holds(m, free, in));
  }

  ASSERT_OK_AND_ASSIGN(PlacementResult result, snapshot.Place(r.gang));
  if (best_at_ceiling < min) {
    EXPECT_FALSE(result.placed) << "no node set at the required level holds " << min;
    return;
  }
  ASSERT_TRUE(result.placed) << "a domain of the required level holds " << best_at_ceiling
                             << ": " << result.explanation.summary;
  const int64_t count = min + (std::min<int64_t>(max, best_at_ceiling) - min) / step * step;
  ASSERT_EQ(static_cast<int64_t>(result.placement.nodes.size()), count);

  std::optional<DomainScore> best;
  std::set<std::string> best_domains;  // ties on the whole score
  std::map<std::string, int> best_member;  // a node of each tied domain
  for (uint32_t mask = 1; mask < (1u << usable.size()); ++mask) {
    std::vector<int> set;
    for (size_t b = 0; b < usable.size(); ++b) {
      if (mask & (1u << b)) set.push_back(usable[b]);
    }
    if (shape.Holds(m, free, set) < count) continue;
    int level = lowest_common_level(set);
    if (level < shape.required) continue;
    std::string key = m.Key(set[0], level);
    auto [cap, gpus] = capacity_of(level, key);
    DomainScore score{-level, cap, gpus};
    if (!best || score < *best) {
      best = score;
      best_domains.clear();
      best_member.clear();
    }
    if (score == *best) {
      best_domains.insert(absl::StrCat(level, ":", key));
      best_member.emplace(absl::StrCat(level, ":", key), set[0]);
    }
  }
  ASSERT_TRUE(best.has_value());
  // Ties go to the domain whose enclosing domains are fuller, nearest first: free GPUs of the
  // domains above it, level by level up to the top (checked when every tied domain has them all).
  const int best_level = -std::get<0>(*best);
  auto enclosing = [&](int member) {
    std::vector<int64_t> out;
    for (int l = best_level - 1; l >= 1; --l) {
      const std::string key = m.Key(member, l);
      if (key.empty()) return std::optional<std::vector<int64_t>>();
      out.push_back(capacity_of(l, key).second);
    }
    return std::optional<std::vector<int64_t>>(out);
  };
  std::optional<std::vector<int64_t>> fullest;
  std::set<std::vector<int64_t>> distinct;
  bool ordered = true;
  for (const auto& [domain, member] : best_member) {
    std::optional<std::vector<int64_t>> e = enclosing(member);
    ordered = ordered && e.has_value();
    if (e && (!fullest || *e < *fullest)) fullest = e;
    if (e) distinct.insert(*e);
  }
  if (ordered && distinct.size() > 1) ++enclosing_ties_decided;

  // The placement's own domain and score, from the model.
  std::vector<int> placed;
  std::map<int, int64_t> per_node;
  for (const std::string& name : result.placement.nodes) {
    int i = std::stoi(name.substr(1));
    placed.push_back(i);
    ++per_node[i];
  }
  for (const auto& [i, pods] : per_node) {
    EXPECT_LE(pods, shape.Slots(m, free, i)) << "node " << m.nodes[i].name << " over-committed";
  }
  const int level = lowest_common_level(placed);
  const std::string key = m.Key(placed[0], level);
  auto [cap, gpus] = capacity_of(level, key);
  EXPECT_EQ((DomainScore{-level, cap, gpus}), *best)
      << "placed in level " << level << " " << key << "; best domains: "
      << absl::StrJoin(best_domains, ", ");
  EXPECT_EQ(best_domains.count(absl::StrCat(level, ":", key)), 1u);
  if (ordered && level == best_level) {
    EXPECT_EQ(enclosing(placed[0]), fullest)
        << "placed in " << key << ", not among the tied domains in the fullest enclosing ones";
  }

  // Groups: every group_size consecutive ranks in one group-level domain.
  if (shape.group_size > 0) {
    for (size_t g = 0; g < placed.size(); g += shape.group_size) {
      for (size_t x = g; x < g + shape.group_size; ++x) {
        EXPECT_EQ(m.Key(placed[x], shape.group_level), m.Key(placed[g], shape.group_level));
        EXPECT_FALSE(m.Key(placed[x], shape.group_level).empty());
      }
    }
  }

  // Inside the domain, the ranks span as few domains of the next level as any node set that
  // holds the gang there (a node lacking that level's label counts as a domain of its own).
  if (level < m.node_level()) {
    auto spans = [&](const std::vector<int>& set) {
      std::set<std::string> keys;
      for (int x : set) {
        std::string k = m.Key(x, level + 1);
        keys.insert(k.empty() ? "node:" + m.nodes[x].name : k);
      }
      return keys.size();
    };
    size_t fewest = m.nodes.size() + 1;
    for (uint32_t mask = 1; mask < (1u << usable.size()); ++mask) {
      std::vector<int> set;
      for (size_t b = 0; b < usable.size(); ++b) {
        if ((mask & (1u << b)) && m.Key(usable[b], level) == key) set.push_back(usable[b]);
      }
      if (set.empty() || shape.Holds(m, free, set) < count) continue;
      fewest = std::min(fewest, spans(set));
    }
    EXPECT_EQ(spans(placed), fewest) << "ranks spread over more level-" << level + 1
                                     << " domains than needed";
  }
}

TEST(OracleTest, PlacementIsBestScoringAmongEveryNodeSet) {
  for (int i = 0; i < 3000; ++i) {
    CheckPlacementCase(kSeed + static_cast<uint64_t>(i));
    if (::testing::Test::HasFailure()) FAIL() << "first failing seed: " << kSeed + i;
  }
  std::printf("placement oracle: %d cases decided by the enclosing domains' free GPUs\n",
              enclosing_ties_decided);
  EXPECT_GT(enclosing_ties_decided, 100);
}

// ---- Preemption --------------------------------------------------------------------------

// A plan's documented cost (docs/placement.md, "Which plan wins"), lower is better.
using PlanKey = std::tuple<int, int, std::vector<int32_t>, int64_t, int64_t, std::vector<int>>;

PlanKey KeyOf(const Model& m, const std::vector<int32_t>& keep) {
  int evictions = 0, shrinks = 0;
  std::vector<int32_t> priorities;
  int64_t gpus = 0, pods = 0;
  std::vector<int> orders;
  for (size_t g = 0; g < m.gangs.size(); ++g) {
    const int32_t count = static_cast<int32_t>(m.gangs[g].ranks.size());
    if (keep[g] == count) continue;
    (keep[g] == 0 ? evictions : shrinks) += 1;
    priorities.push_back(m.gangs[g].priority);
    gpus += (count - keep[g]) * m.gangs[g].gpus_per_pod;
    pods += count - keep[g];
    orders.push_back(static_cast<int>(g));  // the model's gang order is admission's order
  }
  std::sort(priorities.rbegin(), priorities.rend());
  return {evictions, shrinks, priorities, gpus, pods, orders};
}

std::string Show(const Model& m, const std::vector<int32_t>& keep) {
  std::vector<std::string> parts;
  for (size_t g = 0; g < m.gangs.size(); ++g) {
    if (keep[g] != static_cast<int32_t>(m.gangs[g].ranks.size())) {
      parts.push_back(absl::StrCat(m.gangs[g].job, "->", keep[g]));
    }
  }
  return parts.empty() ? "(none)" : absl::StrJoin(parts, " ");
}

struct PreemptionStats {
  int with_victims = 0;
  int infeasible = 0;
  int ties = 0;  // cases where more than one minimal victim set existed
};

void CheckPreemptionCase(uint64_t seed, PreemptionStats& stats) {
  Rng rng(seed);
  Model m = RandomModel(rng);
  ClusterSnapshot snapshot = Build(m);
  Request r = RandomRequest(rng, m, snapshot.topology());
  r.gang.priority = 5;
  SCOPED_TRACE(absl::StrCat("seed=", seed, " ", Describe(m, r)));
  const int32_t need = r.gang.elastic ? r.gang.elastic->min : r.gang.count;

  // Every action: each eligible gang kept, evicted, or shrunk to a count on its grid.
  std::vector<std::vector<int32_t>> options;
  for (const ModelGang& g : m.gangs) {
    const int32_t count = static_cast<int32_t>(g.ranks.size());
    std::vector<int32_t> keep = {count};
    if (g.priority < r.gang.priority) {
      keep.push_back(0);
      if (g.elastic && g.elastic->min < count) {
        for (int32_t k = g.elastic->min; k < count; k += g.elastic->step) keep.push_back(k);
      }
    }
    options.push_back(keep);
  }
  std::optional<PlanKey> best;
  std::vector<int32_t> best_keep;
  std::vector<PlanKey> fitting;
  std::vector<size_t> pick(options.size(), 0);
  while (true) {
    std::vector<int32_t> keep;
    for (size_t g = 0; g < options.size(); ++g) keep.push_back(options[g][pick[g]]);
    if (r.shape.FitsSomewhere(m, m.Free(keep), need)) {
      fitting.push_back(KeyOf(m, keep));
      if (!best || fitting.back() < *best) {
        best = fitting.back();
        best_keep = keep;
      }
    }
    size_t g = 0;
    while (g < pick.size() && ++pick[g] == options[g].size()) pick[g++] = 0;
    if (g == pick.size()) break;
  }
  // Other victim sets as small as the best: the tie-breaks decided.
  const int tied = static_cast<int>(
      std::count_if(fitting.begin(), fitting.end(), [&](const PlanKey& k) {
        return std::get<0>(k) == std::get<0>(*best) && std::get<1>(k) == std::get<1>(*best);
      }));

  // Admission's order is the model's gang order; priorities and elastic ranges as modelled.
  std::vector<RunningGang> candidates;
  for (const ModelGang& g : m.gangs) candidates.push_back({g.job, g.priority, g.elastic});
  ASSERT_OK_AND_ASSIGN(PreemptionPlan plan, snapshot.PlanPreemption(r.gang, candidates));
  if (!best) {
    EXPECT_FALSE(plan.feasible) << "no victim set makes room, yet a plan came back";
    ++stats.infeasible;
    return;
  }
  ASSERT_TRUE(plan.feasible) << "the oracle found " << Show(m, best_keep) << ": "
                             << plan.explanation.summary;
  std::vector<int32_t> keep = m.Untouched();
  for (const Victim& v : plan.victims) {
    auto it = std::find_if(m.gangs.begin(), m.gangs.end(),
                           [&](const ModelGang& g) { return g.job == v.job; });
    ASSERT_NE(it, m.gangs.end()) << v.job;
    keep[it - m.gangs.begin()] = v.new_count;
  }
  EXPECT_TRUE(r.shape.FitsSomewhere(m, m.Free(keep), need))
      << "the plan " << Show(m, keep) << " does not make room";
  EXPECT_EQ(KeyOf(m, keep), *best) << "planned " << Show(m, keep) << ", the best is "
                                   << Show(m, best_keep);
  stats.with_victims += !plan.victims.empty();
  stats.ties += tied > 1;
}

TEST(OracleTest, PreemptionPicksASmallestLowestPriorityVictimSet) {
  PreemptionStats stats;
  for (int i = 0; i < 3000; ++i) {
    CheckPreemptionCase(kSeed * 3 + static_cast<uint64_t>(i), stats);
    if (::testing::Test::HasFailure()) FAIL() << "first failing seed: " << kSeed * 3 + i;
  }
  std::printf("preemption oracle: %d with victims, %d infeasible, %d with tied minimal sets\n",
              stats.with_victims, stats.infeasible, stats.ties);
  // The seeds exercise every outcome, including the tie-breaks.
  EXPECT_GE(stats.with_victims, 300);
  EXPECT_GE(stats.infeasible, 100);
  EXPECT_GE(stats.ties, 100);
}

}  // namespace
}  // namespace phalanx::placement
