// Fills a real API server with N GPU nodes and M pods already bound to them, so that
// phalanx-scheduler's initial sync can be timed against the real thing
// (hack/bench-scheduler-sync.sh). Everything goes through the kube client (RestClient over the
// cpprest transport), with a bounded pool of concurrent creators.
//
//   phalanx_cluster_loader --kubeconfig /tmp/phalanx-cluster/kubeconfig --nodes 10000
//       --pods 100000 [--concurrency 16] [--timeout-seconds 2400]
//
// Nodes look like hack/cluster/fake-nodes.sh's p5.48xlarge nodes (hostname, instance type and
// topology.k8s.aws/network-node-layer-1..3 labels; 8 GPUs, 32 EFA devices, pods 110) with a
// Ready=True condition, but without kwok's annotation: no fake kubelet heartbeats them, so after
// about 50 s the node lifecycle controller of kube-controller-manager marks them Ready=Unknown
// (and may taint them node.kubernetes.io/unreachable). The scheduler still holds them all.
//
// Pod i is bound (spec.nodeName at create) to node i % N. The first pod of each node in a busy
// layer-3 block (7 blocks in 10) is a training rank asking for all 8 GPUs, so about 70% of the
// GPUs are in use when M >= N; every other pod is a DaemonSet-like pod asking for CPU and memory
// only. No ownerReferences (the garbage collector would delete pods whose owner does not exist),
// and the pods tolerate the not-ready and unreachable NoExecute taints forever so that no
// eviction changes the count while the benchmark runs.
//
// Progress goes to stderr every few seconds; the last line on stdout is one JSON object:
//   {"nodes":..,"pods":..,"namespaces":..,"nodes_s":..,"pods_s":..,"nodes_per_s":..,
//    "pods_per_s":..,"already_existed":..,"retries":..,"gpu_requested":..,"gpu_capacity":..}
// Exit 0 when everything was created, 1 on the first error that is not worth retrying or on
// the deadline, 2 on bad flags.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status.h"
#include "tests/bench/cluster_json.h"
#include "kube/backoff.h"
#include "kube/config.h"
#include "kube/json.h"
#include "kube/errors.h"
#include "kube/resource.h"
#include "kube/rest_client.h"
#include "kube/transport_cpprest.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace phalanx::bench {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadFlags = 2;

constexpr int kGpusPerNode = 8;
// A busy layer-3 block: b % 10 < 7, so 70% of blocks run a training gang.
constexpr int kBusyBlocksPerTen = 7;
constexpr int kMaxAttempts = 8;

struct LoaderFlags {
  std::string kubeconfig;
  int nodes = 10000;
  int pods = 100000;
  int team_namespaces = 4;
  int concurrency = 16;
  int timeout_seconds = 2400;
  std::string prefix = "p5";
  // The shape hack/cluster/fake-nodes.sh gives the eks preset by default.
  int nodes_per_block = 16;
  int blocks_per_spine = 4;
  int spines_per_layer1 = 4;
};

constexpr std::string_view kUsage = R"(phalanx_cluster_loader: creates N GPU nodes and M bound pods.
  --kubeconfig PATH        admin kubeconfig (required)
  --nodes N                nodes to create (default 10000)
  --pods M                 pods to create, bound round-robin to the nodes (default 100000)
  --namespaces K           team namespaces for the training pods (default 4)
  --concurrency C          concurrent creators, 1..64 (default 16)
  --timeout-seconds T      give up (exit 1) after T seconds (default 2400)
  --prefix P               node name prefix (default p5: p5-00000, p5-00001, ...)
  --nodes-per-block N, --blocks-per-spine N, --spines-per-layer1 N
                           topology shape, as hack/cluster/fake-nodes.sh (default 16, 4, 4)
)";

absl::StatusOr<int> ParseInt(std::string_view flag, std::string_view text, int min, int max) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", absl::string_view(flag.data(), flag.size()), " wants an integer in [", min, ", ",
        max, "], got '", absl::string_view(text.data(), text.size()), "'"));
  }
  return value;
}

