// Random admission scenarios and the invariants every cycle must keep, shared by the property
// tests against the GPU-counting fake and against the real in-process placement service.
//
//   Scenario gen(seed);
//   world.Queue(gen.Queue(0, /*flavors=*/1));
//   world.Add(gen.NewJob(/*queues=*/1, /*serial=*/1, /*now=*/0));
//   std::string failure;
//   Checker{before, result, held_count, &failure}.Run(world.snapshot);
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "operator/admission/types.h"
#include "tests/unit/operator/fake_placement_service.h"
#include "tests/unit/operator/world.h"

namespace phalanx::admission::testing {

class Scenario {
 public:
  explicit Scenario(uint64_t seed) : rng_(seed) {}

  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng_); }

  // Per flavor f, 1 to 3 domains labelled pool=f<f>.
  std::vector<FakeDomain> Domains(int flavors) {
    std::vector<FakeDomain> domains;
    for (int f = 0; f < flavors; ++f) {
      for (int d = Pick(1, 3); d > 0; --d) {
        domains.push_back({"f" + std::to_string(f) + "-d" + std::to_string(d),
                           {{"pool", "f" + std::to_string(f)}},
                           8 * Pick(1, 4)});
      }
    }
    return domains;
  }

  // ClusterQueue "q<index>": flavors f0..f<flavors-1> from a random start, random quotas, limits,
  // cohort (or none), strategy, preemption policies and weight.
  ClusterQueue Queue(int index, int flavors) {
    ClusterQueue cq;
    cq.name = "q" + std::to_string(index);
    int cohort = Pick(0, 2);
    cq.cohort = cohort == 0 ? "" : "c" + std::to_string(cohort);
    ResourceGroup group{.covered_resources = {"nvidia.com/gpu"}};
    int first = Pick(0, flavors - 1);
    for (int k = 0; k < flavors; ++k) {
      if (k > 0 && Coin()) break;
      std::string flavor = "f" + std::to_string((first + k) % flavors);
      int64_t nominal = 4 * Pick(0, 8);
      std::optional<int64_t> borrowing, lending;
      if (!cq.cohort.empty() && Coin(0.4)) borrowing = 4 * Pick(0, 4);
      if (!cq.cohort.empty() && Coin(0.4)) lending = Pick(0, static_cast<int>(nominal));
      group.flavors.push_back({flavor, {Gpu(nominal, borrowing, lending)}});
    }
    cq.resource_groups.push_back(group);
    cq.queueing_strategy = Coin() ? QueueingStrategy::kStrictFifo : QueueingStrategy::kBestEffortFifo;
    cq.preemption.within_cluster_queue = static_cast<WithinClusterQueuePolicy>(Pick(0, 2));
    cq.preemption.reclaim_within_cohort = static_cast<ReclaimWithinCohortPolicy>(Pick(0, 2));
    if (Coin(0.3)) {
      cq.preemption.borrow_within_cohort = {BorrowWithinCohortPolicy::kLowerPriority,
                                            Coin() ? std::optional<int32_t>(Pick(0, 3)) : std::nullopt};
    }
    cq.fair_sharing_weight = std::vector<double>{0.5, 1, 2}[Pick(0, 2)];
    if (cq.cohort.empty() && Coin()) cq.backfill_quota = BackfillQuota::kHoldForHead;
    return cq;
  }

  // A job for a random queue "q<i>" (namespace and LocalQueue "main" named after the queue).
  Workload NewJob(int queues, int serial, int64_t now) {
    std::string ns = "q" + std::to_string(Pick(0, queues - 1));
    Workload w = Job(ns + "/w" + std::to_string(serial), Pick(1, 4), std::vector<int64_t>{1, 2, 4, 8}[Pick(0, 3)],
                     Pick(0, 3), now * 100 + Pick(0, 99));
    if (Coin(0.25)) {
      int min = Pick(1, 2);
      w.elastic = placement::ElasticRange{min, min + Pick(0, 4), Pick(1, 2)};
    }
    // Run-time estimates (backfill's and the quota hold's), usually: the callers' cycles are a
    // second apart, so most jobs outlast any estimate's start.
    if (Coin(0.7)) w.expected_runtime_seconds = Pick(0, 5);
    return w;
  }

 private:
  std::mt19937_64 rng_;
};

