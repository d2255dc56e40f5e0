// The Kubernetes API, generic over resources. Objects go in and come out as JSON text; decode
// what you read with kube/decode.h and build what you write with RapidJSON (kube/json.h).
//
//   kube::RestClient client(transport);
//   ASSIGN_OR_RETURN(std::string cm, client.Get(kube::ConfigMaps(), "ml", "settings"));
//   ASSIGN_OR_RETURN(kube::ListResult pods, client.List(kube::Pods(), "ml", {.label_selector =
//   "job=a"})); RETURN_IF_ERROR(client.Patch(kube::ConfigMaps(), "ml", "settings",
//   kube::PatchType::kMerge,
//                                R"({"data":{"k":"v"}})").status());
//   RETURN_IF_ERROR(client.Bind("ml", "job-a-0", pod_uid, "node-7"));
//
// Errors carry the API server's HTTP code and reason (kube/errors.h): IsConflict, IsGone, ...
// Client is an interface so controllers are unit-tested with MockClient (tests/mocks/kube/).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kube/cancellation.h"
#include "kube/resource.h"
#include "kube/watch_stream.h"

namespace kube {

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  // Page size; each page is one request. 0 asks for everything at once.
  int64_t limit = 500;
  // "" reads the latest state from etcd (consistent); "0" lets the server answer from its watch
  // cache (cheaper, possibly stale, and then `limit` is ignored).
  std::string resource_version;
};

struct ListResult {
  // Each item's JSON text, in server order.
  std::vector<std::string> items;
  // The list's resourceVersion: watch from here to see every later change.
  std::string resource_version;
};

struct WatchOptions {
  std::string resource_version;
  std::string label_selector;
  std::string field_selector;
  // Server-side timeout: the API server ends the watch cleanly after this many seconds.
  int timeout_seconds = 300;
  bool allow_bookmarks = true;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (the one to use for custom resources)
  kJson,            // application/json-patch+json
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in types only)
  kApply,           // application/apply-patch+yaml: server-side apply (JSON is valid YAML)
};

struct WriteOptions {
  // Required for kApply; recorded in managedFields otherwise.
  std::string field_manager;
  // Server-side apply: take ownership of fields other managers own instead of a 409 conflict.
  bool force = false;
  bool dry_run = false;
  // fieldValidation: "Strict" makes an unknown or duplicate field a 400 (IsStrictDecodingError)
  // instead of dropped with a Warning header (the server's default, "Warn"); "" leaves the
  // default.
  std::string field_validation;
};

struct DeleteOptions {
  // "Foreground", "Background" or "Orphan"; "" leaves the server default.
  std::string propagation_policy;
  // Delete only if the object still has this uid / resourceVersion (else 409 Conflict).
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::optional<int64_t> grace_period_seconds;
};

// Called with each watch event; return false to stop watching.
using WatchCallback = std::function<bool(const WatchEvent& event)>;

// Public calls are non-virtual and forward to the protected Do* methods that implementations
// (RestClient, MockClient) override: default arguments stay out of virtual functions.
class Client {
 public:
  virtual ~Client() = default;

  // GET one object (or its subresource, e.g. "status").
  absl::StatusOr<std::string> Get(const Resource& resource, std::string_view ns,
                                  std::string_view name, std::string_view subresource = "") {
    return DoGet(resource, ns, name, subresource);
  }

  // Lists page by page (limit/continue), calling `on_page` with each raw page body
  // ({"metadata":{"resourceVersion","continue"},"items":[...]}). A continue token that expired
  // mid-way is 410 Gone: start over.
  absl::Status ListPages(const Resource& resource, std::string_view ns, const ListOptions& options,
                         const std::function<absl::Status(std::string_view page)>& on_page) {
    return DoListPages(resource, ns, options, on_page);
  }

  // POST a new object to the collection (or to a subresource of `name`, e.g. pods/binding).
  // Returns the created object.
  absl::StatusOr<std::string> Create(const Resource& resource, std::string_view ns,
                                     std::string_view body, const WriteOptions& options = {},
                                     std::string_view name = "",
                                     std::string_view subresource = "") {
    return DoCreate(resource, ns, body, options, name, subresource);
  }

