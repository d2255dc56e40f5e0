// Watches and informers against the real control plane, through an API-server restart and
// through etcd compaction (which makes the last resourceVersion too old and forces a relist).
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "kube/fault_transport.h"
#include "kube/informer.h"
#include "tests/integration/kube/cluster.h"

namespace kube::integration {
namespace {

// Wraps the real transport to break watches on demand (STYLE.md: inject faults by wrapping).
class DroppingTransport : public Transport {
 public:
  explicit DroppingTransport(Transport& inner) : inner_(inner) {}

  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    return inner_.Send(request);
  }

  absl::StatusOr<HttpResponse> Stream(const HttpRequest& request, const ChunkCallback& on_chunk,
                                      const Cancellation* cancel) override {
    Cancellation local;
    {
      // The refusal check and the registration are one step under the lock: a stream that
      // passed the check before RefuseStreams(true) is in active_ when DropWatches looks, so it
      // is cut too. (Checked apart, a watch the reflector began just after its list slipped
      // between them, saw the writes made "behind its back", and so never met the 410.)
      std::lock_guard<std::mutex> lock(mu_);
      if (refuse_streams_) return absl::UnavailableError("injected: watch refused");
      active_.insert(&local);
    }
    int id = cancel != nullptr ? cancel->OnCancel([&local] { local.Cancel(); }) : -1;
    // A cut is a cut: once dropped, no further chunk reaches the caller, even one the inner
    // stream had already read (otherwise the informer can see writes made "behind its back").
    ChunkCallback gated = [&local, &on_chunk](std::string_view chunk) {
      return !local.cancelled() && on_chunk(chunk);
    };
    absl::StatusOr<HttpResponse> result = inner_.Stream(request, gated, &local);
    {
      std::lock_guard<std::mutex> lock(mu_);
      active_.erase(&local);
    }
    ended_.notify_all();
    if (cancel != nullptr) cancel->Unregister(id);
    if (local.cancelled() && !(cancel != nullptr && cancel->cancelled())) {
      return absl::UnavailableError("injected: watch dropped");
    }
    return result;
  }

  void RefuseStreams(bool refuse) {
    std::lock_guard<std::mutex> lock(mu_);
    refuse_streams_ = refuse;
  }
  // Cancels every open watch and waits until each has returned to its caller, so nothing
  // written after this call can reach the informer through an old stream.
  void DropWatches() {
    std::unique_lock<std::mutex> lock(mu_);
    for (Cancellation* c : active_) c->Cancel();
    ended_.wait_for(lock, std::chrono::seconds(30), [this] { return active_.empty(); });
  }

 private:
  Transport& inner_;
  std::mutex mu_;
  bool refuse_streams_ = false;  // guarded by mu_
  std::set<Cancellation*> active_;
  std::condition_variable ended_;
};

// The cluster's transport, not owned: what kube::FaultTransport wraps here.
class Borrowed : public Transport {
 public:
  explicit Borrowed(Transport& inner) : inner_(inner) {}
  absl::StatusOr<HttpResponse> Send(const HttpRequest& request) override {
    return inner_.Send(request);
  }
  absl::StatusOr<HttpResponse> Stream(const HttpRequest& request, const ChunkCallback& on_chunk,
                                      const Cancellation* cancel) override {
    return inner_.Stream(request, on_chunk, cancel);
  }

 private:
  Transport& inner_;
};

// Records every handler call so tests can check nothing was lost or delivered twice.
struct Recorder {
  std::mutex mu;
  std::map<std::string, int> adds, deletes;
  std::map<std::string, std::vector<std::string>> versions;  // key -> rvs delivered (add/update)

  EventHandlers<RawObject> Handlers() {
    return {.on_add =
                [this](const RawObject& o) {
                  std::lock_guard<std::mutex> lock(mu);
                  adds[o.meta.Key()]++;
                  versions[o.meta.Key()].push_back(o.meta.resource_version);
                },
            .on_update =
                [this](const RawObject&, const RawObject& o) {
                  std::lock_guard<std::mutex> lock(mu);
                  versions[o.meta.Key()].push_back(o.meta.resource_version);
                },
            .on_delete =
                [this](const RawObject& o) {
                  std::lock_guard<std::mutex> lock(mu);
                  deletes[o.meta.Key()]++;
                }};
  }

