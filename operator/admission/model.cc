#include "operator/admission/model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "operator/admission/matching.h"

namespace phalanx::admission {
namespace {

class Compiler {
 public:
  explicit Compiler(const Snapshot& snapshot) : snapshot_(snapshot) {}

  Model Run() {
    CompileFlavors();
    std::map<std::string, std::string> bad_cohorts = CheckCohorts();
    for (const ClusterQueue& cq : snapshot_.cluster_queues) CompileClusterQueue(cq, bad_cohorts);
    CompileLocalQueues();
    for (const Namespace& ns : snapshot_.namespaces) model_.namespaces[ns.name] = &ns;
    return std::move(model_);
  }

 private:
  void Error(std::string kind, std::string name, std::string message) {
    model_.errors.push_back({std::move(kind), std::move(name), std::move(message)});
  }

  void CompileFlavors() {
    for (const ResourceFlavor& flavor : snapshot_.flavors) {
      if (flavor.name.empty()) {
        Error("NodeFlavor", "", "metadata.name: empty");
        continue;
      }
      if (!model_.flavor_index.emplace(flavor.name, model_.flavors.size()).second) {
        Error("NodeFlavor", flavor.name, "duplicate name; the first definition is used");
        continue;
      }
      model_.flavors.push_back(&flavor);
    }
  }

  // Cohort objects may only name a flat group here. A parent is reported (as a cycle when the
  // parent chain loops), and the ClusterQueues of that cohort are made inactive rather than
  // silently flattened, because their owner expects sharing we do not provide.
  std::map<std::string, std::string> CheckCohorts() {
    std::map<std::string, const Cohort*> by_name;
    for (const Cohort& cohort : snapshot_.cohorts) by_name.emplace(cohort.name, &cohort);
    std::map<std::string, std::string> bad;
    for (const Cohort& cohort : snapshot_.cohorts) {
      if (cohort.parent.empty()) continue;
      std::vector<std::string> chain = {cohort.name};
      std::set<std::string> seen = {cohort.name};
      std::string next = cohort.parent;
      bool cycle = false;
      while (!next.empty()) {
        chain.push_back(next);
        if (!seen.insert(next).second) {
          cycle = true;
          break;
        }
        auto it = by_name.find(next);
        next = it == by_name.end() ? "" : it->second->parent;
      }
      std::string message =
          cycle ? absl::StrCat("spec.parentName: the parent chain ", absl::StrJoin(chain, " -> "),
                               " is a cycle")
                : absl::StrCat("spec.parentName: nested cohorts are not supported (parent \"",
                               cohort.parent,
                               "\"); cohorts are flat groups of ClusterTrainingQueues");
      Error("Cohort", cohort.name, message);
      bad.emplace(cohort.name, message);
    }
    return bad;
  }

  int CohortIndex(const std::string& name) {
    for (size_t i = 0; i < model_.cohorts.size(); ++i) {
      if (model_.cohorts[i] == name) return static_cast<int>(i);
    }
    model_.cohorts.push_back(name);
    model_.cohort_members.emplace_back();
    return static_cast<int>(model_.cohorts.size() - 1);
  }

  FrId Intern(int flavor, const std::string& resource) {
    auto key = std::make_pair(flavor, resource);
    auto [it, inserted] = model_.fr_ids.emplace(key, static_cast<FrId>(model_.frs.size()));
    if (inserted) model_.frs.push_back(key);
    return it->second;
  }

  // The first problem with the ClusterQueue's spec, or "".
  std::string CheckClusterQueue(const ClusterQueue& cq) {
    if (!cq.namespace_selector.has_value()) {
      // Kueue's null selector: valid, admits from no namespace (reported per workload).
    } else if (absl::Status s = ValidateSelector(*cq.namespace_selector, "spec.namespaceSelector");
               !s.ok()) {
      return std::string(s.message());
    }
    if (!std::isfinite(cq.fair_sharing_weight) || cq.fair_sharing_weight < 0) {
      return absl::StrCat("spec.fairSharing.weight: must be a non-negative number, got ",
                          cq.fair_sharing_weight);
    }
    std::set<std::string> resources_seen;
    std::set<std::string> flavors_seen;
    for (size_t g = 0; g < cq.resource_groups.size(); ++g) {
      const ResourceGroup& group = cq.resource_groups[g];
      std::string gpath = absl::StrCat("spec.resourceGroups[", g, "]");
      if (group.covered_resources.empty()) return gpath + ".coveredResources: empty";
      for (const std::string& r : group.covered_resources) {
        if (!resources_seen.insert(r).second) {
          return absl::StrCat(gpath, ".coveredResources: ", r, " is covered by another group");
        }
      }
      for (size_t f = 0; f < group.flavors.size(); ++f) {
        const FlavorQuotas& fq = group.flavors[f];
        std::string fpath = absl::StrCat(gpath, ".flavors[", f, "]");
        if (!model_.flavor_index.contains(fq.flavor)) {
          return absl::StrCat(fpath, ".name: references NodeFlavor \"", fq.flavor,
                              "\", which does not exist");
        }
        if (!flavors_seen.insert(fq.flavor).second) {
          return absl::StrCat(fpath, ".name: flavor ", fq.flavor, " is listed twice");
        }
        std::set<std::string> quota_resources;
        for (size_t r = 0; r < fq.resources.size(); ++r) {
          const ResourceQuota& q = fq.resources[r];
          std::string rpath = absl::StrCat(fpath, ".resources[", r, "]");
          if (!quota_resources.insert(q.resource).second) {
            return absl::StrCat(rpath, ".name: ", q.resource, " is listed twice");
          }
          if (std::find(group.covered_resources.begin(), group.covered_resources.end(),
                        q.resource) == group.covered_resources.end()) {
            return absl::StrCat(rpath, ".name: ", q.resource, " is not in coveredResources");
          }
          if (q.nominal < 0) {
            return absl::StrCat(rpath, ".nominalQuota: must not be negative, got ", q.nominal);
          }
          if (q.borrowing_limit.has_value()) {
            if (*q.borrowing_limit < 0) {
              return absl::StrCat(rpath, ".borrowingLimit: must not be negative, got ",
                                  *q.borrowing_limit);
            }
            if (cq.cohort.empty()) return rpath + ".borrowingLimit: must be unset without a cohort";
          }
          if (q.lending_limit.has_value()) {
            if (*q.lending_limit < 0) {
              return absl::StrCat(rpath, ".lendingLimit: must not be negative, got ",
                                  *q.lending_limit);
            }
            if (*q.lending_limit > q.nominal) {
              return absl::StrCat(rpath, ".lendingLimit: ", *q.lending_limit,
                                  " exceeds nominalQuota ", q.nominal);
            }
            if (cq.cohort.empty()) return rpath + ".lendingLimit: must be unset without a cohort";
          }
        }
        if (quota_resources.size() != group.covered_resources.size()) {
          return absl::StrCat(fpath, ".resources: must list every covered resource (",
                              absl::StrJoin(group.covered_resources, ", "), ")");
        }
      }
    }
    return "";
  }

