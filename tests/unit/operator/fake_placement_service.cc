#include "tests/unit/operator/fake_placement_service.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "scheduler/node_affinity.h"

namespace phalanx::admission::testing {
namespace {

int64_t GpusPerPod(const placement::GangRequest& request) {
  auto it = request.per_pod.find(kResourceGpu);
  return it == request.per_pod.end() ? 0 : it->second;
}

// Candidate counts, largest first.
std::vector<int32_t> Counts(const placement::GangRequest& request) {
  if (!request.elastic) return {request.count};
  std::vector<int32_t> counts;
  for (int32_t c = request.elastic->min; c <= request.elastic->max; c += request.elastic->step) {
    counts.insert(counts.begin(), c);
  }
  return counts;
}

}  // namespace

FakePlacementService::FakePlacementService(std::vector<FakeDomain> domains)
    : domains_(std::move(domains)) {
  for (const FakeDomain& d : domains_) free_.push_back(d.gpus);
}

void FakePlacementService::Hold(const std::string& job, const std::string& domain,
                                int32_t count, int64_t gpus_per_pod) {
  for (size_t d = 0; d < domains_.size(); ++d) {
    if (domains_[d].name != domain) continue;
    holds_[job] = {static_cast<int>(d), count, gpus_per_pod};
    free_[d] -= count * gpus_per_pod;
    return;
  }
}

int64_t FakePlacementService::Free(std::string_view domain) const {
  for (size_t d = 0; d < domains_.size(); ++d) {
    if (domains_[d].name == domain) return free_[d];
  }
  return 0;
}

int32_t FakePlacementService::HeldCount(std::string_view job) const {
  auto it = holds_.find(job);
  return it == holds_.end() ? 0 : it->second.count;
}

bool FakePlacementService::Matches(const placement::GangRequest& request, int domain) const {
  const auto& labels = domains_[domain].labels;
  return std::all_of(request.node_selector.begin(), request.node_selector.end(),
                     [&](const auto& kv) {
                       auto it = labels.find(kv.first);
                       return it != labels.end() && it->second == kv.second;
                     }) &&
         placement::MatchesNodeAffinity(request.node_affinity, labels, domains_[domain].name);
}

std::optional<std::pair<int, int32_t>> FakePlacementService::Fit(
    const placement::GangRequest& request, const std::vector<int64_t>& free) const {
  int64_t g = GpusPerPod(request);
  for (int32_t count : Counts(request)) {
    int best = -1;
    for (size_t d = 0; d < domains_.size(); ++d) {
      if (!Matches(request, static_cast<int>(d)) || free[d] < count * g) continue;
      if (best < 0 || free[d] < free[best]) best = static_cast<int>(d);
    }
    if (best >= 0) return std::make_pair(best, count);
  }
  return std::nullopt;
}

placement::Placement FakePlacementService::MakePlacement(const std::string& job, int domain,
                                                         int32_t count) const {
  placement::Placement placement;
  placement.job = job;
  placement.domain = {"block", {domains_[domain].name}};
  for (int32_t i = 0; i < count; ++i) {
    placement.nodes.push_back(absl::StrCat(domains_[domain].name, "-", i));
  }
  return placement;
}

placement::PlacementResult FakePlacementService::Result(
    const placement::GangRequest& request, const std::vector<int64_t>& free) const {
  placement::PlacementResult result;
  if (auto fit = Fit(request, free)) {
    result.placed = true;
    result.placement = MakePlacement(request.job, fit->first, fit->second);
    return result;
  }
  int64_t g = GpusPerPod(request);
  int32_t wanted = request.elastic ? request.elastic->min : request.count;
  int best = -1;
  for (size_t d = 0; d < domains_.size(); ++d) {
    if (Matches(request, static_cast<int>(d)) && (best < 0 || free[d] > free[best])) {
      best = static_cast<int>(d);
    }
  }
  result.explanation.wanted = wanted;
  // The most pods one matching block holds when empty: what no wait can exceed.
  int32_t most = 0;
  for (size_t d = 0; d < domains_.size(); ++d) {
    if (g > 0 && Matches(request, static_cast<int>(d))) {
      most = std::max(most, static_cast<int32_t>(domains_[d].gpus / g));
    }
  }
  if (g > 0) result.explanation.max_fit_empty = most;
  if (best < 0) {
    result.explanation.summary = "no domain matches the node selector";
    return result;
  }
  result.explanation.best_domain = placement::DomainId{"block", {domains_[best].name}};
  result.explanation.fit_in_best = g > 0 ? static_cast<int32_t>(free[best] / g) : wanted;
  result.explanation.summary = absl::StrCat("needs ", wanted * g, " GPUs in one block; the best block ",
                                            domains_[best].name, " has ", free[best], " free");
  return result;
}

absl::StatusOr<placement::PlacementResult> FakePlacementService::Place(
    const placement::GangRequest& request) const {
  ++calls_.place;
  return Result(request, free_);
}

absl::StatusOr<placement::StartEstimate> FakePlacementService::EstimateStart(
    const placement::GangRequest& request, const std::vector<placement::EndingGang>& ends) const {
  ++calls_.estimate_start;
  std::vector<placement::EndingGang> order = ends;
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.end, a.job) < std::tie(b.end, b.job);
  });
  // Gangs end one end time at a time; the first time after which the request fits.
  std::vector<int64_t> free = free_;
  std::set<std::string_view> seen;
  placement::StartEstimate estimate;
  for (size_t i = 0;; ) {
    placement::PlacementResult result = Result(request, free);
    if (result.placed) {
      estimate.feasible = true;
      estimate.placement = std::move(result.placement);
      return estimate;
    }
    if (i == order.size()) {
      estimate = {};
      estimate.explanation = std::move(result.explanation);
      return estimate;
    }
    const int64_t end = order[i].end;
    for (; i < order.size() && order[i].end == end; ++i) {
      auto it = holds_.find(order[i].job);
      if (it == holds_.end() || !seen.insert(order[i].job).second) continue;
      free[it->second.domain] += it->second.count * it->second.gpus_per_pod;
      ++estimate.ended;
      estimate.start = end;
    }
  }
}

