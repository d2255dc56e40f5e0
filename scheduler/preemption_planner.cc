#include "scheduler/preemption_planner.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/counted_noun.h"
#include "common/status.h"
#include "scheduler/gang_search.h"

namespace phalanx::placement {
namespace {

// Exhaustive subset search per domain stops after this many fit checks and falls back to a
// greedy choice with pruning, so a domain crowded with candidates cannot stall a cycle.
constexpr int kExhaustiveChecks = 256;

struct Candidate {
  const RunningGang* gang = nullptr;
  int order = 0;  // admission's preference; lower = preferred victim
  const ClusterSnapshot::Reservation* reservation = nullptr;
  std::vector<ResourceVector> rank_usage;
  std::vector<int64_t> gpus_from;  // gpus_from[r] = GPUs of ranks r.. (what shrinking to r frees)
  int32_t count = 0;
  int32_t min_count = 0;  // == count when it cannot shrink
  int32_t step = 1;
  bool CanShrink() const { return min_count < count; }
};

// Where the preemptor would land: a domain, or a node when the required level is the hostname.
struct Target {
  int level = 0;
  int index = 0;
  bool is_node = false;
  int order = 0;  // topology order
};

// new_count per candidate position (count = untouched, 0 = evicted).
using Action = std::vector<int32_t>;

// A plan's cost, compared lexicographically (docs/placement.md, PlanPreemption): fewest
// evictions, then fewest shrinks, then the lowest victim priorities (the highest one first, then
// the next), then the fewest GPUs and pods taken, then admission's order of preference, then the
// tighter level and topology order.
struct Plan {
  Target target;
  Action action;
  int evictions = 0;
  int shrinks = 0;
  std::vector<int32_t> priorities;  // the victims', highest first
  int64_t gpus_taken = 0;
  int64_t pods_taken = 0;
  std::vector<int> victim_orders;  // ascending

  auto Key() const {
    return std::make_tuple(evictions, shrinks, std::cref(priorities), gpus_taken, pods_taken,
                           std::cref(victim_orders), -target.level, target.order);
  }
};

// Calls visit(pick) for every `size`-subset of positions 0..n-1, in colexicographic order (the
// subsets whose largest position is smallest come first), until visit returns false.
template <typename Visit>
void ForEachSubset(size_t n, size_t size, Visit visit) {
  if (size > n) return;
  std::vector<size_t> pick(size);
  for (size_t i = 0; i < size; ++i) pick[i] = i;
  while (true) {
    if (!visit(pick)) return;
    size_t j = 0;
    while (j < size && pick[j] + 1 == (j + 1 < size ? pick[j + 1] : n)) ++j;
    if (j == size) return;
    ++pick[j];
    for (size_t i = 0; i < j; ++i) pick[i] = i;
  }
}

class Planner {
 public:
  // `today` is a cached search of `shape` that has Run: fit checks start from its results.
  Planner(const ClusterSnapshot& snapshot, const GangShape& shape, const GangSearch& today,
          std::vector<Candidate> all)
      : snapshot_(snapshot), shape_(shape), today_(today), all_(std::move(all)) {}

  // The best plan for `target`, or nullopt. With `bound` (the best plan so far), subsets larger
  // than it could produce are not tried, which only ever skips strictly worse plans.
  std::optional<Plan> PlanFor(const Target& target, const std::vector<int>& present,
                              const Plan* bound);

  GangSearch::FreeOverlay Overlay(const std::vector<int>& present, const Action& action) const {
    GangSearch::FreeOverlay overlay;
    // Sized once: its slots are 256-byte resource vectors, costly to move on every rehash.
    size_t ranks = 0;
    for (size_t i = 0; i < present.size(); ++i) {
      const Candidate& c = all_[present[i]];
      ranks += static_cast<size_t>(c.count - std::min(action[i], c.count));
    }
    overlay.reserve(ranks);
    const int n = snapshot_.resources().size();
    for (size_t i = 0; i < present.size(); ++i) {
      const Candidate& c = all_[present[i]];
      for (int32_t r = action[i]; r < c.count; ++r) {
        overlay[c.reservation->ranks[r].node].Add(c.rank_usage[r], n);
      }
    }
    return overlay;
  }

  int Root(const Target& t) const {
    return t.is_node ? snapshot_.nodes()[t.index].domain : t.index;
  }

  // Pods of the gang that `target` holds once `action` is applied: only the freed ranks' nodes
  // and the domains above them are recomputed.
  int64_t CapacityAfter(const Target& target, const std::vector<int>& present,
                        const Action& action) const {
    return today_.CapacityWith({target.level, target.index, target.is_node},
                               Overlay(present, action));
  }

