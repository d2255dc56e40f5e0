// Backfill (docs/admission.md "Backfill"): a gang that cannot be placed now gets a start-time
// reservation, as Slurm's backfill scheduler gives its blocked jobs: the nodes it is expected to
// start on and when, estimated from the running workloads' expected ends. Workloads behind it in
// queue order may use those nodes only if they are expected to end by then.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/counted_noun.h"
#include "operator/admission/internal/cycle.h"

namespace phalanx::admission::internal {

bool Cycle::EndsBy(const Workload& w, int64_t time) const {
  return w.expected_runtime_seconds.has_value() &&
         snapshot_.now + *w.expected_runtime_seconds <= time;
}

int64_t Cycle::RunningEnd(const Workload& w) const {
  // Past its expected end: expected any moment now.
  return std::max(snapshot_.now, w.admitted->admission_time + *w.expected_runtime_seconds);
}

bool Cycle::Blocks(const PendingEntry& entry, const BackfillReservation& r) const {
  const int self = static_cast<int>(&entry - pending_.data());
  if (self == r.holder || !Before(r.holder, self)) return false;
  return !EndsBy(*entry.workload, r.start);
}

std::vector<ExpectedEnd> Cycle::ExpectedEnds() const {
  std::vector<ExpectedEnd> ends = admitted_ends_;
  for (const RunningEntry& r : running_) {
    const Workload& w = *r.workload;
    // Shrunk or evicted this cycle: left out, as if it ran on (a conservative estimate).
    if (r.touched || !w.expected_runtime_seconds.has_value()) continue;
    ends.emplace_back(RunningEnd(w), w.key);
  }
  std::sort(ends.begin(), ends.end());
  return ends;
}

std::optional<BackfillReservation> Cycle::EarliestStart(
    const placement::GangRequest& request,
    const std::vector<ExpectedEnd>& ends) {
  if (ends.empty()) return std::nullopt;
  std::vector<placement::EndingGang> ending;
  ending.reserve(ends.size());
  for (const auto& [end, key] : ends) ending.push_back({key, end});
  absl::StatusOr<placement::StartEstimate> estimate = service_.EstimateStart(request, ending);
  ++result_.calls.estimate_start;
  if (!estimate.ok() || !estimate->feasible) return std::nullopt;
  BackfillReservation r;
  r.start = std::max(snapshot_.now, estimate->start);  // 0 when it fits now
  r.nodes = std::move(estimate->placement.nodes);
  std::sort(r.nodes.begin(), r.nodes.end());
  r.nodes.erase(std::unique(r.nodes.begin(), r.nodes.end()), r.nodes.end());
  r.domain = std::move(estimate->placement.domain);
  return r;
}

Cycle::BackfillOutcome Cycle::PlanBackfill(
    int index, const Assignment& assignment, int32_t count,
    const std::vector<ExpectedEnd>& ahead,
    const std::vector<std::string_view>& behind,
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
  std::vector<ExpectedEnd> ends = ExpectedEnds();
  ends.insert(ends.end(), ahead.begin(), ahead.end());
  std::sort(ends.begin(), ends.end());
  // Nothing with an expected end: the gangs behind it were placed after it was refused, so
  // giving them back alone cannot make it fit (and a cluster without estimates makes no call).
  if (ends.empty()) return BackfillOutcome::kNone;
  // Its smallest size, at its required level (during a locality wait Request asks for the
  // preferred one).
  placement::GangRequest loose = Request(entry, assignment, count);
  if (w.elastic.has_value()) {
    loose.elastic.reset();
    loose.count = w.elastic->min;
  }
  loose.required_level = w.required_level;
  // Its start at the required level, on the cluster without the gangs behind it (they are
  // given back below): those count as ended now. Only if some start can be estimated at all
  // are they given back.
  std::vector<ExpectedEnd> with_behind = ends;
  for (std::string_view key : behind) with_behind.emplace_back(snapshot_.now - 1, key);
  std::optional<BackfillReservation> wide = EarliestStart(loose, with_behind);
  if (!wide.has_value()) return BackfillOutcome::kNone;
  give_back();
  std::optional<BackfillReservation> tight;
  if (WantsPreferredLevel(w)) {
    placement::GangRequest request = loose;
    request.required_level = w.preferred_level;
    tight = EarliestStart(request, ends);
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
    if (!chosen.has_value() || (wide.has_value() && chosen->start > wide->start + wait)) {
      chosen = std::move(wide);
    }
  }
  if (!chosen.has_value()) return BackfillOutcome::kNone;
  chosen->holder = index;
  entry.backfill_note =
      absl::StrCat("backfill: ", phalanx::CountedNoun(chosen->nodes.size(), "node"), " in ",
                   chosen->domain.ToString(), " held for its expected start in ",
                   chosen->start - snapshot_.now, "s");
  reservations_.push_back(*std::move(chosen));
  return BackfillOutcome::kReserved;
}

bool Cycle::HoldsQuota(int cq) const {
  const ClusterQueue& spec = *model_.cqs[cq].spec;
  return options_.backfill && spec.backfill_quota == BackfillQuota::kHoldForHead &&
         model_.cqs[cq].cohort < 0 && spec.queueing_strategy == QueueingStrategy::kBestEffortFifo;
}

std::vector<QuotaEnd> Cycle::QuotaEnds(int cq, const std::vector<QuotaEnd>& batch) const {
  std::vector<QuotaEnd> ends = admitted_quota_ends_[cq];
  ends.insert(ends.end(), batch.begin(), batch.end());
  for (int i : running_by_cq_[cq]) {
    const RunningEntry& r = running_[i];
    const Workload& w = *r.workload;
    // Evicted this cycle: its quota is free already. Shrunk: it frees what it still holds.
    if (r.count == 0 || !w.expected_runtime_seconds.has_value()) continue;
    ends.emplace_back(RunningEnd(w), Scale(r.per_pod, r.count));
  }
  std::sort(ends.begin(), ends.end(),
            [](const QuotaEnd& a, const QuotaEnd& b) { return a.first < b.first; });
  return ends;
}

std::optional<QuotaHold> Cycle::PlanQuotaHold(int index, const std::vector<QuotaEnd>& ends) const {
  const PendingEntry& entry = pending_[index];
  const Workload& w = *entry.workload;
  const int32_t count = w.elastic ? w.elastic->min : w.count;
  QuotaHold hold{index, 0, {}, quota_};
  for (size_t i = 0; i < ends.size(); ++i) {
    hold.at_start.Add(entry.cq, ends[i].second, -1);
    // Workloads ending at the same moment free their quota together.
    if (i + 1 < ends.size() && ends[i + 1].first == ends[i].first) continue;
    AssignOutcome later = Assign(model_, hold.at_start, entry.shape, count, entry.failed);
    if (later.assignment) {
      hold.start = ends[i].first;
      hold.demand = std::move(later.assignment->demand);
      return hold;
    }
  }
  return std::nullopt;
}

bool Cycle::KeepsQuotaHold(const QuotaHold& hold, const Workload& w, int cq,
                           const Demand& demand) const {
  if (EndsBy(w, hold.start)) return true;
  QuotaTree at = hold.at_start;
  at.Add(cq, demand, +1);
  return at.Fits(cq, hold.demand);
}

}  // namespace phalanx::admission::internal
