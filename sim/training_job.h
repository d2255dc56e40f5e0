// Reads a TrainingJob manifest (apiVersion phalanx.dev/v1alpha1) into the placement core's
// GangRequest, for `phalanx plan`'s dry run. Only the fields placement looks at are read:
// spec.replicas, spec.elastic, spec.topology, spec.priority, and from spec.template.spec the
// nodeSelector, tolerations and the containers' resource requests (limits stand in for missing
// requests, as Kubernetes defaults them).
//
//   ASSIGN_OR_RETURN(PlannedJob job, LoadTrainingJob("job.yaml"));
//   service.Place(job.request);
//
// Bad input is InvalidArgument naming the file, line and field.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "scheduler/placement_types.h"

namespace phalanx::sim {

struct PlannedJob {
  std::string name;
  std::string namespace_name;
  std::string queue_name;
  placement::GangRequest request;
};

absl::StatusOr<PlannedJob> LoadTrainingJob(const std::string& path);
// The first TrainingJob document of a (possibly multi-document) YAML text.
absl::StatusOr<PlannedJob> ParseTrainingJob(const std::string& text, const std::string& source);

}  // namespace phalanx::sim
