#include "sim/baselines.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  up_.assign(n, 1);
  domain_fit_.assign(shapes_.size(), std::vector<int64_t>(cluster.domains.size(), 0));
  group_fit_.assign(shapes_.size(), std::vector<int64_t>(cluster.groups.size(), 0));
  domain_free_.assign(cluster.domains.size(), 0);
  domain_capacity_.assign(cluster.domains.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    capacity_[i] = cluster.nodes[i].type->gpus;
    for (int32_t d : cluster.nodes[i].domains) domain_capacity_[d] += capacity_[i];
    Contribute(static_cast<int32_t>(i), +1);
  }
}

int FreeCapacity::ShapeIndex(int32_t gpus_per_pod) const {
  auto it = std::lower_bound(shapes_.begin(), shapes_.end(), gpus_per_pod);
  return it != shapes_.end() && *it == gpus_per_pod ? static_cast<int>(it - shapes_.begin()) : -1;
}

int32_t FreeCapacity::Free(int32_t node) const {
  return up_[node] ? std::max(0, capacity_[node] - used_[node]) : 0;
}

int32_t FreeCapacity::NodeFit(int32_t node, int32_t gpus_per_pod) const {
  return Free(node) / std::max(gpus_per_pod, 1);
}

void FreeCapacity::Contribute(int32_t node, int sign) {
  const SimNode& n = cluster_.nodes[node];
  for (size_t s = 0; s < shapes_.size(); ++s) {
    const int64_t fit = sign * NodeFit(node, shapes_[s]);
    for (int32_t d : n.domains) domain_fit_[s][d] += fit;
    group_fit_[s][n.group] += fit;
  }
  for (int32_t d : n.domains) domain_free_[d] += sign * Free(node);
}

void FreeCapacity::Use(int32_t node, int32_t gpus) {
  Contribute(node, -1);
  used_[node] += gpus;
  Contribute(node, +1);
}

void FreeCapacity::SetUp(int32_t node, bool up) {
  Contribute(node, -1);
  up_[node] = up ? 1 : 0;
  Contribute(node, +1);
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

// ---- Placement rules
// -----------------------------------------------------------------------------

namespace {

void AppendPods(std::vector<int32_t>& out, int32_t node, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out.push_back(node);
}

// Takes pods from `nodes` in the given order, filling each node before the next.
std::vector<int32_t> FillInOrder(const FreeCapacity& free, const std::vector<int32_t>& nodes,
                                 int32_t gpus_per_pod, int32_t pods) {
  std::vector<int32_t> out;
  for (int32_t node : nodes) {
    if (static_cast<int32_t>(out.size()) >= pods) break;
    const int64_t take = std::min<int64_t>(free.NodeFit(node, gpus_per_pod), pods - out.size());
    AppendPods(out, node, take);
  }
  if (static_cast<int32_t>(out.size()) < pods) out.clear();
  return out;
}

// Binpack node order (kube-scheduler MostAllocated, Volcano binpack, KAI's default): the
// fullest node first, ties by topology order.
std::vector<int32_t> BinpackOrder(const FreeCapacity& free, int32_t begin, int32_t end,
                                  int32_t gpus_per_pod) {
  std::vector<int32_t> nodes;
  for (int32_t i = begin; i < end; ++i) {
    if (free.NodeFit(i, gpus_per_pod) > 0) nodes.push_back(i);
  }
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](int32_t a, int32_t b) { return free.Free(a) < free.Free(b); });
  return nodes;
}

int32_t LevelOf(const ClusterModel& cluster, int32_t group, const std::string& level) {
  if (level.empty() || level == kHostnameLabel) return -1;
  return cluster.LevelIndex(group, level);
}

