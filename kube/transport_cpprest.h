// The Transport that talks to a real API server, over cpprestsdk (HTTPS with the CA, client
// certificate/key and bearer token from a RestConfig). cpprestsdk appears nowhere else, so it can
// be swapped for another HTTP stack without touching the client.
//
//   ASSIGN_OR_RETURN(kube::RestConfig config, kube::LoadKubeconfig(path));
//   ASSIGN_OR_RETURN(std::unique_ptr<kube::Transport> transport,
//   kube::NewCpprestTransport(config));
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kube/config.h"
#include "kube/transport.h"

namespace kube {

struct CpprestTransportOptions {
  // Whole-request deadline for Send().
  absl::Duration request_timeout = absl::Seconds(60);
  // For Stream(): cpprestsdk's timeout (default 30 s) also fires on a body that is quiet for that
  // long, which would kill a healthy watch on a calm cluster. Keep it above the longest watch
  // timeoutSeconds (the reflector uses at most 10 minutes); the server ends watches cleanly and
  // bookmarks keep them moving.
  absl::Duration stream_timeout = absl::Minutes(15);
};

// InvalidArgument if the server URL or the PEM material is unusable.
absl::StatusOr<std::unique_ptr<Transport>> NewCpprestTransport(
    const RestConfig& config, const CpprestTransportOptions& options = {});

// What a long-running binary or the CLI starts with: the in-cluster service account when
// `kubeconfig` is empty, else that file (and `context`, "" = current-context), as a Transport
// sending `user_agent`. Errors say which step failed ("cannot load Kubernetes credentials: ...",
// "API server https://...: ..."). With $PHALANX_FAULTS set, the transport is wrapped in a
// FaultTransport (kube/fault_transport.h).
absl::StatusOr<std::unique_ptr<Transport>> ConnectCpprest(const std::string& kubeconfig,
                                                          const std::string& context,
                                                          const std::string& user_agent);

}  // namespace kube
