// The tuned decoder (kube/decode.cc: simdjson on demand, raw keys, interning, memoised subtrees)
// checked against a second, deliberately plain one written here: RapidJSON's DOM, std::string
// and std::map arithmetic, the way the decoder worked before it was tuned. Every field of every
// pod and node must come out the same both ways: the benchmark's generated lists (training
// ranks, DaemonSet pods, EKS nodes), hand-written edge cases (escapes, nulls, unsorted and
// repeated keys, sidecars, overhead, fractional quantities), and long runs through one Decoder
// whose memos fill up and are emptied.
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/decode.h"
#include "rapidjson/document.h"
#include "tests/bench/cluster_json.h"

namespace kube {
namespace {

using phalanx::ResourceList;
using StringPairs = std::map<std::string, std::string>;
using rapidjson::Value;

// --- The reference decoder --------------------------------------------------------------------

std::string Str(const Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString()
             ? std::string(it->value.GetString(), it->value.GetStringLength())
             : "";
}

const Value* Member(const Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

// JSON objects may repeat a key; the last one wins, as in the decoder.
StringPairs Pairs(const Value* object) {
  StringPairs out;
  if (object == nullptr) return out;
  for (const auto& m : object->GetObject()) {
    out[std::string(m.name.GetString(), m.name.GetStringLength())] =
        m.value.IsString() ? std::string(m.value.GetString(), m.value.GetStringLength()) : "";
  }
  return out;
}

ResourceList Quantities(const Value* object) {
  if (object == nullptr) return {};
  absl::StatusOr<ResourceList> list = phalanx::ParseResourceList(Pairs(object), "reference");
  EXPECT_TRUE(list.ok()) << list.status();
  return list.ok() ? *list : ResourceList{};
}

void MaxInto(ResourceList& a, const ResourceList& b) {
  for (const auto& [name, amount] : b) a[name] = std::max(a[name], amount);
}

ResourceList ContainerRequests(const Value& container) {
  const Value* resources = Member(container, "resources");
  return resources == nullptr ? ResourceList{} : Quantities(Member(*resources, "requests"));
}

// kube-scheduler's resourcehelper.PodRequests, written the plain way.
ResourceList PodRequests(const Value& spec) {
  ResourceList containers, sidecars, init_max;
  if (const Value* list = Member(spec, "containers")) {
    for (const Value& c : list->GetArray()) phalanx::AddTo(containers, ContainerRequests(c));
  }
  if (const Value* list = Member(spec, "initContainers")) {
    for (const Value& c : list->GetArray()) {
      ResourceList step = ContainerRequests(c);
      if (Str(c, "restartPolicy") == "Always") {
        phalanx::AddTo(sidecars, step);
        step = sidecars;
      } else {
        phalanx::AddTo(step, sidecars);
      }
      MaxInto(init_max, step);
    }
  }
  ResourceList requests = containers;
  phalanx::AddTo(requests, sidecars);
  MaxInto(requests, init_max);
  phalanx::AddTo(requests, Quantities(Member(spec, "overhead")));
  return requests;
}

bool Flag(const Value& object, const char* key) {
  const Value* v = Member(object, key);
  return v != nullptr && v->IsBool() && v->GetBool();
}

// "True" / "False" / "" of condition `type`.
std::string Condition(const Value& status, const char* type) {
  std::string found;
  if (const Value* list = Member(status, "conditions")) {
    for (const Value& c : list->GetArray()) {
      if (Str(c, "type") == type) found = Str(c, "status");
    }
  }
  return found;
}

// Each field of ObjectMeta against the DOM.
void ExpectMeta(const ObjectMeta& meta, const Value& m, const std::string& who) {
  SCOPED_TRACE(who);
  EXPECT_EQ(meta.name, Str(m, "name"));
  EXPECT_EQ(meta.namespace_, Str(m, "namespace"));
  EXPECT_EQ(meta.uid, Str(m, "uid"));
  EXPECT_EQ(meta.resource_version, Str(m, "resourceVersion"));
  EXPECT_EQ(meta.generation, Member(m, "generation") ? m["generation"].GetInt64() : 0);
  EXPECT_EQ(meta.creation_timestamp, Str(m, "creationTimestamp"));
  EXPECT_EQ(meta.deletion_timestamp, Str(m, "deletionTimestamp"));
  StringPairs labels(meta.labels.begin(), meta.labels.end());
  EXPECT_EQ(labels, Pairs(Member(m, "labels")));
  StringPairs annotations(meta.annotations.begin(), meta.annotations.end());
  EXPECT_EQ(annotations, Pairs(Member(m, "annotations")));
  std::vector<std::string> finalizers(meta.finalizers.begin(), meta.finalizers.end());
  std::vector<std::string> want_finalizers;
  if (const Value* list = Member(m, "finalizers")) {
    for (const Value& f : list->GetArray()) want_finalizers.emplace_back(f.GetString());
  }
  EXPECT_EQ(finalizers, want_finalizers);
  const Value* owners = Member(m, "ownerReferences");
  ASSERT_EQ(meta.owner_references.size(), owners == nullptr ? 0u : owners->Size());
  for (size_t i = 0; i < meta.owner_references.size(); ++i) {
    const OwnerReference& got = meta.owner_references[i];
    const Value& want = (*owners)[static_cast<rapidjson::SizeType>(i)];
    EXPECT_EQ(got.api_version, Str(want, "apiVersion"));
    EXPECT_EQ(got.kind, Str(want, "kind"));
    EXPECT_EQ(got.name, Str(want, "name"));
    EXPECT_EQ(got.uid, Str(want, "uid"));
    EXPECT_EQ(got.controller, Flag(want, "controller"));
    EXPECT_EQ(got.block_owner_deletion, Flag(want, "blockOwnerDeletion"));
  }
}

void ExpectPod(const Pod& pod, const Value& p) {
  const std::string who = Str(p["metadata"], "namespace") + "/" + Str(p["metadata"], "name");
  ExpectMeta(pod.meta, p["metadata"], who);
  SCOPED_TRACE(who);
  static const Value kEmpty(rapidjson::kObjectType);
  const Value& spec = Member(p, "spec") ? p["spec"] : kEmpty;
  const Value& status = Member(p, "status") ? p["status"] : kEmpty;
  EXPECT_EQ(pod.node_name, Str(spec, "nodeName"));
  EXPECT_EQ(pod.scheduler_name, Str(spec, "schedulerName"));
  EXPECT_EQ(pod.priority_class_name, Str(spec, "priorityClassName"));
  EXPECT_EQ(pod.priority, Member(spec, "priority") ? spec["priority"].GetInt() : 0);
  EXPECT_EQ(pod.phase, Str(status, "phase"));
  EXPECT_EQ(pod.ready, Condition(status, "Ready") == "True");
  EXPECT_EQ(pod.unschedulable, Condition(status, "PodScheduled") == "False");
  EXPECT_EQ(pod.disruption_target, Condition(status, "DisruptionTarget") == "True");
  EXPECT_EQ(pod.status_reason, Str(status, "reason"));
  EXPECT_EQ(pod.status_message, Str(status, "message"));
  // A Failed pod's containers that exited non-zero: containers first, then init containers.
  std::vector<std::string> exits, want_exits;
  for (const ContainerExit& e : pod.exits) {
    exits.push_back(absl::StrCat(e.init, " ", e.name.str(), " ", e.exit_code, " ",
                                 e.reason.str(), " ", e.finished_at));
  }
  if (Str(status, "phase") == "Failed") {
    for (const auto& [list, init] : {std::pair{"containerStatuses", false},
                                     std::pair{"initContainerStatuses", true}}) {
      const Value* statuses = Member(status, list);
      if (statuses == nullptr) continue;
      for (const Value& c : statuses->GetArray()) {
        const Value* state = Member(c, "state");
        const Value* t = state == nullptr ? nullptr : Member(*state, "terminated");
        if (t == nullptr || (*t)["exitCode"].GetInt() == 0) continue;
        want_exits.push_back(absl::StrCat(init, " ", Str(c, "name"), " ", (*t)["exitCode"].GetInt(),
                                          " ", Str(*t, "reason"), " ", Str(*t, "finishedAt")));
      }
    }
  }
  EXPECT_EQ(exits, want_exits);
  StringPairs selector(pod.node_selector.begin(), pod.node_selector.end());
  EXPECT_EQ(selector, Pairs(Member(spec, "nodeSelector")));
  const Value* tolerations = Member(spec, "tolerations");
  ASSERT_EQ(pod.tolerations.size(), tolerations == nullptr ? 0u : tolerations->Size());
  for (size_t i = 0; i < pod.tolerations.size(); ++i) {
    const Value& want = (*tolerations)[static_cast<rapidjson::SizeType>(i)];
    EXPECT_EQ(pod.tolerations[i].key, Str(want, "key"));
    EXPECT_EQ(pod.tolerations[i].operator_, Str(want, "operator"));
    EXPECT_EQ(pod.tolerations[i].value, Str(want, "value"));
    EXPECT_EQ(pod.tolerations[i].effect, Str(want, "effect"));
  }
  EXPECT_EQ(pod.requests.get(), PodRequests(spec));
}

void ExpectNode(const Node& node, const Value& n) {
  ExpectMeta(node.meta, n["metadata"], Str(n["metadata"], "name"));
  SCOPED_TRACE(Str(n["metadata"], "name"));
  EXPECT_EQ(node.unschedulable, Flag(n["spec"], "unschedulable"));
  const Value* taints = Member(n["spec"], "taints");
  ASSERT_EQ(node.taints.size(), taints == nullptr ? 0u : taints->Size());
  for (size_t i = 0; i < node.taints.size(); ++i) {
    const Value& want = (*taints)[static_cast<rapidjson::SizeType>(i)];
    EXPECT_EQ(node.taints[i], (Taint{Str(want, "key"), Str(want, "value"), Str(want, "effect")}));
  }
  EXPECT_EQ(node.allocatable.get(), Quantities(Member(n["status"], "allocatable")));
  EXPECT_EQ(node.ready, Condition(n["status"], "Ready") == "True");
}

// Decodes `list` with `decoder` and with the reference, and compares every item.
template <typename T>
void ExpectSameBothWays(Decoder& decoder, const std::string& list) {
  ASSERT_OK_AND_ASSIGN(DecodedList<T> decoded, decoder.DecodeList<T>(list));
  rapidjson::Document doc;
  doc.Parse(list.data(), list.size());
  ASSERT_FALSE(doc.HasParseError());
  ASSERT_EQ(decoded.items.size(), doc["items"].Size());
  EXPECT_EQ(decoded.resource_version, Str(doc["metadata"], "resourceVersion"));
  for (size_t i = 0; i < decoded.items.size(); ++i) {
    const Value& item = doc["items"][static_cast<rapidjson::SizeType>(i)];
    if constexpr (std::is_same_v<T, Pod>) {
      ExpectPod(decoded.items[i], item);
    } else {
      ExpectNode(decoded.items[i], item);
    }
    if (testing::Test::HasFailure()) return;  // one broken item says enough
  }
}

// --- Generated lists ----------------------------------------------------------------------------

// Items 0..count-1 of `item` in one list, through a fresh Decoder.
template <typename T>
void ExpectGeneratedListSameBothWays(std::string_view kind, int count,
                                     const std::function<std::string(int)>& item) {
  Decoder decoder;
  ExpectSameBothWays<T>(decoder, phalanx::bench::ListJson(kind, 0, count, item));
}

TEST(DecodeReferenceTest, BenchmarkTrainingPods) {
  // The decode benchmark's pods: 2,000 ranks of 32 jobs over 20 namespaces, each with an init
  // container, a sidecar, managedFields, a last-applied annotation and three tolerations.
  ExpectGeneratedListSameBothWays<Pod>("PodList", 2000, [](int i) {
    return phalanx::bench::TrainingPodJson(i);
  });
}

TEST(DecodeReferenceTest, ClusterPodsWithDaemonSets) {
  // The memory benchmark's mix: per node one training rank and nine DaemonSet pods.
  ExpectGeneratedListSameBothWays<Pod>("PodList", 1000, [](int i) {
    return phalanx::bench::ClusterPodJson(i, {.nodes = 100});
  });
}

TEST(DecodeReferenceTest, EksNodes) {
  ExpectGeneratedListSameBothWays<Node>("NodeList", 300, phalanx::bench::NodeJson);
}

TEST(DecodeReferenceTest, OneDecoderAcrossManyPages) {
  // 12,000 pods in pages of 500 through one Decoder: the memos fill up (every rank's labels
  // are distinct) and are emptied between objects; the string pool sweeps. Results must not
  // depend on what an earlier page left behind. Pages are std::string_view, as an informer
  // passes them, so the copying path is covered too.
  Decoder decoder;
  for (int first = 0; first < 12000 && !HasFailure(); first += 500) {
    std::string page = phalanx::bench::ListJson("PodList", first, 500, [](int i) {
      return i % 3 == 0 ? phalanx::bench::TrainingPodJson(i)
                        : phalanx::bench::ClusterPodJson(i, {.nodes = 700});
    });
    ASSERT_OK_AND_ASSIGN(DecodedList<Pod> decoded,
                         decoder.DecodeList<Pod>(std::string_view(page)));
    rapidjson::Document doc;
    doc.Parse(page.data(), page.size());
    ASSERT_EQ(decoded.items.size(), 500u);
    for (size_t i = 0; i < decoded.items.size() && !HasFailure(); ++i) {
      ExpectPod(decoded.items[i], doc["items"][static_cast<rapidjson::SizeType>(i)]);
    }
  }
}

// --- Edge cases ---------------------------------------------------------------------------------

// Pods that exercise what generated lists do not: escapes, nulls, key order, sidecar order,
// overhead, quantities written unusually, and repeats of the same texts (pod "escapes" and pod
// "same-as-escapes" share their labels, tolerations and containers).
constexpr char kEscapedLabels[] = R"("labels":{"z":"last","a\"quoted":"tab\there",
     "\u00e9t\u00e9":"caf\u00e9","a":"first","z":"later"})";
constexpr char kSharedSpec[] = R"(
     "tolerations":[
       {"key":"k1","operator":"Equal","value":"v1","effect":"NoSchedule","tolerationSeconds":5},
       {"operator":"Exists"}],
     "initContainers":[
       {"name":"big","resources":{"requests":{"cpu":"6","memory":"1.5Gi"}}},
       {"name":"side","restartPolicy":"Always",
        "resources":{"requests":{"cpu":"500m","memory":"100M"}}},
       {"name":"after",
        "resources":{"limits":{"cpu":"9"},"requests":{"cpu":"5.8","nvidia.com/gpu":"1"}}},
       {"name":"side2","resources":{"requests":{"cpu":"0.25"}},"restartPolicy":"Always"}],
     "containers":[
       {"name":"a","resources":{"requests":{"cpu":"1e0","memory":"100m","ephemeral-storage":"2k"}}},
       {"name":"b","resources":{"requests":{"cpu":"2","memory":"4Gi","example.com/dev":"0"}}},
       {"name":"c","resources":null},
       {"name":"d"}],
     "overhead":{"cpu":"100m","memory":"1Mi"})";

