// Registry: the metric families of one process and their Prometheus text exposition (format
// 0.0.4), served on /metrics by common/http/metrics_handler.h.
//
//   metrics::Registry registry;
//   auto& requests = registry.AddHistogram("phalanx_extender_request_duration_seconds",
//       "Time to answer one kube-scheduler extender call.", {"verb"}, metrics::Buckets::Latency());
//   auto& filter = requests.WithLabels({"filter"});   // look up once ...
//   filter.Observe(0.0004);                          // ... update per request, lock-free
//   registry.AddCallbackGauge("phalanx_snapshot_nodes", "Nodes in the snapshot.",
//                             [&] { return snapshot.NodeCount(); });
//   registry.AddCallbackGaugeFamily("phalanx_domain_allocatable_gpus", "GPUs per domain.",
//                                   {"level", "domain"}, [&] { return GpusPerDomain(); });
//   std::string text = registry.Render();
//
// Registration is start-up code with names fixed in the source, so a bad name, a bad bucket
// layout, a duplicate family or a wrong number of label values is a programming error: it
// aborts with a message naming the metric (ValidateMetricName / ValidateLabelName let code that
// builds names at run time check first). Rendering is deterministic: families by name, series by
// label values, so two scrapes of an idle process are byte-identical.
//
// Thread safety: every method may be called from any thread. Add* and WithLabels take a lock;
// updates to a Counter, Gauge or Histogram do not. Render holds the registry lock while it runs
// the callback gauges, so a callback must not call back into the registry.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/metrics/metrics.h"

namespace phalanx::metrics {

// OK if `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*; InvalidArgument naming it otherwise.
absl::Status ValidateMetricName(std::string_view name);
// OK if `name` matches [a-zA-Z_][a-zA-Z0-9_]* and does not start with "__" (reserved by
// Prometheus); InvalidArgument naming it otherwise.
absl::Status ValidateLabelName(std::string_view name);

namespace internal {

// What the Registry needs from a family of any kind.
class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  // Appends the family's HELP, TYPE and sample lines; nothing if it has no series yet.
  virtual void Render(std::string* out) const = 0;
};

}  // namespace internal

// One series of a callback gauge family: its label values, one per label name, and its value.
struct LabelledValue {
  std::vector<std::string> labels;
  double value = 0;
};

// All series of one metric name, one per combination of label values.
template <typename T>
class Family final : public internal::FamilyBase {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::function<std::unique_ptr<T>()> make);

  // The series with these label values (one per label name, in the order they were
  // registered), created at zero on first use. The reference stays valid for the Registry's
  // lifetime. Takes a lock and a map lookup: call it once per series, not once per update.
  T& WithLabels(const std::vector<std::string>& values);

  // Drops every series whose label values `drop` returns true for, so that a gauge about
  // something that is gone (a deleted queue) leaves the exposition instead of keeping its last
  // value. A reference WithLabels returned for a dropped series dangles: use this only on
  // families whose series are looked up at each update, never on cached ones. An unlabelled
  // family keeps its one series.
  void RemoveIf(const std::function<bool(const std::vector<std::string>&)>& drop);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  void Render(std::string* out) const override;

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::function<std::unique_ptr<T>()> make_;
  mutable std::mutex mu_;
  // std::map keeps the exposition order stable (sorted by label values).
  std::map<std::vector<std::string>, std::unique_ptr<T>> series_;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // A family with no labels has exactly one series, present (at zero) from registration on:
  // reach it with WithLabels({}).
  //
  // Counter names must end in "_total" (the Prometheus convention; it also keeps them apart
  // from a histogram's _count).
  Family<Counter>& AddCounter(std::string name, std::string help,
                              std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(std::string name, std::string help,
                          std::vector<std::string> label_names = {});
  // `bounds`: strictly increasing finite upper bounds (see Buckets); a trailing +Inf is
  // accepted and dropped since the +Inf bucket is always there. "le" is not a valid label name
  // here: the buckets use it.
  Family<Histogram>& AddHistogram(std::string name, std::string help,
                                  std::vector<std::string> label_names,
                                  std::vector<double> bounds);
  // A gauge with no labels whose value `value` computes at each Render, for numbers that
  // already live elsewhere (snapshot size, reservations held). `value` must stay callable for
  // the Registry's lifetime, be thread-safe, and not call into this Registry.
  void AddCallbackGauge(std::string name, std::string help, std::function<double()> value);
  // A labelled gauge whose series `values` lists at each Render, for numbers that live elsewhere
  // and whose label sets come and go with the data (GPUs per topology domain, the oldest pending
  // job per queue): a series the callback stops listing leaves the exposition, so nothing stale
  // stays behind. Series are sorted by label values; two with the same label values are added
  // together; one with the wrong number of label values is dropped and logged (the values come
  // from run-time data, a scrape must not abort the process). No series: the family is left
  // out. Same contract for `values` as AddCallbackGauge.
  void AddCallbackGaugeFamily(std::string name, std::string help,
                              std::vector<std::string> label_names,
                              std::function<std::vector<LabelledValue>()> values);

  // `prepare` runs once at the start of every Render, before any callback gauge, under the
  // Registry's lock (so never during another Render): callbacks that need the same costly
  // computation (a walk of the whole cluster snapshot) read what it left instead of each doing
  // it again. Same contract as a callback's `value`; a hook that throws is logged and the
  // Render goes on.
  void AddRenderHook(std::function<void()> prepare);

  // The text exposition of every family with at least one series, families sorted by name.
  std::string Render() const;

 private:
  // Validates the name and its label names and reserves the sample names it will write
  // (`name`, or name_bucket/_sum/_count for a histogram); aborts on any problem.
  void Reserve(const std::string& name, const std::vector<std::string>& label_names,
               bool histogram);
  template <typename T>
  Family<T>& Insert(std::unique_ptr<Family<T>> family);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<internal::FamilyBase>> families_;
  std::vector<std::function<void()>> render_hooks_;
  std::set<std::string> sample_names_;  // every name a sample line may start with
};

}  // namespace phalanx::metrics
