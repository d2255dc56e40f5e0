#include "operator/server/status_overlay.h"

#include <utility>

namespace phalanx::operator_server {

void StatusOverlay::Record(const std::string& key, const std::string& uid, Written written) {
  in_flight_[key] = {.uid = uid, .written = std::move(written)};
}

void StatusOverlay::Apply(const std::string& key, kube::TrainingJob& job) {
  auto it = in_flight_.find(key);
  if (it == in_flight_.end()) return;
  if (it->second.uid != job.meta.uid) {  // written to an earlier object of this name
    in_flight_.erase(it);
    return;
  }
  const Written& w = it->second.written;
  const kube::TrainingJobStatus& s = job.status;
  const bool shown = w.admission.has_value() == s.admission.has_value() &&
                     (!w.admission || w.admission->replicas == s.admission->replicas) &&
                     (!w.placement || (s.placement && w.placement->nodes == s.placement->nodes)) &&
                     (!w.requeue_state || w.requeue_state == s.requeue_state);
  if (shown) {
    in_flight_.erase(it);
    return;
  }
  job.status.admission = w.admission;
  job.status.placement = w.placement;
  if (w.requeue_state) job.status.requeue_state = w.requeue_state;
}

}  // namespace phalanx::operator_server
