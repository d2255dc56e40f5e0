// The kube::Resource of Phalanx's other custom resources (crds/) and of the built-in kinds the
// operator and the CLI read. TrainingJobs() is in kube/api/training_job.h.
#pragma once

#include "kube/resource.h"

namespace kube {

const Resource& ClusterQueues();    // phalanx.dev/v1alpha1, cluster-scoped
const Resource& LocalQueues();      // phalanx.dev/v1alpha1, namespaced
const Resource& ResourceFlavors();  // phalanx.dev/v1alpha1, cluster-scoped
const Resource& Topologies();       // phalanx.dev/v1alpha1, cluster-scoped
const Resource& PriorityClasses();  // scheduling.k8s.io/v1, cluster-scoped
const Resource& Services();         // v1, namespaced

}  // namespace kube
