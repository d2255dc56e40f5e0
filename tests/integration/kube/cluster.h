// Access to the real local control plane for the kube integration tests.
//
// The kubeconfig comes from $PHALANX_KUBECONFIG (hack/cluster/up.sh prints it); the cluster's
// state directory (for hack/cluster/restart-apiserver.sh and compact-etcd.sh) is
// $PHALANX_CLUSTER_DIR, or else the kubeconfig's directory. Tests FAIL, never skip, when the
// cluster is missing or unreachable:
//
//   TEST_F(ClusterTest, Something) {
//     kube::Client& client = Client();     // fixture SetUp has asserted the cluster is there
//     std::string ns = Namespace();        // a namespace of this test run, deleted at exit
//   }
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "kube/transport.h"

namespace kube::integration {

struct Cluster {
  std::string kubeconfig;
  std::string state_dir;
  RestConfig config;
  std::unique_ptr<Transport> transport;
  std::unique_ptr<RestClient> client;
  std::string ns;  // created for this run
};

// The connected cluster, or the reason there is none (computed once per process).
const absl::StatusOr<Cluster*>& SharedCluster();

// Runs hack/cluster/<script> with `args` against this cluster; its output goes to stderr.
absl::Status RunClusterScript(const std::string& script, const std::string& args = "");

// After an API-server restart, controllers recover on their own backoff (their watches got 403s
// while the restarted server's authorizer caches warmed up). Returns once kube-controller-manager
// creates service accounts again, so later tests find a working cluster.
absl::Status WaitForControllers();

// Polls `done` every 100 ms until it is true or `timeout` passes; returns its last value.
bool Eventually(const std::function<bool()>& done, absl::Duration timeout);

// Random lowercase suffix for object names.
std::string RandomSuffix();

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::StatusOr<Cluster*>& cluster = SharedCluster();
    ASSERT_TRUE(cluster.ok()) << "kube integration tests need a running control plane: "
                              << cluster.status().ToString();
    cluster_ = *cluster;
  }
  Client& client() { return *cluster_->client; }
  Transport& transport() { return *cluster_->transport; }
  const std::string& ns() const { return cluster_->ns; }
  Cluster& cluster() { return *cluster_; }

 private:
  Cluster* cluster_ = nullptr;
};

}  // namespace kube::integration