  // PUT a whole object. Its metadata.resourceVersion makes this a compare-and-swap: 409 Conflict
  // if the object changed since it was read.
  absl::StatusOr<std::string> Update(const Resource& resource, std::string_view ns,
                                     std::string_view name, std::string_view body,
                                     const WriteOptions& options = {},
                                     std::string_view subresource = "") {
    return DoUpdate(resource, ns, name, body, options, subresource);
  }

  absl::StatusOr<std::string> Patch(const Resource& resource, std::string_view ns,
                                    std::string_view name, PatchType type, std::string_view body,
                                    const WriteOptions& options = {},
                                    std::string_view subresource = "") {
    return DoPatch(resource, ns, name, type, body, options, subresource);
  }

  absl::Status Delete(const Resource& resource, std::string_view ns, std::string_view name,
                      const DeleteOptions& options = {}) {
    return DoDelete(resource, ns, name, options);
  }

  // One watch request: streams events to `on_event` until the server ends it (timeoutSeconds),
  // `on_event` returns false, or `cancel` fires. ERROR events are delivered like any other;
  // a 410 at the start comes back as an error status (IsGone). Resuming, relisting and backoff
  // are the caller's (see kube/reflector.h).
  absl::Status Watch(const Resource& resource, std::string_view ns, const WatchOptions& options,
                     const WatchCallback& on_event, const Cancellation* cancel = nullptr) {
    return DoWatch(resource, ns, options, on_event, cancel);
  }

  // --- Conveniences over the calls above -----------------------------------------------------

  // Every page collected: all items and the list's resourceVersion.
  absl::StatusOr<ListResult> List(const Resource& resource, std::string_view ns,
                                  const ListOptions& options = {});

  absl::StatusOr<std::string> GetStatus(const Resource& resource, std::string_view ns,
                                        std::string_view name) {
    return Get(resource, ns, name, "status");
  }
  absl::StatusOr<std::string> UpdateStatus(const Resource& resource, std::string_view ns,
                                           std::string_view name, std::string_view body,
                                           const WriteOptions& options = {}) {
    return Update(resource, ns, name, body, options, "status");
  }
  absl::StatusOr<std::string> PatchStatus(const Resource& resource, std::string_view ns,
                                          std::string_view name, PatchType type,
                                          std::string_view body, const WriteOptions& options = {}) {
    return Patch(resource, ns, name, type, body, options, "status");
  }

  // POST pods/<pod>/binding: assigns the pod to `node` (what a scheduler's bind does). The uid
  // guards against binding a pod that was deleted and recreated under the same name.
  absl::Status Bind(std::string_view ns, std::string_view pod, std::string_view pod_uid,
                    std::string_view node);

 protected:
  virtual absl::StatusOr<std::string> DoGet(const Resource& resource, std::string_view ns,
                                            std::string_view name,
                                            std::string_view subresource) = 0;
  virtual absl::Status DoListPages(
      const Resource& resource, std::string_view ns, const ListOptions& options,
      const std::function<absl::Status(std::string_view page)>& on_page) = 0;
  virtual absl::StatusOr<std::string> DoCreate(const Resource& resource, std::string_view ns,
                                               std::string_view body, const WriteOptions& options,
                                               std::string_view name,
                                               std::string_view subresource) = 0;
  virtual absl::StatusOr<std::string> DoUpdate(const Resource& resource, std::string_view ns,
                                               std::string_view name, std::string_view body,
                                               const WriteOptions& options,
                                               std::string_view subresource) = 0;
  virtual absl::StatusOr<std::string> DoPatch(const Resource& resource, std::string_view ns,
                                              std::string_view name, PatchType type,
                                              std::string_view body, const WriteOptions& options,
                                              std::string_view subresource) = 0;
  virtual absl::Status DoDelete(const Resource& resource, std::string_view ns,
                                std::string_view name, const DeleteOptions& options) = 0;
  virtual absl::Status DoWatch(const Resource& resource, std::string_view ns,
                               const WatchOptions& options, const WatchCallback& on_event,
                               const Cancellation* cancel) = 0;
};

}  // namespace kube
