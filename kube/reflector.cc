#include "kube/reflector.h"

#include <algorithm>
#include <random>
#include <utility>

#include "common/status.h"
#include "kube/decode.h"
#include "kube/errors.h"
#include "spdlog/spdlog.h"

namespace kube {

Reflector::Reflector(Client& client, Resource resource, ReflectorOptions options,
                     ReflectorSink& sink, Clock& clock)
    : client_(client),
      resource_(std::move(resource)),
      options_(std::move(options)),
      sink_(sink),
      clock_(clock),
      backoff_(options_.backoff, options_.seed != 0 ? options_.seed : std::random_device{}()),
      rng_(options_.seed != 0 ? options_.seed + 1 : std::random_device{}()) {}

std::string Reflector::last_resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

absl::Status Reflector::last_list_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_list_error_;
}

void Reflector::SetResourceVersion(std::string rv) {
  std::lock_guard<std::mutex> lock(mu_);
  resource_version_ = std::move(rv);
}

bool Reflector::Wait(absl::Duration retry_after, const Cancellation* cancel) {
  return clock_.SleepFor(std::max(backoff_.Next(), retry_after), cancel);
}

absl::Status Reflector::List(const Cancellation* cancel) {
  ++lists_;
  ListOptions list_options{.label_selector = options_.label_selector,
                           .field_selector = options_.field_selector,
                           .limit = options_.page_size};
  std::string rv;
  absl::Status status = client_.ListPages(resource_, options_.namespace_, list_options,
                                          [&](std::string_view page) -> absl::Status {
                                            if (cancel != nullptr && cancel->cancelled())
                                              return absl::CancelledError("list cancelled");
                                            // Every page of a paged list carries the
                                            // resourceVersion the list is pinned to.
                                            ASSIGN_OR_RETURN(ListMeta meta, DecodeListMeta(page));
                                            rv = std::move(meta.resource_version);
                                            return sink_.ListPage(page);
                                          });
  if (!status.ok()) {
    sink_.AbortList();
    return status;
  }
  // Before the sink marks itself synced: whoever sees the cache synced (WaitForSync, its event
  // handlers) sees the list's resourceVersion too, never the one before it. (A test that cut an
  // informer off right after its sync read an empty version here, then watched from "" and got
  // the current objects instead of the 410 it waited for.) Only this thread resumes from it.
  SetResourceVersion(rv);
  sink_.EndList(rv);
  return absl::OkStatus();
}

absl::Status Reflector::WatchLoop(const Cancellation* cancel) {
  while (cancel == nullptr || !cancel->cancelled()) {
    absl::Duration min = options_.min_watch_timeout;
    std::uniform_int_distribution<int64_t> spread(
        0, std::max<int64_t>(0, absl::ToInt64Seconds(min) - 1));
    WatchOptions watch{
        .resource_version = last_resource_version(),
        .label_selector = options_.label_selector,
        .field_selector = options_.field_selector,
        .timeout_seconds = static_cast<int>(absl::ToInt64Seconds(min) + spread(rng_)),
        .allow_bookmarks = true};
    ++watches_;
    absl::Status event_error;
    int64_t events = 0;
    absl::Time started = clock_.Now();
    absl::Status status = client_.Watch(
        resource_, options_.namespace_, watch,
        [&](const WatchEvent& event) {
          if (event.type == WatchEvent::Type::kError) {
            event_error = StatusFromStatusObject(event.object, 500);
            return false;
          }
          ++events;
          if (event.type != WatchEvent::Type::kBookmark) sink_.Event(event);
          // Only after the sink has it: a resume must not skip an event it never saw.
          if (!event.resource_version.empty()) SetResourceVersion(event.resource_version);
          return true;
        },
        cancel);
    if (cancel != nullptr && cancel->cancelled()) return absl::OkStatus();
    if (!event_error.ok()) status = event_error;
    if (IsGone(status)) return status;  // too old: the caller relists
    if (!status.ok()) {
      std::optional<KubeError> error = KubeErrorOf(status);
      spdlog::warn("watch {} from resourceVersion {} failed, resuming: {}", resource_.plural,
                   watch.resource_version, status);
      // A watch that delivered events was healthy until it broke: resume after the first
      // backoff step, not one grown by breaks long past (a connection cut now and then would
      // otherwise leave the cache up to 30 s behind after each).
      if (events > 0) backoff_.Reset();
      if (!Wait(error.has_value() ? error->retry_after : absl::ZeroDuration(), cancel)) {
        return absl::OkStatus();
      }
      continue;
    }
    // The server ended the watch (timeoutSeconds). One that ends at once with nothing in it is
    // a server in trouble: don't spin on it.
    if (events == 0 && clock_.Now() - started < absl::Seconds(1)) {
      if (!Wait(absl::ZeroDuration(), cancel)) return absl::OkStatus();
    } else {
      backoff_.Reset();
    }
  }
  return absl::OkStatus();
}

void Reflector::Run(const Cancellation* cancel) {
  while (cancel == nullptr || !cancel->cancelled()) {
    absl::Status status = List(cancel);
    if (cancel != nullptr && cancel->cancelled()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_list_error_ = status;
    }
    if (!status.ok()) {
      spdlog::warn("list {} failed, retrying: {}", resource_.plural, status);
      std::optional<KubeError> error = KubeErrorOf(status);
      if (!Wait(error.has_value() ? error->retry_after : absl::ZeroDuration(), cancel)) return;
      continue;
    }
    status = WatchLoop(cancel);
    if (IsGone(status)) {
      spdlog::info("watch {}: resourceVersion {} is gone ({}), relisting", resource_.plural,
                   last_resource_version(), status);
    }
  }
}

}  // namespace kube