// Kueue TAS BestFit below a chosen domain (KEP-2724 "Computing the assignment"): children with
// the most free capacity first, but the last child is the tightest one that holds the rest.
void KueueAssign(const ClusterModel& cluster, const FreeCapacity& free,
                 const std::vector<int32_t>& children, bool children_are_nodes, int32_t g,
                 int64_t count, std::vector<int32_t>& out) {
  auto fit = [&](int32_t c) {
    return children_are_nodes ? free.NodeFit(c, g) : free.DomainFit(c, g);
  };
  std::vector<int32_t> sorted;
  for (int32_t c : children) {
    if (fit(c) > 0) sorted.push_back(c);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](int32_t a, int32_t b) { return fit(a) > fit(b); });
  auto take = [&](int32_t c, int64_t n) {
    if (children_are_nodes) {
      AppendPods(out, c, n);
      return;
    }
    const Domain& d = cluster.domains[c];
    if (d.children.empty()) {
      std::vector<int32_t> nodes;
      for (int32_t i = d.begin; i < d.end; ++i) nodes.push_back(i);
      KueueAssign(cluster, free, nodes, true, g, n, out);
    } else {
      KueueAssign(cluster, free, d.children, false, g, n, out);
    }
  };
  int64_t remaining = count;
  for (size_t i = 0; i < sorted.size() && remaining > 0; ++i) {
    if (fit(sorted[i]) >= remaining) {
      // The tightest child that holds the rest; the first of equals keeps topology order.
      size_t best = i;
      for (size_t j = i + 1; j < sorted.size() && fit(sorted[j]) >= remaining; ++j) {
        if (fit(sorted[j]) < fit(sorted[best])) best = j;
      }
      take(sorted[best], remaining);
      remaining = 0;
    } else {
      take(sorted[i], fit(sorted[i]));
      remaining -= fit(sorted[i]);
    }
  }
}

std::vector<int32_t> KueueAssignDomain(const ClusterModel& cluster, const FreeCapacity& free,
                                       int32_t domain, int32_t g, int32_t pods) {
  std::vector<int32_t> out;
  KueueAssign(cluster, free, {domain}, false, g, pods, out);
  std::sort(out.begin(), out.end());  // Kueue orders the assignment by topology values
  return out;
}

// Among domains at `level` of `group` that hold `pods`, the one minimising `score`; -1 if none.
template <typename Score>
int32_t BestDomain(const ClusterModel& cluster, const FreeCapacity& free, int32_t group,
                   int32_t level, int32_t g, int32_t pods, Score score) {
  int32_t best = -1;
  for (int32_t d : cluster.groups[group].level_domains[level]) {
    if (free.DomainFit(d, g) < pods) continue;
    if (best < 0 || score(d) < score(best)) best = d;
  }
  return best;
}

}  // namespace

