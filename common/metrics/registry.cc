#include "common/metrics/registry.h"

#include <cmath>
#include <exception>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/metrics/text_format.h"
#include "fmt/format.h"
#include "spdlog/spdlog.h"

namespace phalanx::metrics {
namespace {

absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsNameStart(char c, bool colon_ok) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_ok && c == ':');
}
bool IsNameChar(char c, bool colon_ok) {
  return IsNameStart(c, colon_ok) || (c >= '0' && c <= '9');
}
bool MatchesName(std::string_view name, bool colon_ok) {
  if (name.empty() || !IsNameStart(name[0], colon_ok)) return false;
  for (char c : name) {
    if (!IsNameChar(c, colon_ok)) return false;
  }
  return true;
}

constexpr const char* kHistogramSuffixes[] = {"_bucket", "_sum", "_count"};

// Counter and Gauge: one sample line with the current value.
template <typename T>
void RenderSeries(const std::string& name, const std::vector<std::string>& label_names,
                  const std::vector<std::string>& values, const T& metric, std::string* out) {
  internal::AppendSampleLine(name, label_names, values, "", "", metric.Value(), out);
}

void RenderSeries(const std::string& name, const std::vector<std::string>& label_names,
                  const std::vector<std::string>& values, const Histogram& histogram,
                  std::string* out) {
  Histogram::Snapshot snapshot = histogram.Read();
  const std::string bucket = name + "_bucket";
  std::string le;
  for (size_t i = 0; i < snapshot.cumulative.size(); ++i) {
    le.clear();
    if (i < snapshot.bounds.size()) {
      internal::AppendValue(snapshot.bounds[i], &le);
    } else {
      le = "+Inf";
    }
    internal::AppendSampleLine(bucket, label_names, values, "le", le, snapshot.cumulative[i],
                               out);
  }
  internal::AppendSampleLine(name + "_sum", label_names, values, "", "", snapshot.sum, out);
  internal::AppendSampleLine(name + "_count", label_names, values, "", "", snapshot.count, out);
}

template <typename T>
constexpr std::string_view TypeName();
template <>
constexpr std::string_view TypeName<Counter>() {
  return "counter";
}
template <>
constexpr std::string_view TypeName<Gauge>() {
  return "gauge";
}
template <>
constexpr std::string_view TypeName<Histogram>() {
  return "histogram";
}

// Runs a callback gauge's function at scrape time. A scrape must not take the process down:
// a throw is logged and the family is missing from this scrape.
template <typename T>
std::optional<T> Evaluate(const std::string& name, const std::function<T()>& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    spdlog::error("metrics: callback gauge {} threw: {}", name, e.what());
  } catch (...) {
    spdlog::error("metrics: callback gauge {} threw a non-exception", name);
  }
  return std::nullopt;
}

// A gauge whose one value is computed at scrape time.
class CallbackGaugeFamily final : public internal::FamilyBase {
 public:
  CallbackGaugeFamily(std::string name, std::string help, std::function<double()> value)
      : name_(std::move(name)), help_(std::move(help)), value_(std::move(value)) {}

  void Render(std::string* out) const override {
    std::optional<double> value = Evaluate(name_, value_);
    if (!value) return;
    internal::AppendHeader(name_, help_, "gauge", out);
    internal::AppendSampleLine(name_, {}, {}, "", "", *value, out);
  }

 private:
  const std::string name_;
  const std::string help_;
  const std::function<double()> value_;
};

// A labelled gauge whose series are listed at scrape time.
class CallbackGaugeSetFamily final : public internal::FamilyBase {
 public:
  CallbackGaugeSetFamily(std::string name, std::string help, std::vector<std::string> label_names,
                         std::function<std::vector<LabelledValue>()> values)
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        values_(std::move(values)) {}

