// KubeBinder: the extender's Binder over the Kubernetes API (POST pods/<pod>/binding through
// kube::Client::Bind). In its own small library, phalanx_extender_kube, so the extender, its
// tests and the benchmark do not link the Kubernetes client.
//
//   kube::RestClient client(transport);
//   extender::KubeBinder binder(client);
//   extender::Extender extender(placement_service, binder);
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "scheduler/extender/extender.h"

namespace kube {
class Client;
}  // namespace kube

namespace phalanx::extender {

class KubeBinder : public Binder {
 public:
  // `client` must outlive the binder.
  explicit KubeBinder(kube::Client& client) : client_(client) {}

  // The API server's answer as a status (kube/errors.h: a 409 if the pod is already bound, a 404
  // or a uid precondition failure if it is gone).
  absl::Status Bind(std::string_view ns, std::string_view pod, std::string_view uid,
                    std::string_view node) override;

 private:
  kube::Client& client_;
};

}  // namespace phalanx::extender
