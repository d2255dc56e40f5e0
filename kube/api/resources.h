// The kube::Resource of Phalanx's other custom resources (crds/) and of the built-in kinds the
// operator and the CLI read. TrainingJobs() is in kube/api/training_job.h.
//
// Phalanx's queue kinds are named so they never collide with Kueue's (kueue.x-k8s.io) in kubectl:
// ClusterTrainingQueue (ctq), TrainingQueue (tq), NodeFlavor (nf), NetworkTopology (ntopo).
#pragma once

#include "kube/resource.h"

namespace kube {

const Resource& ClusterTrainingQueues();  // phalanx.dev/v1alpha1, cluster-scoped
const Resource& TrainingQueues();         // phalanx.dev/v1alpha1, namespaced
const Resource& NodeFlavors();            // phalanx.dev/v1alpha1, cluster-scoped
const Resource& NetworkTopologies();      // phalanx.dev/v1alpha1, cluster-scoped
const Resource& PriorityClasses();        // scheduling.k8s.io/v1, cluster-scoped
const Resource& ResourceQuotas();         // v1, namespaced
const Resource& LimitRanges();            // v1, namespaced
const Resource& Services();               // v1, namespaced
const Resource& EndpointSlices();         // discovery.k8s.io/v1, namespaced

}  // namespace kube
