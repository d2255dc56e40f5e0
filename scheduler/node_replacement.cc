#include "scheduler/node_replacement.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/gang_search.h"

namespace phalanx::placement {
namespace {

// Extra free pods far below any node's own: a node given this in the overlay holds no pod.
constexpr int64_t kExcluded = -(int64_t{1} << 50);

// Ranks that move together, and where they may go: `start` is searched first, then each parent
// up to the domain of `ceiling_level`.
struct Batch {
  std::vector<int32_t> ranks;
  int start = 0;
  int ceiling_level = 0;
  bool whole_group = false;  // a group with no member left: moves as one group
};

std::string RankList(const std::vector<int32_t>& ranks) {
  return absl::StrCat(ranks.size() == 1 ? "rank " : "ranks ", absl::StrJoin(ranks, ", "));
}

// The shape of `count` pods of the reserved gang, with its group constraint or without. A gang
// limited to one rank per node keeps its moving ranks off the nodes of all its ranks.
absl::StatusOr<GangShape> BatchShape(const ClusterSnapshot& snapshot,
                                     const ClusterSnapshot::Reservation& reservation,
                                     int32_t count, bool groups) {
  GangRequest request = reservation.request;
  request.elastic.reset();
  request.count = count;
  if (request.max_pods_per_node > 0) {
    for (const auto& rank : reservation.ranks) {
      request.excluded_nodes.push_back(snapshot.nodes()[rank.node].info.name);
    }
  }
  if (!groups) {
    request.group_size = 0;
    request.group_level.clear();
  }
  return ValidateGang(request, snapshot);
}

}  // namespace

ReplacementPlan PlanNodeReplacement(const ClusterSnapshot& snapshot,
                                    const ClusterSnapshot::Reservation& reservation,
                                    const std::vector<std::string>& failed) {
  ReplacementPlan plan;
  const auto& nodes = snapshot.nodes();
  const auto& domains = snapshot.domains();
  const auto& ranks = reservation.ranks;
  const std::set<std::string> failed_names(failed.begin(), failed.end());
  std::vector<int32_t> moving;
  std::vector<uint8_t> is_moving(ranks.size(), 0);
  std::set<std::string> old_names;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::string& name = nodes[ranks[r].node].info.name;
    if (failed_names.count(name) == 0) continue;
    moving.push_back(static_cast<int32_t>(r));
    is_moving[r] = 1;
    old_names.insert(name);
  }
  if (moving.empty()) {
    plan.feasible = true;
    return plan;
  }
  auto infeasible = [&](std::string why) {
    plan.moves.clear();
    plan.explanation.summary =
        absl::StrCat("cannot replace ", RankList(moving), " of ", reservation.request.job, " (on ",
                     absl::StrJoin(old_names, ", "), "): ", why);
    return plan;
  };

  // The whole gang, to resolve its levels (a valid reservation always validates).
  absl::StatusOr<GangShape> gang =
      BatchShape(snapshot, reservation, static_cast<int32_t>(ranks.size()), true);
  if (!gang.ok()) return infeasible(std::string(gang.status().message()));

  // A shrink drops the highest ranks, and a lost lower rank then moves onto a node they freed
  // (ranks stay dense): their pods, still bound while their owner deletes them, count as gone.
  // The failed nodes hold nothing for anyone from here on.
  GangSearch::FreeOverlay overlay;
  const int resources = snapshot.resources().size();
  for (const auto& [node, requests] : snapshot.DroppedRankPods(reservation.request.job)) {
    overlay[node].Add(requests, resources);
  }
  for (int32_t r : moving) overlay[ranks[r].node][kPodsIndex] = kExcluded;
  for (const std::string& name : failed_names) {
    if (int index = snapshot.FindNode(name); index >= 0) overlay[index][kPodsIndex] = kExcluded;
  }

  // Batches in order of their first rank.
  std::vector<Batch> batches;
  std::map<std::pair<int, int>, size_t> batch_of;  // (group or -1, old domain or -1) -> batch
  const int group_size = gang->group_size;
  for (int32_t r : moving) {
    const int old_domain = nodes[ranks[r].node].domain;
    std::pair<int, int> key{-1, old_domain};
    Batch batch{.start = old_domain, .ceiling_level = gang->required_level};
    if (group_size > 0) {
      const int32_t first = r / group_size * group_size;
      int32_t kept = -1;
      for (int32_t m = first; m < first + group_size && kept < 0; ++m) {
        if (!is_moving[m]) kept = m;
      }
      const int group_domain =
          snapshot.AncestorAt(nodes[ranks[kept >= 0 ? kept : r].node].domain, gang->group_level);
      key.first = first / group_size;
      if (kept >= 0) {
        // Stays with the rest of its group.
        if (snapshot.AncestorAt(old_domain, gang->group_level) != group_domain) {
          batch.start = group_domain;
          key.second = group_domain;
        }
        batch.ceiling_level = gang->group_level;
      } else {
        key.second = -1;
        batch.start = group_domain;
        batch.whole_group = true;
      }
    }
    auto [it, inserted] = batch_of.emplace(key, batches.size());
    if (inserted) batches.push_back(batch);
    batches[it->second].ranks.push_back(r);
  }

  GangSearch::Scratch scratch;
  for (const Batch& batch : batches) {
    const int32_t count = static_cast<int32_t>(batch.ranks.size());
    absl::StatusOr<GangShape> shape =
        BatchShape(snapshot, reservation, count, batch.whole_group);
    if (!shape.ok()) return infeasible(std::string(shape.status().message()));
    bool placed = false;
    for (int d = batch.start; d >= 0 && domains[d].level >= batch.ceiling_level;
         d = domains[d].parent) {
      GangSearch search(snapshot, *shape, d, &overlay, &scratch);
      search.Run(0);
      if (search.Capacity(d) < count) continue;
      std::vector<int> chosen = search.Allocate({domains[d].level, d, false}, count);
      for (size_t i = 0; i < chosen.size(); ++i) {
        plan.moves.emplace_back(batch.ranks[i], chosen[i]);
        overlay[chosen[i]].Subtract(reservation.per_pod, resources);
      }
      placed = true;
      break;
    }
    if (placed) continue;
    // Why, in the widest domain the batch could use (the failed nodes show as what the
    // snapshot knows of them).
    const int widest = snapshot.AncestorAt(batch.start, batch.ceiling_level);
    GangSearch search(snapshot, *shape, widest, nullptr, &scratch);
    search.Run(0);
    Explanation why = search.Explain(count);
    std::string summary = why.summary;
    if (group_size > 0 && !batch.whole_group) {
      absl::StrAppend(&summary, " (", RankList(batch.ranks), " must stay in ",
                      snapshot.DomainIdOf(widest).ToString(), " with the rest of its group of ",
                      group_size, ")");
    }
    infeasible(summary);
    plan.explanation.wanted = why.wanted;
    plan.explanation.best_domain = why.best_domain;
    plan.explanation.fit_in_best = why.fit_in_best;
    plan.explanation.nodes_rejected = why.nodes_rejected;
    return plan;
  }
  std::sort(plan.moves.begin(), plan.moves.end());
  plan.feasible = true;
  return plan;
}

}  // namespace phalanx::placement