std::vector<int32_t> PlaceKueueTas(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods) {
  const int32_t g = job.gpus_per_pod;
  if (free.GroupFit(group, g) < pods) return {};
  const NodeGroup& ng = cluster.groups[group];
  auto tightest = [&](int32_t d) { return free.DomainFit(d, g); };
  // A PodSet carries one annotation: required if the job has a hard level, else preferred.
  if (!job.required_level.empty()) {
    const int32_t level = LevelOf(cluster, group, job.required_level);
    if (level < 0) {  // hostname: all pods on one node
      for (int32_t i = ng.begin; i < ng.end; ++i) {
        if (free.NodeFit(i, g) >= pods) return std::vector<int32_t>(pods, i);
      }
      return {};
    }
    const int32_t d = BestDomain(cluster, free, group, level, g, pods, tightest);
    return d < 0 ? std::vector<int32_t>{} : KueueAssignDomain(cluster, free, d, g, pods);
  }
  if (!job.preferred_level.empty()) {
    for (int32_t level = LevelOf(cluster, group, job.preferred_level); level >= 0; --level) {
      const int32_t d = BestDomain(cluster, free, group, level, g, pods, tightest);
      if (d >= 0) return KueueAssignDomain(cluster, free, d, g, pods);
    }
    // Does not fit in any top-level domain: admitted distributed across them.
    std::vector<int32_t> out;
    KueueAssign(cluster, free, ng.level_domains[0], false, g, pods, out);
    std::sort(out.begin(), out.end());
    return out;
  }
  // Unconstrained: LeastFreeCapacity over nodes (the default TAS profile since v0.15), ties in
  // node order. Fits are small integers, so bucket them instead of sorting.
  std::vector<std::vector<int32_t>> buckets;
  for (int32_t i = ng.begin; i < ng.end; ++i) {
    const int32_t fit = free.NodeFit(i, g);
    if (fit <= 0) continue;
    if (static_cast<size_t>(fit) >= buckets.size()) buckets.resize(fit + 1);
    buckets[fit].push_back(i);
  }
  std::vector<int32_t> nodes;
  for (const std::vector<int32_t>& bucket : buckets)
    nodes.insert(nodes.end(), bucket.begin(), bucket.end());
  std::vector<int32_t> out = FillInOrder(free, nodes, g, pods);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int32_t> PlaceVolcano(const ClusterModel& cluster, const FreeCapacity& free,
                                  const TraceJob& job, int32_t group, int32_t pods) {
  const int32_t g = job.gpus_per_pod;
  if (free.GroupFit(group, g) < pods) return {};
  const NodeGroup& ng = cluster.groups[group];
  const bool constrained = !job.required_level.empty() || !job.preferred_level.empty();
  if (constrained) {
    // hard mode: highestTierAllowed = the required level; soft mode: any tier.
    const int32_t highest =
        job.required_level.empty() ? 0 : std::max(0, LevelOf(cluster, group, job.required_level));
    // Tier 1 is the lowest level; the binpack score prefers the most utilised HyperNode.
    auto emptiest = [&](int32_t d) {
      const double capacity = static_cast<double>(std::max<int64_t>(free.DomainCapacity(d), 1));
      return static_cast<double>(free.DomainFree(d)) / capacity;
    };
    for (int32_t level = static_cast<int32_t>(ng.levels.size()) - 1; level >= highest; --level) {
      const int32_t d = BestDomain(cluster, free, group, level, g, pods, emptiest);
      if (d >= 0) {
        const Domain& domain = cluster.domains[d];
        return FillInOrder(free, BinpackOrder(free, domain.begin, domain.end, g), g, pods);
      }
    }
    if (!job.required_level.empty()) return {};
  }
  return FillInOrder(free, BinpackOrder(free, ng.begin, ng.end, g), g, pods);
}

std::vector<int32_t> PlaceKai(const ClusterModel& cluster, const FreeCapacity& free,
                              const TraceJob& job, int32_t group, int32_t pods) {
  const int32_t g = job.gpus_per_pod;
  if (free.GroupFit(group, g) < pods) return {};
  const NodeGroup& ng = cluster.groups[group];
  const int32_t required = LevelOf(cluster, group, job.required_level);
  const int32_t preferred = LevelOf(cluster, group, job.preferred_level);
  const bool constrained = !job.required_level.empty() || !job.preferred_level.empty();
  if (constrained) {
    const int32_t start = !job.preferred_level.empty() ? preferred : required;
    const int32_t ceiling = !job.required_level.empty() ? std::max(required, 0) : 0;
    // Domain selection bin-packs: the least available resources that still fit.
    auto fullest = [&](int32_t d) { return free.DomainFree(d); };
    for (int32_t level = start; level >= ceiling && level >= 0; --level) {
      const int32_t d = BestDomain(cluster, free, group, level, g, pods, fullest);
      if (d < 0) continue;
      const Domain& domain = cluster.domains[d];
      if (preferred > level) {
        // Node order inside: sub-domains at the preferred level with more room first.
        std::vector<int32_t> subs;
        for (int32_t s : ng.level_domains[preferred]) {
          const Domain& sd = cluster.domains[s];
          if (sd.begin >= domain.begin && sd.end <= domain.end) subs.push_back(s);
        }
        std::stable_sort(subs.begin(), subs.end(), [&](int32_t a, int32_t b) {
          return free.DomainFit(a, g) > free.DomainFit(b, g);
        });
        std::vector<int32_t> nodes;
        for (int32_t s : subs) {
          const Domain& sd = cluster.domains[s];
          std::vector<int32_t> part = BinpackOrder(free, sd.begin, sd.end, g);
          nodes.insert(nodes.end(), part.begin(), part.end());
        }
        return FillInOrder(free, nodes, g, pods);
      }
      return FillInOrder(free, BinpackOrder(free, domain.begin, domain.end, g), g, pods);
    }
    if (!job.required_level.empty()) return {};
  }
  return FillInOrder(free, BinpackOrder(free, ng.begin, ng.end, g), g, pods);
}

std::vector<int32_t> PlaceFirstFit(const ClusterModel& cluster, const FreeCapacity& free,
                                   const TraceJob& job, int32_t group, int32_t pods) {
  std::vector<int32_t> out;
  const NodeGroup& ng = cluster.groups[group];
  for (int32_t i = ng.begin; i < ng.end && static_cast<int32_t>(out.size()) < pods; ++i) {
    AppendPods(out, i, std::min<int64_t>(free.NodeFit(i, job.gpus_per_pod), pods - out.size()));
  }
  return out;
}

// ---- The shared quota book and the policy
// ----------------------------------------------------------

namespace {

constexpr double kPermitTimeoutS = 60;  // coscheduling's default permitWaitingTimeSeconds
constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;

enum class Kind { kFirstFit, kKueueTas, kVolcano, kKai };

// Kueue-style GPU quota: per ClusterQueue and flavor (node group), nominal quota and borrowing
// limit; queues in a cohort share their unused nominal quota.
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
      queue.usage.assign(groups, 0);
      queue.flavors.clear();
      queue.within_cq = q.within_cluster_queue != "Never";
      queue.reclaim = q.reclaim_within_cohort;
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
      }
      queues_.push_back(std::move(queue));
    }
    cohort_nominal_.assign(cohorts.size(), std::vector<int64_t>(groups, 0));
    cohort_usage_.assign(cohorts.size(), std::vector<int64_t>(groups, 0));
    for (const Queue& q : queues_) {
      if (q.cohort < 0) continue;
      for (size_t g = 0; g < groups; ++g) cohort_nominal_[q.cohort][g] += q.nominal[g];
    }
  }

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
           cohort_usage_[queue.cohort][g] + gpus <= cohort_nominal_[queue.cohort][g];
  }

  void Charge(int32_t q, int32_t g, int64_t gpus) {
    queues_[q].usage[g] += gpus;
    if (queues_[q].cohort >= 0) cohort_usage_[queues_[q].cohort][g] += gpus;
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
  const std::string& Reclaim(int32_t q) const { return queues_[q].reclaim; }

 private:
  struct Queue {
    std::string name;
    int32_t cohort = -1;
    std::vector<int32_t> flavors;  // node groups in order of preference
    std::vector<int64_t> nominal, borrow_limit, usage;
    bool within_cq = true;
    std::string reclaim;
  };
  std::vector<Queue> queues_;
  std::vector<std::vector<int64_t>> cohort_nominal_, cohort_usage_;
};