  // Each object was added once, deleted at most once, and no version was delivered twice.
  void ExpectNoDuplicates() {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [key, n] : adds) EXPECT_EQ(n, 1) << key << " added " << n << " times";
    for (const auto& [key, n] : deletes) EXPECT_EQ(n, 1) << key << " deleted " << n << " times";
    for (const auto& [key, rvs] : versions) {
      std::set<std::string> unique(rvs.begin(), rvs.end());
      EXPECT_EQ(unique.size(), rvs.size()) << key << " saw a resourceVersion twice";
    }
  }
};

// Runs an informer on a thread; stops and joins it on scope exit, also after a failed ASSERT.
class Running {
 public:
  explicit Running(Informer<RawObject>& informer)
      : thread_([this, &informer] { informer.Run(&stop_); }) {}
  ~Running() { Stop(); }
  void Stop() {
    stop_.Cancel();
    if (thread_.joinable()) thread_.join();
  }

 private:
  Cancellation stop_;
  std::thread thread_;
};

std::string ConfigMap(const std::string& name, const std::string& label, int value) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")", name,
                      R"(","labels":{"set":")", label, R"("}},"data":{"v":")", value, "\"}}");
}

// The informer's cache holds exactly what the server has: the same keys at the same versions.
bool CacheMatchesServer(Client& client, const std::string& ns, const std::string& label,
                        const Informer<RawObject>& informer) {
  absl::StatusOr<ListResult> list =
      client.List(ConfigMaps(), ns, {.label_selector = "set=" + label});
  if (!list.ok()) return false;
  std::map<std::string, std::string> server, cache;
  for (const std::string& item : list->items) {
    absl::StatusOr<RawObject> o = Decode<RawObject>(item);
    if (!o.ok()) return false;
    server[o->meta.Key()] = o->meta.resource_version;
  }
  for (const auto& o : informer.List()) cache[o->meta.Key()] = o->meta.resource_version;
  return server == cache;
}

class WatchTest : public ClusterTest {
 protected:
  InformerOptions Options(const std::string& label) {
    return {
        .reflector = {.namespace_ = ns(),
                      .label_selector = "set=" + label,
                      .min_watch_timeout = absl::Seconds(60),
                      .backoff = {.initial = absl::Milliseconds(200), .max = absl::Seconds(2)}}};
  }
  void Create(const std::string& name, const std::string& label, int value) {
    ASSERT_OK(client().Create(ConfigMaps(), ns(), ConfigMap(name, label, value)).status());
  }
  // Creates <label>-0 .. <label>-(n-1) and waits until the informer has them all.
  void CreateAndSync(const Informer<RawObject>& informer, const std::string& label, int n) {
    for (int i = 0; i < n; ++i) Create(absl::StrCat(label, "-", i), label, 0);
    ASSERT_TRUE(informer.WaitForSync(absl::Seconds(30)));
    ASSERT_TRUE(
        Eventually([&] { return informer.size() == static_cast<size_t>(n); }, absl::Seconds(30)));
  }
  void Patch(const std::string& name, int value) {
    ASSERT_OK(client()
                  .Patch(ConfigMaps(), ns(), name, PatchType::kMerge,
                         absl::StrCat(R"({"data":{"v":")", value, "\"}}"))
                  .status());
  }
};

TEST_F(WatchTest, InformerSurvivesApiServerRestartWithoutLossOrDuplicates) {
  std::string label = "restart-" + RandomSuffix();
  Informer<RawObject> informer(client(), ConfigMaps(), Options(label));
  Recorder recorder;
  informer.AddEventHandlers(recorder.Handlers());
  Running running(informer);

  ASSERT_NO_FATAL_FAILURE(CreateAndSync(informer, label, 10));
  for (int i = 0; i < 3; ++i) Patch(absl::StrCat(label, "-", i), 1);

  ASSERT_OK(RunClusterScript("restart-apiserver.sh", "--down-for 3"));
  absl::Cleanup recovered = [] { EXPECT_OK(WaitForControllers()); };

  // Changes after the restart reach the informer through the resumed (or re-listed) watch.
  for (int i = 3; i < 6; ++i) Patch(absl::StrCat(label, "-", i), 2);
  for (int i = 6; i < 8; ++i)
    ASSERT_OK(client().Delete(ConfigMaps(), ns(), absl::StrCat(label, "-", i)));
  for (int i = 10; i < 13; ++i) Create(absl::StrCat(label, "-", i), label, 0);

  EXPECT_TRUE(Eventually([&] { return CacheMatchesServer(client(), ns(), label, informer); },
                         absl::Seconds(60)))
      << "the informer never caught up after the restart";
  running.Stop();

  recorder.ExpectNoDuplicates();
  std::lock_guard<std::mutex> lock(recorder.mu);
  EXPECT_EQ(recorder.adds.size(), 13u);
  EXPECT_EQ(recorder.deletes.size(), 2u);
  for (int i = 0; i < 6; ++i) {
    // created + one patch each, both delivered
    EXPECT_EQ(recorder.versions[absl::StrCat(ns(), "/", label, "-", i)].size(), 2u) << i;
  }
  std::cerr << "[restart] lists=" << informer.reflector().lists()
            << " watches=" << informer.reflector().watches() << "\n";
}

