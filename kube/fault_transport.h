// FaultTransport: network faults injected around the real Transport (LevelDB's EnvWrapper idea),
// so the reflector, informers, leader election and controllers above it meet the failures a
// real network and a sick API server produce, against a real API server. Off unless asked for:
// with PHALANX_FAULTS unset, WrapWithFaultsFromEnv returns the transport it was given, untouched.
//
//   PHALANX_FAULTS=watch_cut_after=200,latency_ms=50 phalanx-operator ...
//
//   ASSIGN_OR_RETURN(std::unique_ptr<kube::Transport> t, kube::NewCpprestTransport(config));
//   ASSIGN_OR_RETURN(t, kube::WrapWithFaultsFromEnv(std::move(t)));
//
// The spec is comma-separated key=value pairs (docs/chaos.md):
//   latency_ms=N       every request (and the start of every watch) waits N ms before it is sent
//   watch_cut_after=N  every watch stream is cut after N events: the connection is dropped in the
//                      middle of the next event's bytes, and the watch fails as Unavailable, as a
//                      connection reset mid-body does
//   watch_cuts=N       at most N cuts in this process (0, the default: no limit)
//   reset_every=N      every Nth request fails as a connection reset (Unavailable), never sent
//   error_every=N      every Nth request is answered 503 ServiceUnavailable (a Status body), never
//                      sent
// reset_every and error_every count requests and watches together. Each fault is logged (warn,
// "fault injected: ...") so a run can count them afterwards.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "kube/transport.h"

namespace kube {

inline constexpr char kFaultsEnv[] = "PHALANX_FAULTS";

struct FaultOptions {
  absl::Duration latency = absl::ZeroDuration();
  int64_t watch_cut_after = 0;  // 0: never
  int64_t watch_cuts = 0;       // 0: no limit
  int64_t reset_every = 0;      // 0: never
  int64_t error_every = 0;      // 0: never

  bool any() const {
    return latency > absl::ZeroDuration() || watch_cut_after > 0 || reset_every > 0 ||
           error_every > 0;
  }
};

// InvalidArgument naming the bad pair for an unknown key, a missing '=' or a value that is not a
// count in [0, 10^9].
absl::StatusOr<FaultOptions> ParseFaultOptions(std::string_view spec);

class FaultTransport : public Transport {
 public:
  FaultTransport(std::unique_ptr<Transport> inner, FaultOptions options);

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override;
  absl::StatusOr<HttpResponse> Stream(const HttpRequest& request, const ChunkCallback& on_chunk,
                                      const Cancellation* cancel) override;

  const FaultOptions& options() const { return options_; }
  int64_t watch_cuts() const { return cuts_.load(); }
  int64_t resets() const { return resets_.load(); }
  int64_t errors() const { return errors_.load(); }

 private:
  // The fault this request gets before it is sent, if any (after the latency).
  std::optional<absl::StatusOr<HttpResponse>> Before(const HttpRequest& request);

  const std::unique_ptr<Transport> inner_;
  const FaultOptions options_;
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> cuts_{0};
  std::atomic<int64_t> resets_{0};
  std::atomic<int64_t> errors_{0};
};

// `inner` wrapped in a FaultTransport when $PHALANX_FAULTS is set and asks for a fault, else
// `inner` itself (nothing in the request path). InvalidArgument for a bad spec, so a typo fails
// the binary at start-up instead of silently running without faults.
absl::StatusOr<std::unique_ptr<Transport>> WrapWithFaultsFromEnv(std::unique_ptr<Transport> inner);

}  // namespace kube