absl::StatusOr<placement::PlacementResult> FakePlacementService::Reserve(
    const placement::GangRequest& request) {
  ++calls_.reserve;
  if (holds_.contains(request.job)) {
    return absl::AlreadyExistsError(absl::StrCat(request.job, " already holds a reservation"));
  }
  placement::PlacementResult result = Result(request, free_);
  if (result.placed) {
    auto fit = Fit(request, free_);
    holds_[request.job] = {fit->first, fit->second, GpusPerPod(request)};
    free_[fit->first] -= fit->second * GpusPerPod(request);
  }
  return result;
}

std::vector<absl::StatusOr<placement::PlacementResult>> FakePlacementService::ReserveBatch(
    const std::vector<placement::GangRequest>& requests) {
  ++calls_.reserve_batch;
  std::vector<absl::StatusOr<placement::PlacementResult>> results;
  for (const placement::GangRequest& request : requests) {
    results.push_back(Reserve(request));
    --calls_.reserve;  // counted as part of the batch
  }
  return results;
}

absl::Status FakePlacementService::Release(std::string_view job) {
  ++calls_.release;
  auto it = holds_.find(job);
  if (it == holds_.end()) return absl::NotFoundError(absl::StrCat(std::string(job), " holds no reservation"));
  free_[it->second.domain] += it->second.count * it->second.gpus_per_pod;
  holds_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<placement::PlacementResult> FakePlacementService::Resize(std::string_view job,
                                                                        int32_t new_count) {
  ++calls_.resize;
  auto it = holds_.find(job);
  if (it == holds_.end()) return absl::NotFoundError(absl::StrCat(std::string(job), " holds no reservation"));
  HeldGang& held = it->second;
  int64_t delta = (new_count - held.count) * held.gpus_per_pod;
  placement::PlacementResult result;
  if (delta > free_[held.domain]) {
    result.explanation.summary = "no room to grow";
    return result;
  }
  free_[held.domain] -= delta;
  held.count = new_count;
  result.placed = true;
  result.placement = MakePlacement(std::string(job), held.domain, new_count);
  return result;
}

absl::StatusOr<placement::PlacementResult> FakePlacementService::ReplaceNodes(
    std::string_view /*job*/, const std::vector<std::string>& /*nodes*/) {
  return absl::UnimplementedError("FakePlacementService does not model nodes");
}

absl::StatusOr<placement::PreemptionPlan> FakePlacementService::PlanPreemption(
    const placement::GangRequest& request,
    const std::vector<placement::RunningGang>& candidates) const {
  ++calls_.plan;
  int64_t need = (request.elastic ? request.elastic->min : request.count) * GpusPerPod(request);
  placement::PreemptionPlan best;
  int best_domain = -1;
  for (size_t d = 0; d < domains_.size(); ++d) {
    if (!Matches(request, static_cast<int>(d))) continue;
    int64_t free = free_[d];
    std::vector<placement::Victim> victims;
    std::map<std::string, int32_t> left;
    // Shrink elastic gangs to their minimum first, then evict, in the caller's order.
    for (bool evict : {false, true}) {
      for (const placement::RunningGang& gang : candidates) {
        if (free >= need) break;
        auto it = holds_.find(gang.job);
        if (gang.priority >= request.priority || it == holds_.end() ||
            it->second.domain != static_cast<int>(d)) {
          continue;
        }
        int32_t now = left.contains(gang.job) ? left[gang.job] : it->second.count;
        int32_t target = evict ? 0 : (gang.elastic ? gang.elastic->min : now);
        if (target >= now) continue;
        free += (now - target) * it->second.gpus_per_pod;
        left[gang.job] = target;
      }
    }
    if (free < need) continue;
    for (const placement::RunningGang& gang : candidates) {
      if (left.contains(gang.job)) victims.push_back({gang.job, left[gang.job]});
    }
    if (best_domain < 0 || victims.size() < best.victims.size()) {
      best.feasible = true;
      best.victims = std::move(victims);
      best.placement = MakePlacement(request.job, static_cast<int>(d),
                                     request.elastic ? request.elastic->min : request.count);
      best_domain = static_cast<int>(d);
    }
  }
  if (!best.feasible) {
    best.explanation.summary =
        absl::StrCat("no block has ", need, " GPUs even after preempting every candidate");
  }
  return best;
}

}  // namespace phalanx::admission::testing
