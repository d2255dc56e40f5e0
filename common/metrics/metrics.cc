#include "common/metrics/metrics.h"

#include <algorithm>
#include <cmath>

#include "common/metrics/text_format.h"
#include "fmt/format.h"

namespace phalanx::metrics {

std::vector<double> Buckets::Latency() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,     10};
}

std::vector<double> Buckets::Exponential(double start, double factor, int count) {
  if (!(start > 0) || !(factor > 1) || count < 1) {
    internal::FailRegistration(fmt::format(
        "Buckets::Exponential({}, {}, {}): want start > 0, factor > 1, count >= 1", start,
        factor, count));
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  double bound = start;
  for (int i = 0; i < count; ++i, bound *= factor) bounds.push_back(bound);
  return bounds;
}

std::vector<double> Buckets::Linear(double start, double width, int count) {
  if (!std::isfinite(start) || !(width > 0) || count < 1) {
    internal::FailRegistration(fmt::format(
        "Buckets::Linear({}, {}, {}): want a finite start, width > 0, count >= 1", start, width,
        count));
  }
  std::vector<double> bounds;
  bounds.reserve(count);
  // start + i * width rather than a running sum, so 0.1-wide buckets do not drift.
  for (int i = 0; i < count; ++i) bounds.push_back(start + i * width);
  return bounds;
}

void Counter::Inc(double amount) {
  if (!(amount >= 0)) return;  // also rejects NaN
  value_.fetch_add(amount, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double value) {
  // The first bound >= value is the bucket whose le covers it; past the end is +Inf.
  size_t bucket = std::isnan(value) ? bounds_.size()
                                    : std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                                          bounds_.begin();
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot snapshot;
  snapshot.bounds = bounds_;
  snapshot.cumulative.resize(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    snapshot.cumulative[i] = running;
  }
  snapshot.count = running;
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

}  // namespace phalanx::metrics
