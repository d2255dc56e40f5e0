// Which kind of object a call is about (group, version, plural resource, scope) and the REST
// paths the API server serves it at.
//
//   kube::Resource jobs{.group = "phalanx.dev", .version = "v1alpha1", .plural = "trainingjobs"};
//   kube::ObjectPath(jobs, "ml", "llama-70b", "status")
//       // "/apis/phalanx.dev/v1alpha1/namespaces/ml/trainingjobs/llama-70b/status"
//   kube::CollectionPath(kube::Nodes(), "")   // "/api/v1/nodes"
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube {

struct Resource {
  std::string group;  // "" for the core group
  std::string version = "v1";
  std::string plural;
  bool namespaced = true;
  std::string kind;  // for building objects and events; optional

  // "v1" or "phalanx.dev/v1alpha1", as written in an object's apiVersion.
  std::string ApiVersion() const;
};

// Well-known resources.
const Resource& Pods();
const Resource& Nodes();
const Resource& ConfigMaps();
const Resource& Events();
const Resource& Namespaces();
const Resource& Leases();
const Resource& CustomResourceDefinitions();

// "/api/v1" for the core group, "/apis/<group>/<version>" otherwise.
std::string ApiPrefix(const Resource& resource);
// The collection: ".../namespaces/<ns>/<plural>", or ".../<plural>" when `ns` is empty (all
// namespaces, or a cluster-scoped resource).
std::string CollectionPath(const Resource& resource, std::string_view ns);
// One object, optionally a subresource of it ("status", "binding", "scale").
std::string ObjectPath(const Resource& resource, std::string_view ns, std::string_view name,
                       std::string_view subresource = "");

// Percent-encodes a query value (label selectors contain '=', ',', '!', ' ').
std::string EscapeQueryValue(std::string_view value);
// Appends "?k=v&k2=v2" (values escaped; pairs with an empty value are left out).
std::string WithQuery(std::string path,
                      const std::vector<std::pair<std::string_view, std::string>>& query);

}  // namespace kube