  bool Fits(const Target& target, const std::vector<int>& present, const Action& action) {
    ++checks_;
    return CapacityAfter(target, present, action) >= shape_.min_count;
  }

  // For every target at `level`: the candidates (positions in all_) holding a rank inside it,
  // in admission order. Targets holding none cannot be helped by preemption.
  std::unordered_map<int, std::vector<int>> PresentAt(int level) const {
    std::unordered_map<int, std::vector<int>> present;
    const bool nodes = level == snapshot_.topology().node_level();
    for (size_t i = 0; i < all_.size(); ++i) {
      for (const ClusterSnapshot::ReservedRank& rank : all_[i].reservation->ranks) {
        const ClusterSnapshot::Node& node = snapshot_.nodes()[rank.node];
        if (node.removed || (!nodes && node.depth < level)) continue;
        int key = nodes ? rank.node : snapshot_.AncestorAt(node.domain, level);
        std::vector<int>& list = present[key];
        if (list.empty() || list.back() != static_cast<int>(i)) list.push_back(static_cast<int>(i));
      }
    }
    return present;
  }

 private:
  Plan MakePlan(const Target& target, const std::vector<int>& present, const Action& action) const;
  // `action` fits; shrinks its shrunk gangs as little as possible (fewest GPUs, then pods taken).
  void LeastTaken(const Target& target, const std::vector<int>& present, Action& action);
  void Minimize(const Target& target, const std::vector<int>& present, Action& action);
  bool Greedy(const Target& target, const std::vector<int>& present, Action& action);