absl::StatusOr<LoaderFlags> ParseFlags(const std::vector<std::string>& args) {
  LoaderFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg.substr(0, 2) != "--") {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument '", args[i], "'"));
    }
    std::string name(arg.substr(2));
    std::string value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (name != "help") {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = args[++i];
    }
    constexpr int kMaxCount = 10'000'000;
    if (name == "help") {
      return absl::CancelledError("help");
    } else if (name == "kubeconfig") {
      flags.kubeconfig = value;
    } else if (name == "prefix") {
      flags.prefix = value;
    } else {
      struct IntFlag {
        const char* name;
        int* target;
        int min;
        int max;
      };
      const IntFlag int_flags[] = {
          {"nodes", &flags.nodes, 1, kMaxCount},
          {"pods", &flags.pods, 0, kMaxCount},
          {"namespaces", &flags.team_namespaces, 1, 100},
          {"concurrency", &flags.concurrency, 1, 64},
          {"timeout-seconds", &flags.timeout_seconds, 1, 86400},
          {"nodes-per-block", &flags.nodes_per_block, 1, 100000},
          {"blocks-per-spine", &flags.blocks_per_spine, 1, 100000},
          {"spines-per-layer1", &flags.spines_per_layer1, 1, 100000},
      };
      const IntFlag* match = nullptr;
      for (const IntFlag& f : int_flags) {
        if (name == f.name) match = &f;
      }
      if (match == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
      }
      ASSIGN_OR_RETURN(*match->target, ParseInt(name, value, match->min, match->max));
    }
  }
  if (flags.kubeconfig.empty()) return absl::InvalidArgumentError("--kubeconfig is required");
  if (flags.prefix.empty()) return absl::InvalidArgumentError("--prefix must not be empty");
  return flags;
}

// ---- the objects -------------------------------------------------------------------------

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(JsonWriter& w, std::string_view key) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}
void Str(JsonWriter& w, std::string_view value) {
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}
void Field(JsonWriter& w, std::string_view key, std::string_view value) {
  Key(w, key);
  Str(w, value);
}
// {"k1":"v1",...} under `key`.
void StringObject(JsonWriter& w, std::string_view key,
                  const std::vector<std::pair<std::string, std::string>>& entries) {
  Key(w, key);
  w.StartObject();
  for (const auto& [k, v] : entries) Field(w, k, v);
  w.EndObject();
}

// ["v1",...] under `key`.
void StringArray(JsonWriter& w, std::string_view key, const std::vector<std::string>& values) {
  Key(w, key);
  w.StartArray();
  for (const std::string& v : values) Str(w, v);
  w.EndArray();
}

// Opens a container object with its name and image; the caller adds the rest and closes it.
void OpenContainer(JsonWriter& w, std::string_view name, std::string_view image) {
  w.StartObject();
  Field(w, "name", name);
  Field(w, "image", image);
}

std::string NodeName(const LoaderFlags& flags, int n) {
  char digits[16];
  std::snprintf(digits, sizeof(digits), "%05d", n);
  return absl::StrCat(flags.prefix, "-", digits);
}

std::string NodeIp(int n) {
  return absl::StrCat("10.", 1 + n / 62500, ".", (n / 250) % 250, ".", n % 250 + 1);
}

bool BusyBlock(const LoaderFlags& flags, int n) {
  return (n / flags.nodes_per_block) % 10 < kBusyBlocksPerTen;
}

const std::vector<std::pair<std::string, std::string>>& NodeResources() {
  static const auto* resources = new std::vector<std::pair<std::string, std::string>>{
      {"cpu", "192"},
      {"ephemeral-storage", "3500Gi"},
      {"memory", "2048Gi"},
      {"nvidia.com/gpu", std::to_string(kGpusPerNode)},
      {"pods", "110"},
      {"vpc.amazonaws.com/efa", "32"}};
  return *resources;
}

void NodeCondition(JsonWriter& w, std::string_view type, std::string_view status,
                   std::string_view reason, std::string_view message, const std::string& now) {
  w.StartObject();
  Field(w, "type", type);
  Field(w, "status", status);
  Field(w, "lastHeartbeatTime", now);
  Field(w, "lastTransitionTime", now);
  Field(w, "reason", reason);
  Field(w, "message", message);
  w.EndObject();
}

