#include "tests/integration/kube/cluster.h"

#include <unistd.h>

#include <cstdlib>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "kube/errors.h"
#include "kube/transport_cpprest.h"

namespace kube::integration {
namespace {

const Resource& ServiceAccounts() {
  static const Resource* r = new Resource{.plural = "serviceaccounts", .kind = "ServiceAccount"};
  return *r;
}

absl::Status WaitForDefaultServiceAccount(Client& client, const std::string& ns) {
  if (Eventually([&] { return client.Get(ServiceAccounts(), ns, "default").ok(); },
                 absl::Seconds(180))) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(
      absl::StrCat("namespace ", ns,
                   " has no default service account after 180 s: is kube-controller-manager "
                   "running?"));
}

absl::StatusOr<Cluster*> Connect() {
  const char* kubeconfig = std::getenv("PHALANX_KUBECONFIG");
  if (kubeconfig == nullptr || *kubeconfig == '\0') {
    return absl::FailedPreconditionError(
        "PHALANX_KUBECONFIG is not set. Start one with `hack/cluster/up.sh` and export "
        "PHALANX_KUBECONFIG=<the path it prints last>");
  }
  auto cluster = std::make_unique<Cluster>();
  cluster->kubeconfig = kubeconfig;
  const char* dir = std::getenv("PHALANX_CLUSTER_DIR");
  if (dir != nullptr && *dir != '\0') {
    cluster->state_dir = dir;
  } else {
    std::string path = kubeconfig;
    cluster->state_dir = path.substr(0, path.rfind('/'));
  }
  ASSIGN_OR_RETURN(cluster->config, LoadKubeconfig(cluster->kubeconfig));
  cluster->config.user_agent = "phalanx-kube-integration-test";
  ASSIGN_OR_RETURN(cluster->transport, NewCpprestTransport(cluster->config));
  cluster->client = std::make_unique<RestClient>(*cluster->transport);
  absl::StatusOr<std::string> ns_list = cluster->client->Get(Namespaces(), "", "default");
  if (!ns_list.ok()) {
    return absl::UnavailableError(
        absl::StrCat("API server at ", cluster->config.server, " (from ", cluster->kubeconfig,
                     ") is not reachable: ", ns_list.status().ToString()));
  }
  cluster->ns = absl::StrCat("kube-it-", getpid(), "-", RandomSuffix());
  RETURN_IF_ERROR(cluster->client
                      ->Create(Namespaces(), "",
                               absl::StrCat(R"({"apiVersion":"v1","kind":"Namespace",)",
                                            R"("metadata":{"name":")", cluster->ns, R"("}})"))
                      .status());
  // Pods are refused until the service-account controller has made the namespace's "default"
  // service account.
  RETURN_IF_ERROR(WaitForDefaultServiceAccount(*cluster->client, cluster->ns));
  Cluster* raw = cluster.release();
  // Best effort: the namespace (and everything in it) goes when the test process ends.
  std::atexit([] {
    const absl::StatusOr<Cluster*>& c = SharedCluster();
    if (c.ok()) (void)(*c)->client->Delete(Namespaces(), "", (*c)->ns);
  });
  return raw;
}

}  // namespace

const absl::StatusOr<Cluster*>& SharedCluster() {
  static const absl::StatusOr<Cluster*>* cluster = new absl::StatusOr<Cluster*>(Connect());
  return *cluster;
}

absl::Status RunClusterScript(const std::string& script, const std::string& args) {
  const absl::StatusOr<Cluster*>& cluster = SharedCluster();
  RETURN_IF_ERROR(cluster.status());
  std::string command =
      absl::StrCat("PHALANX_CLUSTER_DIR='", (*cluster)->state_dir, "' '", PHALANX_SOURCE_DIR,
                   "/hack/cluster/", script, "' ", args, " 1>&2");
  int rc = std::system(command.c_str());
  if (rc != 0) return absl::InternalError(absl::StrCat(command, " exited with ", rc));
  return absl::OkStatus();
}

absl::Status WaitForControllers() {
  const absl::StatusOr<Cluster*>& cluster = SharedCluster();
  RETURN_IF_ERROR(cluster.status());
  Client& client = *(*cluster)->client;
  std::string probe = absl::StrCat("kube-it-probe-", RandomSuffix());
  RETURN_IF_ERROR(client
                      .Create(Namespaces(), "",
                              absl::StrCat(R"({"apiVersion":"v1","kind":"Namespace",)",
                                           R"("metadata":{"name":")", probe, R"("}})"))
                      .status());
  absl::Status status = WaitForDefaultServiceAccount(client, probe);
  (void)client.Delete(Namespaces(), "", probe);
  return status;
}

bool Eventually(const std::function<bool()>& done, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (done()) return true;
    if (absl::Now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::string RandomSuffix() {
  static std::mt19937_64 rng(std::random_device{}());
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  for (int i = 0; i < 6; ++i) out.push_back(kChars[rng() % 36]);
  return out;
}

}  // namespace kube::integration
