#include "operator/admission/admission_cycle.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <unordered_set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/counted_noun.h"
#include "common/resources.h"
#include "operator/admission/internal/cycle.h"
#include "operator/admission/matching.h"

namespace phalanx::admission {

std::string_view ToString(PendingReason reason) {
  switch (reason) {
    case PendingReason::kInvalid: return "Invalid";
    case PendingReason::kNoLocalQueue: return "TrainingQueueNotFound";
    case PendingReason::kClusterQueueInactive: return "ClusterTrainingQueueInactive";
    case PendingReason::kLocalQueueStopped: return "TrainingQueueStopped";
    case PendingReason::kNamespaceNotAllowed: return "NamespaceNotAllowed";
    case PendingReason::kUnknownPriorityClass: return "PriorityClassNotFound";
    case PendingReason::kUnknownLevel: return "TopologyLevelNotFound";
    case PendingReason::kNoFlavor: return "NoMatchingFlavor";
    case PendingReason::kQuota: return "InsufficientQuota";
    case PendingReason::kTopology: return "CannotBePlaced";
    case PendingReason::kStrictFifoBlocked: return "BlockedByStrictFIFO";
    case PendingReason::kPlacementError: return "PlacementError";
    case PendingReason::kRequeueBackoff: return "RequeueBackoff";
    case PendingReason::kNamespaceQuota:
      return "InsufficientResourceQuota";
  }
  return "Unknown";
}

std::string_view ToString(PreemptionReason reason) {
  switch (reason) {
    case PreemptionReason::kInClusterQueue: return "InClusterQueue";
    case PreemptionReason::kReclaimWithinCohort: return "InCohortReclamation";
    case PreemptionReason::kBorrowWithinCohort: return "InCohortReclaimWhileBorrowing";
    case PreemptionReason::kFairSharing: return "InCohortFairSharing";
    case PreemptionReason::kClusterQueueStopped: return "ClusterTrainingQueueStopped";
    case PreemptionReason::kLocalQueueStopped: return "TrainingQueueStopped";
  }
  return "Unknown";
}

CycleCache::CycleCache() : state_(std::make_unique<internal::CycleCacheState>()) {}
CycleCache::~CycleCache() = default;

CycleResult RunAdmissionCycle(const Snapshot& snapshot, placement::PlacementService& service,
                              const CycleOptions& options) {
  return internal::Cycle(snapshot, service, options).Run();
}

namespace internal {
namespace {

constexpr std::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";

// The workload's topology levels, each with the TrainingJob field it comes from, for messages
// that name the field a user wrote.
std::array<std::pair<const std::string*, const char*>, 3> LevelFields(const Workload& w) {
  return {{{&w.required_level, "spec.topology.required"},
           {&w.preferred_level, "spec.topology.preferred"},
           {&w.group_level, "spec.topology.groupLevel"}}};
}

// The first problem with the workload's own fields, or "".
std::string CheckWorkload(const Workload& w) {
  if (w.elastic.has_value()) {
    const placement::ElasticRange& e = *w.elastic;
    if (e.min < 1) return absl::StrCat("elastic.minReplicas must be at least 1, got ", e.min);
    if (e.step < 1) return absl::StrCat("elastic.step must be at least 1, got ", e.step);
    if (e.max < e.min) {
      return absl::StrCat("elastic.maxReplicas ", e.max, " is below minReplicas ", e.min);
    }
  } else if (w.count < 1) {
    return absl::StrCat("replicas must be at least 1, got ", w.count);
  }
  for (const auto& [resource, amount] : w.per_pod) {
    if (amount < 0) return absl::StrCat("pod requests ", resource, " is negative");
  }
  if (w.group_size < 0) return absl::StrCat("topology.groupSize is negative: ", w.group_size);
  return "";
}

}  // namespace

Cycle::Cycle(const Snapshot& snapshot, placement::PlacementService& service,
             const CycleOptions& options)
    : snapshot_(snapshot),
      service_(service),
      options_(options),
      model_(CompileModel(snapshot)),
      quota_(model_) {
  for (const auto& [name, budget] : snapshot.budgets) {
    budget_left_.emplace(name, std::max<int64_t>(0, budget.left));
  }
}

CycleResult Cycle::Run() {
  Setup();
  for (int pass = 0; pass < options_.max_passes; ++pass) {
    if (!Pass(pass + 1 == options_.max_passes)) break;
  }
  const size_t preemptions = result_.preemptions.size();
  Preempt();
  if (result_.preemptions.size() > preemptions) AfterPreemption();
  Grow();
  Finish();
  return std::move(result_);
}

void Cycle::AfterPreemption() {
  // Victims free more than their preemptors take whenever a whole gang goes for part of its
  // nodes, or quota beyond what the placement needed. Workloads still waiting get one more look
  // in this cycle, their failed flavor choices forgotten (the cluster only had less room when
  // they failed), instead of leaving that room idle until the next cycle
  // (tests/unit/operator/idle_capacity_test.cc).
  for (PendingEntry& entry : pending_) {
    if (!entry.waiting || entry.failed.empty()) continue;
    entry.failed.clear();
    entry.message.clear();  // a new failure says why afresh, not "next flavor: ..."
  }
  for (int pass = 0; pass < options_.max_passes; ++pass) {
    if (!Pass(pass + 1 == options_.max_passes)) break;
  }
}

bool Cycle::Before(int a, int b) const {
  const PendingEntry& x = pending_[a];
  const PendingEntry& y = pending_[b];
  if (x.priority != y.priority) return x.priority > y.priority;
  if (x.workload->creation_time != y.workload->creation_time) {
    return x.workload->creation_time < y.workload->creation_time;
  }
  return x.workload->key < y.workload->key;
}

void Cycle::Setup() {
  result_.errors = model_.errors;
  queue_order_.assign(model_.cqs.size(), {});
  blocker_.assign(model_.cqs.size(), -1);
  running_by_cq_.assign(model_.cqs.size(), {});
  admitted_quota_ends_.assign(model_.cqs.size(), {});
  CycleCacheState* cache = options_.cache != nullptr ? options_.cache->state_.get() : nullptr;
  if (cache != nullptr) {
    ++cache->cycle;
    std::string fingerprint = Fingerprint();
    if (fingerprint != cache->fingerprint) {
      cache->workloads.clear();
      cache->hints.clear();
      cache->fingerprint = std::move(fingerprint);
    }
    cache->hints.resize(snapshot_.workloads.size(), nullptr);
  }
  // Open addressing, sized once: a node-based set allocated per workload per cycle, which was a
  // sixth of a large simulation's time. With a cache, its entries' cycle stamps do this job.
  absl::flat_hash_set<std::string_view> keys;
  if (cache == nullptr) keys.reserve(snapshot_.workloads.size());
  pending_.reserve(snapshot_.workloads.size());
  running_.reserve(snapshot_.workloads.size());
  for (size_t i = 0; i < snapshot_.workloads.size(); ++i) {
    const Workload& w = snapshot_.workloads[i];
    CachedWorkload* cached = nullptr;
    bool duplicate;
    if (w.key.empty()) {
      duplicate = false;
    } else if (cache != nullptr) {
      auto*& hint = cache->hints[i];
      if (hint == nullptr || hint->first != w.key) {
        hint = &*cache->workloads.try_emplace(w.key).first;
      }
      cached = &hint->second;
      duplicate = cached->seen == cache->cycle;
      cached->seen = cache->cycle;
    } else {
      duplicate = !keys.insert(w.key).second;
    }
    if (duplicate || w.key.empty()) {
      result_.pending.push_back({w.key, "", PendingReason::kInvalid,
                                 w.key.empty() ? "the workload has no key"
                                               : "another workload has the same key"});
      continue;
    }
    if (!w.admitted.has_value()) {
      SetupWorkload(w);
      continue;
    }
    RunningEntry running;
    running.workload = &w;
    if (cached != nullptr && cached->Matches(w)) {
      running.cq = cached->cq;
      running.priority = cached->resolved_priority;
      running.per_pod = cached->demand;
    } else {
      ResolveRunning(w, running);
      if (cached != nullptr) {
        *cached = CachedWorkload{cached->seen, true, w.admitted->cluster_queue,
                                 w.admitted->flavors, w.per_pod, w.priority, w.priority_class,
                                 running.cq, running.priority, running.per_pod, w.revision};
      }
    }
    // A workload running in a queue that is gone or broken is charged nowhere: the queue's
    // quota cannot be computed, and the workload keeps running until someone stops it.
    if (running.cq < 0 || !model_.cqs[running.cq].inactive.empty()) continue;
    const CompiledClusterQueue& queue = model_.cqs[running.cq];
    const LocalQueueStop* lq_stop = LocalQueueStopOf(w);
    const bool cq_drains = queue.spec->stop_policy == StopPolicy::kHoldAndDrain;
    const bool lq_drains = lq_stop != nullptr && lq_stop->policy == StopPolicy::kHoldAndDrain;
    if (cq_drains || lq_drains) {
      absl::Status status = service_.Release(w.key);
      ++result_.calls.release;
      std::string message =
          cq_drains ? absl::StrCat("ClusterTrainingQueue ", queue.spec->name,
                                   " has stopPolicy HoldAndDrain")
                    : absl::StrCat("TrainingQueue ", w.namespace_name, "/", w.queue_name,
                                   " has stopPolicy HoldAndDrain");
      if (!status.ok() && status.code() != absl::StatusCode::kNotFound) {
        absl::StrAppend(&message, "; releasing its placement failed: ", status.ToString());
      }
      result_.preemptions.push_back({w.key, queue.spec->name, 0, "",
                                     cq_drains ? PreemptionReason::kClusterQueueStopped
                                               : PreemptionReason::kLocalQueueStopped,
                                     message});
      continue;
    }
    running.count = w.admitted->count;
    quota_.Add(running.cq, Scale(running.per_pod, running.count), +1);
    running_by_cq_[running.cq].push_back(static_cast<int>(running_.size()));
    running_.push_back(std::move(running));
  }
  if (cache != nullptr && cache->workloads.size() > 2 * snapshot_.workloads.size() + 1024) {
    // Forget workloads that are gone, now and then rather than every cycle.
    cache->hints.clear();
    for (auto it = cache->workloads.begin(); it != cache->workloads.end();) {
      if (it->second.seen != cache->cycle) {
        cache->workloads.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (std::vector<int>& order : queue_order_) {
    std::sort(order.begin(), order.end(), [&](int a, int b) { return Before(a, b); });
  }
}

void Cycle::ResolveRunning(const Workload& w, RunningEntry& running) const {
  auto cq = model_.cq_index.find(w.admitted->cluster_queue);
  running.cq = cq == model_.cq_index.end() ? -1 : cq->second;
  auto priority = snapshot_.priority_classes.find(w.priority_class);
  running.priority = w.priority_class.empty() || priority == snapshot_.priority_classes.end()
                         ? w.priority
                         : priority->second;
  running.per_pod.clear();
  if (running.cq >= 0) running.per_pod = AdmittedDemand(model_, quota_, running.cq, w);
}

const LocalQueueStop* Cycle::LocalQueueStopOf(const Workload& w) const {
  if (model_.local_queue_stops.empty()) return nullptr;
  auto it = model_.local_queue_stops.find({w.namespace_name, w.queue_name});
  return it == model_.local_queue_stops.end() ? nullptr : &it->second;
}

std::string Cycle::Fingerprint() const {
  std::string out;
  auto add = [&out](std::string_view part) {
    out.append(part.data(), part.size());
    out.push_back('\0');
  };
  for (const auto& [flavor, resource] : model_.frs) {
    add(model_.flavors[flavor]->name);
    add(resource);
  }
  for (size_t cq = 0; cq < model_.cqs.size(); ++cq) {
    add(model_.cqs[cq].spec->name);
    out.push_back(model_.cqs[cq].resource_index.contains(kResourcePods) ? 'p' : '-');
    for (FrId fr = 0; fr < static_cast<FrId>(model_.frs.size()); ++fr) {
      out.push_back(quota_.Defined(static_cast<int>(cq), fr) ? '1' : '0');
    }
  }
  for (const auto& [name, value] : snapshot_.priority_classes) add(absl::StrCat(name, "=", value));
  return out;
}

std::pair<PendingReason, std::string> Cycle::LevelProblem(const Workload& w) {
  const auto fields = LevelFields(w);
  if (std::all_of(fields.begin(), fields.end(),
                  [](const auto& f) { return f.first->empty(); })) {
    return {};
  }
  if (!levels_asked_) {
    // Once a cycle: the service's levels change only when phalanx-scheduler restarts with
    // another topology. Without an answer the check is skipped, and the service's refusal of
    // the request names the level instead (PlacementErrorText).
    levels_asked_ = true;
    ++result_.calls.topology_levels;
    if (absl::StatusOr<std::vector<std::string>> levels = service_.TopologyLevels(); levels.ok()) {
      known_levels_ = std::move(*levels);
    }
  }
  if (!known_levels_) return {};
  // For a message only: most workloads name levels the topology has, in order.
  auto levels = [&] {
    return absl::StrCat(absl::StrJoin(*known_levels_, ", "), ", ",
                        std::string(placement::kHostnameLabel));
  };
  // Coarsest first, the hostname finest of all; -1 for a level the topology lacks.
  auto depth = [&](const std::string& level) {
    if (level == placement::kHostnameLabel) return static_cast<int>(known_levels_->size());
    auto it = std::find(known_levels_->begin(), known_levels_->end(), level);
    return it == known_levels_->end() ? -1 : static_cast<int>(it - known_levels_->begin());
  };
  for (const auto& [level, field] : fields) {
    if (level->empty() || depth(*level) >= 0) continue;
    return {PendingReason::kUnknownLevel,
            absl::StrCat(field, " (\"", *level, "\") is not a level of the scheduler's topology; ",
                         "levels: ", levels())};
  }
  // A preferred level coarser than the required one would make the locality wait ask for the
  // coarser domain instead of the required one: refused, as phalanx plan and the Placement
  // API refuse it.
  if (!w.required_level.empty() && !w.preferred_level.empty() &&
      depth(w.preferred_level) < depth(w.required_level)) {
    return {PendingReason::kInvalid,
            absl::StrCat("spec.topology.preferred (\"", w.preferred_level,
                         "\") is coarser than spec.topology.required (\"", w.required_level,
                         "\"): the preferred level must be the required one or finer; levels, ",
                         "coarsest first: ", levels())};
  }
  return {};
}

void Cycle::SetupWorkload(const Workload& w) {
  PendingEntry& entry = pending_.emplace_back();
  entry.workload = &w;
  auto fail = [&](PendingReason reason, std::string message) {
    entry.reason = reason;
    entry.message = std::move(message);
  };
  // The queue first, so that a workload waiting for a fix to its own spec still counts as its
  // ClusterQueue's (pending metrics, the queue's inadmissible count), as Kueue counts it.
  auto lq = model_.local_queues.find({w.namespace_name, w.queue_name});
  if (lq == model_.local_queues.end()) {
    return fail(PendingReason::kNoLocalQueue, absl::StrCat("TrainingQueue ", w.namespace_name,
                                                           "/", w.queue_name, " does not exist"));
  }
  if (lq->second < 0) {
    return fail(PendingReason::kClusterQueueInactive,
                absl::StrCat("TrainingQueue ", w.namespace_name, "/", w.queue_name,
                             " points to ClusterTrainingQueue \"",
                             model_.missing_cluster_queues.at(lq->first),
                             "\", which does not exist"));
  }
  entry.cq = lq->second;
  if (!w.invalid.empty()) return fail(PendingReason::kInvalid, w.invalid);
  if (std::string problem = CheckWorkload(w); !problem.empty()) {
    return fail(PendingReason::kInvalid, problem);
  }
  if (w.requeue_at > snapshot_.now) {
    const int64_t left = w.requeue_at - snapshot_.now;
    result_.requeue_at = std::min(result_.requeue_at.value_or(w.requeue_at), w.requeue_at);
    return fail(PendingReason::kRequeueBackoff,
                absl::StrCat("requeued after an eviction: not admitted again for ", left, "s"));
  }
  entry.priority = w.priority;
  if (!w.priority_class.empty()) {
    auto it = snapshot_.priority_classes.find(w.priority_class);
    if (it == snapshot_.priority_classes.end()) {
      return fail(PendingReason::kUnknownPriorityClass,
                  absl::StrCat("PriorityClass \"", w.priority_class, "\" does not exist"));
    }
    entry.priority = it->second;
  }
  if (auto [reason, problem] = LevelProblem(w); !problem.empty()) {
    return fail(reason, std::move(problem));
  }
  const CompiledClusterQueue& queue = model_.cqs[entry.cq];
  if (!queue.inactive.empty()) return fail(PendingReason::kClusterQueueInactive, queue.inactive);
  if (!queue.held.empty()) return fail(PendingReason::kClusterQueueInactive, queue.held);
  if (const LocalQueueStop* lq_stop = LocalQueueStopOf(w); lq_stop != nullptr) {
    return fail(PendingReason::kLocalQueueStopped, lq_stop->message);
  }
  if (!queue.spec->namespace_selector.has_value()) {
    return fail(PendingReason::kNamespaceNotAllowed,
                absl::StrCat("ClusterTrainingQueue ", queue.spec->name,
                             " has a null namespaceSelector, which admits no namespace"));
  }
  auto [selected, inserted] = namespace_allowed_.try_emplace({entry.cq, w.namespace_name}, false);
  if (inserted) {
    std::map<std::string, std::string> labels;
    if (auto ns = model_.namespaces.find(w.namespace_name); ns != model_.namespaces.end()) {
      labels = ns->second->labels;
    }
    labels.emplace(kNamespaceNameLabel, w.namespace_name);
    selected->second = Matches(*queue.spec->namespace_selector, labels);
  }
  if (!selected->second) {
    return fail(PendingReason::kNamespaceNotAllowed,
                absl::StrCat("namespace ", w.namespace_name,
                             " does not match the namespaceSelector of ClusterTrainingQueue ",
                             queue.spec->name));
  }
  entry.per_pod = w.per_pod;
  // Kueue counts pods itself when a queue has quota for them.
  if (queue.resource_index.contains(kResourcePods)) {
    entry.per_pod.try_emplace(std::string(kResourcePods), 1);
  }
  auto shape = MakeShape(model_, entry.cq, entry.per_pod, w.node_selector, w.node_affinity,
                         w.tolerations);
  if (auto* error = std::get_if<ShapeError>(&shape)) return fail(error->reason, error->message);
  // Last of the reasons: one its queue or spec gives says what to fix first. Held before its
  // shape is kept, so that it holds back no elastic growth (Growable): it cannot use capacity
  // until its namespace uses less, whatever the cluster has free.
  if (!w.held.empty()) return fail(PendingReason::kNamespaceQuota, w.held);
  entry.shape = std::get<Shape>(std::move(shape));
  entry.waiting = true;
  if (WantsPreferredLevel(w)) {
    // A creation time after `now` (clock skew) counts as no time waited.
    entry.locality_wait_left = queue.spec->locality_wait_seconds -
                               std::max<int64_t>(0, snapshot_.now - w.creation_time);
    entry.locality_wait = entry.locality_wait_left > 0;
  }
  queue_order_[entry.cq].push_back(static_cast<int>(pending_.size() - 1));
}

std::string PlacementErrorText(const absl::Status& status, const Workload& w) {
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    return absl::StrCat("placement service: ", status.ToString());
  }
  std::string text(status.message());
  // The service quotes the level it refused after the request's field: `request.X ("level")`.
  // During a locality wait the request requires the workload's preferred level, so the field
  // is found by the level's value, not by the request's field name.
  for (const std::string field :
       {"request.required_level", "request.preferred_level", "request.group_level"}) {
    const size_t at = text.find(field + " (\"");
    if (at == std::string::npos) continue;
    const size_t start = at + field.size() + 3;
    const size_t end = text.find("\")", start);
    if (end == std::string::npos) continue;
    const std::string level = text.substr(start, end - start);
    for (const auto& [held, job_field] : LevelFields(w)) {
      if (*held != level) continue;
      text.replace(at, field.size(), job_field);
      break;
    }
  }
  return absl::StrCat("the placement service refused the gang: ", text);
}

placement::GangRequest Cycle::Request(const PendingEntry& entry, const Assignment& assignment,
                                      int32_t count) const {
  const Workload& w = *entry.workload;
  placement::GangRequest request;
  request.job = w.key;
  if (w.elastic.has_value()) {
    request.elastic = placement::ElasticRange{w.elastic->min, count, w.elastic->step};
  } else {
    request.count = count;
  }
  request.per_pod = w.per_pod;
  request.node_selector = w.node_selector;
  request.node_affinity = w.node_affinity;
  request.max_pods_per_node = w.max_pods_per_node;
  request.tolerations = w.tolerations;
  std::set<std::string_view> seen;
  for (const auto& [resource, flavor_name] : assignment.flavors) {
    if (!seen.insert(flavor_name).second) continue;
    const ResourceFlavor& flavor = *model_.flavors[model_.flavor_index.at(flavor_name)];
    request.node_selector.insert(flavor.node_labels.begin(), flavor.node_labels.end());
    request.tolerations.insert(request.tolerations.end(), flavor.tolerations.begin(),
                               flavor.tolerations.end());
  }
  // During its locality wait the preferred level is what it requires.
  request.required_level = entry.locality_wait ? w.preferred_level : w.required_level;
  request.preferred_level = w.preferred_level;
  request.group_size = w.group_size;
  request.group_level = w.group_level;
  request.priority = entry.priority;
  for (const BackfillReservation& r : reservations_) {
    if (Blocks(entry, r)) {
      request.excluded_nodes.insert(request.excluded_nodes.end(), r.nodes.begin(), r.nodes.end());
    }
  }
  return request;
}

std::string Cycle::LocalityWaitNote(const PendingEntry& entry) const {
  if (!entry.locality_wait) return "";
  return absl::StrCat("waiting up to ", entry.locality_wait_left, "s more for one ",
                      entry.workload->preferred_level,
                      " domain (locality wait of ClusterTrainingQueue ",
                      model_.cqs[entry.cq].spec->name, "): ");
}

std::string Cycle::QuotaLeft(int cq, const Demand& demand) const {
  std::vector<std::string> parts;
  for (const auto& [fr, amount] : demand) {
    const auto& [flavor, resource] = model_.frs[fr];
    parts.push_back(absl::StrCat(
        FormatQuantity(resource, std::max<int64_t>(0, quota_.Available(cq, fr))), " ",
        resource, " in flavor ", model_.flavors[flavor]->name));
  }
  return absl::StrCat("ClusterTrainingQueue ", model_.cqs[cq].spec->name, " has ",
                      absl::StrJoin(parts, ", "), " available");
}

// Budgets are the caller's limits outside the model (the operator's ResourceQuota room): the
// core only subtracts what it admits from them, so two gangs of one namespace admitted in one
// cycle are not both fitted into the same room. Nothing else of the caller's limit is known here.
int32_t Cycle::BudgetRoom(const Workload& w) const {
  int64_t room = std::numeric_limits<int32_t>::max();
  for (const auto& [name, per_pod] : w.budget_per_pod) {
    auto left = budget_left_.find(name);
    if (per_pod <= 0 || left == budget_left_.end()) continue;
    room = std::min(room, left->second / per_pod);
  }
  return static_cast<int32_t>(room);
}

void Cycle::ChargeBudgets(const Workload& w, int32_t pods) {
  for (const auto& [name, per_pod] : w.budget_per_pod) {
    if (auto left = budget_left_.find(name); left != budget_left_.end()) {
      left->second -= per_pod * pods;
    }
  }
}

std::string Cycle::BudgetShortfall(const Workload& w, int32_t pods) const {
  for (const auto& [name, per_pod] : w.budget_per_pod) {
    auto left = budget_left_.find(name);
    if (per_pod <= 0 || left == budget_left_.end() || per_pod * pods <= left->second) continue;
    const Budget& b = snapshot_.budgets.at(name);
    const bool count = b.resource == kResourcePods;
    return absl::StrCat(
        b.name, " has room for ",
        count ? CountedNoun(left->second, "more pod")
              : absl::StrCat(FormatQuantity(b.unit, left->second), " more ", b.resource),
        " once the gangs admitted before it in this admission cycle have their pods, and ",
        w.elastic ? "its smallest gang" : "the gang", " needs ",
        count ? absl::StrCat(pods)
              : absl::StrCat(FormatQuantity(b.unit, per_pod * pods), " (", CountedNoun(pods, "pod"),
                             " of ", FormatQuantity(b.unit, per_pod), ")"),
        ": it waits until the namespace uses less");
  }
  return "";
}

void Cycle::Admit(int index, const Assignment& assignment, const placement::Placement& placement,
                  std::vector<std::string> preempted) {
  PendingEntry& entry = pending_[index];
  entry.admitted = true;
  entry.waiting = false;
  if (entry.workload->expected_runtime_seconds) {
    const int64_t end = snapshot_.now + *entry.workload->expected_runtime_seconds;
    admitted_ends_.emplace_back(end, entry.workload->key);
    admitted_quota_ends_[entry.cq].emplace_back(end, assignment.demand);
  }
  // Its reservation is no longer needed; whoever yielded to it now competes as usual.
  std::erase_if(reservations_, [&](const BackfillReservation& r) { return r.holder == index; });
  entry.backfill_note.clear();
  entry.quota_hold_note.clear();
  AdmissionDecision decision;
  decision.workload = entry.workload->key;
  decision.cluster_queue = model_.cqs[entry.cq].spec->name;
  decision.flavors = assignment.flavors;
  decision.count = static_cast<int32_t>(placement.nodes.size());
  decision.borrowing = quota_.BorrowingAny(entry.cq, assignment.demand);
  decision.admission_time = snapshot_.now;
  decision.placement = placement;
  decision.preempted = std::move(preempted);
  result_.admissions.push_back(std::move(decision));
}

namespace {

// A ClusterQueue head competing for this pass; the best key is admitted next.
struct Head {
  double share = 0;       // fair sharing: the queue's share with the head admitted
  bool borrows = false;   // classic: heads that need borrowing go after those that do not
  int32_t priority = 0;
  int64_t creation = 0;
  const std::string* key = nullptr;
  int cq = -1;
  int entry = -1;
};

}  // namespace

bool Cycle::Pass(bool last) {
  const bool fair = snapshot_.fair_sharing.enable;
  std::fill(blocker_.begin(), blocker_.end(), -1);
  std::vector<size_t> cursor(model_.cqs.size(), 0);
  auto next_waiting = [&](int cq) {
    const std::vector<int>& order = queue_order_[cq];
    while (cursor[cq] < order.size() && !pending_[order[cursor[cq]]].waiting) ++cursor[cq];
    return cursor[cq] < order.size() ? order[cursor[cq]] : -1;
  };
  auto count_of = [](const Workload& w) { return w.elastic ? w.elastic->min : w.count; };
  auto make_head = [&](int cq, int index) {
    const PendingEntry& entry = pending_[index];
    Head head{0, true, entry.priority, entry.workload->creation_time, &entry.workload->key, cq,
              index};
    AssignOutcome outcome =
        Assign(model_, quota_, entry.shape, count_of(*entry.workload), entry.failed);
    if (outcome.assignment) {
      head.borrows = !quota_.FitsNominal(cq, outcome.assignment->demand);
      if (fair) head.share = quota_.Share(cq, outcome.assignment->demand, +1);
    } else {
      head.share = std::numeric_limits<double>::infinity();
    }
    return head;
  };
  // "a after b" for the heap, so the best head is on top.
  auto after = [fair](const Head& a, const Head& b) {
    if (fair && a.share != b.share) return a.share > b.share;
    if (!fair && a.borrows != b.borrows) return a.borrows;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.creation != b.creation) return a.creation > b.creation;
    return *a.key > *b.key;
  };
  std::vector<Head> heap;
  for (size_t cq = 0; cq < model_.cqs.size(); ++cq) {
    if (int index = next_waiting(static_cast<int>(cq)); index >= 0) {
      heap.push_back(make_head(static_cast<int>(cq), index));
    }
  }
  std::make_heap(heap.begin(), heap.end(), after);

  struct Tentative {
    int entry;
    Assignment assignment;
    int32_t count;
  };
  std::vector<Tentative> batch;
  // Backfill for quota, per queue that holds it: the hold of this pass, and the quota the
  // batch's workloads of the queue free at their expected ends.
  std::vector<std::optional<QuotaHold>> holds(model_.cqs.size());
  std::vector<std::vector<QuotaEnd>> batch_ends(model_.cqs.size());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    Head head = heap.back();
    heap.pop_back();
    PendingEntry& entry = pending_[head.entry];
    const Workload& w = *entry.workload;
    int32_t count = w.count;
    AssignOutcome outcome;
    // What an earlier pass said of its quota hold is replaced by what this one finds (a
    // preemptor ahead of it may have taken the room since, or quota may now fit it).
    entry.held_for_quota = false;
    entry.quota_hold_note.clear();
    // What the gangs admitted before it this cycle left of its caller's budgets: too little
    // for its smallest gang, it waits, blocking nobody (as a Workload::held one); still
    // `waiting`, so that a later pass sees what a refused placement gave back.
    const int32_t room = BudgetRoom(w);
    const bool held = room < count_of(w);
    if (held) {
      entry.reason = PendingReason::kNamespaceQuota;
      entry.message = BudgetShortfall(w, count_of(w));
    } else if (w.elastic) {
      placement::ElasticRange range = *w.elastic;
      range.max = std::min(range.max, room);
      std::optional<int32_t> largest =
          LargestFittingCount(model_, quota_, entry.shape, range, entry.failed);
      count = largest.value_or(w.elastic->min);
      outcome = Assign(model_, quota_, entry.shape, count, entry.failed);
    } else {
      outcome = Assign(model_, quota_, entry.shape, count, entry.failed);
    }
    std::optional<QuotaHold>& hold = holds[head.cq];
    if (!held && outcome.assignment && hold &&
        !KeepsQuotaHold(*hold, w, head.cq, outcome.assignment->demand)) {
      // It would delay the holder: at its smallest size it may leave enough, else it waits.
      AssignOutcome smaller;
      if (w.elastic && count > w.elastic->min) {
        smaller = Assign(model_, quota_, entry.shape, w.elastic->min, entry.failed);
      }
      if (smaller.assignment && KeepsQuotaHold(*hold, w, head.cq, smaller.assignment->demand)) {
        count = w.elastic->min;
        outcome = std::move(smaller);
      } else {
        outcome.assignment.reset();
        entry.held_for_quota = true;
        entry.reason = PendingReason::kQuota;
        entry.message = absl::StrCat(
            "backfill: ClusterTrainingQueue ", model_.cqs[head.cq].spec->name,
            " holds its quota for ", pending_[hold->holder].workload->key,
            ", expected to start in ", hold->start - snapshot_.now, "s, and this job ",
            w.expected_runtime_seconds ? "would run past that start"
                                       : "has no expected run time to show it ends by then");
      }
    }
    if (held || entry.held_for_quota) {
      // held by its budgets or by the quota hold: on to the next of its queue
    } else if (outcome.assignment) {
      quota_.Add(head.cq, outcome.assignment->demand, +1);
      ChargeBudgets(w, count);
      if (HoldsQuota(head.cq) && w.expected_runtime_seconds) {
        batch_ends[head.cq].emplace_back(snapshot_.now + *w.expected_runtime_seconds,
                                         outcome.assignment->demand);
      }
      // Admitted past the hold's start (KeepsQuotaHold said it leaves enough): it holds its
      // quota then too.
      if (hold && !EndsBy(w, hold->start)) {
        hold->at_start.Add(head.cq, outcome.assignment->demand, +1);
      }
      batch.push_back({head.entry, std::move(*outcome.assignment), count});
    } else {
      // When only choices that already failed placement have quota, the placement reason
      // from that failure stands.
      if (!outcome.only_excluded_fit) {
        entry.reason = PendingReason::kQuota;
        entry.message.clear();
        entry.quota_count = count;
        if (!hold && HoldsQuota(head.cq)) {
          // QuotaTree is not assignable: built in place.
          if (std::optional<QuotaHold> planned =
                  PlanQuotaHold(head.entry, QuotaEnds(head.cq, batch_ends[head.cq]))) {
            hold.emplace(*std::move(planned));
            entry.quota_hold_note = absl::StrCat(
                "backfill: ClusterTrainingQueue ", model_.cqs[head.cq].spec->name,
                "'s quota held for its expected start in ", hold->start - snapshot_.now, "s");
          }
        }
      }
      if (model_.cqs[head.cq].spec->queueing_strategy == QueueingStrategy::kStrictFifo) {
        blocker_[head.cq] = head.entry;
        continue;
      }
    }
    ++cursor[head.cq];
    if (int index = next_waiting(head.cq); index >= 0) {
      heap.push_back(make_head(head.cq, index));
      std::push_heap(heap.begin(), heap.end(), after);
    }
  }
  if (batch.empty()) return false;

  std::vector<placement::GangRequest> requests;
  requests.reserve(batch.size());
  for (const Tentative& t : batch) requests.push_back(Request(pending_[t.entry], t.assignment, t.count));
  std::vector<absl::StatusOr<placement::PlacementResult>> results = service_.ReserveBatch(requests);
  ++result_.calls.reserve_batch;

  bool retry = false;
  results.resize(batch.size(), absl::InternalError("ReserveBatch returned too few results"));
  auto never_local = [](const PendingEntry& entry, const placement::PlacementResult& r) {
    return entry.locality_wait && r.explanation.max_fit_empty.has_value() &&
           *r.explanation.max_fit_empty < r.explanation.wanted;
  };
  // Backfill: the first gang placement refused gets a start-time reservation. Gangs placed
  // after it in this batch that yield to it were given back (placed on a cluster without the
  // reservation); they and the gangs refused after it are placed again next pass, those not
  // expected to end before its start away from its nodes.
  std::vector<bool> again(batch.size(), false);
  if (options_.backfill && !last) {
    for (size_t h = 0; h < batch.size(); ++h) {
      const PendingEntry& entry = pending_[batch[h].entry];
      if (!results[h].ok() || results[h]->placed || never_local(entry, *results[h])) continue;
      std::vector<size_t> behind;
      std::vector<ExpectedEnd> ends_ahead;
      std::vector<std::string_view> placed_behind;
      for (size_t j = 0; j < batch.size(); ++j) {
        const bool yields = j > h && Before(batch[h].entry, batch[j].entry);
        if (yields) behind.push_back(j);
        const Workload& w = *pending_[batch[j].entry].workload;
        if (j == h || !results[j].ok() || !results[j]->placed) continue;
        // Every gang placed behind it is given back, whether or not its run time is known
        // (until 2026-11-29 only those with one counted as gone: one without kept the nodes
        // the holder needed, so no estimate fitted and no reservation was made).
        if (yields) {
          placed_behind.push_back(w.key);
        } else if (w.expected_runtime_seconds) {
          ends_ahead.emplace_back(snapshot_.now + *w.expected_runtime_seconds, w.key);
        }
      }
      BackfillOutcome outcome = PlanBackfill(batch[h].entry, batch[h].assignment, batch[h].count,
                                             ends_ahead, placed_behind, [&]() {
        for (size_t j : behind) {
          again[j] = true;
          if (results[j].ok() && results[j]->placed) {
            (void)service_.Release(pending_[batch[j].entry].workload->key);
            ++result_.calls.release;
          }
        }
      });
      if (outcome == BackfillOutcome::kWaitDropped) again[h] = true;
      break;
    }
  }
  std::vector<bool> strict_failed(model_.cqs.size(), false);
  struct Refused {
    int entry;
    std::string summary;   // the placement explanation
    const Demand* demand;  // the batch's assignment
  };
  std::vector<Refused> refused;
  for (size_t i = 0; i < batch.size(); ++i) {
    Tentative& t = batch[i];
    PendingEntry& entry = pending_[t.entry];
    const int cq = entry.cq;
    const bool strict = model_.cqs[cq].spec->queueing_strategy == QueueingStrategy::kStrictFifo;
    absl::StatusOr<placement::PlacementResult> r = std::move(results[i]);
    if (again[i] || strict_failed[cq] || !r.ok() || !r->placed) {
      ChargeBudgets(*entry.workload, -t.count);  // given back with its quota below
    }
    if (again[i]) {
      // Given back for backfill (above): placed again next pass.
      quota_.Add(cq, t.assignment.demand, -1);
      retry = true;
      continue;
    }
    if (strict_failed[cq]) {
      // Reserved behind a StrictFIFO head that could not be placed: give it back.
      if (r.ok() && r->placed) {
        (void)service_.Release(entry.workload->key);
        ++result_.calls.release;
      }
      quota_.Add(cq, t.assignment.demand, -1);
      continue;
    }
    if (!r.ok() || !r->placed) {
      quota_.Add(cq, t.assignment.demand, -1);
      retry = true;
      if (strict) {
        strict_failed[cq] = true;
        blocker_[cq] = t.entry;
      }
      if (!r.ok()) {
        entry.waiting = false;
        entry.reason = PendingReason::kPlacementError;
        entry.message = PlacementErrorText(r.status(), *entry.workload);
      } else if (never_local(entry, *r)) {
        // No domain of the preferred level could hold the gang even empty: waiting for one
        // cannot help, so it is placed at its required level from the next pass on.
        entry.locality_wait = false;
        entry.locality_wait_left = 0;
        entry.reason = PendingReason::kTopology;
        entry.message = absl::StrCat("placement: no ", entry.workload->preferred_level,
                                     " domain could ever hold it (", r->explanation.summary,
                                     "; ", *r->explanation.max_fit_empty,
                                     " fit with the domain empty)");
      } else {
        entry.failed.insert(t.assignment.choice);
        std::string summary = std::move(r->explanation.summary);
        const std::optional<int32_t>& most = r->explanation.max_fit_empty;
        if (!entry.locality_wait && most && *most < r->explanation.wanted) {
          // No wait can help in this flavor: say so first, not "the best fits 6" alone. What
          // follows is the cluster now (a node reserved for backfill is counted as such, not as
          // too small: audit 2026-12-01, F7 read it as the empty cluster's).
          const std::string& level = entry.workload->required_level;
          std::set<std::string> flavors;
          for (const auto& [resource, flavor] : t.assignment.flavors) flavors.insert(flavor);
          summary =
              absl::StrCat("can never be placed in flavor ", absl::StrJoin(flavors, "+"),
                           ": at most ", *most, " of its ", r->explanation.wanted, " pods fit ",
                           level.empty() ? std::string("in the cluster")
                                         : absl::StrCat("in one ", level, " domain"),
                           " even with every node empty; now: ", summary);
        }
        refused.push_back({t.entry, std::move(summary), &t.assignment.demand});
      }
      continue;
    }
    int32_t placed = static_cast<int32_t>(r->placement.nodes.size());
    if (placed != t.count) {
      // Elastic: the placement found room for fewer pods than quota allowed.
      ChargeBudgets(*entry.workload, placed - t.count);
      quota_.Add(cq, t.assignment.demand, -1);
      t.assignment.demand = DemandFor(model_, entry.shape, t.assignment.choice, placed);
      quota_.Add(cq, t.assignment.demand, +1);
      retry = true;
    }
    Admit(t.entry, t.assignment, r->placement, {});
  }
  // The quota left is told once every refused gang of the batch gave its tentative charge back
  // (told in the loop, a gang refused later in it still counted as using its quota).
  for (const Refused& f : refused) {
    PendingEntry& entry = pending_[f.entry];
    std::string why = absl::StrCat("placement: ", LocalityWaitNote(entry), f.summary,
                                   "; quota: ", QuotaLeft(entry.cq, *f.demand));
    // Each pass tries another flavor choice: say why every one failed, not only the last
    // (a p5 job told only that the gb200 nodes do not match would look in the wrong place).
    entry.message = entry.reason == PendingReason::kTopology && !entry.message.empty()
                        ? absl::StrCat(entry.message, "; next flavor: ", why)
                        : std::move(why);
    entry.reason = PendingReason::kTopology;
  }
  return retry;
}

void Cycle::Finish() {
  for (const auto& [decision, index] : shrinks_) {
    const RunningEntry& r = running_[index];
    result_.preemptions[decision].borrowing =
        r.cq >= 0 && quota_.BorrowingAny(r.cq, Scale(r.per_pod, r.count));
  }
  // Workloads of one queue asking for the same pods in the same flavors share a quota message:
  // key = queue, count, then per used group its index, per-pod amounts and matching flavors.
  std::map<std::vector<int64_t>, std::string> quota_messages;
  for (PendingEntry& entry : pending_) {
    if (entry.admitted || entry.reason != PendingReason::kQuota || !entry.message.empty()) continue;
    std::vector<int64_t> key = {entry.cq, entry.quota_count};
    for (size_t g = 0; g < entry.shape.groups.size(); ++g) {
      key.push_back(-1 - entry.shape.groups[g]);
      for (const auto& [position, amount] : entry.shape.amounts[g]) {
        key.insert(key.end(), {position, amount});
      }
      key.insert(key.end(), entry.shape.compatible[g].begin(), entry.shape.compatible[g].end());
    }
    auto cached = entry.failed.empty() ? quota_messages.find(key) : quota_messages.end();
    if (cached != quota_messages.end()) {
      entry.message = cached->second;
      continue;
    }
    AssignOutcome outcome = Assign(model_, quota_, entry.shape, entry.quota_count, entry.failed,
                                   /*explain=*/true);
    entry.message = outcome.assignment
                        ? "quota was freed after it was considered; it is retried next cycle"
                        : absl::StrCat("quota: ", outcome.quota_message);
    if (entry.failed.empty()) quota_messages.emplace(key, entry.message);
  }
  for (size_t cq = 0; cq < model_.cqs.size(); ++cq) {
    int head = blocker_[cq];
    if (head < 0) continue;
    const PendingEntry& blocker = pending_[head];
    const std::vector<int>& order = queue_order_[cq];
    auto it = std::find(order.begin(), order.end(), head);
    for (++it; it != order.end(); ++it) {
      PendingEntry& entry = pending_[*it];
      if (entry.admitted || !entry.waiting) continue;
      entry.reason = PendingReason::kStrictFifoBlocked;
      entry.message = absl::StrCat("queued behind ", blocker.workload->key,
                                   " in StrictFIFO ClusterTrainingQueue ",
                                   model_.cqs[cq].spec->name,
                                   blocker.admitted ? ", which was admitted by preemption this cycle"
                                                    : absl::StrCat(", which is pending: ",
                                                                   blocker.message));
    }
  }
  std::vector<int32_t> position(pending_.size(), 0);
  for (const std::vector<int>& order : queue_order_) {
    int32_t n = 0;
    for (int i : order) {
      if (!pending_[i].admitted) position[i] = ++n;
    }
  }
  for (size_t i = 0; i < pending_.size(); ++i) {
    const PendingEntry& entry = pending_[i];
    if (entry.admitted) continue;
    if (entry.locality_wait) {
      const int64_t end = snapshot_.now + entry.locality_wait_left;
      result_.requeue_at = std::min(result_.requeue_at.value_or(end), end);
    }
    std::string message = entry.message.empty() ? "not reached this cycle" : entry.message;
    if (!entry.preemption_note.empty() && entry.reason != PendingReason::kStrictFifoBlocked) {
      absl::StrAppend(&message, "; ", entry.preemption_note);
    }
    if (!entry.backfill_note.empty()) absl::StrAppend(&message, "; ", entry.backfill_note);
    if (!entry.quota_hold_note.empty()) absl::StrAppend(&message, "; ", entry.quota_hold_note);
    result_.pending.push_back({entry.workload->key,
                               entry.cq >= 0 ? model_.cqs[entry.cq].spec->name : "", entry.reason,
                               std::move(message), position[i]});
  }
}

}  // namespace internal
}  // namespace phalanx::admission