// Only "status" when `status_only` (the body of a status-subresource patch).
std::string NodeJson(const LoaderFlags& flags, int n, const std::string& now, bool status_only) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  const std::string name = NodeName(flags, n);
  w.StartObject();
  if (!status_only) {
    Field(w, "apiVersion", "v1");
    Field(w, "kind", "Node");
    Key(w, "metadata");
    w.StartObject();
    Field(w, "name", name);
    std::vector<std::pair<std::string, std::string>> labels = {
        {"kubernetes.io/hostname", name},
        {"kubernetes.io/os", "linux"},
        {"kubernetes.io/arch", "amd64"},
        {"node.kubernetes.io/instance-type", "p5.48xlarge"},
        {"topology.kubernetes.io/region", "us-east-1"},
        {"topology.kubernetes.io/zone", "us-east-1a"},
        {"nvidia.com/gpu.count", std::to_string(kGpusPerNode)},
        {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
        {"phalanx.dev/bench-node", "true"},
    };
    // Finest block first, as fake-nodes.sh numbers them.
    int block = n / flags.nodes_per_block;
    labels.push_back({"topology.k8s.aws/network-node-layer-3",
                      absl::StrCat("nn-", flags.prefix, "-l3-", block)});
    block /= flags.blocks_per_spine;
    labels.push_back({"topology.k8s.aws/network-node-layer-2",
                      absl::StrCat("nn-", flags.prefix, "-l2-", block)});
    block /= flags.spines_per_layer1;
    labels.push_back({"topology.k8s.aws/network-node-layer-1",
                      absl::StrCat("nn-", flags.prefix, "-l1-", block)});
    StringObject(w, "labels", labels);
    StringObject(w, "annotations",
                 {{"node.alpha.kubernetes.io/ttl", "0"},
                  {"alpha.kubernetes.io/provided-node-ip", NodeIp(n)},
                  {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}});
    w.EndObject();
    Key(w, "spec");
    w.StartObject();
    Field(w, "providerID", absl::StrCat("aws:///us-east-1a/i-0bench", n));
    w.EndObject();
  }
  Key(w, "status");
  w.StartObject();
  StringObject(w, "capacity", NodeResources());
  StringObject(w, "allocatable", NodeResources());
  Key(w, "conditions");
  w.StartArray();
  NodeCondition(w, "MemoryPressure", "False", "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available", now);
  NodeCondition(w, "DiskPressure", "False", "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure", now);
  NodeCondition(w, "PIDPressure", "False", "KubeletHasSufficientPID",
                "kubelet has sufficient PID available", now);
  NodeCondition(w, "Ready", "True", "KubeletReady", "kubelet is posting ready status", now);
  w.EndArray();
  Key(w, "addresses");
  w.StartArray();
  for (auto [type, address] : {std::pair<std::string, std::string>{"InternalIP", NodeIp(n)},
                               {"Hostname", name}}) {
    w.StartObject();
    Field(w, "type", type);
    Field(w, "address", address);
    w.EndObject();
  }
  w.EndArray();
  StringObject(w, "nodeInfo",
               {{"machineID", ""},
                {"systemUUID", ""},
                {"bootID", ""},
                {"kernelVersion", "6.1.115-126.197.amzn2023.x86_64"},
                {"osImage", "Amazon Linux 2023.6.20241121"},
                {"containerRuntimeVersion", "containerd://1.7.23"},
                {"kubeletVersion", "v1.34.0-eks-7f9249a"},
                {"kubeProxyVersion", ""},
                {"operatingSystem", "linux"},
                {"architecture", "amd64"}});
  w.EndObject();
  w.EndObject();
  return buffer.GetString();
}


std::string TeamNamespace(int k) { return absl::StrCat("team-", k); }

