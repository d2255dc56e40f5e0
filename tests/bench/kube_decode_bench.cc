// Decoding a 10,000-pod list (realistic pods, managedFields included) into the informer's
// compact structs: what an informer's initial list and every relist cost.
//
//   build-kube/tests/bench/phalanx_kube_decode_bench --benchmark_format=json
//
// bytes_per_second is the JSON text decoded per second.
#include <string>

#include "benchmark/benchmark.h"
#include "kube/decode.h"
#include "rapidjson/document.h"
#include "simdjson.h"
#include "tests/bench/cluster_json.h"

namespace {

// 10,000 of the benchmark's training pods (tests/bench/cluster_json.h): about 5.4 KB each.
const std::string& PodList() {
  static const std::string* list = new std::string(
      phalanx::bench::ListJson("PodList", 0, 10000, [](int i) {
        return phalanx::bench::TrainingPodJson(i);
      }));
  return *list;
}

void BM_DecodePodList(benchmark::State& state) {
  const std::string& json = PodList();
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
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
  state.counters["pods"] = static_cast<double>(pods);
  state.counters["json_mb"] = static_cast<double>(json.size()) / 1e6;
}
BENCHMARK(BM_DecodePodList)->Unit(benchmark::kMillisecond)->MinTime(3.0);

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
