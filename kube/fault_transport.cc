#include "kube/fault_transport.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace kube {

absl::StatusOr<FaultOptions> ParseFaultOptions(std::string_view spec) {
  FaultOptions options;
  for (absl::string_view pair : absl::StrSplit(absl::string_view(spec.data(), spec.size()), ',',
                                               absl::SkipWhitespace())) {
    pair = absl::StripAsciiWhitespace(pair);
    std::vector<absl::string_view> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &value) || value < 0 || value > 1'000'000'000) {
      return absl::InvalidArgumentError(absl::StrCat(
          kFaultsEnv, ": \"", pair, "\" is not key=N with N a count in [0, 1000000000]"));
    }
    absl::string_view key = absl::StripAsciiWhitespace(kv[0]);
    if (key == "latency_ms") {
      options.latency = absl::Milliseconds(value);
    } else if (key == "watch_cut_after") {
      options.watch_cut_after = value;
    } else if (key == "watch_cuts") {
      options.watch_cuts = value;
    } else if (key == "reset_every") {
      options.reset_every = value;
    } else if (key == "error_every") {
      options.error_every = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          kFaultsEnv, ": unknown fault \"", key,
          "\" (latency_ms, watch_cut_after, watch_cuts, reset_every, error_every)"));
    }
  }
  return options;
}

FaultTransport::FaultTransport(std::unique_ptr<Transport> inner, FaultOptions options)
    : inner_(std::move(inner)), options_(options) {}

std::optional<absl::StatusOr<HttpResponse>> FaultTransport::Before(const HttpRequest& request) {
  if (options_.reset_every == 0 && options_.error_every == 0) return std::nullopt;
  const int64_t n = requests_.fetch_add(1) + 1;
  if (options_.reset_every > 0 && n % options_.reset_every == 0) {
    ++resets_;
    spdlog::warn("fault injected: connection reset before {} {}", request.method, request.path);
    return absl::StatusOr<HttpResponse>(absl::UnavailableError(absl::StrCat(
        request.method, " ", request.path, ": injected fault: connection reset by peer")));
  }
  if (options_.error_every > 0 && n % options_.error_every == 0) {
    ++errors_;
    spdlog::warn("fault injected: 503 for {} {}", request.method, request.path);
    return absl::StatusOr<HttpResponse>(HttpResponse{
        .status = 503,
        .headers = {{"Content-Type", "application/json"}},
        .body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                R"("message":"injected fault: service unavailable","reason":"ServiceUnavailable",)"
                R"("code":503})"});
  }
  return std::nullopt;
}

absl::StatusOr<HttpResponse> FaultTransport::Send(const HttpRequest& request) {
  if (options_.latency > absl::ZeroDuration()) absl::SleepFor(options_.latency);
  if (auto fault = Before(request)) return *std::move(fault);
  return inner_->Send(request);
}

absl::StatusOr<HttpResponse> FaultTransport::Stream(const HttpRequest& request,
                                                    const ChunkCallback& on_chunk,
                                                    const Cancellation* cancel) {
  if (options_.latency > absl::ZeroDuration()) {
    if (cancel != nullptr ? cancel->WaitFor(options_.latency)
                          : (absl::SleepFor(options_.latency), false)) {
      return absl::CancelledError(absl::StrCat(request.method, " ", request.path, ": cancelled"));
    }
  }
  if (auto fault = Before(request)) return *std::move(fault);
  if (options_.watch_cut_after == 0) return inner_->Stream(request, on_chunk, cancel);

  // Count events (one per line) and cut the connection part-way through the event after the
  // limit: the reader above sees half an event, then a broken connection.
  int64_t events = 0;
  bool cut = false;
  auto counting = [&](std::string_view chunk) {
    size_t from = 0;
    while (true) {
      size_t nl = chunk.find('\n', from);
      if (nl == std::string_view::npos) break;
      from = nl + 1;
      if (++events < options_.watch_cut_after) continue;
      const int64_t done = cuts_.fetch_add(1);
      if (options_.watch_cuts > 0 && done >= options_.watch_cuts) {
        --cuts_;
        return on_chunk(chunk);  // the limit is spent: stream on untouched
      }
      cut = true;
      std::string_view delivered = chunk.substr(0, from + (chunk.size() - from) / 2);
      if (!delivered.empty()) on_chunk(delivered);
      return false;
    }
    return on_chunk(chunk);
  };
  absl::StatusOr<HttpResponse> result = inner_->Stream(request, counting, cancel);
  if (!cut) return result;
  spdlog::warn("fault injected: watch stream {} cut after {} events", request.path, events);
  return absl::UnavailableError(absl::StrCat(request.method, " ", request.path,
                                             ": injected fault: connection reset mid-stream after ",
                                             events, " events"));
}

absl::StatusOr<std::unique_ptr<Transport>> WrapWithFaultsFromEnv(std::unique_ptr<Transport> inner) {
  const char* spec = std::getenv(kFaultsEnv);
  if (spec == nullptr || *spec == '\0') return inner;
  absl::StatusOr<FaultOptions> options = ParseFaultOptions(spec);
  if (!options.ok()) return options.status();
  if (!options->any()) return inner;
  spdlog::warn("{}={}: injecting network faults into every API request", kFaultsEnv, spec);
  return std::unique_ptr<Transport>(std::make_unique<FaultTransport>(std::move(inner), *options));
}

}  // namespace kube