  const ClusterSnapshot& snapshot_;
  const GangShape& shape_;
  const GangSearch& today_;
  std::vector<Candidate> all_;
  int checks_ = 0;
};

void Planner::Minimize(const Target& target, const std::vector<int>& present, Action& action) {
  // Give back whole victims that turned out unnecessary, least preferred first.
  for (size_t i = present.size(); i-- > 0;) {
    const Candidate& c = all_[present[i]];
    if (action[i] == c.count) continue;
    Action trial = action;
    trial[i] = c.count;
    if (Fits(target, present, trial)) action = trial;
  }
  // Evictions of elastic gangs that a shrink would cover become shrinks.
  for (size_t i = 0; i < present.size(); ++i) {
    const Candidate& c = all_[present[i]];
    if (action[i] != 0 || !c.CanShrink()) continue;
    Action trial = action;
    trial[i] = c.min_count;
    if (Fits(target, present, trial)) action = trial;
  }
  // Take from each shrunk gang as few pods as possible: the largest count that still fits.
  for (size_t i = 0; i < present.size(); ++i) {
    const Candidate& c = all_[present[i]];
    if (action[i] == 0 || action[i] == c.count) continue;
    for (int32_t k = c.min_count + (c.count - 1 - c.min_count) / c.step * c.step; k > action[i];
         k -= c.step) {
      Action trial = action;
      trial[i] = k;
      if (Fits(target, present, trial)) {
        action = trial;
        break;
      }
    }
  }
}

bool Planner::Greedy(const Target& target, const std::vector<int>& present, Action& action) {
  // Shrink every elastic gang to its minimum, then evict the candidate that frees the most
  // capacity until the gang fits; Minimize() then returns what was not needed.
  for (size_t i = 0; i < present.size(); ++i) {
    if (all_[present[i]].CanShrink()) action[i] = all_[present[i]].min_count;
  }
  while (!Fits(target, present, action)) {
    int best = -1;
    int64_t best_gain = 0;
    for (size_t i = 0; i < present.size(); ++i) {
      if (action[i] == 0) continue;
      Action trial = action;
      trial[i] = 0;
      int64_t gain = CapacityAfter(target, present, trial);
      if (best < 0 || gain > best_gain) {
        best = static_cast<int>(i);
        best_gain = gain;
      }
    }
    if (best < 0) return false;
    action[best] = 0;
  }
  return true;
}

Plan Planner::MakePlan(const Target& target, const std::vector<int>& present,
                       const Action& action) const {
  Plan plan;
  plan.target = target;
  plan.action.assign(all_.size(), -1);
  for (size_t i = 0; i < present.size(); ++i) {
    const Candidate& c = all_[present[i]];
    if (action[i] == c.count) continue;
    plan.action[present[i]] = action[i];
    if (action[i] == 0) {
      ++plan.evictions;
    } else {
      ++plan.shrinks;
    }
    plan.priorities.push_back(c.gang->priority);
    plan.gpus_taken += c.gpus_from[action[i]];
    plan.pods_taken += c.count - action[i];
    plan.victim_orders.push_back(c.order);
  }
  std::sort(plan.priorities.rbegin(), plan.priorities.rend());
  std::sort(plan.victim_orders.begin(), plan.victim_orders.end());
  return plan;
}

void Planner::LeastTaken(const Target& target, const std::vector<int>& present, Action& action) {
  std::vector<size_t> shrunk;
  for (size_t i = 0; i < present.size(); ++i) {
    if (action[i] > 0 && action[i] < all_[present[i]].count) shrunk.push_back(i);
  }
  if (shrunk.empty()) return;
  // Depth first over the shrunk gangs' counts, largest (least taken) first, pruned by "does it
  // still fit with the rest at their minimum" and by the best cost so far; bounded, after
  // which the best found is kept (at worst `action`, every shrunk gang at its minimum).
  auto top = [&](size_t i) {
    const Candidate& c = all_[present[i]];
    return c.min_count + (c.count - 1 - c.min_count) / c.step * c.step;
  };
  // What `a` takes from shrunk[0..j) plus the least the others can take: a lower bound.
  auto cost = [&](const Action& a, size_t j) {
    std::pair<int64_t, int64_t> c{0, 0};
    for (size_t x = 0; x < shrunk.size(); ++x) {
      const Candidate& gang = all_[present[shrunk[x]]];
      int32_t k = x < j ? a[shrunk[x]] : top(shrunk[x]);
      c.first += gang.gpus_from[k];
      c.second += gang.count - k;
    }
    return c;
  };
  Action best = action;
  std::pair<int64_t, int64_t> best_cost = cost(best, shrunk.size());
  Action trial = action;
  int budget = kExhaustiveChecks;
  auto visit = [&](auto& self, size_t j) -> void {
    if (j == shrunk.size()) {
      best_cost = cost(trial, j);
      best = trial;
      return;
    }
    const Candidate& c = all_[present[shrunk[j]]];
    for (int32_t k = top(shrunk[j]); k >= c.min_count && budget > 0; k -= c.step) {
      trial[shrunk[j]] = k;
      if (cost(trial, j + 1) >= best_cost) break;  // smaller k only takes more
      --budget;
      // The rest at their minimum free the most; if that does not fit, take more here.
      if (Fits(target, present, trial)) self(self, j + 1);
    }
    trial[shrunk[j]] = c.min_count;
  };
  visit(visit, 0);
  action = best;
}

std::optional<Plan> Planner::PlanFor(const Target& target, const std::vector<int>& present,
                                     const Plan* bound) {
  const size_t n = present.size();
  Action untouched(n);
  Action all_evicted(n, 0);
  for (size_t i = 0; i < n; ++i) untouched[i] = all_[present[i]].count;
  if (!Fits(target, present, all_evicted)) return std::nullopt;

  // Positions in the order subsets are tried: lowest priority first, then admission's order,
  // so that the first plans found are the cheapest ones if the check budget runs out.
  std::vector<size_t> by_priority(n);
  for (size_t i = 0; i < n; ++i) by_priority[i] = i;
  std::stable_sort(by_priority.begin(), by_priority.end(), [&](size_t a, size_t b) {
    return all_[present[a]].gang->priority < all_[present[b]].gang->priority;
  });
  std::vector<size_t> shrinkable;
  for (size_t i : by_priority) {
    if (all_[present[i]].CanShrink()) shrinkable.push_back(i);
  }
  Action shrunk = untouched;
  for (size_t i : shrinkable) shrunk[i] = all_[present[i]].min_count;

  size_t max_shrinks = n;
  size_t max_evictions = n;
  if (bound != nullptr) {
    max_evictions = static_cast<size_t>(bound->evictions);
    if (bound->evictions == 0) max_shrinks = static_cast<size_t>(bound->shrinks);
  }
  const int start = checks_;
  bool exhausted = false;
  auto within_budget = [&] {
    if (checks_ - start < kExhaustiveChecks) return true;
    exhausted = true;
    return false;
  };
  std::optional<Plan> best;
  auto consider = [&](Action action) {
    // The victims and their modes are fixed; how much each shrink takes is what is left to choose.
    Plan plan = MakePlan(target, present, action);
    if (best && std::tie(plan.evictions, plan.shrinks, plan.priorities) >
                    std::tie(best->evictions, best->shrinks, best->priorities)) {
      return;
    }
    LeastTaken(target, present, action);
    plan = MakePlan(target, present, action);
    if (!best || plan.Key() < best->Key()) best = std::move(plan);
  };

  // Shrinks alone, fewest gangs first; every set of the smallest size that fits is compared.
  for (size_t size = 1; size <= std::min(shrinkable.size(), max_shrinks) && !best && !exhausted;
       ++size) {
    std::vector<Action> fitting;
    ForEachSubset(shrinkable.size(), size, [&](const std::vector<size_t>& pick) {
      if (!within_budget()) return false;
      Action action = untouched;
      for (size_t p : pick) action[shrinkable[p]] = all_[present[shrinkable[p]]].min_count;
      if (Fits(target, present, action)) fitting.push_back(std::move(action));
      return true;
    });
    for (Action& action : fitting) consider(std::move(action));
  }
  // Then evictions, fewest first: the sets that fit with every other elastic gang at its
  // minimum, each with the fewest of those shrinks it really needs.
  for (size_t size = 1; size <= max_evictions && !best && !exhausted; ++size) {
    std::vector<std::vector<size_t>> evictions;
    ForEachSubset(n, size, [&](const std::vector<size_t>& pick) {
      if (!within_budget()) return false;
      Action action = shrunk;
      for (size_t p : pick) action[by_priority[p]] = 0;
      if (Fits(target, present, action)) {
        std::vector<size_t> evicted;
        for (size_t p : pick) evicted.push_back(by_priority[p]);
        evictions.push_back(std::move(evicted));
      }
      return true;
    });
    std::vector<Action> fitting;
    size_t fewest_shrinks = shrinkable.size();
    for (const std::vector<size_t>& evicted : evictions) {
      std::vector<size_t> others;
      for (size_t i : shrinkable) {
        if (std::find(evicted.begin(), evicted.end(), i) == evicted.end()) others.push_back(i);
      }
      Action base = untouched;
      for (size_t i : evicted) base[i] = 0;
      for (size_t k = 0; k <= std::min(others.size(), fewest_shrinks); ++k) {
        bool found = false;
        ForEachSubset(others.size(), k, [&](const std::vector<size_t>& pick) {
          Action action = base;
          for (size_t p : pick) action[others[p]] = all_[present[others[p]]].min_count;
          // With every other elastic gang at its minimum, this is the check already made.
          const bool fits =
              k == others.size() || (within_budget() && Fits(target, present, action));
          if (fits) {
            if (k < fewest_shrinks) fitting.clear();
            fewest_shrinks = k;
            found = true;
            fitting.push_back(std::move(action));
          }
          return !exhausted;
        });
        if (found || exhausted) break;
      }
    }
    for (Action& action : fitting) consider(std::move(action));
  }
  if (!best && exhausted) {
    Action action = untouched;
    if (Greedy(target, present, action)) {
      Minimize(target, present, action);
      best = MakePlan(target, present, action);
    }
  }
  return best;
}

// Every target, in topology order: domains at `level` (or nodes at the hostname level).
void CollectTargets(const ClusterSnapshot& snapshot, int domain, int level,
                    std::vector<Target>& out) {
  const ClusterSnapshot::Domain& d = snapshot.domains()[domain];
  if (d.level == level) {
    out.push_back({level, domain, false, static_cast<int>(out.size())});
    return;
  }
  for (int child : d.children) CollectTargets(snapshot, child, level, out);
  if (level == snapshot.topology().node_level()) {
    for (int node : d.nodes) out.push_back({level, node, true, static_cast<int>(out.size())});
  }
}

}  // namespace

absl::StatusOr<PreemptionPlan> PlanGangPreemption(const ClusterSnapshot& snapshot,
                                                  const GangRequest& request,
                                                  const std::vector<RunningGang>& candidates) {
  ASSIGN_OR_RETURN(GangShape shape, ValidateGang(request, snapshot));
  PreemptionPlan plan;
  // Already fits: nothing to preempt.
  PlacementResult now = *snapshot.Place(request);
  if (now.placed) {
    plan.feasible = true;
    plan.placement = now.placement;
    return plan;
  }

  std::vector<Candidate> eligible;
  std::set<std::string> seen;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const RunningGang& gang = candidates[i];
    if (gang.priority >= request.priority || gang.job == request.job) continue;
    if (!seen.insert(gang.job).second) continue;
    const ClusterSnapshot::Reservation* reservation = snapshot.FindReservation(gang.job);
    if (reservation == nullptr || reservation->ranks.empty()) continue;
    Candidate c;
    c.gang = &gang;
    c.order = static_cast<int>(i);
    c.reservation = reservation;
    c.count = static_cast<int32_t>(reservation->ranks.size());
    c.min_count = c.count;
    if (gang.elastic.has_value() && gang.elastic->min >= 1 && gang.elastic->step >= 1 &&
        gang.elastic->min < c.count) {
      c.min_count = gang.elastic->min;
      c.step = gang.elastic->step;
    }
    for (size_t r = 0; r < reservation->ranks.size(); ++r) {
      c.rank_usage.push_back(snapshot.RankUsage(*reservation, r));
    }
    c.gpus_from.assign(reservation->ranks.size() + 1, 0);
    for (size_t r = reservation->ranks.size(); r-- > 0;) {
      c.gpus_from[r] = c.gpus_from[r + 1] + c.rank_usage[r][kGpuIndex];
    }
    eligible.push_back(std::move(c));
  }

