// The Client implementation: Kubernetes REST semantics over any Transport.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<kube::Transport> transport,
//   kube::NewCpprestTransport(config)); kube::RestClient client(*transport);
#pragma once

#include "kube/client.h"
#include "kube/transport.h"

namespace kube {

class RestClient : public Client {
 public:
  // `transport` must outlive the client.
  explicit RestClient(Transport& transport) : transport_(transport) {}

 protected:
  absl::StatusOr<std::string> DoGet(const Resource& resource, std::string_view ns,
                                    std::string_view name, std::string_view subresource) override;
  absl::Status DoListPages(
      const Resource& resource, std::string_view ns, const ListOptions& options,
      const std::function<absl::Status(std::string_view page)>& on_page) override;
  absl::StatusOr<std::string> DoCreate(const Resource& resource, std::string_view ns,
                                       std::string_view body, const WriteOptions& options,
                                       std::string_view name,
                                       std::string_view subresource) override;
  absl::StatusOr<std::string> DoUpdate(const Resource& resource, std::string_view ns,
                                       std::string_view name, std::string_view body,
                                       const WriteOptions& options,
                                       std::string_view subresource) override;
  absl::StatusOr<std::string> DoPatch(const Resource& resource, std::string_view ns,
                                      std::string_view name, PatchType type, std::string_view body,
                                      const WriteOptions& options,
                                      std::string_view subresource) override;
  absl::Status DoDelete(const Resource& resource, std::string_view ns, std::string_view name,
                        const DeleteOptions& options) override;
  absl::Status DoWatch(const Resource& resource, std::string_view ns, const WatchOptions& options,
                       const WatchCallback& on_event, const Cancellation* cancel) override;

 private:
  // Sends and maps a non-2xx response to its Kubernetes error; returns the body on success.
  absl::StatusOr<std::string> Call(HttpRequest request);

  Transport& transport_;
};

}  // namespace kube
