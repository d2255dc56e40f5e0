// Reads a TrainingJob manifest (apiVersion phalanx.dev/v1alpha1) into the placement core's
// GangRequest, for `phalanx plan`'s dry run. The manifest is first checked as the API server
// would check it, by the CRD's own schema (crds/phalanx.dev_trainingjobs.yaml, embedded at build
// time; sim/crd_schema.h): unknown fields, types, bounds, enums, patterns and the CEL rules (the
// shape rules through ValidateJobShape). Only the fields placement looks at are then read:
// spec.replicas, spec.elastic, spec.topology, spec.priority, and from spec.template.spec the
// nodeSelector, required node affinity, tolerations and the containers' resource requests
// (limits stand in for missing requests, as Kubernetes defaults them).
//
//   ASSIGN_OR_RETURN(std::vector<PlannedJob> jobs, LoadTrainingJobs("job.yaml"));
//   service.Place(jobs[0].request);
//
// Bad input is InvalidArgument naming the file, line and field, one line per error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/placement_types.h"

namespace phalanx::sim {

struct PlannedJob {
  std::string source;  // the manifest as messages name it: its path, or <stdin>
  std::string name;
  std::string namespace_name;
  std::string queue_name;
  placement::GangRequest request;
  // Where each topology level the job names was written ("spec.topology.groupLevel" ->
  // "job.yaml:12"), so that a level the cluster lacks is reported in the manifest's terms.
  std::map<std::string, std::string> level_origins;
};

// Every TrainingJob document of a (possibly multi-document) YAML text, each checked as the
// API server would (kubectl apply sends them all): the first bad one is the error. The items
// of a `kind: List` (apiVersion v1) count as documents, as kubectl unpacks them. Other kinds
// are skipped; none at all is bad input. The path "-" is standard input (kubectl's `-f -`),
// named kStandardInputName ("<stdin>") in messages.
absl::StatusOr<std::vector<PlannedJob>> LoadTrainingJobs(const std::string& path);
absl::StatusOr<std::vector<PlannedJob>> ParseTrainingJobs(const std::string& text,
                                                          const std::string& source);

}  // namespace phalanx::sim
