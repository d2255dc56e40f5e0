#include "kube/leader_election.h"

#include <random>
#include <thread>
#include <utility>

#include "common/status.h"
#include "kube/errors.h"
#include "kube/internal/strings.h"
#include "kube/json.h"
#include "spdlog/spdlog.h"

namespace kube {

std::string FormatMicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

LeaderElector::LeaderElector(Client& client, LeaderElectionConfig config, LeaderCallbacks callbacks,
                             Clock& clock)
    : client_(client),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      clock_(clock) {}

bool LeaderElector::IsLeader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !observed_.holder.empty() && observed_.holder == config_.identity;
}

std::string LeaderElector::leader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return observed_.holder;
}

void LeaderElector::Observe(const Record& record, absl::Time now) {
  std::string new_holder;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (record == observed_) return;
    if (record.holder != observed_.holder) new_holder = record.holder;
    observed_ = record;
    observed_time_ = now;
  }
  if (!new_holder.empty() && callbacks_.on_new_leader) callbacks_.on_new_leader(new_holder);
}

std::string LeaderElector::LeaseJson(const Record& record,
                                     const std::string& resource_version) const {
  rapidjson::Document doc =
      NewApiObject("coordination.k8s.io/v1", "Lease", config_.lease_name, config_.lease_namespace);
  auto& alloc = doc.GetAllocator();
  if (!resource_version.empty()) {
    doc["metadata"].AddMember("resourceVersion", JsonString(resource_version, alloc), alloc);
  }
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember("holderIdentity", JsonString(record.holder, alloc), alloc);
  spec.AddMember("leaseDurationSeconds", rapidjson::Value(record.lease_duration_seconds), alloc);
  spec.AddMember("acquireTime", JsonString(record.acquire_time, alloc), alloc);
  spec.AddMember("renewTime", JsonString(record.renew_time, alloc), alloc);
  spec.AddMember("leaseTransitions", rapidjson::Value(record.transitions), alloc);
  doc.AddMember("spec", spec, alloc);
  return ToJson(doc);
}

namespace {

struct ParsedLease {
  std::string resource_version;
  std::string holder;
  int64_t lease_duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  int64_t transitions = 0;
};

absl::StatusOr<ParsedLease> ParseLease(std::string_view json) {
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(json));
  ParsedLease lease;
  if (doc.HasMember("metadata")) {
    lease.resource_version = std::string(StringMember(doc["metadata"], "resourceVersion"));
  }
  if (doc.HasMember("spec") && doc["spec"].IsObject()) {
    const rapidjson::Value& spec = doc["spec"];
    lease.holder = std::string(StringMember(spec, "holderIdentity"));
    lease.acquire_time = std::string(StringMember(spec, "acquireTime"));
    lease.renew_time = std::string(StringMember(spec, "renewTime"));
    if (spec.HasMember("leaseDurationSeconds") && spec["leaseDurationSeconds"].IsInt64()) {
      lease.lease_duration_seconds = spec["leaseDurationSeconds"].GetInt64();
    }
    if (spec.HasMember("leaseTransitions") && spec["leaseTransitions"].IsInt64()) {
      lease.transitions = spec["leaseTransitions"].GetInt64();
    }
  }
  return lease;
}

}  // namespace

