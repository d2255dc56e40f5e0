#include "operator/server/pods_ready.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "operator/controller/pod_builder.h"
#include "operator/server/node_faults.h"

namespace phalanx::operator_server {

namespace {

int32_t World(const kube::TrainingJob& job) {
  return job.status.admission ? job.status.admission->replicas : job.replicas;
}

// The live pod of each rank of the current restart; with `terminating`, the pods being deleted
// by the rank name they hold (`<job>-<rank>`): a new pod of the rank is created only once the
// name is free, so one stuck terminating is why the rank has none.
std::map<int, const kube::Pod*> RankPods(
    const kube::TrainingJob& job, const std::vector<std::shared_ptr<const kube::Pod>>& pods,
    std::map<std::string, const kube::Pod*>* terminating = nullptr) {
  const int32_t world = World(job);
  std::map<int, const kube::Pod*> ranks;
  for (const auto& pod : pods) {
    if (!pod->meta.deletion_timestamp.empty()) {
      if (terminating != nullptr) (*terminating)[pod->meta.name] = pod.get();
      continue;
    }
    const int rank = GangRank(*pod, job.meta.uid, job.status.restarts);
    if (rank >= 0 && rank < world) ranks[rank] = pod.get();
  }
  return ranks;
}

bool Runs(const kube::Pod* pod) {
  return pod != nullptr && (pod->phase == "Running" || pod->phase == "Succeeded");
}

}  // namespace

std::set<int32_t> RunningRanks(const kube::TrainingJob& job,
                               const std::vector<std::shared_ptr<const kube::Pod>>& pods) {
  std::set<int32_t> out;
  for (const auto& [rank, pod] : RankPods(job, pods)) {
    if (Runs(pod)) out.insert(rank);
  }
  return out;
}

std::string DescribeNotRunning(const kube::TrainingJob& job,
                               const std::vector<std::shared_ptr<const kube::Pod>>& pods,
                               int max_named,
                               const std::optional<std::string>& create_failure) {
  const int32_t world = World(job);
  std::map<std::string, const kube::Pod*> terminating;
  const std::map<int, const kube::Pod*> ranks = RankPods(job, pods, &terminating);
  std::vector<std::string> named;
  int not_running = 0;
  bool podless = false;
  for (int rank = 0; rank < world; ++rank) {
    auto it = ranks.find(rank);
    const kube::Pod* pod = it == ranks.end() ? nullptr : it->second;
    if (Runs(pod)) continue;
    ++not_running;
    podless |= pod == nullptr;
    if (static_cast<int>(named.size()) >= max_named) continue;
    if (pod == nullptr) {
      auto old = terminating.find(controller::RankPodName(job.meta.name, rank));
      if (old == terminating.end()) {
        named.push_back(absl::StrCat("rank ", rank, " has no pod"));
      } else {
        named.push_back(absl::StrCat(
            "rank ", rank, " has no pod: the previous pod ", old->first,
            " is still terminating", old->second->node_name.empty() ? "" : " on node ",
            old->second->node_name.str()));
      }
      continue;
    }
    std::string text = absl::StrCat("rank ", rank, " (pod ", pod->meta.name, ") ",
                                    pod->phase.empty() ? std::string("Pending") : pod->phase.str());
    if (pod->node_name.empty()) {
      absl::StrAppend(&text, ", not bound to a node");
      if (pod->unschedulable) {
        // kube-scheduler's reason, cut where it runs long (its preemption advice, mostly).
        constexpr size_t kMaxReason = 240;
        std::string why = pod->unschedulable_message;
        if (why.size() > kMaxReason) why = why.substr(0, kMaxReason) + "...";
        absl::StrAppend(&text, " (unschedulable", why.empty() ? "" : ": ", why, ")");
      }
    } else {
      absl::StrAppend(&text, " on node ", pod->node_name.str());
    }
    if (!pod->status_reason.empty()) absl::StrAppend(&text, ": ", pod->status_reason.str());
    named.push_back(std::move(text));
  }
  std::string out = absl::StrCat(not_running, " of ", world, " rank", world == 1 ? "" : "s",
                                 " not running");
  if (!named.empty()) absl::StrAppend(&out, ": ", absl::StrJoin(named, "; "));
  if (not_running > static_cast<int>(named.size())) {
    absl::StrAppend(&out, " and ", not_running - static_cast<int>(named.size()), " more");
  }
  if (podless && create_failure) {
    absl::StrAppend(&out, "; the last pod create was refused: ", *create_failure);
  }
  return out;
}

}  // namespace phalanx::operator_server