  void Render(std::string* out) const override {
    std::optional<std::vector<LabelledValue>> listed = Evaluate(name_, values_);
    if (!listed) return;
    std::map<std::vector<std::string>, double> series;
    for (LabelledValue& v : *listed) {
      if (v.labels.size() != label_names_.size()) {
        spdlog::error("metrics: {}: a series with {} label values, want {} ({}); dropped", name_,
                      v.labels.size(), label_names_.size(), fmt::join(label_names_, ", "));
        continue;
      }
      series[std::move(v.labels)] += v.value;
    }
    if (series.empty()) return;
    internal::AppendHeader(name_, help_, "gauge", out);
    for (const auto& [labels, value] : series) {
      internal::AppendSampleLine(name_, label_names_, labels, "", "", value, out);
    }
  }

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  const std::function<std::vector<LabelledValue>()> values_;
};

}  // namespace

absl::Status ValidateMetricName(std::string_view name) {
  if (MatchesName(name, /*colon_ok=*/true)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("metric name \"", AbslView(name),
                                                 "\" does not match [a-zA-Z_:][a-zA-Z0-9_:]*"));
}

absl::Status ValidateLabelName(std::string_view name) {
  if (!MatchesName(name, /*colon_ok=*/false)) {
    return absl::InvalidArgumentError(absl::StrCat("label name \"", AbslView(name),
                                                   "\" does not match [a-zA-Z_][a-zA-Z0-9_]*"));
  }
  if (name.substr(0, 2) == "__") {
    return absl::InvalidArgumentError(absl::StrCat(
        "label name \"", AbslView(name), "\" starts with \"__\", which Prometheus reserves"));
  }
  return absl::OkStatus();
}

template <typename T>
Family<T>::Family(std::string name, std::string help, std::vector<std::string> label_names,
                  std::function<std::unique_ptr<T>()> make)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      make_(std::move(make)) {
  if (label_names_.empty()) series_.emplace(std::vector<std::string>{}, make_());
}

