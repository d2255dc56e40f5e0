// The three metric kinds a Phalanx binary records on its hot paths: Counter, Gauge and
// Histogram, plus the standard histogram bucket layouts. Each is one series (one set of label
// values) of a family owned by a Registry (registry.h); look it up once, keep the reference, and
// update it from any thread: every update is a lock-free atomic.
//
//   metrics::Histogram& filter = requests.WithLabels({"filter"});   // once, at start-up
//   filter.Observe(0.0004);                                          // per request, any thread
//   errors.WithLabels({"bind"}).Inc();
//
// Units follow Prometheus conventions: seconds, bytes, plain counts (docs/http-and-metrics.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace phalanx::metrics {

// Histogram bucket upper bounds (the +Inf bucket is implicit and always present).
struct Buckets {
  // 100 µs to 10 s: request latencies from an in-memory lookup to a slow API call.
  static std::vector<double> Latency();
  // start, start*factor, ... (count bounds). start > 0, factor > 1, count >= 1.
  static std::vector<double> Exponential(double start, double factor, int count);
  // start, start+width, ... (count bounds). width > 0, count >= 1.
  static std::vector<double> Linear(double start, double width, int count);
};

// A value that only goes up (requests served, errors). Names end in `_total`.
class Counter {
 public:
  // Adds `amount`. A negative or NaN amount is ignored: a counter never goes down.
  void Inc(double amount = 1);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down (reservations held, nodes in the snapshot).
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Inc(double amount = 1) { value_.fetch_add(amount, std::memory_order_relaxed); }
  void Dec(double amount = 1) { value_.fetch_add(-amount, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts observations into buckets by upper bound (le = "less than or equal").
class Histogram {
 public:
  // `bounds` must be strictly increasing and finite; Registry::AddHistogram checks them.
  explicit Histogram(std::vector<double> bounds);

  // Lock-free: one bucket increment and one sum update. NaN lands in the +Inf bucket.
  void Observe(double value);

  struct Snapshot {
    std::vector<double> bounds;       // upper bounds, without +Inf
    std::vector<uint64_t> cumulative;  // bounds.size() + 1 entries; the last is the +Inf bucket
    double sum = 0;
    uint64_t count = 0;  // always equals cumulative.back()
  };
  // The counts as Prometheus exposes them: cumulative, with count taken from the buckets so
  // that `_count` equals the +Inf bucket even while other threads observe.
  Snapshot Read() const;

 private:
  std::vector<double> bounds_;
  // Per-bucket (not cumulative) counts; bounds_.size() + 1 entries, the last for +Inf.
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<double> sum_{0};
};

}  // namespace phalanx::metrics
