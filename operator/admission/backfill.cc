// Backfill (docs/admission.md "Backfill"): a gang that cannot be placed now gets a start-time
// reservation, as Slurm's backfill scheduler gives its blocked jobs: the nodes it is expected to
// start on and when, estimated from the running workloads' expected ends. Workloads behind it in
// queue order may use those nodes only if they are expected to end by then.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "operator/admission/internal/cycle.h"

namespace phalanx::admission::internal {

bool Cycle::Blocks(const PendingEntry& entry, const BackfillReservation& r) const {
  const int self = static_cast<int>(&entry - pending_.data());
  if (self == r.holder || !Before(r.holder, self)) return false;
  const std::optional<int64_t>& runtime = entry.workload->expected_runtime_seconds;
  return !runtime.has_value() || snapshot_.now + *runtime > r.start;
}

std::vector<std::pair<int64_t, std::string>> Cycle::ExpectedEnds() const {
  std::vector<std::pair<int64_t, std::string>> ends = admitted_ends_;
  for (const RunningEntry& r : running_) {
    const Workload& w = *r.workload;
    // Shrunk or evicted this cycle: left out, as if it ran on (a conservative estimate).
    if (r.touched || !w.expected_runtime_seconds.has_value()) continue;
    // Past its expected end: expected any moment now.
    ends.emplace_back(
        std::max(snapshot_.now, w.admitted->admission_time + *w.expected_runtime_seconds), w.key);
  }
  std::sort(ends.begin(), ends.end());
  return ends;
}

std::optional<BackfillReservation> Cycle::EarliestStart(
    placement::GangRequest request, const std::vector<std::pair<int64_t, std::string>>& ends) {
  if (ends.empty()) return std::nullopt;
  // The planner's victims are the workloads expected to end: any of them, earliest first.
  request.priority = 1;
  std::vector<placement::RunningGang> gangs;
  gangs.reserve(ends.size());
  for (const auto& [end, key] : ends) gangs.push_back({key, 0, std::nullopt});
  auto plan_with = [&](size_t k) -> std::optional<placement::PreemptionPlan> {
    std::vector<placement::RunningGang> first(gangs.begin(), gangs.begin() + static_cast<long>(k));
    absl::StatusOr<placement::PreemptionPlan> plan = service_.PlanPreemption(request, first);
    ++result_.calls.plan_preemption;
    if (!plan.ok() || !plan->feasible) return std::nullopt;
    return *std::move(plan);
  };
  // The fewest workloads, in order of expected end, whose end lets the gang in: its start.
  std::optional<placement::PreemptionPlan> best = plan_with(gangs.size());
  if (!best.has_value()) return std::nullopt;
  size_t lo = 1, hi = gangs.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (std::optional<placement::PreemptionPlan> plan = plan_with(mid)) {
      hi = mid;
      best = std::move(plan);
    } else {
      lo = mid + 1;
    }
  }
  std::map<std::string_view, int64_t> end_of;
  for (const auto& [end, key] : ends) end_of.emplace(key, end);
  BackfillReservation r;
  r.start = snapshot_.now;
  for (const placement::Victim& v : best->victims) r.start = std::max(r.start, end_of[v.job]);
  r.nodes = best->placement.nodes;
  std::sort(r.nodes.begin(), r.nodes.end());
  r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
  r.domain = best->placement.domain;
  return r;
}

Cycle::BackfillOutcome Cycle::PlanBackfill(
    int index, const Assignment& assignment, int32_t count,
    const std::vector<std::pair<int64_t, std::string>>& ahead,
    const std::vector<std::pair<int64_t, std::string>>& behind,
    const std::function<void()>& give_back) {
  PendingEntry& entry = pending_[index];
  const Workload& w = *entry.workload;
  if (entry.locality_wait && !options_.backfill_ends_locality_wait) return BackfillOutcome::kNone;
  // Refused again after preemption (AfterPreemption retries every waiting workload): it keeps
  // the reservation it has.
  if (std::any_of(reservations_.begin(), reservations_.end(),
                  [&](const BackfillReservation& r) { return r.holder == index; })) {
    return BackfillOutcome::kNone;
  }
  std::vector<std::pair<int64_t, std::string>> ends = ExpectedEnds();
  ends.insert(ends.end(), ahead.begin(), ahead.end());
  std::sort(ends.begin(), ends.end());
  if (ends.empty() && behind.empty()) return BackfillOutcome::kNone;  // no estimates at all
  // Its smallest size, at its required level (during a locality wait Request asks for the
  // preferred one).
  placement::GangRequest loose = Request(entry, assignment, count);
  if (w.elastic.has_value()) {
    loose.elastic.reset();
    loose.count = w.elastic->min;
  }
  loose.required_level = w.required_level;
  {
    // Only if some start can be estimated at all are the gangs behind it given back.
    std::vector<std::pair<int64_t, std::string>> all = ends;
    all.insert(all.end(), behind.begin(), behind.end());
    std::sort(all.begin(), all.end());
    placement::GangRequest probe = loose;
    probe.priority = 1;
    std::vector<placement::RunningGang> gangs;
    for (const auto& [end, key] : all) gangs.push_back({key, 0, std::nullopt});
    absl::StatusOr<placement::PreemptionPlan> plan = service_.PlanPreemption(probe, gangs);
    ++result_.calls.plan_preemption;
    if (!plan.ok() || !plan->feasible) return BackfillOutcome::kNone;
  }
  give_back();
  std::optional<BackfillReservation> tight;
  if (WantsPreferredLevel(w)) {
    placement::GangRequest request = loose;
    request.required_level = w.preferred_level;
    tight = EarliestStart(std::move(request), ends);
  }
  const int64_t wait = model_.cqs[entry.cq].spec->locality_wait_seconds;
  if (entry.locality_wait) {
    // The wait only pays if one preferred domain is expected to free before it ends.
    if (!tight.has_value() || tight->start > snapshot_.now + entry.locality_wait_left) {
      entry.locality_wait = false;
      entry.locality_wait_left = 0;
      return BackfillOutcome::kWaitDropped;
    }
  }
  std::optional<BackfillReservation> chosen = tight;
  if (!entry.locality_wait) {
    // Locality is worth the same delay after the wait as during it: the preferred domain's
    // start is taken if it is at most the queue's locality wait later than the required one's.
    std::optional<BackfillReservation> wide = EarliestStart(loose, ends);
    if (!chosen.has_value() || (wide.has_value() && chosen->start > wide->start + wait)) {
      chosen = std::move(wide);
    }
  }
  if (!chosen.has_value()) return BackfillOutcome::kNone;
  chosen->holder = index;
  entry.backfill_note = absl::StrCat("backfill: ", chosen->nodes.size(), " nodes in ",
                                     chosen->domain.ToString(), " held for its expected start in ",
                                     chosen->start - snapshot_.now, "s");
  reservations_.push_back(*std::move(chosen));
  return BackfillOutcome::kReserved;
}

}  // namespace phalanx::admission::internal
