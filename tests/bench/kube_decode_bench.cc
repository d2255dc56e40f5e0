// Decoding a 10,000-pod list (realistic pods, managedFields included) into the informer's
// compact structs: what an informer's initial list and every relist cost.
//
//   build-decode/tests/bench/phalanx_kube_decode_bench --benchmark_format=json
//
// BM_DecodePodList decodes the list from a std::string with room for simdjson's padding, which
// the decoder parses in place; BM_DecodePodListFromView passes the same text as a
// std::string_view, which the decoder must copy first (what an informer's pages take today);
// BM_DecodePodPages decodes it as an informer receives it, 20 pages of 500 through one Decoder.
// Every iteration also frees the previous iteration's pods. bytes_per_second is the JSON text
// decoded per second.
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "kube/decode.h"
#include "rapidjson/document.h"
#include "simdjson.h"
#include "tests/bench/cluster_json.h"

namespace {

constexpr int kPods = 10000;

std::string TrainingPods(int first, int count) {
  return phalanx::bench::ListJson("PodList", first, count, [](int i) {
    return phalanx::bench::TrainingPodJson(i);
  });
}

// 10,000 of the benchmark's training pods (tests/bench/cluster_json.h): about 5.4 KB each,
// 54 MB in all, with capacity for the decoder's padding.
const std::string& PodList() {
  static const std::string* list = [] {
    auto* text = new std::string(TrainingPods(0, kPods));
    text->reserve(text->size() + kube::Decoder::kPadding);
    return text;
  }();
  return *list;
}

template <typename Text>
void DecodeListBenchmark(benchmark::State& state, const Text& json) {
  kube::Decoder decoder;
  size_t pods = 0;
  for (auto _ : state) {
    absl::StatusOr<kube::DecodedList<kube::Pod>> list = decoder.DecodeList<kube::Pod>(json);
    if (!list.ok()) {
      state.SkipWithError(list.status().ToString().c_str());
      return;
    }
    pods = list->items.size();
    benchmark::DoNotOptimize(list->items.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * PodList().size()));
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["json_mb"] = static_cast<double>(PodList().size()) / 1e6;
}

void BM_DecodePodList(benchmark::State& state) { DecodeListBenchmark(state, PodList()); }
BENCHMARK(BM_DecodePodList)->Unit(benchmark::kMillisecond)->MinTime(3.0);

void BM_DecodePodListFromView(benchmark::State& state) {
  DecodeListBenchmark(state, std::string_view(PodList()));
}
BENCHMARK(BM_DecodePodListFromView)->Unit(benchmark::kMillisecond)->MinTime(3.0);

void BM_DecodePodPages(benchmark::State& state) {
  constexpr int kPageSize = 500;  // the reflector's default ListOptions::limit
  std::vector<std::string> pages;
  size_t bytes = 0;
  for (int first = 0; first < kPods; first += kPageSize) {
    pages.push_back(TrainingPods(first, kPageSize));
    bytes += pages.back().size();
  }
  kube::Decoder decoder;
  for (auto _ : state) {
    for (const std::string& page : pages) {
      absl::StatusOr<kube::DecodedList<kube::Pod>> list =
          decoder.DecodeList<kube::Pod>(std::string_view(page));
      if (!list.ok()) {
        state.SkipWithError(list.status().ToString().c_str());
        return;
      }
      benchmark::DoNotOptimize(list->items.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_DecodePodPages)->Unit(benchmark::kMillisecond)->MinTime(3.0);

// Floor: simdjson on-demand walking the same list and skipping every item (no decoding).
void BM_SimdjsonSkipItems(benchmark::State& state) {
  const simdjson::padded_string json(PodList());
  simdjson::ondemand::parser parser;
  for (auto _ : state) {
    simdjson::ondemand::document doc;
    if (parser.iterate(json).get(doc) != simdjson::SUCCESS) {
      state.SkipWithError("parse failed");
      return;
    }
    size_t count = 0;
    simdjson::ondemand::array items;
    if (doc["items"].get_array().get(items) != simdjson::SUCCESS) {
      state.SkipWithError("no items");
      return;
    }
    for (auto item : items) {
      (void)item;
      ++count;
    }
    benchmark::DoNotOptimize(count);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_SimdjsonSkipItems)->Unit(benchmark::kMillisecond)->MinTime(3.0);

// Baseline: only building a RapidJSON DOM of the same text (no struct extraction).
void BM_RapidJsonDomParse(benchmark::State& state) {
  const std::string& json = PodList();
  for (auto _ : state) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    benchmark::DoNotOptimize(doc.IsObject());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_RapidJsonDomParse)->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace

BENCHMARK_MAIN();