class BaselinePolicy : public Policy {
 public:
  BaselinePolicy(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}

  std::string name() const override { return name_; }

  absl::Status Init(const ClusterModel& cluster, const std::vector<JobStatus>& jobs) override {
    cluster_ = &cluster;
    std::vector<int32_t> shapes;
    for (const JobStatus& job : jobs) shapes.push_back(job.spec->gpus_per_pod);
    free_ = std::make_unique<FreeCapacity>(cluster, shapes);
    quota_.Init(cluster);
    state_.assign(jobs.size(), JobBook{});
    for (size_t i = 0; i < jobs.size(); ++i) {
      state_[i].queue = quota_.QueueIndex(jobs[i].spec->queue);
      if (state_[i].queue < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(jobs[i].spec->name, ": unknown queue ", jobs[i].spec->queue));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<Action>> Cycle(const CycleView& view) override {
    jobs_ = view.jobs;
    now_ = view.now;
    failed_placements_.clear();
    failed_preemptions_.clear();
    std::vector<Action> actions;
    // Admitted jobs still waiting for nodes (first-fit; preemptors) go first, in admission order.
    std::vector<int32_t> waiting(waiting_.begin(), waiting_.end());
    std::sort(waiting.begin(), waiting.end(), [&](int32_t a, int32_t b) {
      return state_[a].admitted_seq < state_[b].admitted_seq;
    });
    for (int32_t id : waiting) TryPlaceAdmitted(id, actions);
    // Pending jobs by priority, then submit order (Kueue BestEffortFIFO / StrictFIFO). Few
    // distinct priorities: bucket instead of sorting every cycle.
    std::map<int32_t, std::vector<int32_t>, std::greater<int32_t>> by_priority;
    for (int32_t id : view.pending) {
      if (state_[id].phase == Phase::kNone) by_priority[Spec(id).priority].push_back(id);
    }
    std::vector<int32_t> pending;
    pending.reserve(view.pending.size());
    for (const auto& [priority, ids] : by_priority)
      pending.insert(pending.end(), ids.begin(), ids.end());
    std::set<int32_t> blocked_queues;  // StrictFIFO queues whose head is stuck
    for (int32_t id : pending) {
      const int32_t q = state_[id].queue;
      if (blocked_queues.count(q)) continue;
      if (!TryAdmit(id, view, actions)) {
        const std::string& strategy = cluster_->spec.queues[q].queueing_strategy;
        if (strategy == "StrictFIFO") blocked_queues.insert(q);
      }
    }
    return actions;
  }

  absl::Status JobFinished(int32_t job) override {
    Drop(job);
    return absl::OkStatus();
  }
  absl::Status JobInterrupted(int32_t job) override {
    Drop(job);
    return absl::OkStatus();
  }
  absl::Status NodeChanged(int32_t node, bool up) override {
    free_->SetUp(node, up);
    return absl::OkStatus();
  }

  double NextWakeup() const override {
    double wake = std::numeric_limits<double>::infinity();
    for (int32_t id : waiting_) {
      if (state_[id].permit_deadline > 0) wake = std::min(wake, state_[id].permit_deadline);
    }
    return wake;
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
  };

  const TraceJob& Spec(int32_t id) const { return *(*jobs_)[id].spec; }

  void Hold(int32_t id, const std::vector<int32_t>& nodes) {
    for (int32_t n : nodes) free_->Use(n, Spec(id).gpus_per_pod);
  }
  void Unhold(int32_t id, const std::vector<int32_t>& nodes) {
    for (int32_t n : nodes) free_->Use(n, -Spec(id).gpus_per_pod);
  }

  // Releases everything the job holds: nodes and quota.
  void Drop(int32_t id) {
    JobBook& b = state_[id];
    Unhold(id, b.nodes);
    b.nodes.clear();
    if (b.phase != Phase::kNone) {
      quota_.Charge(b.queue, b.group, -int64_t{b.count} * Spec(id).gpus_per_pod);
    }
    b.phase = Phase::kNone;
    b.permit_deadline = 0;
    waiting_.erase(id);
    running_.erase(id);
  }

  // Within a cycle free capacity only shrinks (until an eviction), so a shape that failed to
  // place fails again for as many or more pods: remember the smallest failure per shape.
  std::vector<int32_t> Place(int32_t id, int32_t group, int32_t pods) {
    const TraceJob& job = Spec(id);
    const std::string shape = absl::StrCat(group, "/", job.gpus_per_pod, "/", job.required_level,
                                           "/", job.preferred_level);
    auto failed = failed_placements_.find(shape);
    if (failed != failed_placements_.end() && pods >= failed->second) return {};
    std::vector<int32_t> nodes;
    switch (kind_) {
      case Kind::kKueueTas:
        nodes = PlaceKueueTas(*cluster_, *free_, job, group, pods);
        break;
      case Kind::kVolcano:
        nodes = PlaceVolcano(*cluster_, *free_, job, group, pods);
        break;
      case Kind::kKai:
        nodes = PlaceKai(*cluster_, *free_, job, group, pods);
        break;
      case Kind::kFirstFit:
        nodes = PlaceFirstFit(*cluster_, *free_, job, group, pods);
        break;
    }
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
    running_.insert(id);
    actions.push_back(Action{Action::Kind::kStart, id, b.nodes});
  }

  // First-fit: pods go one by one onto the first node with room and wait at Permit, holding it,
  // until the gang is complete or the permit times out. Others: the whole gang or nothing.
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
    }
    const int32_t missing = b.count - static_cast<int32_t>(b.nodes.size());
    // Coscheduling's PreFilter rejects a gang the cluster cannot hold right now.
    if (b.nodes.empty() && free_->GroupFit(b.group, job.gpus_per_pod) < missing) return;
    std::vector<int32_t> more = PlaceFirstFit(*cluster_, *free_, job, b.group, missing);
    Hold(id, more);
    b.nodes.insert(b.nodes.end(), more.begin(), more.end());
    if (static_cast<int32_t>(b.nodes.size()) == b.count) {
      Start(id, actions);
    } else if (b.permit_deadline == 0 && !b.nodes.empty()) {
      b.permit_deadline = now_ + kPermitTimeoutS;
    }
  }