bool LeaderElector::TryAcquireOrRenew() {
  absl::Time now = clock_.Now();
  Record desired{.holder = config_.identity,
                 .lease_duration_seconds = absl::ToInt64Seconds(config_.lease_duration),
                 .acquire_time = FormatMicroTime(now),
                 .renew_time = FormatMicroTime(now)};
  absl::StatusOr<std::string> current =
      client_.Get(Leases(), config_.lease_namespace, config_.lease_name);
  if (IsNotFound(current.status())) {
    absl::Status created =
        client_.Create(Leases(), config_.lease_namespace, LeaseJson(desired, "")).status();
    if (!created.ok()) {
      spdlog::debug("leader election: create lease: {}", created);
      return false;
    }
    Observe(desired, now);
    return true;
  }
  if (!current.ok()) {
    spdlog::warn("leader election: get lease {}/{}: {}", config_.lease_namespace,
                 config_.lease_name, current.status());
    return false;
  }
  absl::StatusOr<ParsedLease> lease = ParseLease(*current);
  if (!lease.ok()) {
    spdlog::warn("leader election: unreadable lease: {}", lease.status());
    return false;
  }
  Record existing{.holder = lease->holder,
                  .lease_duration_seconds = lease->lease_duration_seconds,
                  .acquire_time = lease->acquire_time,
                  .renew_time = lease->renew_time,
                  .transitions = lease->transitions};
  Observe(existing, now);
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool held_by_other = !existing.holder.empty() && existing.holder != config_.identity;
    // Expiry is judged by when *we* last saw the record change, so clock skew between machines
    // does not matter.
    if (held_by_other && observed_time_ + absl::Seconds(existing.lease_duration_seconds) > now) {
      return false;
    }
  }
  if (existing.holder == config_.identity) {
    desired.acquire_time = existing.acquire_time;
    desired.transitions = existing.transitions;
  } else {
    desired.transitions = existing.transitions + 1;
  }
  absl::Status updated = client_
                             .Update(Leases(), config_.lease_namespace, config_.lease_name,
                                     LeaseJson(desired, lease->resource_version))
                             .status();
  if (!updated.ok()) {
    // A conflict means someone else wrote first; we will see their record next time.
    spdlog::debug("leader election: update lease: {}", updated);
    return false;
  }
  Observe(desired, now);
  return true;
}

absl::Status LeaderElector::Release() {
  ASSIGN_OR_RETURN(std::string current,
                   client_.Get(Leases(), config_.lease_namespace, config_.lease_name));
  ASSIGN_OR_RETURN(ParsedLease lease, ParseLease(current));
  if (lease.holder != config_.identity) return absl::OkStatus();
  absl::Time now = clock_.Now();
  // An empty holder with a 1 s duration lets the next candidate take over at once.
  Record released{.holder = "",
                  .lease_duration_seconds = 1,
                  .acquire_time = FormatMicroTime(now),
                  .renew_time = FormatMicroTime(now),
                  .transitions = lease.transitions};
  RETURN_IF_ERROR(client_
                      .Update(Leases(), config_.lease_namespace, config_.lease_name,
                              LeaseJson(released, lease.resource_version))
                      .status());
  Observe(released, now);
  return absl::OkStatus();
}

void LeaderElector::Run(const Cancellation* cancel) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.0, 1.2);
  // Acquire.
  absl::Time attempt = clock_.Now();
  while (!TryAcquireOrRenew()) {
    absl::Duration wait = config_.retry_period + config_.retry_period * jitter(rng);
    if (!clock_.SleepFor(wait, cancel)) return;
    attempt = clock_.Now();
  }
  if (config_.fence != nullptr) config_.fence->HoldUntil(attempt + config_.renew_deadline);
  spdlog::info("leader election: {} acquired lease {}/{}", config_.identity,
               config_.lease_namespace, config_.lease_name);
  Cancellation lost;
  std::thread leading;
  if (callbacks_.on_started_leading) {
    leading = std::thread([this, &lost] { callbacks_.on_started_leading(lost); });
  }
  // Renew.
  absl::Time last_renew = attempt;
  bool lost_lease = false;
  while (clock_.SleepFor(config_.retry_period, cancel)) {
    attempt = clock_.Now();
    if (TryAcquireOrRenew()) {
      // From when the renewal began: the API server may have taken its time answering.
      last_renew = attempt;
      if (config_.fence != nullptr) config_.fence->HoldUntil(attempt + config_.renew_deadline);
      continue;
    }
    if (clock_.Now() - last_renew >= config_.renew_deadline || (!IsLeader() && !leader().empty())) {
      lost_lease = true;
      spdlog::warn("leader election: {} lost lease {}/{}", config_.identity,
                   config_.lease_namespace, config_.lease_name);
      break;
    }
  }
  // No write from here on: the work still queued runs against a Lease that is gone or going.
  if (config_.fence != nullptr) config_.fence->Drop();
  lost.Cancel();
  if (leading.joinable()) leading.join();
  if (!lost_lease && config_.release_on_cancel) {
    absl::Status released = Release();
    if (!released.ok()) spdlog::warn("leader election: release lease: {}", released);
  }
  if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
}

}  // namespace kube