TEST_F(WatchTest, CompactedResourceVersionIsGoneAndTheInformerRelists) {
  std::string label = "compact-" + RandomSuffix();
  DroppingTransport faults(transport());
  RestClient faulty(faults);
  Informer<RawObject> informer(faulty, ConfigMaps(), Options(label));
  Recorder recorder;
  informer.AddEventHandlers(recorder.Handlers());
  Running running(informer);

  ASSERT_NO_FATAL_FAILURE(CreateAndSync(informer, label, 5));

  // Cut the informer off, change things behind its back, and compact them out of etcd's history.
  faults.RefuseStreams(true);
  faults.DropWatches();
  std::string stale_rv = informer.reflector().last_resource_version();
  ASSERT_FALSE(stale_rv.empty()) << "a synced informer knows its list's resourceVersion";
  Patch(absl::StrCat(label, "-0"), 9);
  ASSERT_OK(client().Delete(ConfigMaps(), ns(), absl::StrCat(label, "-1")));
  Create(absl::StrCat(label, "-5"), label, 0);
  ASSERT_OK(RunClusterScript("compact-etcd.sh"));
  // A fresh API server has an empty watch cache, so it cannot serve the old version from memory.
  ASSERT_OK(RunClusterScript("restart-apiserver.sh"));
  absl::Cleanup recovered = [] { EXPECT_OK(WaitForControllers()); };

  // The server now refuses the old version: 410 up front, or an ERROR event with code 410.
  // While the restarted server's watch cache initializes it answers 429 instead, so ask until
  // the refusal comes, for up to a minute. (This loop once waited three minutes in vain: the
  // informer's version read here was empty, as the reflector recorded a list's version only
  // after marking the cache synced, and a watch from "" gets the current objects, never a 410.)
  absl::Status event_error;
  absl::Status watch_status;
  int attempts = 0;
  const absl::Time restarted = absl::Now();
  const absl::Time give_up = restarted + absl::Seconds(60);
  do {
    if (attempts++ > 0) absl::SleepFor(absl::Milliseconds(200));  // a 429 comes back at once
    event_error = absl::OkStatus();
    std::string events;
    watch_status = client().Watch(
        ConfigMaps(), ns(),
        {.resource_version = stale_rv, .label_selector = "set=" + label, .timeout_seconds = 5},
        [&](const WatchEvent& e) {
          absl::StrAppend(&events, " ", std::string(WatchEventTypeName(e.type)), "@",
                          e.resource_version);
          if (e.type == WatchEvent::Type::kError) {
            event_error = StatusFromStatusObject(e.object, 500);
            return false;
          }
          return true;
        });
    // Each answer, so that a server that never refuses shows how it answered instead.
    std::cerr << "[compact] watch " << attempts << " at +" << absl::Now() - restarted << ": "
              << watch_status << "; events:" << events << "; error event: " << event_error << "\n";
  } while (!IsGone(watch_status) && !IsGone(event_error) && absl::Now() < give_up);
  std::cerr << "[compact] the server refused the compacted version after " << attempts
            << " watch(es)\n";
  EXPECT_TRUE(IsGone(watch_status) || IsGone(event_error))
      << "watch from compacted resourceVersion " << stale_rv << ": " << watch_status << " / "
      << event_error;

  int64_t lists_before = informer.reflector().lists();
  faults.RefuseStreams(false);
  EXPECT_TRUE(Eventually([&] { return CacheMatchesServer(client(), ns(), label, informer); },
                         absl::Seconds(60)));
  EXPECT_GT(informer.reflector().lists(), lists_before) << "the informer did not relist";
  running.Stop();

  recorder.ExpectNoDuplicates();
  std::lock_guard<std::mutex> lock(recorder.mu);
  EXPECT_EQ(recorder.deletes[absl::StrCat(ns(), "/", label, "-1")], 1);
  EXPECT_EQ(recorder.adds[absl::StrCat(ns(), "/", label, "-5")], 1);
  EXPECT_EQ(recorder.versions[absl::StrCat(ns(), "/", label, "-0")].size(), 2u);
}

