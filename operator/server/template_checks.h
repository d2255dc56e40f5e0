// What the API server said of each pending TrainingJob's pod template, asked with a dry run of
// a rank's pod before the job is admitted: written by the job controller, read by the admission
// controller, which counts a pending job only once its template has an answer for the job's
// current uid and generation, and keeps a refused one pending, reason Invalid, with the API
// server's words. A template the API server refuses (a misspelt field under fieldValidation
// Strict, an invalid value, PodSecurity) thus takes no quota; before 2026-12-01 it was admitted
// and failed, or was refused pod after pod, at its first pod create.
//
// A dry run that passes (or is deferred to the operator's own quota checks) is shared, for
// kShareFor, with every job of the namespace whose rank-0 pod would differ only in what the
// operator writes into it (the job's name, uid and size): a sweep of 500 jobs from one manifest
// costs a few dry runs (those sent before the first answer is in), not 500 (docs/benchmarks.md,
// "The template dry run"). Refusals are not
// shared: each job gets the API server's own words about its pod.
//
// Off (the default, for the controllers' unit tests) until Enable(): then nothing is gated.
// Thread-safe: the two controllers run on their own threads.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "kube/api/training_job.h"

namespace phalanx::operator_server {

// The shape of `job`'s pods as far as a dry run can tell them apart: its namespace and rank 0's
// pod built with the job's name, uid and size replaced by fixed ones, equal for every job of a
// sweep from one manifest. "" when the pod cannot be built.
std::string TemplateShape(const kube::TrainingJob& job);

class TemplateChecks {
 public:
  struct Verdict {
    std::string uid;
    int64_t generation = 0;
    bool refused = false;
    // Refused for now (a 403 from an admission plugin: PodSecurity, a webhook): asked again
    // later.
    // Else a refusal stands until the job is edited (a new generation).
    bool ask_again = false;
    // A refusal, as the job's Queued condition says it (fields named as the job's).
    std::string message;
    absl::Time checked;
  };

  // `on_change` runs (outside the lock) whenever a job's verdict is new or differs.
  void Enable(std::function<void()> on_change) {
    std::lock_guard<std::mutex> lock(mu_);
    enabled_ = true;
    on_change_ = std::move(on_change);
  }
  bool enabled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return enabled_;
  }

  // Records `job` ("namespace/name")'s verdict; true when it is new or says something else
  // than the last one (a refusal's event is recorded once).
  bool Set(const std::string& job, Verdict verdict) {
    std::function<void()> notify;
    bool changed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = verdicts_.find(job);
      changed = it == verdicts_.end() || it->second.uid != verdict.uid ||
                it->second.generation != verdict.generation ||
                it->second.refused != verdict.refused || it->second.message != verdict.message;
      verdicts_[job] = std::move(verdict);
      if (changed) notify = on_change_;
    }
    if (notify) notify();
    return changed;
  }

  // The verdict on `job` as it is now (this uid and generation), if there is one.
  std::optional<Verdict> Get(const std::string& job, const std::string& uid,
                             int64_t generation) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = verdicts_.find(job);
    if (it == verdicts_.end() || it->second.uid != uid || it->second.generation != generation) {
      return std::nullopt;
    }
    return it->second;
  }

  // Gone, or admitted (its pods' creates are checked by the API server itself).
  void Forget(const std::string& job) {
    std::lock_guard<std::mutex> lock(mu_);
    verdicts_.erase(job);
  }

  // How long a passed dry run answers for the same pod shape (a PodSecurity label or a webhook
  // added to the namespace meanwhile is seen at the pods' real creates, as it would be for a
  // job admitted a moment earlier).
  static constexpr absl::Duration kShareFor = absl::Seconds(60);

  // `shape`: the namespace and rank 0's pod built from the job with its name, uid and size
  // replaced by fixed ones. True when a dry run of that shape passed within kShareFor of `now`.
  bool PassedRecently(const std::string& shape, absl::Time now) const {
    std::lock_guard<std::mutex> lock(mu_);
    return PassedLocked(shape, now);
  }
  // Gives `job`, at this uid and generation, a passed verdict when its `shape` passed recently
  // and it has no verdict yet, or one refused for now (asked again: the shape's pass is the
  // newer answer); both controllers may try for one job at once, only one takes it. kHadOne: a
  // verdict that stands is there already.
  enum class Shared { kNone, kTaken, kHadOne };
  Shared TakeShared(const std::string& job, const std::string& uid, int64_t generation,
                    const std::string& shape, absl::Time now) {
    std::function<void()> notify;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = verdicts_.find(job);
      if (it != verdicts_.end() && it->second.uid == uid && it->second.generation == generation &&
          !it->second.ask_again) {
        return Shared::kHadOne;
      }
      if (shape.empty() || !PassedLocked(shape, now)) return Shared::kNone;
      verdicts_[job] = Verdict{.uid = uid, .generation = generation, .checked = now};
      notify = on_change_;
    }
    if (notify) notify();
    return Shared::kTaken;
  }
  void SetPassed(const std::string& shape, absl::Time now) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = passed_.begin(); it != passed_.end();) {
      it = Fresh(it->second, now) ? std::next(it) : passed_.erase(it);
    }
    passed_[shape] = now;
  }

 private:
  static bool Fresh(absl::Time passed, absl::Time now) { return now - passed < kShareFor; }
  // With mu_ held.
  bool PassedLocked(const std::string& shape, absl::Time now) const {
    auto it = passed_.find(shape);
    return it != passed_.end() && Fresh(it->second, now);
  }

  mutable std::mutex mu_;
  bool enabled_ = false;
  std::function<void()> on_change_;
  std::map<std::string, Verdict> verdicts_;
  std::map<std::string, absl::Time> passed_;  // shape -> when its dry run passed
};

}  // namespace phalanx::operator_server