std::string EdgeCases() {
  return absl::StrCat(R"({"kind":"PodList","metadata":{"resourceVersion":"77"},"items":[
  {"metadata":{"name":"escapes","namespace":"ns","uid":"u-1",)", kEscapedLabels, R"(,
     "annotations":{"note":"line\nbreak \\ slash \/ \"q\""},
     "finalizers":["x/y","x\/z"],
     "ownerReferences":[
       {"apiVersion":"v1","kind":"Job","name":"j","uid":"o-1","controller":false}]},
   "spec":{"nodeName":"n-1","schedulerName":"phalanx","priority":-5,
     "nodeSelector":{"k":"v","b":"c"},)", kSharedSpec, R"(},
   "status":{"phase":"Pending",
     "conditions":[{"status":"False","type":"PodScheduled","reason":"Unschedulable"}]}},
  {"metadata":{"name":"nulls","namespace":"ns","labels":null,"annotations":null,"finalizers":null,
     "ownerReferences":null,"creationTimestamp":null,"deletionTimestamp":"2026-11-20T09:00:00Z"},
   "spec":{"nodeName":null,"tolerations":null,"containers":null,"initContainers":[],
     "nodeSelector":{}},
   "status":null},
  {"metadata":{"name":"bare"}},
  {"metadata":{"name":"same-as-escapes","namespace":"ns",)", kEscapedLabels, R"(},
   "spec":{"nodeName":"n-1",)", kSharedSpec, R"(}},
  {"metadata":{"name":"same-resources-other-kinds","namespace":"ns"},
   "spec":{"containers":[
       {"name":"big","resources":{"requests":{"cpu":"6","memory":"1.5Gi"}}},
       {"name":"side","resources":{"requests":{"cpu":"500m","memory":"100M"}}}]}}
]})");
}

