#include "operator/admission/quota.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"

namespace phalanx::admission {

Demand Scale(const Demand& demand, int64_t factor) {
  Demand scaled = demand;
  for (auto& entry : scaled) entry.second *= factor;
  return scaled;
}

QuotaTree::QuotaTree(const Model& model)
    : model_(model),
      num_fr_(static_cast<int>(model.frs.size())),
      cells_(model.cqs.size() * model.frs.size()),
      pools_(model.cohorts.size() * model.frs.size()) {
  for (size_t cq = 0; cq < model.cqs.size(); ++cq) {
    const CompiledClusterQueue& compiled = model.cqs[cq];
    if (!compiled.inactive.empty()) continue;
    const ClusterQueue& spec = *compiled.spec;
    for (size_t g = 0; g < compiled.groups.size(); ++g) {
      const CompiledGroup& group = compiled.groups[g];
      for (size_t f = 0; f < group.flavors.size(); ++f) {
        for (const ResourceQuota& q : spec.resource_groups[g].flavors[f].resources) {
          auto r = std::find(group.resources.begin(), group.resources.end(), q.resource);
          FrId fr = group.fr[f][r - group.resources.begin()];
          QuotaCell& cell = MutableCell(static_cast<int>(cq), fr);
          cell.defined = true;
          cell.nominal = q.nominal;
          cell.borrowing_limit = q.borrowing_limit;
          cell.guaranteed = q.lending_limit.has_value() ? q.nominal - *q.lending_limit : 0;
          if (compiled.cohort >= 0) {
            pools_[compiled.cohort * num_fr_ + fr].lendable += q.nominal - cell.guaranteed;
          }
        }
      }
    }
  }
}

int64_t QuotaTree::PoolFree(int cohort, FrId fr) const {
  const PoolCell& pool = pools_[cohort * num_fr_ + fr];
  return pool.lendable - pool.used;
}

int64_t QuotaTree::Available(int cq, FrId fr) const {
  const QuotaCell& cell = Cell(cq, fr);
  if (!cell.defined) return 0;
  int cohort = model_.cqs[cq].cohort;
  if (cohort < 0) return cell.nominal - cell.usage;
  int64_t local = std::max<int64_t>(0, cell.guaranteed - cell.usage);
  int64_t from_pool = PoolFree(cohort, fr);
  if (cell.borrowing_limit.has_value()) {
    int64_t stored_in_pool = cell.nominal - cell.guaranteed;
    int64_t used_in_pool = std::max<int64_t>(0, cell.usage - cell.guaranteed);
    from_pool = std::min(from_pool, stored_in_pool - used_in_pool + *cell.borrowing_limit);
  }
  return local + from_pool;
}

bool QuotaTree::Fits(int cq, const Demand& demand) const {
  return std::all_of(demand.begin(), demand.end(),
                     [&](const auto& d) { return d.second <= Available(cq, d.first); });
}

bool QuotaTree::FitsNominal(int cq, const Demand& demand) const {
  return std::all_of(demand.begin(), demand.end(), [&](const auto& d) {
    const QuotaCell& cell = Cell(cq, d.first);
    return cell.defined && cell.usage + d.second <= cell.nominal;
  });
}

void QuotaTree::Add(int cq, const Demand& demand, int sign) {
  int cohort = model_.cqs[cq].cohort;
  for (const auto& [fr, amount] : demand) {
    QuotaCell& cell = MutableCell(cq, fr);
    int64_t before = std::max<int64_t>(0, cell.usage - cell.guaranteed);
    cell.usage += sign * amount;
    int64_t after = std::max<int64_t>(0, cell.usage - cell.guaranteed);
    if (cohort >= 0) pools_[cohort * num_fr_ + fr].used += after - before;
  }
}

bool QuotaTree::Borrowing(int cq, FrId fr) const {
  const QuotaCell& cell = Cell(cq, fr);
  return cell.defined && cell.usage > cell.nominal;
}

bool QuotaTree::BorrowingAny(int cq, const Demand& demand) const {
  return std::any_of(demand.begin(), demand.end(),
                     [&](const auto& d) { return Borrowing(cq, d.first); });
}

double QuotaTree::Share(int cq, const Demand& demand, int sign) const {
  int cohort = model_.cqs[cq].cohort;
  if (cohort < 0) return 0;
  // Borrowed and lendable amounts summed over flavors, per resource name, as Kueue does.
  std::map<std::string_view, std::pair<int64_t, int64_t>> per_resource;  // borrowed, lendable
  for (FrId fr = 0; fr < num_fr_; ++fr) {
    const QuotaCell& cell = Cell(cq, fr);
    if (!cell.defined) continue;
    int64_t usage = cell.usage;
    for (const auto& [dfr, amount] : demand) {
      if (dfr == fr) usage += sign * amount;
    }
    int64_t borrowed = usage - cell.nominal;
    if (borrowed > 0) per_resource[model_.frs[fr].second].first += borrowed;
  }
  if (per_resource.empty()) return 0;
  for (auto& [resource, amounts] : per_resource) {
    for (FrId fr = 0; fr < num_fr_; ++fr) {
      if (model_.frs[fr].second == resource) amounts.second += pools_[cohort * num_fr_ + fr].lendable;
    }
  }
  double dominant = 0;
  for (const auto& [resource, amounts] : per_resource) {
    if (amounts.second > 0) {
      dominant = std::max(dominant, static_cast<double>(amounts.first) / amounts.second);
    }
  }
  double weight = model_.cqs[cq].spec->fair_sharing_weight;
  if (weight == 0) return std::numeric_limits<double>::infinity();
  return dominant / weight;
}

int64_t QuotaTree::Maximum(int cq, FrId fr) const {
  const QuotaCell& cell = Cell(cq, fr);
  if (!cell.defined) return 0;
  int cohort = model_.cqs[cq].cohort;
  if (cohort < 0) return cell.nominal;
  int64_t from_pool = pools_[cohort * num_fr_ + fr].lendable;
  if (cell.borrowing_limit.has_value()) {
    from_pool = std::min(from_pool, cell.nominal - cell.guaranteed + *cell.borrowing_limit);
  }
  return cell.guaranteed + from_pool;
}

std::string QuotaTree::Describe(int cq, FrId fr, int64_t need) const {
  const QuotaCell& cell = Cell(cq, fr);
  const auto& [flavor, resource] = model_.frs[fr];
  auto amount = [&](int64_t v) { return FormatQuantity(resource, v); };
  int cohort = model_.cqs[cq].cohort;
  std::string text = absl::StrCat("flavor ", model_.flavors[flavor]->name, ": needs ",
                                  amount(need), " ", resource);
  if (const int64_t most = Maximum(cq, fr); need > most) {
    absl::StrAppend(&text, ", more than the queue can ever use (", amount(most), ": nominal ",
                    amount(cell.nominal));
    if (cohort < 0) return text + ", no cohort to borrow from)";
    if (most == cell.nominal) {
      return absl::StrCat(text, ", cohort ", model_.cohorts[cohort], " lends it nothing)");
    }
    if (cell.borrowing_limit.has_value() && most == cell.nominal + *cell.borrowing_limit) {
      return absl::StrCat(text, " + borrowing limit ", amount(*cell.borrowing_limit), ")");
    }
    return absl::StrCat(text, " + ", amount(most - cell.nominal), " the cohort ",
                        model_.cohorts[cohort], " can lend)");
  }
  const int64_t available = std::max<int64_t>(0, Available(cq, fr));
  absl::StrAppend(&text, ", ", amount(available), " available (nominal ", amount(cell.nominal),
                  ", ", amount(cell.usage), " in use");
  if (cohort >= 0) {
    absl::StrAppend(&text, ", cohort ", model_.cohorts[cohort], " has ",
                    amount(std::max<int64_t>(0, PoolFree(cohort, fr))), " unused");
    if (cell.borrowing_limit.has_value()) {
      absl::StrAppend(&text, ", borrowing limit ", amount(*cell.borrowing_limit));
    }
    // Its own nominal quota that other queues of the cohort have borrowed: it gets it back only
    // by reclaiming (preemption), or when they finish.
    const int64_t lent = std::max<int64_t>(0, cell.nominal - cell.usage) - available;
    if (lent > 0) {
      absl::StrAppend(&text, "; ", amount(lent), " of its nominal quota is lent to other ",
                      "ClusterTrainingQueues of the cohort");
      if (model_.cqs[cq].spec->preemption.reclaim_within_cohort ==
          ReclaimWithinCohortPolicy::kNever) {
        absl::StrAppend(&text, ", and its reclaimWithinCohort: Never waits for them to finish ",
                        "instead of taking it back");
      }
    }
  }
  return text + ")";
}

Demand AdmittedDemand(const Model& model, const QuotaTree& quota, int cq, const Workload& w) {
  Demand demand;
  if (!w.admitted.has_value() || !model.cqs[cq].inactive.empty()) return demand;
  auto charge = [&](const std::string& resource, int64_t amount) {
    auto flavor_name = w.admitted->flavors.find(resource);
    if (amount <= 0 || flavor_name == w.admitted->flavors.end()) return;
    auto flavor = model.flavor_index.find(flavor_name->second);
    if (flavor == model.flavor_index.end()) return;
    auto fr = model.fr_ids.find({flavor->second, resource});
    if (fr != model.fr_ids.end() && quota.Defined(cq, fr->second)) {
      demand.emplace_back(fr->second, amount);
    }
  };
  static const std::string kPods(kResourcePods);
  bool count_pods = model.cqs[cq].resource_index.contains(kResourcePods) &&
                    !w.per_pod.contains(kPods);
  for (const auto& [resource, amount] : w.per_pod) {
    if (count_pods && kPods < resource) {
      charge(kPods, 1);
      count_pods = false;
    }
    charge(resource, amount);
  }
  if (count_pods) charge(kPods, 1);
  return demand;
}

}  // namespace phalanx::admission
