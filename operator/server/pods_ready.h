// Kueue's waitForPodsReady for TrainingJobs: what the admission controller says when an
// admitted gang has not had every rank running in time (docs/operator.md "Pods ready").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kube/api/training_job.h"
#include "kube/objects.h"

namespace phalanx::operator_server {

// Which ranks of `job`'s admitted gang are not running, in words: "2 of 4 ranks not running:
// rank 1 (pod j-1) Pending, not bound to a node (unschedulable); rank 3 has no pod" (": the
// previous pod j-3 is still terminating on node n" when that is why). Names at
// most `max_named` ranks ("and 5 more"). A rank counts as running when its pod of the current
// restart is Running or Succeeded.
// `create_failure`: the last pod create the API server refused for the job, said after the
// ranks when one of them has no pod ("; the last pod create was refused: ...").
std::string DescribeNotRunning(const kube::TrainingJob& job,
                               const std::vector<std::shared_ptr<const kube::Pod>>& pods,
                               int max_named = 2,
                               const std::optional<std::string>& create_failure = std::nullopt);

// The ranks of `job`'s admitted gang that count as running: a pod of the current restart, not
// being deleted, Running or Succeeded.
std::set<int32_t> RunningRanks(const kube::TrainingJob& job,
                               const std::vector<std::shared_ptr<const kube::Pod>>& pods);

}  // namespace phalanx::operator_server