  GangSearch today(snapshot, shape);
  today.Run(0);
  Planner planner(snapshot, shape, today, eligible);
  std::vector<int> levels;
  if (shape.required_level > 0) {
    levels.push_back(shape.required_level);
  } else {
    for (int level = snapshot.topology().node_level(); level >= 0; --level) levels.push_back(level);
  }
  // Targets some eligible gang holds capacity in, most promising first (the fewest pods missing
  // today), so that a good plan found early bounds the search of the others.
  struct Work {
    int64_t missing;
    Target target;
    std::vector<int> present;
  };
  std::vector<Work> work;
  for (int level : levels) {
    std::vector<Target> targets;
    CollectTargets(snapshot, 0, level, targets);
    std::unordered_map<int, std::vector<int>> present = planner.PresentAt(level);
    for (const Target& target : targets) {
      auto holders = present.find(target.index);
      if (holders == present.end()) continue;
      int64_t fits = target.is_node ? today.NodeCapacity(target.index)
                                    : today.Capacity(target.index);
      work.push_back({shape.min_count - fits, target, std::move(holders->second)});
    }
  }
  std::stable_sort(work.begin(), work.end(),
                   [](const Work& a, const Work& b) { return a.missing < b.missing; });
  std::optional<Plan> best;
  for (const Work& w : work) {
    std::optional<Plan> candidate = planner.PlanFor(w.target, w.present, best ? &*best : nullptr);
    if (candidate && (!best || candidate->Key() < best->Key())) best = std::move(candidate);
  }