TEST(DecodeReferenceTest, EdgeCases) {
  Decoder decoder;
  ExpectSameBothWays<Pod>(decoder, EdgeCases());
}

TEST(DecodeReferenceTest, EdgeCaseRequestsAreWhatKubeSchedulerCounts) {
  // The same pod, checked against numbers worked out by hand rather than the reference.
  ASSERT_OK_AND_ASSIGN(DecodedList<Pod> list, DecodeList<Pod>(EdgeCases()));
  const Pod& pod = list.items[0];
  constexpr int64_t kGi = int64_t{1} << 30, kMi = int64_t{1} << 20;
  // cpu: containers 1 ("1e0") + 2, plus sidecars 0.5 + 0.25, is 3.75; the init steps need
  //      6 (big alone) and 5.8 + 0.5 (after, beside the first sidecar): 6.3, + 0.1 overhead.
  // memory: containers 1 byte ("100m" rounds up) + 4Gi, plus the sidecar's 100M, beats the
  //      1.5Gi init step; + 1Mi overhead.
  // nvidia.com/gpu: only the `after` init step asks for one, and the pod needs it for that step.
  EXPECT_THAT(pod.requests,
              testing::ElementsAre(testing::Pair("cpu", 6400),
                                   testing::Pair("ephemeral-storage", 2000),
                                   testing::Pair("example.com/dev", 0),
                                   testing::Pair("memory", 4 * kGi + 1 + 100000000 + kMi),
                                   testing::Pair("nvidia.com/gpu", 1)));
  EXPECT_EQ(*pod.meta.labels.Find("\xc3\xa9t\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(*pod.meta.labels.Find("z"), "later");
  EXPECT_EQ(*pod.meta.annotations.Find("note"), "line\nbreak \\ slash / \"q\"");
  EXPECT_EQ(list.items[1].meta.deletion_timestamp, "2026-11-20T09:00:00Z");
  // A different arrangement of the same resources texts is a different pod.
  EXPECT_THAT(list.items[4].requests,
              testing::ElementsAre(testing::Pair("cpu", 6500),
                                   testing::Pair("memory", 3 * kGi / 2 + 100000000)));
}

TEST(DecodeReferenceTest, RepeatedTextsShareOneCopy) {
  // Pods whose subtrees read the same share the decoded value: the ranks of one job hold one
  // owner list, one toleration list and one requests map.
  Decoder decoder;
  std::string json = phalanx::bench::ListJson(
      "PodList", 0, 3, [](int i) { return phalanx::bench::TrainingPodJson(i); });
  ASSERT_OK_AND_ASSIGN(DecodedList<Pod> list, decoder.DecodeList<Pod>(json));
  const Pod& a = list.items[0];
  const Pod& b = list.items[2];
  EXPECT_EQ(&a.tolerations[0], &b.tolerations[0]);
  EXPECT_EQ(&a.meta.owner_references[0], &b.meta.owner_references[0]);
  EXPECT_EQ(&a.requests.get(), &b.requests.get());
  EXPECT_EQ(a.meta.labels.Find("app.kubernetes.io/name"),
            b.meta.labels.Find("app.kubernetes.io/name"));
  EXPECT_NE(*a.meta.labels.Find("phalanx.dev/rank"), *b.meta.labels.Find("phalanx.dev/rank"));
}

}  // namespace
}  // namespace kube
