#include "operator/server/job_events.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "operator/server/node_faults.h"

namespace phalanx::operator_server {
namespace {

// absl::StrCat takes absl::string_view, which is not std::string_view in Debian's Abseil.
std::string Where(std::string_view where) {
  return where.empty() ? "anywhere in the cluster" : absl::StrCat("in ", std::string(where));
}

}  // namespace

std::string AdmittedMessage(const Admitted& a) {
  std::string message =
      absl::StrCat("admitted to ClusterTrainingQueue ", a.cluster_queue,
                   a.flavor.empty() ? "" : absl::StrCat(" in flavor ", a.flavor), " with ", a.pods,
                   a.pods == 1 ? " pod" : " pods",
                   // Requests nothing the queue's quota covers (no GPUs, say): admitted with no
                   // flavor, as Kueue admits such a workload; kube-scheduler places its pods.
                   a.flavor.empty() ? " and no flavor (they request nothing its quota covers)" : "",
                   "; placed ", Where(a.where), a.borrowing ? " (borrowing cohort quota)" : "");
  if (!a.preempted.empty()) absl::StrAppend(&message, "; preempted ", absl::StrJoin(a.preempted, ", "));
  return message;
}

std::string GrownMessage(int32_t from, int32_t to, std::string_view where) {
  return absl::StrCat("grown from ", from, " to ", to, " pods ", Where(where),
                      " with capacity nobody was waiting for");
}

std::vector<Condition> ResizedAdmission(const Admitted& now, int32_t from) {
  const std::string message =
      absl::StrCat(AdmittedMessage(now), "; ", now.pods > from ? "grown" : "shrunk", " from ", from,
                   from == 1 ? " pod" : " pods");
  return {{.type = std::string(kConditionQueued),
           .status = "False",
           .reason = std::string(kReasonAdmitted),
           .message = message},
          {.type = std::string(kConditionAdmitted),
           .status = "True",
           .reason = std::string(kReasonAdmitted),
           .message = message}};
}

std::vector<Condition> ShrunkUpdates(const Admitted& now, int32_t from, std::string_view reason,
                                     const std::string& message) {
  std::vector<Condition> updates = {{.type = std::string(kConditionShrunk),
                                     .status = "True",
                                     .reason = std::string(reason),
                                     .message = message}};
  for (Condition& c : ResizedAdmission(now, from)) updates.push_back(std::move(c));
  return updates;
}

std::vector<Condition> EvictedUpdates(std::string_view reason, const std::string& message) {
  std::vector<Condition> updates;
  for (std::string_view type : {kConditionQueued, kConditionEvicted, kConditionAdmitted}) {
    updates.push_back({.type = std::string(type),
                       .status = type == kConditionAdmitted ? "False" : "True",
                       .reason = std::string(reason),
                       .message = message});
  }
  return updates;
}

std::string PlacedIn(const std::optional<kube::TrainingJobPlacement>& placement) {
  if (!placement || placement->level.empty()) return "";
  return absl::StrCat(placement->level, "=", placement->domain);
}

bool QueuedEventDue(const Condition* current_queued, std::string_view status,
                    std::string_view reason) {
  return current_queued == nullptr || current_queued->status != status ||
         current_queued->reason != reason;
}

std::string FailedRequestMessage(std::string_view verb, std::string_view kind,
                                 std::string_view namespace_name, std::string_view name,
                                 const absl::Status& status) {
  return absl::StrCat(std::string(verb), " ", std::string(kind), " ", std::string(namespace_name),
                      "/", std::string(name), ": ", status.message());
}

}  // namespace phalanx::operator_server
