// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does: one of
// several replicas holds the lease and renews it; if it stops renewing (crash, partition), another
// takes over once the lease duration has passed without a change *as observed locally* (no clock
// agreement between machines is needed).
//
//   kube::LeaderElector elector(client, {.lease_namespace = "phalanx-system",
//                                        .lease_name = "phalanx-operator", .identity = pod_name},
//                               {.on_started_leading = [&](const kube::Cancellation& lost) {
//                                   RunControllers(lost); },          // return when `lost` fires
//                                .on_stopped_leading = [] { std::exit(0); }});
//   elector.Run(&stop);   // blocks; releases the lease when `stop` fires
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "kube/clock.h"
#include "kube/fenced_client.h"

namespace kube {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;
  // How long a lease is honoured without renewal (client-go defaults).
  absl::Duration lease_duration = absl::Seconds(15);
  // A leader that cannot renew for this long steps down (must be < lease_duration).
  absl::Duration renew_deadline = absl::Seconds(10);
  // Time between attempts to acquire or renew.
  absl::Duration retry_period = absl::Seconds(2);
  // Give the lease up on shutdown so a successor need not wait out the duration.
  bool release_on_cancel = true;
  // Set after each successful acquire or renewal to its start + renew_deadline, dropped when
  // leadership ends (kube/fenced_client.h); may be null.
  LeaseFence* fence = nullptr;
};

struct LeaderCallbacks {
  // Runs on a thread of its own once leadership is acquired; must return soon after `lost` fires.
  std::function<void(const Cancellation& lost)> on_started_leading;
  // After leadership ends (lost or released), once on_started_leading has returned.
  std::function<void()> on_stopped_leading;
  // Whenever the observed holder changes (including to this identity).
  std::function<void(const std::string& identity)> on_new_leader;
};

class LeaderElector {
 public:
  LeaderElector(Client& client, LeaderElectionConfig config, LeaderCallbacks callbacks,
                Clock& clock = RealClock());

  // Acquires, leads, renews; returns when `cancel` fires or leadership is lost.
  void Run(const Cancellation* cancel);

  // One attempt to acquire or renew the lease. True if this identity holds it afterwards.
  bool TryAcquireOrRenew();
  // Clears the holder if it is this identity.
  absl::Status Release();

  bool IsLeader() const;
  // The holder last observed ("" if none).
  std::string leader() const;

 private:
  struct Record {
    std::string holder;
    int64_t lease_duration_seconds = 0;
    std::string acquire_time;
    std::string renew_time;
    int64_t transitions = 0;
    bool operator==(const Record&) const = default;
  };

  void Observe(const Record& record, absl::Time now);
  std::string LeaseJson(const Record& record, const std::string& resource_version) const;

  Client& client_;
  const LeaderElectionConfig config_;
  const LeaderCallbacks callbacks_;
  Clock& clock_;
  mutable std::mutex mu_;
  Record observed_;
  absl::Time observed_time_ = absl::InfinitePast();
};

// RFC 3339 with microseconds in UTC, as metav1.MicroTime is written.
std::string FormatMicroTime(absl::Time t);

}  // namespace kube