  void Admit(int32_t id, int32_t group, int32_t count) {
    JobBook& b = state_[id];
    b.phase = Phase::kAdmitted;
    b.group = group;
    b.count = count;
    b.admitted_seq = next_seq_++;
    quota_.Charge(b.queue, group, int64_t{count} * Spec(id).gpus_per_pod);
    waiting_.insert(id);
  }

  // Kueue admission of one pending job. Quota-only for first-fit (placement happens later in
  // kube-scheduler); quota plus placement for the topology-aware schedulers.
  bool TryAdmit(int32_t id, const CycleView& view, std::vector<Action>& actions) {
    const TraceJob& job = Spec(id);
    const int32_t q = state_[id].queue;
    std::vector<int32_t> counts = {job.pods};
    if (job.elastic() && job.elastic_min < job.pods) counts.push_back(job.elastic_min);
    for (int32_t g : quota_.Flavors(q)) {
      if (!job.node_group.empty() && cluster_->groups[g].spec.name != job.node_group) continue;
      for (int32_t count : counts) {
        const int64_t gpus = int64_t{count} * job.gpus_per_pod;
        if (!quota_.Fits(q, g, gpus)) continue;
        if (kind_ == Kind::kFirstFit) {
          Admit(id, g, count);
          TryPlaceAdmitted(id, actions);
          return true;
        }
        std::vector<int32_t> nodes = Place(id, g, count);
        if (nodes.empty()) continue;
        Admit(id, g, count);
        state_[id].nodes = std::move(nodes);
        Hold(id, state_[id].nodes);
        Start(id, actions);
        return true;
      }
    }
    return Preempt(id, view, actions);
  }