// The namespaces pods go to: the team namespaces and those of the DaemonSets.
std::vector<std::string> Namespaces(const LoaderFlags& flags) {
  std::vector<std::string> out;
  for (int k = 0; k < flags.team_namespaces; ++k) out.push_back(TeamNamespace(k));
  for (const DaemonSet& ds : kDaemonSets) {
    if (std::find(out.begin(), out.end(), ds.namespace_) == out.end()) {
      out.push_back(ds.namespace_);
    }
  }
  return out;
}

void Tolerations(JsonWriter& w, bool tolerate_everything) {
  Key(w, "tolerations");
  w.StartArray();
  if (tolerate_everything) {
    w.StartObject();
    Field(w, "operator", "Exists");
    w.EndObject();
  } else {
    w.StartObject();
    Field(w, "key", "nvidia.com/gpu");
    Field(w, "operator", "Exists");
    Field(w, "effect", "NoSchedule");
    w.EndObject();
  }
  // No tolerationSeconds: nodes without a kubelet go unreachable, and an eviction would change
  // the pod count under the benchmark.
  for (const char* key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    w.StartObject();
    Field(w, "key", key);
    Field(w, "operator", "Exists");
    Field(w, "effect", "NoExecute");
    w.EndObject();
  }
  w.EndArray();
}

void Env(JsonWriter& w, const std::vector<std::pair<std::string, std::string>>& vars) {
  Key(w, "env");
  w.StartArray();
  for (const auto& [name, value] : vars) {
    w.StartObject();
    Field(w, "name", name);
    Field(w, "value", value);
    w.EndObject();
  }
  w.EndArray();
}

struct PodObject {
  std::string namespace_;
  std::string name;
  std::string json;
  int gpus = 0;
};

// Opens the pod object and writes apiVersion, kind and metadata; the caller writes "spec" and
// closes the object.
using StringPairs = std::vector<std::pair<std::string, std::string>>;
void PodHead(JsonWriter& w, const PodObject& pod, const StringPairs& labels,
             const StringPairs& annotations) {
  w.StartObject();
  Field(w, "apiVersion", "v1");
  Field(w, "kind", "Pod");
  Key(w, "metadata");
  w.StartObject();
  Field(w, "name", pod.name);
  Field(w, "namespace", pod.namespace_);
  StringObject(w, "labels", labels);
  StringObject(w, "annotations", annotations);
  w.EndObject();
}

// A rank of the training gang of the node's layer-3 block: all 8 GPUs and 32 EFA devices.
PodObject TrainingPod(const LoaderFlags& flags, int n) {
  const int block = n / flags.nodes_per_block;
  const std::string job = absl::StrCat("llm-pretrain-", block);
  const std::string rank = std::to_string(n % flags.nodes_per_block);
  PodObject pod{TeamNamespace(block % flags.team_namespaces), absl::StrCat(job, "-worker-", rank),
                "", kGpusPerNode};
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  PodHead(w, pod,
          {{"app.kubernetes.io/name", "trainer"},
           {"app.kubernetes.io/part-of", job},
           {"training.kubeflow.org/job-name", job},
           {"training.kubeflow.org/replica-type", "worker"},
           {"training.kubeflow.org/replica-index", rank}},
          {{"kubectl.kubernetes.io/default-container", "trainer"},
           {"prometheus.io/scrape", "true"},
           {"prometheus.io/port", "9400"}});
  Key(w, "spec");
  w.StartObject();
  Field(w, "nodeName", NodeName(flags, n));
  Field(w, "restartPolicy", "Never");
  Key(w, "terminationGracePeriodSeconds");
  w.Int(30);
  Key(w, "initContainers");
  w.StartArray();
  OpenContainer(w, "fetch-shards", "public.ecr.aws/phalanx/fetch:1.2");
  Key(w, "resources");
  w.StartObject();
  StringObject(w, "requests", {{"cpu", "4"}, {"memory", "16Gi"}});
  w.EndObject();
  w.EndObject();
  w.EndArray();
  Key(w, "containers");
  w.StartArray();
  OpenContainer(w, "trainer", "public.ecr.aws/phalanx/train:2026.11");
  StringArray(w, "command", {"torchrun"});
  StringArray(w, "args",
              {absl::StrCat("--nnodes=", flags.nodes_per_block), "--nproc-per-node=8", "train.py"});
  Env(w, {{"MASTER_ADDR", absl::StrCat(job, "-worker-0.", job)},
          {"MASTER_PORT", "29500"},
          {"WORLD_SIZE", std::to_string(flags.nodes_per_block * kGpusPerNode)},
          {"RANK", rank},
          {"LOCAL_WORLD_SIZE", "8"},
          {"NCCL_DEBUG", "WARN"},
          {"FI_PROVIDER", "efa"},
          {"FI_EFA_USE_DEVICE_RDMA", "1"}});
  Key(w, "resources");
  w.StartObject();
  const std::vector<std::pair<std::string, std::string>> devices = {
      {"nvidia.com/gpu", std::to_string(kGpusPerNode)}, {"vpc.amazonaws.com/efa", "32"}};
  StringObject(w, "limits", devices);
  std::vector<std::pair<std::string, std::string>> requests = {{"cpu", "180"},
                                                               {"memory", "1900Gi"}};
  requests.insert(requests.end(), devices.begin(), devices.end());
  StringObject(w, "requests", requests);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  Tolerations(w, false);
  w.EndObject();
  w.EndObject();
  pod.json = buffer.GetString();
  return pod;
}

