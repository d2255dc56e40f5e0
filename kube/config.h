// Where the API server is and how to authenticate to it: from a kubeconfig file (what kubectl
// uses) or from the in-cluster service-account mount (what a pod uses).
//
//   ASSIGN_OR_RETURN(kube::RestConfig config,
//   kube::LoadKubeconfig("/tmp/phalanx-cluster/kubeconfig"));
//   // or, inside a pod:
//   ASSIGN_OR_RETURN(kube::RestConfig config, kube::LoadInClusterConfig());
//   ASSIGN_OR_RETURN(auto transport, kube::NewCpprestTransport(config));
//
// Bearer tokens may come from a file that the kubelet rotates (projected service-account tokens
// expire after an hour); TokenFile re-reads it periodically instead of caching it forever.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kube/clock.h"

namespace kube {

// Re-reads a bearer-token file at most every `refresh` (client-go uses one minute), so a rotated
// token is picked up without a restart. Thread-safe.
class TokenFile {
 public:
  TokenFile(std::string path, Clock& clock, absl::Duration refresh = absl::Minutes(1));
  // The current token (trailing whitespace trimmed). If a re-read fails but an older token is
  // cached, the cached one is returned: a transient read error should not drop credentials.
  absl::StatusOr<std::string> Token();
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  Clock& clock_;
  const absl::Duration refresh_;
  std::mutex mu_;
  std::string token_;
  absl::Time read_at_ = absl::InfinitePast();
};

struct RestConfig {
  // "https://127.0.0.1:6443" — scheme, host and port, no trailing slash.
  std::string server;
  // PEM bundles held in memory (file references are read at load time).
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  // A static token, or a token file re-read as it rotates (token_file wins when both are set).
  std::string bearer_token;
  std::shared_ptr<TokenFile> token_file;
  bool insecure_skip_tls_verify = false;
  // The default namespace of the context ("default" when unset).
  std::string default_namespace = "default";
  // Sent as User-Agent.
  std::string user_agent = "phalanx";

  // The bearer token to send now, or "" for none.
  absl::StatusOr<std::string> BearerToken() const;
};

// Loads `context` (or current-context when empty) from the kubeconfig at `path`. Relative file
// references inside it are resolved against the kubeconfig's directory, as kubectl does.
absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path, std::string_view context = "",
                                          Clock& clock = RealClock());
// Same, from kubeconfig text; `base_dir` resolves relative file references.
absl::StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, std::string_view base_dir,
                                           std::string_view context = "",
                                           Clock& clock = RealClock());

// Where a pod finds its service-account credentials. Defaults are the kubelet's mount and the
// environment the kubelet sets; tests override them.
struct InClusterPaths {
  std::string token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  // Empty means read KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT.
  std::string host;
  std::string port;
};

// FailedPrecondition if not running in a pod (no service host or no token file).
absl::StatusOr<RestConfig> LoadInClusterConfig(const InClusterPaths& paths = {},
                                               Clock& clock = RealClock());

// Reads a whole file; NotFound / PermissionDenied / Internal name the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace kube