// Order inside a queue: priority, then creation, then key.
inline bool Ahead(const Workload& a, int32_t pa, const Workload& b, int32_t pb) {
  if (pa != pb) return pa > pb;
  if (a.creation_time != b.creation_time) return a.creation_time < b.creation_time;
  return a.key < b.key;
}

// Checks one cycle's result against the invariants listed in property_test.cc. `held_count`
// says how many pods the placement service holds for a job (0 if none).
struct Checker {
  const Snapshot& before;  // the snapshot the cycle saw
  const CycleResult& result;
  std::function<int32_t(std::string_view)> held_count;
  std::string* failure;

  void Fail(const std::string& what) {
    if (failure->empty()) *failure = what;
  }

  const ClusterQueue* Queue(const std::string& name) const {
    for (const ClusterQueue& cq : before.cluster_queues) {
      if (cq.name == name) return &cq;
    }
    return nullptr;
  }

  void Run(const Snapshot& after) {
    CheckAdmissions();
    CheckVictims();
    CheckStrictFifo();
    CheckGrowths();
    CheckQuota(after);
    CheckQuotaHolds(after);
    for (const PendingDecision& p : result.pending) {
      if (p.message.empty()) Fail("pending " + p.workload + " has no message");
    }
  }

  void CheckAdmissions() {
    std::set<std::string> seen;
    for (const AdmissionDecision& a : result.admissions) {
      if (!seen.insert(a.workload).second) Fail(a.workload + " admitted twice in one cycle");
      const Workload* w = nullptr;
      for (const Workload& x : before.workloads) {
        if (x.key == a.workload) w = &x;
      }
      if (w == nullptr) return Fail("admitted unknown " + a.workload);
      if (w->admitted) Fail(a.workload + " admitted while already admitted");
      if (a.count <= 0 || a.placement.nodes.size() != static_cast<size_t>(a.count)) {
        Fail(a.workload + " admitted without a placement of its count");
      }
      if (held_count(a.workload) != a.count) Fail(a.workload + " is not held at its count");
      if (w->elastic ? (a.count < w->elastic->min || a.count > w->elastic->max) : a.count != w->count) {
        Fail(a.workload + " admitted with a count outside its request");
      }
    }
  }

  void CheckVictims() {
    std::map<std::string, const Workload*> by_key;
    for (const Workload& w : before.workloads) by_key[w.key] = &w;
    for (const PreemptionDecision& p : result.preemptions) {
      const Workload* victim = by_key[p.victim];
      const Workload* preemptor = by_key[p.preemptor];
      if (victim == nullptr || preemptor == nullptr) return Fail("unknown preemption party");
      const ClusterQueue* cq = Queue(preemptor->namespace_name);
      if (victim->priority < preemptor->priority) continue;
      bool allowed = false;
      if (p.reason == PreemptionReason::kInClusterQueue) {
        allowed = cq->preemption.within_cluster_queue ==
                      WithinClusterQueuePolicy::kLowerOrNewerEqualPriority &&
                  victim->priority == preemptor->priority &&
                  victim->creation_time > preemptor->creation_time;
      } else if (p.reason == PreemptionReason::kReclaimWithinCohort ||
                 p.reason == PreemptionReason::kFairSharing) {
        allowed = cq->preemption.reclaim_within_cohort == ReclaimWithinCohortPolicy::kAny;
      }
      if (!allowed) {
        Fail(p.preemptor + " (priority " + std::to_string(preemptor->priority) + ") preempted " +
             p.victim + " (priority " + std::to_string(victim->priority) + ") for " +
             std::string(ToString(p.reason)));
      }
      if (p.reason == PreemptionReason::kBorrowWithinCohort) {
        const auto& threshold = cq->preemption.borrow_within_cohort.max_priority_threshold;
        if (threshold && victim->priority > *threshold) Fail("borrowWithinCohort threshold broken");
      }
    }
  }

