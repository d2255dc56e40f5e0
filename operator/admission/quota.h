// Quota accounting with Kueue's borrowing and lending semantics, per (flavor, resource).
//
// For a ClusterQueue with nominal quota N, lending limit L (unset: L = N), borrowing limit B
// (unset: unlimited) and usage U in a cohort:
//   guaranteed G = N - L               (never lent; only this queue may use it)
//   cohort pool  = sum over members of L, minus sum over members of max(0, U - G)
//   available    = max(0, G - U) + min(pool, (N - G) - max(0, U - G) + B)
// Without a cohort, available = N - U. This is Kueue's `available` for a one-level cohort, so
// Kueue's documented examples hold (team-a 9 + borrowingLimit 1 -> 10; team-b lendingLimit 1
// -> team-a may use 9 + 1).
//
//   QuotaTree quota(model);
//   quota.AddUsage(cq, fr, 8);
//   if (quota.Available(cq, fr) >= 64) ...
//   double share = quota.Share(cq, demand, +1);   // dominant resource share with the demand
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"

#include "operator/admission/model.h"

namespace phalanx::admission {

// (flavor, resource) -> amount for one workload in one flavor assignment. Usually one or two
// entries (GPUs, maybe pods), kept inline: a cycle builds and copies thousands of these.
using Demand = absl::InlinedVector<std::pair<FrId, int64_t>, 2>;

// `demand` with every amount multiplied by `factor`.
Demand Scale(const Demand& demand, int64_t factor);

class QuotaTree {
 public:
  explicit QuotaTree(const Model& model);

  bool Defined(int cq, FrId fr) const { return Cell(cq, fr).defined; }
  int64_t Usage(int cq, FrId fr) const { return Cell(cq, fr).usage; }
  int64_t Nominal(int cq, FrId fr) const { return Cell(cq, fr).nominal; }

  // How much more of `fr` the ClusterQueue may use now (0 if it has no quota for it).
  int64_t Available(int cq, FrId fr) const;
  // True if every entry of `demand` is within Available.
  bool Fits(int cq, const Demand& demand) const;
  // True if usage + demand stays within nominal quota for every entry.
  bool FitsNominal(int cq, const Demand& demand) const;

  // Adds `sign` * demand to the queue's usage (sign = -1 removes it).
  void Add(int cq, const Demand& demand, int sign);

  // True if the queue uses more than its nominal quota of `fr`.
  bool Borrowing(int cq, FrId fr) const;
  // True if it borrows any of the flavor-resources in `demand`.
  bool BorrowingAny(int cq, const Demand& demand) const;

  // Kueue's weighted dominant resource share of the queue with `sign` * demand added: the
  // largest ratio, over resources, of usage above nominal to the cohort's lendable amount,
  // divided by the fair-sharing weight. 0 when not borrowing or without a cohort; +infinity
  // for weight 0 while borrowing.
  double Share(int cq, const Demand& demand, int sign) const;

  // The most of `fr` the queue could hold with nothing else running: its nominal quota
  // without a cohort; in one, its guaranteed part plus everything the cohort can lend (its
  // own lendable part included), capped by its borrowing limit. 0 when it has no quota there.
  int64_t Maximum(int cq, FrId fr) const;

  // "flavor h100: needs 64 nvidia.com/gpu, 16 available (nominal 64, 48 in use, cohort
  // research has 0 unused)", for pending messages; when `need` exceeds Maximum, says that it
  // never fits instead: "flavor h100: needs 800 nvidia.com/gpu, more than the queue can ever
  // use (512: nominal 128 + 384 the cohort research can lend)".
  std::string Describe(int cq, FrId fr, int64_t need) const;

 private:
  struct QuotaCell {
    bool defined = false;
    int64_t nominal = 0;
    int64_t guaranteed = 0;
    std::optional<int64_t> borrowing_limit;
    int64_t usage = 0;
  };
  struct PoolCell {
    int64_t lendable = 0;  // sum of members' lending limits (or nominal)
    int64_t used = 0;      // sum of members' max(0, usage - guaranteed)
  };

  const QuotaCell& Cell(int cq, FrId fr) const { return cells_[cq * num_fr_ + fr]; }
  QuotaCell& MutableCell(int cq, FrId fr) { return cells_[cq * num_fr_ + fr]; }
  int64_t PoolFree(int cohort, FrId fr) const;

  const Model& model_;
  int num_fr_;
  std::vector<QuotaCell> cells_;  // [cq * num_fr_ + fr]
  std::vector<PoolCell> pools_;   // [cohort * num_fr_ + fr]
};

// What an admitted workload charges ClusterQueue `cq` per pod: each resource of its per_pod in
// the flavor its admission names, where the queue has quota for that pair, plus one `pods` per
// pod when the queue covers pods and the workload names no amount of its own (Kueue counts pods
// itself), in resource-name order as the request map with `pods` would be. Empty when `w` is not
// admitted or `cq` is inactive. The admission cycle charges running workloads with it; the
// operator's queue statuses report the same usage.
Demand AdmittedDemand(const Model& model, const QuotaTree& quota, int cq, const Workload& w);

}  // namespace phalanx::admission
