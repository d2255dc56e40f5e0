// List-then-watch one resource and keep a sink in step with the API server, through watch
// timeouts, dropped connections, API-server restarts and etcd compaction:
//
//   * list (paged) and remember the list's resourceVersion;
//   * watch from it with allowWatchBookmarks=true and a jittered timeoutSeconds, advancing the
//     resourceVersion with every event and every BOOKMARK;
//   * when a watch ends (server timeout) or breaks (connection lost), watch again from the last
//     resourceVersion: nothing is missed and nothing is replayed;
//   * when the server says that resourceVersion is gone (HTTP 410, or an ERROR event with code
//     410, after etcd compacted it), relist;
//   * any other failure waits with jittered exponential backoff (Retry-After honoured).
//
//   kube::Reflector reflector(client, kube::Pods(), {.namespace_ = "ml"}, sink);
//   std::thread t([&] { reflector.Run(&stop); });
//
// Informer (kube/informer.h) is the usual sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kube/backoff.h"
#include "kube/client.h"
#include "kube/clock.h"
#include "kube/resource.h"
#include "kube/watch_stream.h"

namespace kube {

// Receives what the reflector sees. Calls come from the reflector's thread, one at a time.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // One page of a (re)list. Pages of one list arrive in order, then EndList or AbortList.
  virtual absl::Status ListPage(std::string_view page_json) = 0;
  // The list is complete: everything not in its pages is gone.
  virtual void EndList(std::string_view resource_version) = 0;
  // The list failed part-way; discard its pages.
  virtual void AbortList() = 0;
  // ADDED, MODIFIED or DELETED (bookmarks and errors are the reflector's business).
  virtual void Event(const WatchEvent& event) = 0;
};

struct ReflectorOptions {
  std::string namespace_;  // "" for all namespaces / cluster-scoped
  std::string label_selector;
  std::string field_selector;
  int64_t page_size = 500;
  // Each watch asks the server to end it after a random time in [min, 2*min), like client-go, so
  // a fleet of watchers does not reconnect all at once.
  absl::Duration min_watch_timeout = absl::Minutes(5);
  Backoff::Options backoff;
  uint64_t seed = 0;  // 0 picks a random seed
};

class Reflector {
 public:
  Reflector(Client& client, Resource resource, ReflectorOptions options, ReflectorSink& sink,
            Clock& clock = RealClock());

  // Runs until `cancel` fires.
  void Run(const Cancellation* cancel);

  // For metrics and tests. Once the sink has ended a list (an Informer has synced), at least
  // that list's resourceVersion.
  std::string last_resource_version() const;
  // The error of the last list if it failed, OK once a list succeeded (or before the first).
  absl::Status last_list_error() const;
  const Resource& resource() const { return resource_; }
  int64_t lists() const { return lists_.load(); }
  int64_t watches() const { return watches_.load(); }

 private:
  absl::Status List(const Cancellation* cancel);
  // Watches from the current resourceVersion until cancelled or the version is gone.
  absl::Status WatchLoop(const Cancellation* cancel);
  void SetResourceVersion(std::string rv);
  // Sleeps the next backoff step (at least `retry_after`); false if cancelled.
  bool Wait(absl::Duration retry_after, const Cancellation* cancel);

  Client& client_;
  const Resource resource_;
  const ReflectorOptions options_;
  ReflectorSink& sink_;
  Clock& clock_;
  Backoff backoff_;
  std::mt19937_64 rng_;
  mutable std::mutex mu_;
  std::string resource_version_;
  absl::Status last_list_error_;
  std::atomic<int64_t> lists_{0};
  std::atomic<int64_t> watches_{0};
};

}  // namespace kube
