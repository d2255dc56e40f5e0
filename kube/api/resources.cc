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

const Resource& ClusterQueues() {
  static const Resource& r = Phalanx("clusterqueues", false, "ClusterQueue");
  return r;
}
const Resource& LocalQueues() {
  static const Resource& r = Phalanx("localqueues", true, "LocalQueue");
  return r;
}
const Resource& ResourceFlavors() {
  static const Resource& r = Phalanx("resourceflavors", false, "ResourceFlavor");
  return r;
}
const Resource& Topologies() {
  static const Resource& r = Phalanx("topologies", false, "Topology");
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
const Resource& Services() {
  static const Resource* const r =
      new Resource{.group = "", .version = "v1", .plural = "services", .kind = "Service"};
  return *r;
}

}  // namespace kube
