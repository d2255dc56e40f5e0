// Decoding a 10,000-pod list (realistic pods, managedFields included) into the informer's
// compact structs: what an informer's initial list and every relist cost.
//
//   build-kube/tests/bench/phalanx_kube_decode_bench --benchmark_format=json
//
// bytes_per_second is the JSON text decoded per second.
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "kube/decode.h"
#include "rapidjson/document.h"
#include "simdjson.h"

namespace {

// One pod as the API server returns it from a list: kubectl's last-applied annotation, three
// managedFields entries, a projected service-account volume, init container + sidecar, env,
// tolerations and the five status conditions. About 5.5 KB of JSON.
std::string PodJson(int i) {
  std::string rank = std::to_string(i % 64);
  std::string job = absl::StrCat("job-", i / 64);
  std::string uid = absl::StrCat("6f1a0b4e-2c39-4d0e-9a57-", 100000000000 + i);
  return absl::StrCat(
      R"({"metadata":{"name":")", job, "-", rank, R"(","generateName":")", job,
      R"(-","namespace":"team-)", i % 20, R"(","uid":")", uid, R"(","resourceVersion":")",
      1000000 + i,
      R"(","creationTimestamp":"2026-11-20T08:14:03Z","labels":{"app.kubernetes.io/name":"trainer","phalanx.dev/job":")",
      job, R"(","phalanx.dev/rank":")", rank,
      R"("},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"annotations\":{},\"name\":\"x\"}}\n"},)", R"("ownerReferences":[{"apiVersion":"phalanx.dev/v1alpha1","kind":"TrainingJob","name":")", job, R"(","uid":"0d6b5b0e-7f3a-4c1b-8d8e-5a1f2e3c4d5e","controller":true,"blockOwnerDeletion":true}],)", R"("finalizers":["phalanx.dev/gang"],"managedFields":[)", R"({"manager":"phalanx-operator","operation":"Update","apiVersion":"v1","time":"2026-11-20T08:14:03Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"phalanx.dev/gang\"":{}},"f:labels":{".":{},"f:app.kubernetes.io/name":{},"f:phalanx.dev/job":{},"f:phalanx.dev/rank":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"0d6b5b0e-7f3a-4c1b-8d8e-5a1f2e3c4d5e\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"trainer\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"MASTER_ADDR\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"RANK\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:nvidia.com/gpu":{},"f:vpc.amazonaws.com/efa":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{},"f:nvidia.com/gpu":{},"f:vpc.amazonaws.com/efa":{}}}}},"f:schedulerName":{},"f:tolerations":{}}}},)", R"({"manager":"kube-scheduler","operation":"Update","apiVersion":"v1","time":"2026-11-20T08:14:05Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}}}},"subresource":"status"},)", R"({"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2026-11-20T08:14:31Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}},"subresource":"status"}]},)", R"("spec":{"volumes":[{"name":"kube-api-access-x7k2p","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],)", R"("initContainers":[{"name":"fetch-shards","image":"public.ecr.aws/phalanx/fetch:1.2","resources":{"requests":{"cpu":"4","memory":"16Gi"}},"terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"},)",
      R"({"name":"log-shipper","image":"public.ecr.aws/phalanx/fluent-bit:3.1","restartPolicy":"Always","resources":{"requests":{"cpu":"500m","memory":"512Mi"}},"imagePullPolicy":"IfNotPresent"}],)",
      R"("containers":[{"name":"trainer","image":"public.ecr.aws/phalanx/train:2026.11","command":["torchrun"],"args":["--nnodes=16","--nproc-per-node=8","train.py"],"env":[{"name":"MASTER_ADDR","value":")",
      job, R"(-0.)", job,
      R"("},{"name":"MASTER_PORT","value":"29500"},{"name":"WORLD_SIZE","value":"64"},{"name":"RANK","value":")",
      rank,
      R"("}],"resources":{"limits":{"nvidia.com/gpu":"8","vpc.amazonaws.com/efa":"32"},"requests":{"cpu":"180","memory":"1900Gi","nvidia.com/gpu":"8","vpc.amazonaws.com/efa":"32"}},"volumeMounts":[{"name":"kube-api-access-x7k2p","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],)",
      R"("restartPolicy":"Never","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default","nodeName":"ip-10-1-)",
      i % 250, "-", i % 97,
      R"(.ec2.internal","securityContext":{},"schedulerName":"phalanx","tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"},{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priorityClassName":"training-high","priority":100000,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},)", R"("status":{"phase":"Running","conditions":[{"type":"PodReadyToStartContainers","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:09Z"},{"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:30Z"},{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:31Z"},{"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:31Z"},{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-20T08:14:05Z"}],"hostIP":"10.1.4.17","podIP":"10.1.77.203","podIPs":[{"ip":"10.1.77.203"}],"startTime":"2026-11-20T08:14:05Z","containerStatuses":[{"name":"trainer","state":{"running":{"startedAt":"2026-11-20T08:14:31Z"}},"lastState":{},"ready":true,"restartCount":0,"image":"public.ecr.aws/phalanx/train:2026.11","imageID":"","started":true}],"qosClass":"Burstable"}})");
}

const std::string& PodList() {
  static const std::string* list = [] {
    auto* text = new std::string(
        R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"2000000"},"items":[)");
    for (int i = 0; i < 10000; ++i) {
      if (i > 0) text->push_back(',');
      text->append(PodJson(i));
    }
    text->append("]}");
    return text;
  }();
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