  if (!best.has_value()) {
    // Explain the best case: every eligible gang gone.
    std::vector<int> everyone(eligible.size());
    Action none(eligible.size(), 0);
    for (size_t i = 0; i < eligible.size(); ++i) everyone[i] = static_cast<int>(i);
    GangSearch::FreeOverlay overlay = planner.Overlay(everyone, none);
    plan.explanation = today.Explain(shape.min_count, &overlay);
    plan.explanation.summary = absl::StrCat(
        "no preemption helps (", phalanx::CountedNoun(eligible.size(), "lower-priority gang"),
        eligible.size() == 1 ? " holds" : " hold", " capacity); with all of them gone it still ",
        plan.explanation.summary);
    return plan;
  }

  std::vector<int> everyone(eligible.size());
  for (size_t i = 0; i < eligible.size(); ++i) everyone[i] = static_cast<int>(i);
  Action action(eligible.size());
  for (size_t i = 0; i < eligible.size(); ++i) {
    action[i] = best->action[i] < 0 ? eligible[i].count : best->action[i];
    if (best->action[i] >= 0) {
      plan.victims.push_back({eligible[i].gang->job, best->action[i]});
    }
  }
  GangSearch::FreeOverlay overlay = planner.Overlay(everyone, action);
  GangSearch search(snapshot, shape, planner.Root(best->target), &overlay);
  search.Run(0);
  std::optional<GangSearch::Choice> choice =
      best->target.is_node ? GangSearch::Choice{best->target.level, best->target.index, true}
                           : search.Tightest(shape.min_count);
  if (!choice.has_value()) return absl::InternalError("preemption plan does not fit on replay");
  std::vector<int> rank_nodes = search.Allocate(*choice, shape.min_count);
  plan.feasible = true;
  plan.placement.job = request.job;
  plan.placement.domain = snapshot.LowestCommonDomain(rank_nodes);
  for (int node : rank_nodes) plan.placement.nodes.push_back(snapshot.nodes()[node].info.name);
  return plan;
}

}  // namespace phalanx::placement