template <typename T>
T& Family<T>::WithLabels(const std::vector<std::string>& values) {
  if (values.size() != label_names_.size()) {
    internal::FailRegistration(
        fmt::format("{}: {} label values given, want {} ({})", name_, values.size(),
                    label_names_.size(), fmt::join(label_names_, ", ")));
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = series_.find(values);
  if (it == series_.end()) it = series_.emplace(values, make_()).first;
  return *it->second;
}

template <typename T>
void Family<T>::RemoveIf(const std::function<bool(const std::vector<std::string>&)>& drop) {
  if (label_names_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(series_, [&drop](const auto& entry) { return drop(entry.first); });
}

template <typename T>
void Family<T>::Render(std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (series_.empty()) return;
  internal::AppendHeader(name_, help_, TypeName<T>(), out);
  for (const auto& [values, series] : series_) {
    RenderSeries(name_, label_names_, values, *series, out);
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Registry::Registry() = default;
Registry::~Registry() = default;

void Registry::Reserve(const std::string& name, const std::vector<std::string>& label_names,
                       bool histogram) {
  if (absl::Status status = ValidateMetricName(name); !status.ok()) {
    internal::FailRegistration(std::string(status.message()));
  }
  std::set<std::string_view> seen;
  for (const std::string& label : label_names) {
    if (absl::Status status = ValidateLabelName(label); !status.ok()) {
      internal::FailRegistration(absl::StrCat(name, ": ", status.message()));
    }
    if (histogram && label == "le") {
      internal::FailRegistration(
          absl::StrCat(name, ": a histogram cannot have a label \"le\" (its buckets use it)"));
    }
    if (!seen.insert(label).second) {
      internal::FailRegistration(absl::StrCat(name, ": label \"", label, "\" given twice"));
    }
  }
  std::vector<std::string> samples;
  if (histogram) {
    for (const char* suffix : kHistogramSuffixes) samples.push_back(name + suffix);
  } else {
    samples.push_back(name);
  }
  if (families_.count(name) != 0) {
    internal::FailRegistration(absl::StrCat("metric \"", name, "\" registered twice"));
  }
  for (const std::string& sample : samples) {
    if (sample_names_.count(sample) != 0 || families_.count(sample) != 0) {
      internal::FailRegistration(absl::StrCat("metric \"", name, "\" would write samples named \"",
                                              sample, "\", which another metric already does"));
    }
  }
  sample_names_.insert(samples.begin(), samples.end());
}

template <typename T>
Family<T>& Registry::Insert(std::unique_ptr<Family<T>> family) {
  Family<T>& ref = *family;
  families_.emplace(family->name(), std::move(family));
  return ref;
}

Family<Counter>& Registry::AddCounter(std::string name, std::string help,
                                      std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  if (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0) {
    internal::FailRegistration(
        absl::StrCat("counter \"", name, "\" must end in \"_total\" (Prometheus convention)"));
  }
  Reserve(name, label_names, /*histogram=*/false);
  return Insert(std::make_unique<Family<Counter>>(std::move(name), std::move(help),
                                                  std::move(label_names),
                                                  [] { return std::make_unique<Counter>(); }));
}

Family<Gauge>& Registry::AddGauge(std::string name, std::string help,
                                  std::vector<std::string> label_names) {
  std::lock_guard<std::mutex> lock(mu_);
  Reserve(name, label_names, /*histogram=*/false);
  return Insert(std::make_unique<Family<Gauge>>(std::move(name), std::move(help),
                                                std::move(label_names),
                                                [] { return std::make_unique<Gauge>(); }));
}

Family<Histogram>& Registry::AddHistogram(std::string name, std::string help,
                                          std::vector<std::string> label_names,
                                          std::vector<double> bounds) {
  std::lock_guard<std::mutex> lock(mu_);
  Reserve(name, label_names, /*histogram=*/true);
  if (!bounds.empty() && bounds.back() == INFINITY) bounds.pop_back();
  if (bounds.empty()) {
    internal::FailRegistration(absl::StrCat("histogram \"", name, "\" has no finite buckets"));
  }
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1]))) {
      internal::FailRegistration(fmt::format(
          "histogram \"{}\": bucket bounds must be finite and strictly increasing, got {}", name,
          fmt::join(bounds, ", ")));
    }
  }
  return Insert(std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), std::move(label_names),
      [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); }));
}

void Registry::AddCallbackGauge(std::string name, std::string help,
                                std::function<double()> value) {
  std::lock_guard<std::mutex> lock(mu_);
  Reserve(name, {}, /*histogram=*/false);
  families_.emplace(name, std::make_unique<CallbackGaugeFamily>(name, std::move(help),
                                                                std::move(value)));
}

void Registry::AddCallbackGaugeFamily(std::string name, std::string help,
                                      std::vector<std::string> label_names,
                                      std::function<std::vector<LabelledValue>()> values) {
  std::lock_guard<std::mutex> lock(mu_);
  Reserve(name, label_names, /*histogram=*/false);
  families_.emplace(name, std::make_unique<CallbackGaugeSetFamily>(
                              name, std::move(help), std::move(label_names), std::move(values)));
}

void Registry::AddRenderHook(std::function<void()> prepare) {
  std::lock_guard<std::mutex> lock(mu_);
  render_hooks_.push_back(std::move(prepare));
}

std::string Registry::Render() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::function<void()>& prepare : render_hooks_) {
    // As for a callback: a scrape must not abort the process. What the hook prepares is then
    // missing, and the callbacks reading it say so by leaving their families out.
    try {
      prepare();
    } catch (const std::exception& e) {
      spdlog::error("metrics: render hook threw: {}", e.what());
    } catch (...) {
      spdlog::error("metrics: render hook threw a non-exception");
    }
  }
  std::string out;
  for (const auto& [name, family] : families_) family->Render(&out);
  return out;
}

}  // namespace phalanx::metrics