  void CheckStrictFifo() {
    std::set<std::string> admitted;
    for (const AdmissionDecision& a : result.admissions) admitted.insert(a.workload);
    for (const ClusterQueue& cq : before.cluster_queues) {
      if (cq.queueing_strategy != QueueingStrategy::kStrictFifo) continue;
      for (const Workload& later : before.workloads) {
        if (later.admitted || later.namespace_name != cq.name || !admitted.contains(later.key)) {
          continue;
        }
        for (const Workload& earlier : before.workloads) {
          if (earlier.admitted || earlier.namespace_name != cq.name ||
              admitted.contains(earlier.key)) {
            continue;
          }
          if (Ahead(earlier, earlier.priority, later, later.priority)) {
            Fail("StrictFIFO " + cq.name + " admitted " + later.key + " past pending " + earlier.key);
          }
        }
      }
    }
  }

  void CheckGrowths() {
    std::set<std::string> victims, blocked_queues, blocked_cohorts;
    for (const PreemptionDecision& p : result.preemptions) victims.insert(p.victim);
    for (const PendingDecision& p : result.pending) {
      const ClusterQueue* cq = Queue(p.cluster_queue);
      if (cq == nullptr || (p.reason != PendingReason::kQuota && p.reason != PendingReason::kTopology &&
                            p.reason != PendingReason::kStrictFifoBlocked &&
                            p.reason != PendingReason::kPlacementError)) {
        continue;
      }
      blocked_queues.insert(cq->name);
      if (!cq->cohort.empty()) blocked_cohorts.insert(cq->cohort);
    }
    for (const GrowthDecision& g : result.growths) {
      const Workload* w = nullptr;
      for (const Workload& x : before.workloads) {
        if (x.key == g.workload) w = &x;
      }
      if (w == nullptr || !w->admitted || !w->elastic) return Fail("grew " + g.workload + ", which was not running elastic");
      const placement::ElasticRange& e = *w->elastic;
      if (victims.contains(g.workload)) Fail(g.workload + " was preempted and grown in one cycle");
      if (g.old_count != w->admitted->count || g.new_count <= g.old_count || g.new_count > e.max ||
          (g.new_count - e.min) % e.step != 0 ||
          (w->group_size > 0 && g.new_count % w->group_size != 0)) {
        Fail(g.workload + " grew " + std::to_string(g.old_count) + " -> " +
             std::to_string(g.new_count) + " off its elastic grid");
      }
      if (held_count(g.workload) != g.new_count || g.placement.nodes.size() != static_cast<size_t>(g.new_count)) {
        Fail(g.workload + " is not held at its grown count");
      }
      const ClusterQueue* cq = Queue(w->admitted->cluster_queue);
      if (blocked_queues.contains(cq->name) || (!cq->cohort.empty() && blocked_cohorts.contains(cq->cohort))) {
        Fail(g.workload + " grew while a workload of its queue or cohort is pending");
      }
    }
  }

