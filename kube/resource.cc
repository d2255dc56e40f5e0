#include "kube/resource.h"

#include "kube/internal/strings.h"

namespace kube {

std::string Resource::ApiVersion() const {
  return group.empty() ? version : internal::Cat(group, "/", version);
}

#define PHALANX_KUBE_RESOURCE(fn, ...)                    \
  const Resource& fn() {                                  \
    static const Resource* r = new Resource{__VA_ARGS__}; \
    return *r;                                            \
  }
PHALANX_KUBE_RESOURCE(Pods, "", "v1", "pods", true, "Pod")
PHALANX_KUBE_RESOURCE(Nodes, "", "v1", "nodes", false, "Node")
PHALANX_KUBE_RESOURCE(ConfigMaps, "", "v1", "configmaps", true, "ConfigMap")
PHALANX_KUBE_RESOURCE(Events, "", "v1", "events", true, "Event")
PHALANX_KUBE_RESOURCE(Namespaces, "", "v1", "namespaces", false, "Namespace")
PHALANX_KUBE_RESOURCE(Leases, "coordination.k8s.io", "v1", "leases", true, "Lease")
PHALANX_KUBE_RESOURCE(CustomResourceDefinitions, "apiextensions.k8s.io", "v1",
                      "customresourcedefinitions", false, "CustomResourceDefinition")
#undef PHALANX_KUBE_RESOURCE

std::string ApiPrefix(const Resource& resource) {
  if (resource.group.empty()) return internal::Cat("/api/", resource.version);
  return internal::Cat("/apis/", resource.group, "/", resource.version);
}

std::string CollectionPath(const Resource& resource, std::string_view ns) {
  if (!resource.namespaced || ns.empty()) {
    return internal::Cat(ApiPrefix(resource), "/", resource.plural);
  }
  return internal::Cat(ApiPrefix(resource), "/namespaces/", ns, "/", resource.plural);
}

std::string ObjectPath(const Resource& resource, std::string_view ns, std::string_view name,
                       std::string_view subresource) {
  std::string path = internal::Cat(CollectionPath(resource, ns), "/", name);
  if (!subresource.empty()) internal::Append(&path, "/", subresource);
  return path;
}

std::string EscapeQueryValue(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string WithQuery(std::string path,
                      const std::vector<std::pair<std::string_view, std::string>>& query) {
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [key, value] : query) {
    if (value.empty()) continue;
    path.push_back(sep);
    internal::Append(&path, key, "=", EscapeQueryValue(value));
    sep = '&';
  }
  return path;
}

}  // namespace kube