// The `kind`-th DaemonSet's pod on node n (`copy` tells apart repeats when a node holds more pods
// than there are DaemonSets).
PodObject DaemonSetPod(const LoaderFlags& flags, int n, int kind, int copy) {
  const DaemonSet& ds = kDaemonSets[kind];
  const std::string node = NodeName(flags, n);
  PodObject pod{ds.namespace_,
                copy == 0 ? absl::StrCat(ds.name, "-", node)
                          : absl::StrCat(ds.name, "-", node, "-", copy),
                "", 0};
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  PodHead(w, pod,
          {{"app.kubernetes.io/name", ds.name},
           {"k8s-app", ds.name},
           {"controller-revision-hash", "7c9d8f6b54"},
           {"pod-template-generation", "3"}},
          {{"prometheus.io/scrape", "true"}, {"prometheus.io/port", "9100"}});
  Key(w, "spec");
  w.StartObject();
  Field(w, "nodeName", node);
  Field(w, "priorityClassName", "system-node-critical");
  Key(w, "hostNetwork");
  w.Bool(true);
  Key(w, "volumes");
  w.StartArray();
  for (const char* path : {"/proc", "/sys"}) {
    w.StartObject();
    Field(w, "name", absl::StrCat("host-", path + 1));  // "host-proc"
    Key(w, "hostPath");
    w.StartObject();
    Field(w, "path", path);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  Key(w, "containers");
  w.StartArray();
  OpenContainer(w, "main", ds.image);
  StringArray(w, "args", {"--v=2", "--path.procfs=/host/proc", "--path.sysfs=/host/sys"});
  Env(w, {{"NODE_NAME", node}, {"AWS_REGION", "us-east-1"}, {"CLUSTER_NAME", "training-prod"}});
  Key(w, "resources");
  w.StartObject();
  StringObject(w, "requests", {{"cpu", ds.cpu}, {"memory", ds.memory}});
  StringObject(w, "limits", {{"memory", ds.memory}});
  w.EndObject();
  Key(w, "volumeMounts");
  w.StartArray();
  for (const char* path : {"/proc", "/sys"}) {
    w.StartObject();
    Field(w, "name", absl::StrCat("host-", path + 1));  // "host-proc"
    Field(w, "mountPath", absl::StrCat("/host", path));
    Key(w, "readOnly");
    w.Bool(true);
    w.EndObject();
  }
  w.EndArray();
  Key(w, "securityContext");
  w.StartObject();
  Key(w, "privileged");
  w.Bool(true);
  w.EndObject();
  w.EndObject();
  w.EndArray();
  Tolerations(w, true);
  w.EndObject();
  w.EndObject();
  pod.json = buffer.GetString();
  return pod;
}

// Pod i: on node i % N, the (i / N)-th pod there.
PodObject PodAt(const LoaderFlags& flags, int i) {
  const int n = i % flags.nodes;
  const int round = i / flags.nodes;
  const bool busy = BusyBlock(flags, n);
  if (round == 0 && busy) return TrainingPod(flags, n);
  const int slot = busy ? round - 1 : round;
  return DaemonSetPod(flags, n, slot % kDaemonSetKinds, slot / kDaemonSetKinds);
}

// ---- creating them -----------------------------------------------------------------------

struct Counters {
  std::atomic<int64_t> created{0};
  std::atomic<int64_t> already_existed{0};
  std::atomic<int64_t> retries{0};
};

// Creates with retries on what is worth retrying (429, 5xx, no response). AlreadyExists is
// success: a POST that timed out may have gone through, and its retry then finds the object.
absl::Status CreateWithRetry(kube::Client& client, const kube::Resource& resource,
                             std::string_view ns, const std::string& body, Counters& counters,
                             std::string* created = nullptr) {
  kube::Backoff backoff({.initial = absl::Milliseconds(200), .max = absl::Seconds(5)});
  for (int attempt = 1;; ++attempt) {
    absl::StatusOr<std::string> result = client.Create(resource, ns, body);
    if (result.ok()) {
      counters.created.fetch_add(1, std::memory_order_relaxed);
      if (created != nullptr) *created = std::move(*result);
      return absl::OkStatus();
    }
    if (absl::IsAlreadyExists(result.status())) {
      counters.already_existed.fetch_add(1, std::memory_order_relaxed);
      return absl::OkStatus();
    }
    if (!kube::IsRetryable(result.status()) || attempt >= kMaxAttempts) {
      return Annotate(result.status(), absl::StrCat("after ", attempt, " attempt(s)"));
    }
    counters.retries.fetch_add(1, std::memory_order_relaxed);
    absl::Duration delay = backoff.Next();
    if (std::optional<kube::KubeError> e = kube::KubeErrorOf(result.status());
        e && e->retry_after > delay) {
      delay = e->retry_after;
    }
    absl::SleepFor(delay);
  }
}

// Runs make_and_create(i) for i in [0, count) on `threads` workers, each with its own
// transport (connection) to the API server. Stops at the first error or at `deadline`.
// Prints progress to stderr every 5 s.
absl::Status RunPool(const kube::RestConfig& config, int threads, int64_t count,
                     absl::Time deadline, std::string_view what, Counters& counters,
                     const std::function<absl::Status(kube::Client&, int64_t)>& make_and_create) {
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  absl::Status first_error;
  auto fail = [&](absl::Status status) {
    std::lock_guard<std::mutex> lock(error_mu);
    if (first_error.ok()) first_error = std::move(status);
    failed.store(true);
  };
  const absl::Time start = absl::Now();
  const int64_t created_before = counters.created.load() + counters.already_existed.load();
  std::vector<std::thread> workers;
  for (int t = 0; t < std::min<int64_t>(threads, std::max<int64_t>(count, 1)); ++t) {
    workers.emplace_back([&] {
      absl::StatusOr<std::unique_ptr<kube::Transport>> transport = kube::NewCpprestTransport(
          config, {.request_timeout = absl::Seconds(60)});
      if (!transport.ok()) {
        fail(transport.status());
        return;
      }
      kube::RestClient client(**transport);
      while (!failed.load(std::memory_order_relaxed)) {
        const int64_t i = next.fetch_add(1);
        if (i >= count) return;
        if (absl::Now() > deadline) {
          fail(absl::DeadlineExceededError(
              absl::StrCat("the deadline passed with ", i, " of ", count, " ",
                           absl::string_view(what.data(), what.size()), " started")));
          return;
        }
        if (absl::Status s = make_and_create(client, i); !s.ok()) {
          fail(Annotate(s, absl::StrCat("creating ", absl::string_view(what.data(), what.size()),
                                        " #", i)));
          return;
        }
      }
    });
  }
  // Progress, until the workers are done.
  std::atomic<bool> done{false};
  std::thread reporter([&] {
    absl::Time last = absl::Now();
    while (!done.load()) {
      absl::SleepFor(absl::Milliseconds(100));
      if (absl::Now() - last < absl::Seconds(5) || done.load()) continue;
      last = absl::Now();
      const int64_t n =
          counters.created.load() + counters.already_existed.load() - created_before;
      const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
      std::cerr << "[loader] " << what << " " << n << "/" << count << " in "
                << static_cast<int>(seconds) << " s (" << static_cast<int>(n / seconds)
                << "/s, " << counters.retries.load() << " retries)" << std::endl;
    }
  });
  for (std::thread& worker : workers) worker.join();
  done.store(true);
  reporter.join();
  return first_error;
}

absl::Status WaitForServiceAccount(kube::Client& client, const std::string& ns,
                                   absl::Time deadline) {
  static const kube::Resource service_accounts{.plural = "serviceaccounts"};
  for (;;) {
    absl::StatusOr<std::string> sa = client.Get(service_accounts, ns, "default");
    if (sa.ok()) return absl::OkStatus();
    if (!absl::IsNotFound(sa.status()) && !kube::IsRetryable(sa.status())) return sa.status();
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("serviceaccount ", ns,
                       "/default never appeared (is kube-controller-manager running?): ",
                       sa.status().message()));
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
}

// Whether a created Node came back with the GPUs in status.allocatable and Ready=True.
absl::StatusOr<bool> StatusKept(const std::string& created) {
  ASSIGN_OR_RETURN(rapidjson::Document node, kube::ParseJson(created));
  if (!node.IsObject() || !node.HasMember("status") || !node["status"].IsObject()) return false;
  const rapidjson::Value& status = node["status"];
  bool gpus = status.HasMember("allocatable") && status["allocatable"].IsObject() &&
              kube::StringMember(status["allocatable"], "nvidia.com/gpu") ==
                  std::to_string(kGpusPerNode);
  bool ready = false;
  if (status.HasMember("conditions") && status["conditions"].IsArray()) {
    for (const rapidjson::Value& c : status["conditions"].GetArray()) {
      ready |= c.IsObject() && kube::StringMember(c, "type") == "Ready" &&
               kube::StringMember(c, "status") == "True";
    }
  }
  return gpus && ready;
}

std::string NowRfc3339() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

absl::Status Load(const LoaderFlags& flags) {
  ASSIGN_OR_RETURN(kube::RestConfig config, kube::LoadKubeconfig(flags.kubeconfig));
  config.user_agent = "phalanx-cluster-loader";
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + absl::Seconds(flags.timeout_seconds);
  ASSIGN_OR_RETURN(std::unique_ptr<kube::Transport> transport, kube::NewCpprestTransport(config));
  kube::RestClient client(*transport);
  Counters counters;

  // Namespaces, and their default service account: the ServiceAccount admission plugin rejects
  // a pod until it exists.
  const std::vector<std::string> namespaces = Namespaces(flags);
  for (const std::string& ns : namespaces) {
    if (ns == "kube-system") continue;  // there from the start
    rapidjson::StringBuffer buffer;
    JsonWriter w(buffer);
    w.StartObject();
    Field(w, "apiVersion", "v1");
    Field(w, "kind", "Namespace");
    Key(w, "metadata");
    w.StartObject();
    Field(w, "name", ns);
    w.EndObject();
    w.EndObject();
    RETURN_IF_ERROR(Annotate(
        CreateWithRetry(client, kube::Namespaces(), "", buffer.GetString(), counters),
        absl::StrCat("creating namespace ", ns)));
  }
  for (const std::string& ns : namespaces) {
    RETURN_IF_ERROR(WaitForServiceAccount(client, ns, deadline));
  }

  // Nodes. The API server keeps a Node's status on create (the kubelet registers its node
  // that way), which the first node checks; if a server dropped it, each node's status is
  // written through the status subresource instead.
  const std::string now = NowRfc3339();
  std::atomic<bool> status_needs_patch{false};
  {
    std::string created;
    RETURN_IF_ERROR(Annotate(
        CreateWithRetry(client, kube::Nodes(), "", NodeJson(flags, 0, now, false), counters,
                        &created),
        "creating node 0"));
    if (!created.empty()) {
      ASSIGN_OR_RETURN(bool kept, StatusKept(created));
      if (!kept) {
        std::cerr << "[loader] the API server dropped the node status on create; writing it "
                     "through nodes/status"
                  << std::endl;
        status_needs_patch.store(true);
      }
    }
  }
  auto patch_status = [&](kube::Client& c, int n) -> absl::Status {
    if (!status_needs_patch.load()) return absl::OkStatus();
    return c
        .PatchStatus(kube::Nodes(), "", NodeName(flags, n), kube::PatchType::kMerge,
                     NodeJson(flags, n, now, true))
        .status();
  };
  RETURN_IF_ERROR(patch_status(client, 0));
  const absl::Time nodes_start = absl::Now();
  auto create_node = [&](kube::Client& c, int64_t i) -> absl::Status {
    const int n = static_cast<int>(i) + 1;  // node 0 is created above
    RETURN_IF_ERROR(
        CreateWithRetry(c, kube::Nodes(), "", NodeJson(flags, n, now, false), counters));
    return patch_status(c, n);
  };
  RETURN_IF_ERROR(RunPool(config, flags.concurrency, flags.nodes - 1, deadline, "nodes", counters,
                          create_node));
  const double nodes_s = absl::ToDoubleSeconds(absl::Now() - nodes_start);
  std::cerr << "[loader] " << flags.nodes << " nodes in " << nodes_s << " s" << std::endl;

  // Pods.
  std::atomic<int64_t> gpus_requested{0};
  const absl::Time pods_start = absl::Now();
  auto create_pod = [&](kube::Client& c, int64_t i) -> absl::Status {
    PodObject pod = PodAt(flags, static_cast<int>(i));
    RETURN_IF_ERROR(CreateWithRetry(c, kube::Pods(), pod.namespace_, pod.json, counters));
    gpus_requested.fetch_add(pod.gpus, std::memory_order_relaxed);
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(RunPool(config, flags.concurrency, flags.pods, deadline, "pods", counters,
                          create_pod));
  const double pods_s = absl::ToDoubleSeconds(absl::Now() - pods_start);
  std::cerr << "[loader] " << flags.pods << " pods in " << pods_s << " s" << std::endl;

  const int64_t gpu_capacity = int64_t{flags.nodes} * kGpusPerNode;
  std::cout << absl::StrCat(
                   R"({"nodes":)", flags.nodes, R"(,"pods":)", flags.pods, R"(,"namespaces":)",
                   namespaces.size(), R"(,"nodes_s":)", nodes_s, R"(,"pods_s":)", pods_s,
                   R"(,"nodes_per_s":)", nodes_s > 0 ? flags.nodes / nodes_s : 0,
                   R"(,"pods_per_s":)", pods_s > 0 ? flags.pods / pods_s : 0,
                   R"(,"total_s":)", absl::ToDoubleSeconds(absl::Now() - start),
                   R"(,"already_existed":)", counters.already_existed.load(), R"(,"retries":)",
                   counters.retries.load(), R"(,"node_status_patched":)",
                   status_needs_patch.load() ? "true" : "false", R"(,"gpu_requested":)",
                   gpus_requested.load(), R"(,"gpu_capacity":)", gpu_capacity, "}")
            << std::endl;
  return absl::OkStatus();
}

}  // namespace
}  // namespace phalanx::bench

int main(int argc, char** argv) {
  using namespace phalanx::bench;
  absl::StatusOr<LoaderFlags> flags = ParseFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (!flags.ok()) {
    if (absl::IsCancelled(flags.status())) {
      std::cout << kUsage;
      return kExitOk;
    }
    std::cerr << "phalanx_cluster_loader: " << flags.status().message() << "\n" << kUsage;
    return kExitBadFlags;
  }
  if (absl::Status s = Load(*flags); !s.ok()) {
    std::cerr << "phalanx_cluster_loader: FAILED: " << s << std::endl;
    return kExitFailure;
  }
  return kExitOk;
}
