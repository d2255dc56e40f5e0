#include "kube/api/resources.h"

namespace kube {
namespace {

const Resource& Phalanx(const char* plural, bool namespaced, const char* kind) {
  // Leaked on purpose: resources are referenced until exit.
  return *new Resource{.group = "phalanx.dev",
                       .version = "v1alpha1",
                       .plural = plural,
                       .namespaced = namespaced,
                       .kind = kind};
}

}  // namespace

const Resource& ClusterTrainingQueues() {
  static const Resource& r = Phalanx("clustertrainingqueues", false, "ClusterTrainingQueue");
  return r;
}
const Resource& TrainingQueues() {
  static const Resource& r = Phalanx("trainingqueues", true, "TrainingQueue");
  return r;
}
const Resource& NodeFlavors() {
  static const Resource& r = Phalanx("nodeflavors", false, "NodeFlavor");
  return r;
}
const Resource& NetworkTopologies() {
  static const Resource& r = Phalanx("networktopologies", false, "NetworkTopology");
  return r;
}
const Resource& PriorityClasses() {
  static const Resource* const r = new Resource{.group = "scheduling.k8s.io",
                                                .version = "v1",
                                                .plural = "priorityclasses",
                                                .namespaced = false,
                                                .kind = "PriorityClass"};
  return *r;
}
const Resource& ResourceQuotas() {
  static const Resource* const r = new Resource{
      .group = "", .version = "v1", .plural = "resourcequotas", .kind = "ResourceQuota"};
  return *r;
}
const Resource& LimitRanges() {
  static const Resource* const r =
      new Resource{.group = "", .version = "v1", .plural = "limitranges", .kind = "LimitRange"};
  return *r;
}
const Resource& Services() {
  static const Resource* const r =
      new Resource{.group = "", .version = "v1", .plural = "services", .kind = "Service"};
  return *r;
}
const Resource& EndpointSlices() {
  static const Resource* const r = new Resource{.group = "discovery.k8s.io",
                                                .version = "v1",
                                                .plural = "endpointslices",
                                                .kind = "EndpointSlice"};
  return *r;
}

}  // namespace kube