  void CompileClusterQueue(const ClusterQueue& cq,
                           const std::map<std::string, std::string>& bad_cohorts) {
    if (cq.name.empty()) {
      Error("ClusterTrainingQueue", "", "metadata.name: empty");
      return;
    }
    if (model_.cq_index.contains(cq.name)) {
      Error("ClusterTrainingQueue", cq.name, "duplicate name; the first definition is used");
      return;
    }
    int index = static_cast<int>(model_.cqs.size());
    model_.cq_index.emplace(cq.name, index);
    CompiledClusterQueue& out = model_.cqs.emplace_back();
    out.spec = &cq;
    if (std::string problem = CheckClusterQueue(cq); !problem.empty()) {
      Error("ClusterTrainingQueue", cq.name, problem);
      out.inactive = absl::StrCat("ClusterTrainingQueue ", cq.name, " is inactive: ", problem);
      return;
    }
    if (auto it = bad_cohorts.find(cq.cohort); !cq.cohort.empty() && it != bad_cohorts.end()) {
      out.inactive = absl::StrCat("ClusterTrainingQueue ", cq.name, " is inactive: its cohort ",
                                  cq.cohort, " is invalid (", it->second, ")");
      return;
    }
    if (cq.terminating) {
      out.held = absl::StrCat("ClusterTrainingQueue ", cq.name,
                              " is being deleted: it admits nothing new and goes once its "
                              "admitted jobs have finished");
    } else if (cq.stop_policy != StopPolicy::kNone) {
      out.held = absl::StrCat("ClusterTrainingQueue ", cq.name, " is stopped (stopPolicy ",
                              ToString(cq.stop_policy), ")");
    }
    for (size_t g = 0; g < cq.resource_groups.size(); ++g) {
      const ResourceGroup& group = cq.resource_groups[g];
      CompiledGroup& cg = out.groups.emplace_back();
      cg.resources = group.covered_resources;
      for (size_t r = 0; r < cg.resources.size(); ++r) {
        out.resource_index[cg.resources[r]] = {static_cast<int>(g), static_cast<int>(r)};
      }
      for (const FlavorQuotas& fq : group.flavors) {
        int flavor = model_.flavor_index.at(fq.flavor);
        cg.flavors.push_back(flavor);
        std::vector<FrId>& ids = cg.fr.emplace_back();
        for (const std::string& resource : cg.resources) ids.push_back(Intern(flavor, resource));
      }
    }
    if (!cq.cohort.empty()) {
      out.cohort = CohortIndex(cq.cohort);
      model_.cohort_members[out.cohort].push_back(index);
    }
  }

  void CompileLocalQueues() {
    for (const LocalQueue& lq : snapshot_.local_queues) {
      std::string name = absl::StrCat(lq.namespace_name, "/", lq.name);
      auto key = std::make_pair(lq.namespace_name, lq.name);
      if (model_.local_queues.contains(key)) {
        Error("TrainingQueue", name, "duplicate name; the first definition is used");
        continue;
      }
      if (lq.stop_policy != StopPolicy::kNone) {
        model_.local_queue_stops.emplace(
            key, LocalQueueStop{lq.stop_policy,
                                absl::StrCat("TrainingQueue ", name, " is stopped (stopPolicy ",
                                             ToString(lq.stop_policy), ")")});
      }
      auto it = model_.cq_index.find(lq.cluster_queue);
      if (it == model_.cq_index.end()) {
        Error("TrainingQueue", name,
              absl::StrCat("spec.clusterQueue: ClusterTrainingQueue \"", lq.cluster_queue,
                           "\" does not exist"));
        model_.local_queues.emplace(key, -1);
        model_.missing_cluster_queues.emplace(key, lq.cluster_queue);
        continue;
      }
      model_.local_queues.emplace(key, it->second);
    }
  }

  const Snapshot& snapshot_;
  Model model_;
};

}  // namespace

const char* ToString(StopPolicy policy) {
  switch (policy) {
    case StopPolicy::kNone: return "None";
    case StopPolicy::kHold: return "Hold";
    case StopPolicy::kHoldAndDrain: return "HoldAndDrain";
  }
  return "None";
}

Model CompileModel(const Snapshot& snapshot) { return Compiler(snapshot).Run(); }

}  // namespace phalanx::admission
