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

// cpprestsdk builds a new TLS context for every new connection and first loads OpenSSL's default
// CA file into it ($SSL_CERT_FILE, else OpenSSL's cert.pem): Debian's bundle of ~140
// certificates, 25 ms of CPU each time on the development machine, paid for each of the ~100
// connections an operator opens when its pod creates and status writes fan out. Call this once
// at the top of main(), before any thread starts: it parses that file once, points
// $SSL_CERT_FILE at /dev/null so that cpprest's per-connection load reads nothing, and every
// context the transport builds gets the certificates parsed here instead (0.7 ms). What is
// trusted does not change: the same file's certificates, the hashed directory ($SSL_CERT_DIR),
// and the configured CA. Without this call the transport works as before.
void LoadDefaultCaFileOnce();

// What a long-running binary or the CLI starts with: the in-cluster service account when
// `kubeconfig` is empty, else that file (and `context`, "" = current-context), as a Transport
// sending `user_agent`. Errors say which step failed ("cannot load Kubernetes credentials: ...",
// "API server https://...: ..."). With $PHALANX_FAULTS set, the transport is wrapped in a
// FaultTransport (kube/fault_transport.h).
absl::StatusOr<std::unique_ptr<Transport>> ConnectCpprest(const std::string& kubeconfig,
                                                          const std::string& context,
                                                          const std::string& user_agent);

}  // namespace kube