// PHALANX_FAULTS as the binaries read it: every watch stream is cut in the middle of its 7th
// event. The informer resumes each time from the last event it got whole, and ends equal to
// the server with nothing lost or delivered twice, without relisting.
TEST_F(WatchTest, InformerConvergesThroughWatchesCutMidEvent) {
  std::string label = "cut-" + RandomSuffix();
  setenv(kFaultsEnv, "watch_cut_after=7", 1);
  absl::StatusOr<std::unique_ptr<Transport>> wrapped =
      WrapWithFaultsFromEnv(std::make_unique<Borrowed>(transport()));
  unsetenv(kFaultsEnv);
  ASSERT_OK(wrapped.status());
  auto* faults = dynamic_cast<FaultTransport*>(wrapped->get());
  ASSERT_NE(faults, nullptr);
  RestClient faulty(**wrapped);
  Informer<RawObject> informer(faulty, ConfigMaps(), Options(label));
  Recorder recorder;
  informer.AddEventHandlers(recorder.Handlers());
  Running running(informer);

  ASSERT_NO_FATAL_FAILURE(CreateAndSync(informer, label, 20));
  for (int i = 0; i < 20; ++i) Patch(absl::StrCat(label, "-", i), 1);
  for (int i = 15; i < 20; ++i) {
    ASSERT_OK(client().Delete(ConfigMaps(), ns(), absl::StrCat(label, "-", i)));
  }
  EXPECT_TRUE(Eventually([&] { return CacheMatchesServer(client(), ns(), label, informer); },
                         absl::Seconds(60)))
      << "the informer never caught up through the cuts";
  running.Stop();

  // 45 changes, at least the 25 after the sync through watches, in streams cut after 7 events:
  // usually 3 cuts or more, fewer if streams end before their 7th event for other reasons
  // (the API server's watch cache closes a watcher that falls behind; once locally, under the
  // sanitizers after an API-server restart, 2 cuts, cause unconfirmed). What must hold is that
  // streams were cut and the informer still converged, resuming without a relist or duplicate.
  std::cerr << "[cut] " << faults->watch_cuts() << " cuts in " << informer.reflector().watches()
            << " watches\n";
  EXPECT_GE(faults->watch_cuts(), 1);
  EXPECT_EQ(informer.reflector().lists(), 1) << "a cut stream is resumed, not relisted";
  recorder.ExpectNoDuplicates();
  std::lock_guard<std::mutex> lock(recorder.mu);
  EXPECT_EQ(recorder.adds.size(), 20u);
  EXPECT_EQ(recorder.deletes.size(), 5u);
  for (int i = 0; i < 15; ++i) {
    EXPECT_EQ(recorder.versions[absl::StrCat(ns(), "/", label, "-", i)].size(), 2u) << i;
  }
  std::cerr << "[cut] watches=" << informer.reflector().watches()
            << " cuts=" << faults->watch_cuts() << "\n";
}

TEST_F(WatchTest, CancelEndsAQuietWatchPromptly) {
  Cancellation stop;
  absl::Time start = absl::Now();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stop.Cancel();
  });
  // A watch on a label nothing has: the server sends nothing for 300 s unless cancelled.
  absl::Status status = client().Watch(
      ConfigMaps(), ns(),
      {.label_selector = "set=nothing-" + RandomSuffix(), .timeout_seconds = 300},
      [](const WatchEvent&) { return true; }, &stop);
  canceller.join();
  EXPECT_TRUE(status.ok() || absl::IsCancelled(status)) << status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
}

}  // namespace
}  // namespace kube::integration
