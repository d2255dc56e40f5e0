// Writes only while this replica surely holds its Lease. A leader that was frozen (SIGSTOP, CPU
// starvation, a VM paused for live migration) wakes up with its work queues full and its caches
// stale, and another replica may have taken the Lease meanwhile; client-go's answer is to exit
// when the renewal loop notices, but the loop may notice after a worker's first write. The fence
// closes that window: LeaderElector sets it after each successful renewal to the local time the
// renewal began plus renew_deadline (no other replica can take the Lease over before
// lease_duration has passed without a renewal it observed, and renew_deadline < lease_duration),
// and FencedClient refuses every create, update, patch and delete past it. Reads and watches go
// through. Thread-safe.
//
//   kube::LeaseFence fence;
//   kube::LeaderElector elector(client, {..., .fence = &fence}, callbacks);
//   kube::FencedClient writer(client, fence, "phalanx-system/phalanx-operator");  // controllers
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kube/client.h"
#include "kube/clock.h"

namespace kube {

class LeaseFence {
 public:
  // Writes are allowed until `until` (local time).
  void HoldUntil(absl::Time until) { until_ns_.store(absl::ToUnixNanos(until)); }
  // No more writes (the Lease was lost or released).
  void Drop() { until_ns_.store(0); }
  // OK while `now` is before the time set; Unavailable otherwise, naming `what` (the Lease).
  absl::Status Check(absl::Time now, const std::string& what) const;

 private:
  std::atomic<int64_t> until_ns_{0};
};

class FencedClient : public Client {
 public:
  // `lease` names the Lease in the refusal ("phalanx-system/phalanx-operator").
  FencedClient(Client& inner, const LeaseFence& fence, std::string lease,
               Clock& clock = RealClock())
      : inner_(inner), fence_(fence), lease_(std::move(lease)), clock_(clock) {}

 protected:
  absl::StatusOr<std::string> DoGet(const Resource& resource, std::string_view ns,
                                    std::string_view name, std::string_view subresource) override {
    return inner_.Get(resource, ns, name, subresource);
  }
  absl::Status DoListPages(
      const Resource& resource, std::string_view ns, const ListOptions& options,
      const std::function<absl::Status(std::string_view page)>& on_page) override {
    return inner_.ListPages(resource, ns, options, on_page);
  }
  absl::StatusOr<std::string> DoCreate(const Resource& resource, std::string_view ns,
                                       std::string_view body, const WriteOptions& options,
                                       std::string_view name,
                                       std::string_view subresource) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Create(resource, ns, body, options, name, subresource);
  }
  absl::StatusOr<std::string> DoUpdate(const Resource& resource, std::string_view ns,
                                       std::string_view name, std::string_view body,
                                       const WriteOptions& options,
                                       std::string_view subresource) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Update(resource, ns, name, body, options, subresource);
  }
  absl::StatusOr<std::string> DoPatch(const Resource& resource, std::string_view ns,
                                      std::string_view name, PatchType type,
                                      std::string_view body, const WriteOptions& options,
                                      std::string_view subresource) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Patch(resource, ns, name, type, body, options, subresource);
  }
  absl::Status DoDelete(const Resource& resource, std::string_view ns, std::string_view name,
                        const DeleteOptions& options) override {
    if (absl::Status s = Check(); !s.ok()) return s;
    return inner_.Delete(resource, ns, name, options);
  }
  absl::Status DoWatch(const Resource& resource, std::string_view ns, const WatchOptions& options,
                       const WatchCallback& on_event, const Cancellation* cancel) override {
    return inner_.Watch(resource, ns, options, on_event, cancel);
  }

 private:
  absl::Status Check() { return fence_.Check(clock_.Now(), lease_); }

  Client& inner_;
  const LeaseFence& fence_;
  const std::string lease_;
  Clock& clock_;
};

}  // namespace kube