  // Kueue's classic preemption: victims chosen by quota and priority only — borrowers in the
  // cohort first (reclaim), then lower priority, then the most recently admitted.
  bool Preempt(int32_t id, const CycleView& view, std::vector<Action>& actions) {
    const TraceJob& job = Spec(id);
    const int32_t q = state_[id].queue;
    for (int32_t g : quota_.Flavors(q)) {
      if (!job.node_group.empty() && cluster_->groups[g].spec.name != job.node_group) continue;
      const int64_t gpus = int64_t{job.min_pods()} * job.gpus_per_pod;
      // Quota preemption frees quota: a job that already fits quota here found no nodes, and
      // evicting nobody would only admit it to hold quota it cannot use. It stays pending.
      if (quota_.Fits(q, g, gpus)) continue;
      const std::pair<int32_t, int32_t> key{q, g};
      auto known = failed_preemptions_.find(key);
      if (known != failed_preemptions_.end() && job.priority <= known->second.first &&
          gpus >= known->second.second) {
        continue;
      }
      const bool reclaiming = quota_.WithinNominal(q, g, gpus);
      struct Candidate {
        int32_t id;
        bool other_queue;
        int32_t priority;
        int64_t seq;
      };
      std::vector<Candidate> candidates;
      for (int32_t r : running_) {
        const JobBook& rb = state_[r];
        if (rb.group != g) continue;
        const int32_t p = Spec(r).priority;
        if (rb.queue == q) {
          if (quota_.WithinCq(q) && p < job.priority)
            candidates.push_back({r, false, p, rb.admitted_seq});
        } else if (reclaiming && quota_.SameCohort(q, rb.queue)) {
          const std::string& policy = quota_.Reclaim(q);
          if (policy == "Any" || (policy == "LowerPriority" && p < job.priority)) {
            candidates.push_back({r, true, p, rb.admitted_seq});
          }
        }
      }
      if (candidates.empty()) continue;
      std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        if (a.other_queue != b.other_queue) return a.other_queue;
        if (a.priority != b.priority) return a.priority < b.priority;
        return a.seq > b.seq;
      });
      // Remove victims (on the books only) until the preemptor fits; undo if it never does.
      std::vector<int32_t> victims;
      for (const Candidate& c : candidates) {
        if (quota_.Fits(q, g, gpus)) break;
        const JobBook& vb = state_[c.id];
        if (c.other_queue && !quota_.Borrowing(vb.queue, g)) continue;
        quota_.Charge(vb.queue, g, -int64_t{vb.count} * Spec(c.id).gpus_per_pod);
        victims.push_back(c.id);
      }
      const bool fits = quota_.Fits(q, g, gpus);
      for (int32_t v : victims) {
        quota_.Charge(state_[v].queue, g, int64_t{state_[v].count} * Spec(v).gpus_per_pod);
      }
      if (!fits && !reclaiming) {
        // Only priority-bounded candidates were possible: remember the failure.
        auto& entry = failed_preemptions_[key];
        if (entry.second == 0 || (job.priority >= entry.first && gpus <= entry.second)) {
          entry = {job.priority, gpus};
        }
      }
      if (!fits) continue;
      failed_placements_.clear();  // evictions free capacity and quota
      failed_preemptions_.clear();
      for (int32_t v : victims) {
        Drop(v);
        actions.push_back(Action{Action::Kind::kEvict, v, {}});
      }
      // The preemptor is admitted now and waits for nodes; victims' nodes are already free.
      Admit(id, g, job.min_pods());
      TryPlaceAdmitted(id, actions);
      (void)view;
      return true;
    }
    return false;
  }

  Kind kind_;
  std::string name_;
  const ClusterModel* cluster_ = nullptr;
  const std::vector<JobStatus>* jobs_ = nullptr;
  std::unique_ptr<FreeCapacity> free_;
  QuotaBook quota_;
  std::vector<JobBook> state_;
  std::set<int32_t> waiting_;
  std::set<int32_t> running_;
  std::map<std::string, int32_t> failed_placements_;  // this cycle: shape -> fewest pods failed
  // this cycle: (queue, flavor) -> (priority, GPUs) for which quota preemption found nothing
  std::map<std::pair<int32_t, int32_t>, std::pair<int32_t, int64_t>> failed_preemptions_;
  double now_ = 0;
  int64_t next_seq_ = 0;
};

}  // namespace

std::vector<std::string> BaselineNames() {
  return {"first-fit", "kueue-tas", "volcano-hypernode", "kai-topology"};
}

absl::StatusOr<std::unique_ptr<Policy>> MakeBaseline(std::string_view name) {
  if (name == "first-fit") return std::make_unique<BaselinePolicy>(Kind::kFirstFit, "first-fit");
  if (name == "kueue-tas") return std::make_unique<BaselinePolicy>(Kind::kKueueTas, "kueue-tas");
  if (name == "volcano-hypernode") {
    return std::make_unique<BaselinePolicy>(Kind::kVolcano, "volcano-hypernode");
  }
  if (name == "kai-topology") return std::make_unique<BaselinePolicy>(Kind::kKai, "kai-topology");
  return absl::InvalidArgumentError(absl::StrCat("unknown policy \"", std::string(name),
                                                 "\" (known: phalanx, ",
                                                 absl::StrJoin(BaselineNames(), ", "), ")"));
}

}  // namespace phalanx::sim
