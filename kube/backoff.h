// Exponential backoff with jitter, and RetryOnConflict for read-modify-write loops.
//
//   kube::Backoff backoff({.initial = absl::Milliseconds(800), .max = absl::Seconds(30)});
//   while (!Connect().ok()) clock.SleepFor(backoff.Next(), &stop);
//
//   RETURN_IF_ERROR(kube::RetryOnConflict([&]() -> absl::Status {
//     ASSIGN_OR_RETURN(std::string cm, client.Get(kube::ConfigMaps(), ns, name));   // re-read
//     return client.Update(kube::ConfigMaps(), ns, name, Edit(cm)).status();        // CAS write
//   }));
#pragma once

#include <cstdint>
#include <functional>
#include <random>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kube/clock.h"

namespace kube {

class Backoff {
 public:
  struct Options {
    absl::Duration initial = absl::Milliseconds(800);
    absl::Duration max = absl::Seconds(30);
    double factor = 2.0;
    // Each delay is stretched by a random fraction in [0, jitter) of itself, so that many
    // clients failing together (an API server restart) do not come back in lockstep.
    double jitter = 1.0;
  };

  explicit Backoff(Options options) : Backoff(options, std::random_device{}()) {}
  Backoff(Options options, uint64_t seed)
      : options_(options), current_(options.initial), rng_(seed) {}

  // The next delay; each call grows the base delay by `factor` up to `max`.
  absl::Duration Next();
  // Back to `initial` (after a success).
  void Reset() { current_ = options_.initial; }

 private:
  Options options_;
  absl::Duration current_;
  std::mt19937_64 rng_;
};

struct RetryOptions {
  int attempts = 5;
  // client-go's DefaultRetry: 10 ms steps with 10 % jitter.
  Backoff::Options backoff{
      .initial = absl::Milliseconds(10), .max = absl::Seconds(1), .factor = 1.0, .jitter = 0.1};
};

// Runs `fn` until it returns something other than a 409 Conflict, at most `attempts` times,
// sleeping between attempts. `fn` must re-read the object each time: retrying a write with the
// stale resourceVersion conflicts forever. Returns the last status.
absl::Status RetryOnConflict(const std::function<absl::Status()>& fn, Clock& clock = RealClock(),
                             const RetryOptions& options = {});

}  // namespace kube