  // Backfill for quota: a workload held back names its queue's holder, pending ahead of it in a
  // queue that asks for the hold and has no cohort; and at the start the holder's message gives,
  // the GPUs its queue's admitted workloads still hold (those expected to end by then freed)
  // leave the holder's smallest size room in one of the queue's flavors.
  void CheckQuotaHolds(const Snapshot& after) {
    static const std::regex held_re(
        "^backfill: ClusterTrainingQueue (\\S+) holds its quota for (\\S+), expected to start");
    static const std::regex holder_re(
        "backfill: ClusterTrainingQueue (\\S+)'s quota held for its expected start in (\\d+)s");
    auto workload = [&](const std::string& key) -> const Workload* {
      for (const Workload& w : before.workloads) {
        if (w.key == key) return &w;
      }
      return nullptr;
    };
    std::map<std::string, const PendingDecision*> pending;
    for (const PendingDecision& p : result.pending) pending[p.workload] = &p;
    std::smatch m;
    for (const PendingDecision& p : result.pending) {
      if (std::regex_search(p.message, m, held_re)) {
        ++held_back_seen;
        const ClusterQueue* cq = Queue(m[1]);
        const Workload* self = workload(p.workload);
        const Workload* holder = workload(m[2]);
        if (cq == nullptr || cq->backfill_quota != BackfillQuota::kHoldForHead ||
            !cq->cohort.empty() || p.cluster_queue != cq->name) {
          Fail(p.workload + " held back for a queue that holds no quota: " + p.message);
        } else if (holder == nullptr || !pending.contains(holder->key) ||
                   pending.at(holder->key)->cluster_queue != cq->name || self == nullptr ||
                   !Ahead(*holder, holder->priority, *self, self->priority)) {
          Fail(p.workload + " held back for " + std::string(m[2]) +
               ", which is not pending ahead of it in its queue");
        }
      }
      if (!std::regex_search(p.message, m, holder_re)) continue;
      ++holders_seen;
      const ClusterQueue* cq = Queue(m[1]);
      const Workload* holder = workload(p.workload);
      if (cq == nullptr || holder == nullptr) return Fail("hold of unknown " + p.workload);
      const int64_t start = before.now + std::stoll(m[2]);
      std::map<std::string, int64_t> used;
      for (const Workload& w : after.workloads) {
        if (!w.admitted || w.admitted->cluster_queue != cq->name) continue;
        const int64_t end =
            w.expected_runtime_seconds
                ? std::max(before.now, w.admitted->admission_time + *w.expected_runtime_seconds)
                : std::numeric_limits<int64_t>::max();
        if (end > start) {
          used[w.admitted->flavors.at("nvidia.com/gpu")] +=
              w.per_pod.at("nvidia.com/gpu") * w.admitted->count;
        }
      }
      const int64_t needs = holder->per_pod.at("nvidia.com/gpu") *
                            (holder->elastic ? holder->elastic->min : holder->count);
      bool room = false;
      for (const FlavorQuotas& f : cq->resource_groups[0].flavors) {
        room = room || used[f.flavor] + needs <= f.resources[0].nominal;
      }
      if (!room) Fail(p.workload + "'s hold leaves it no room at its start: " + p.message);
    }
  }
  int held_back_seen = 0;  // workloads held back for a hold, and holders, this cycle
  int holders_seen = 0;

  void CheckQuota(const Snapshot& after) {
    // usage[cq][flavor] from the admitted workloads after the decisions were applied.
    std::map<std::string, std::map<std::string, int64_t>> usage;
    for (const Workload& w : after.workloads) {
      if (!w.admitted) continue;
      usage[w.admitted->cluster_queue][w.admitted->flavors.at("nvidia.com/gpu")] +=
          w.admitted->count * w.per_pod.at("nvidia.com/gpu");
    }
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> cohorts;  // used, lent
    for (const ClusterQueue& cq : after.cluster_queues) {
      for (const FlavorQuotas& fq : cq.resource_groups[0].flavors) {
        const ResourceQuota& q = fq.resources[0];
        int64_t used = usage[cq.name][fq.flavor];
        if (cq.cohort.empty() && used > q.nominal) {
          Fail(cq.name + " uses " + std::to_string(used) + " of nominal " + std::to_string(q.nominal));
        }
        if (q.borrowing_limit && used > q.nominal + *q.borrowing_limit) {
          Fail(cq.name + " borrows beyond its borrowingLimit");
        }
        if (!cq.cohort.empty()) {
          int64_t guaranteed = q.lending_limit ? q.nominal - *q.lending_limit : 0;
          auto& [cohort_used, cohort_lent] = cohorts[{cq.cohort, fq.flavor}];
          cohort_used += std::max<int64_t>(0, used - guaranteed);
          cohort_lent += q.nominal - guaranteed;
        }
      }
    }
    for (const auto& [key, amounts] : cohorts) {
      if (amounts.first > amounts.second) {
        Fail("cohort " + key.first + " flavor " + key.second + " uses " +
             std::to_string(amounts.first) + " beyond guarantees but lends only " +
             std::to_string(amounts.second));
      }
    }
  }
};

}  // namespace phalanx::admission::testing
