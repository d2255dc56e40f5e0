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
// decoded per second. BM_DecodeTrainingJob decodes one admitted TrainingJob as phalanx-operator
// does each time the job changes (kube::DecodeTrainingJob: spec, template, status).
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "kube/api/training_job.h"
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

// An admitted 64-pod TrainingJob like deploy/examples/10-trainingjob-pretrain-64gpu.yaml, with
// an init container, a sidecar and the status phalanx-operator writes: about 3 KB.
const std::string& TrainingJobJson() {
  static const std::string* json = [] {
    std::string nodes;
    for (int i = 0; i < 64; ++i) nodes += (i ? ",\"p5-" : "\"p5-") + std::to_string(i) + "\"";
    return new std::string(
        R"({"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob","metadata":{)"
        R"("name":"llama-pretrain-64","namespace":"team-llm","uid":"6f1c","generation":2,)"
        R"("resourceVersion":"4711","creationTimestamp":"2026-11-30T10:00:00Z",)"
        R"("finalizers":["phalanx.dev/reservation"],"labels":{"team":"llm"}},)"
        R"("spec":{"queueName":"training","priorityClassName":"high","replicas":64,)"
        R"("topology":{"required":"topology.k8s.aws/network-node-layer-2",)"
        R"("preferred":"topology.k8s.aws/network-node-layer-3"},)"
        R"("failurePolicy":{"maxRestarts":3,"rules":[{"action":"Ignore",)"
        R"("onExitCodes":{"operator":"In","values":[137,143]}}]},"successPolicy":"All",)"
        R"("template":{"metadata":{"labels":{"app":"llama"}},"spec":{)"
        R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}],)"
        R"("initContainers":[{"name":"fetch","image":"registry.example/fetch:1",)"
        R"("resources":{"requests":{"cpu":"2","memory":"4Gi"}}},)"
        R"({"name":"log-shipper","image":"registry.example/fluent:1","restartPolicy":"Always",)"
        R"("resources":{"requests":{"cpu":"500m","memory":"512Mi"}}}],)"
        R"("containers":[{"name":"trainer","image":"registry.example/trainer:1",)"
        R"("command":["torchrun","train.py"],"env":[{"name":"NCCL_DEBUG","value":"WARN"}],)"
        R"("resources":{"limits":{"nvidia.com/gpu":8,"vpc.amazonaws.com/efa":32,)"
        R"("cpu":"180","memory":"1800Gi"},"requests":{"cpu":"180","memory":"1800Gi"}}}]}}},)"
        R"("status":{"phase":"Running","restarts":1,"startTime":"2026-11-30T10:01:00Z",)"
        R"("admission":{"clusterQueue":"llm","flavor":"p5","replicas":64,)"
        R"("nodeSelector":{"node.kubernetes.io/instance-type":"p5.48xlarge"}},)"
        R"("placement":{"domain":"nn-p5-l3-0","level":"topology.k8s.aws/network-node-layer-3",)"
        R"("nodes":[)" +
        nodes +
        R"(]},"conditions":[{"type":"Admitted","status":"True","reason":"Admitted",)"
        R"("message":"admitted","lastTransitionTime":"2026-11-30T10:00:30Z"}]}})");
  }();
  return *json;
}

void BM_DecodeTrainingJob(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<kube::TrainingJob> job = kube::DecodeTrainingJob(TrainingJobJson());
    if (!job.ok()) {
      state.SkipWithError(job.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(job->pod.requests.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * TrainingJobJson().size()));
  state.counters["json_bytes"] = static_cast<double>(TrainingJobJson().size());
}
BENCHMARK(BM_DecodeTrainingJob)->Unit(benchmark::kMicrosecond)->MinTime(2.0);

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
