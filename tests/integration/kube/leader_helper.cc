// A leader-election candidate in its own process, for the failover integration test.
//   phalanx_kube_leader_helper <kubeconfig> <namespace> <lease> <identity>
// Prints "LEADING <identity>" when it becomes leader and "STOPPED <identity>" when it stops;
// SIGTERM releases the lease and exits 0. Lease 4 s, renew deadline 3 s, retry 500 ms.
#include <csignal>
#include <cstdio>
#include <thread>

#include "kube/config.h"
#include "kube/leader_election.h"
#include "kube/rest_client.h"
#include "kube/transport_cpprest.h"

namespace {
kube::Cancellation* g_stop = nullptr;
std::atomic<bool> g_term{false};
}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <kubeconfig> <namespace> <lease> <identity>\n", argv[0]);
    return 2;
  }
  absl::StatusOr<kube::RestConfig> config = kube::LoadKubeconfig(argv[1]);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<kube::Transport>> transport = kube::NewCpprestTransport(*config);
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 1;
  }
  kube::RestClient client(**transport);
  std::string identity = argv[4];
  kube::Cancellation stop;
  g_stop = &stop;
  // The signal handler only sets a flag; a watcher thread turns it into a cancel.
  std::signal(SIGTERM, [](int) { g_term = true; });
  std::thread watcher([&] {
    while (!stop.cancelled()) {
      if (g_term) stop.Cancel();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  kube::LeaderElector elector(client,
                              {.lease_namespace = argv[2],
                               .lease_name = argv[3],
                               .identity = identity,
                               .lease_duration = absl::Seconds(4),
                               .renew_deadline = absl::Seconds(3),
                               .retry_period = absl::Milliseconds(500)},
                              {.on_started_leading =
                                   [&](const kube::Cancellation& lost) {
                                     std::printf("LEADING %s\n", identity.c_str());
                                     std::fflush(stdout);
                                     lost.WaitFor(absl::InfiniteDuration());
                                   },
                               .on_stopped_leading =
                                   [&] {
                                     std::printf("STOPPED %s\n", identity.c_str());
                                     std::fflush(stdout);
                                   }});
  elector.Run(&stop);
  stop.Cancel();
  watcher.join();
  return 0;
}
