// Leader election between two real processes sharing one Lease on the real API server.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "tests/integration/kube/cluster.h"

namespace kube::integration {
namespace {

constexpr absl::Duration kLeaseDuration = absl::Seconds(4);  // leader_helper.cc
constexpr absl::Duration kRetryPeriod = absl::Milliseconds(500);

class Candidate {
 public:
  Candidate(const Cluster& cluster, const std::string& lease, const std::string& id) {
    pid_ = fork();
    if (pid_ == 0) {
      execl(PHALANX_KUBE_LEADER_HELPER, PHALANX_KUBE_LEADER_HELPER, cluster.kubeconfig.c_str(),
            cluster.ns.c_str(), lease.c_str(), id.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Candidate() { Stop(SIGKILL); }
  void Stop(int signal) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  bool alive() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

std::string Holder(Client& client, const std::string& ns, const std::string& lease) {
  absl::StatusOr<std::string> json = client.Get(Leases(), ns, lease);
  if (!json.ok()) return "";
  absl::StatusOr<rapidjson::Document> doc = ParseJson(*json);
  if (!doc.ok() || !doc->HasMember("spec")) return "";
  return std::string(StringMember((*doc)["spec"], "holderIdentity"));
}

using LeaderElectionTest = ClusterTest;

TEST_F(LeaderElectionTest, FailsOverBetweenProcessesWithinTheLeaseTime) {
  std::string lease = "leader-" + RandomSuffix();
  Candidate a(cluster(), lease, "candidate-a");
  ASSERT_TRUE(
      Eventually([&] { return Holder(client(), ns(), lease) == "candidate-a"; }, absl::Seconds(20)))
      << "candidate-a never acquired the lease";
  Candidate b(cluster(), lease, "candidate-b");
  // b keeps trying but a keeps renewing.
  absl::SleepFor(absl::Seconds(3) * 2);
  EXPECT_EQ(Holder(client(), ns(), lease), "candidate-a");

  // a crashes: no release, the lease simply stops being renewed.
  a.Stop(SIGKILL);
  absl::Time crashed = absl::Now();
  ASSERT_TRUE(
      Eventually([&] { return Holder(client(), ns(), lease) == "candidate-b"; }, absl::Seconds(30)))
      << "candidate-b never took over";
  absl::Duration failover = absl::Now() - crashed;
  // b must wait out the lease it last saw renewed (at most one retry period before the crash),
  // then wins on its next attempt (retry period * up to 2.2 with jitter).
  EXPECT_LE(failover, kLeaseDuration + kRetryPeriod * 4 + absl::Seconds(1)) << failover;
  std::cerr << "[leader] failover took " << absl::FormatDuration(failover) << "\n";

  // A graceful stop releases the lease at once.
  b.Stop(SIGTERM);
  EXPECT_TRUE(Eventually([&] { return Holder(client(), ns(), lease).empty(); }, absl::Seconds(5)));
}

}  // namespace
}  // namespace kube::integration
