// Reads a TrainingJob manifest (apiVersion phalanx.dev/v1alpha1) into the placement core's
// GangRequest, for `phalanx plan`'s dry run. The manifest is first checked as the API server
// would check it, by the CRD's own schema (crds/phalanx.dev_trainingjobs.yaml, embedded at build
// time; sim/crd_schema.h): unknown fields, types, bounds, enums, patterns and the CEL rules (the
// shape rules through ValidateJobShape). Only the fields placement looks at are then read:
// spec.replicas, spec.elastic, spec.topology, spec.priority, and from spec.template.spec the
// nodeSelector, required node affinity, tolerations and the containers' resource requests
// (limits stand in for missing requests, as Kubernetes defaults them).
//
//   ASSIGN_OR_RETURN(PlannedJob job, LoadTrainingJob("job.yaml"));
//   service.Place(job.request);
//
// Bad input is InvalidArgument naming the file, line and field, one line per error.
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
