// CRUD, pagination, conflicts, server-side apply, garbage collection and pods/binding against
// the real control plane (hack/cluster/up.sh).
#include <atomic>
#include <set>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/backoff.h"
#include "kube/decode.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "kube/transport_cpprest.h"
#include "tests/integration/kube/cluster.h"

namespace kube::integration {
namespace {

using ::testing::HasSubstr;

std::string ConfigMap(const std::string& name, const std::string& data_json,
                      const std::string& extra_meta = "") {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")", name, "\"",
                      extra_meta, R"(},"data":)", data_json, "}");
}

std::string Field(const std::string& json, const char* a, const char* b) {
  rapidjson::Document doc = *ParseJson(json);
  if (!doc.HasMember(a)) return "";
  return std::string(StringMember(doc[a], b));
}

using CrudTest = ClusterTest;

// The daemons parse OpenSSL's default CA file once instead of for every new connection
// (kube::LoadDefaultCaFileOnce). Verification must stay as strict: the API server is accepted
// with the cluster's CA, and refused with a certificate that is not its CA and with no CA at all
// (its certificate is signed by no CA of the default file).
TEST_F(CrudTest, TlsStillVerifiesTheServerWithTheCaFileLoadedOnce) {
  LoadDefaultCaFileOnce();  // tests run one at a time: no connection is being opened meanwhile
  ASSERT_STREQ(std::getenv("SSL_CERT_FILE"), "/dev/null");
  auto version = [](const RestConfig& config) -> absl::StatusOr<int> {
    ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport, NewCpprestTransport(config));
    ASSIGN_OR_RETURN(HttpResponse response, transport->Send(HttpRequest{.path = "/version"}));
    return response.status;
  };
  RestConfig good = cluster().config;
  ASSERT_FALSE(good.ca_pem.empty()) << "the local control plane's kubeconfig carries its CA";
  absl::StatusOr<int> accepted = version(good);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(*accepted, 200);
  RestConfig wrong = good;
  wrong.ca_pem = good.client_cert_pem;  // a certificate, but not the one that signed the server
  ASSERT_FALSE(wrong.ca_pem.empty());
  EXPECT_FALSE(version(wrong).ok());
  RestConfig none = good;
  none.ca_pem.clear();
  EXPECT_FALSE(version(none).ok());
}

TEST_F(CrudTest, ConfigMapLifecycle) {
  std::string name = "cm-" + RandomSuffix();
  ASSERT_OK_AND_ASSIGN(std::string created,
                       client().Create(ConfigMaps(), ns(), ConfigMap(name, R"({"k":"v1"})")));
  std::string uid = Field(created, "metadata", "uid");
  std::string rv1 = Field(created, "metadata", "resourceVersion");
  ASSERT_FALSE(uid.empty());

  EXPECT_TRUE(
      absl::IsAlreadyExists(client().Create(ConfigMaps(), ns(), ConfigMap(name, "{}")).status()));

  ASSERT_OK_AND_ASSIGN(std::string got, client().Get(ConfigMaps(), ns(), name));
  EXPECT_EQ(Field(got, "data", "k"), "v1");

  // Update carrying the resourceVersion we read: a compare-and-swap.
  std::string rv_meta = absl::StrCat(R"(,"resourceVersion":")", rv1, "\"");
  ASSERT_OK_AND_ASSIGN(
      std::string updated,
      client().Update(ConfigMaps(), ns(), name, ConfigMap(name, R"({"k":"v2"})", rv_meta)));
  EXPECT_EQ(Field(updated, "data", "k"), "v2");
  // The same stale version again is a 409 Conflict.
  absl::Status stale =
      client().Update(ConfigMaps(), ns(), name, ConfigMap(name, R"({"k":"v3"})", rv_meta)).status();
  EXPECT_TRUE(IsConflict(stale)) << stale;

  ASSERT_OK_AND_ASSIGN(
      std::string patched,
      client().Patch(ConfigMaps(), ns(), name, PatchType::kMerge, R"({"data":{"extra":"x"}})"));
  EXPECT_EQ(Field(patched, "data", "extra"), "x");
  EXPECT_EQ(Field(patched, "data", "k"), "v2");
  ASSERT_OK_AND_ASSIGN(patched, client().Patch(ConfigMaps(), ns(), name, PatchType::kJson,
                                               R"([{"op":"remove","path":"/data/extra"}])"));
  EXPECT_EQ(Field(patched, "data", "extra"), "");
  ASSERT_OK_AND_ASSIGN(patched, client().Patch(ConfigMaps(), ns(), name, PatchType::kStrategicMerge,
                                               R"({"data":{"s":"1"}})"));
  EXPECT_EQ(Field(patched, "data", "s"), "1");

  // A delete guarded by the wrong uid is refused.
  absl::Status wrong_uid = client().Delete(
      ConfigMaps(), ns(), name, {.precondition_uid = "00000000-0000-0000-0000-000000000000"});
  EXPECT_TRUE(IsConflict(wrong_uid)) << wrong_uid;
  ASSERT_OK(client().Delete(ConfigMaps(), ns(), name, {.precondition_uid = uid}));
  EXPECT_TRUE(absl::IsNotFound(client().Get(ConfigMaps(), ns(), name).status()));
  EXPECT_TRUE(absl::IsNotFound(client().Delete(ConfigMaps(), ns(), name)));
}

TEST_F(CrudTest, InvalidObjectReportsFieldCauses) {
  absl::Status invalid =
      client().Create(ConfigMaps(), ns(), ConfigMap("Not_A_Valid_Name", "{}")).status();
  ASSERT_TRUE(IsInvalid(invalid)) << invalid;
  std::optional<KubeError> error = KubeErrorOf(invalid);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->http_code, 422);
  ASSERT_FALSE(error->causes.empty());
  EXPECT_THAT(error->causes[0], HasSubstr("metadata.name"));
}

TEST_F(CrudTest, ConflictRetryReReadsAndWins) {
  std::string name = "counter-" + RandomSuffix();
  ASSERT_OK(client().Create(ConfigMaps(), ns(), ConfigMap(name, R"({"n":"0"})")).status());
  // Four writers increment the same counter with read-modify-write; every increment must land.
  constexpr int kWriters = 4, kIncrements = 5;
  std::atomic<int> conflicts{0};
  std::vector<std::thread> writers;
  std::atomic<bool> failed{false};
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        absl::Status status = RetryOnConflict(
            [&]() -> absl::Status {
              ASSIGN_OR_RETURN(std::string cm, client().Get(ConfigMaps(), ns(), name));
              ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(cm));
              int n = std::stoi(std::string(StringMember(doc["data"], "n")));
              SetMember(doc["data"], "n", JsonString(std::to_string(n + 1), doc.GetAllocator()),
                        doc.GetAllocator());
              absl::Status s = client().Update(ConfigMaps(), ns(), name, ToJson(doc)).status();
              if (IsConflict(s)) ++conflicts;
              return s;
            },
            RealClock(), {.attempts = 50});
        if (!status.ok()) failed = true;
      }
    });
  }
  for (std::thread& t : writers) t.join();
  EXPECT_FALSE(failed.load());
  ASSERT_OK_AND_ASSIGN(std::string final_cm, client().Get(ConfigMaps(), ns(), name));
  EXPECT_EQ(Field(final_cm, "data", "n"), std::to_string(kWriters * kIncrements));
  std::cerr << "[conflict] " << conflicts.load() << " conflicting writes were retried\n";

  // Deterministically: a write based on a read that another writer has overtaken conflicts once,
  // and the retry (which re-reads) wins.
  ASSERT_OK_AND_ASSIGN(std::string stale, client().Get(ConfigMaps(), ns(), name));
  ASSERT_OK(client()
                .Patch(ConfigMaps(), ns(), name, PatchType::kMerge, R"({"data":{"n":"100"}})")
                .status());
  int attempts = 0;
  ASSERT_OK(RetryOnConflict([&]() -> absl::Status {
    std::string current = stale;
    if (++attempts > 1) {
      ASSIGN_OR_RETURN(current, client().Get(ConfigMaps(), ns(), name));
    }
    ASSIGN_OR_RETURN(rapidjson::Document doc, ParseJson(current));
    int n = std::stoi(std::string(StringMember(doc["data"], "n")));
    SetMember(doc["data"], "n", JsonString(std::to_string(n + 1), doc.GetAllocator()),
              doc.GetAllocator());
    return client().Update(ConfigMaps(), ns(), name, ToJson(doc)).status();
  }));
  EXPECT_EQ(attempts, 2);
  ASSERT_OK_AND_ASSIGN(final_cm, client().Get(ConfigMaps(), ns(), name));
  EXPECT_EQ(Field(final_cm, "data", "n"), "101");
}

TEST_F(CrudTest, PaginatedListOf2000Objects) {
  std::string label = "page-" + RandomSuffix();
  constexpr int kObjects = 2000;
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> creators;
  for (int t = 0; t < 4; ++t) {
    creators.emplace_back([&] {
      for (int i = next++; i < kObjects; i = next++) {
        std::string meta = absl::StrCat(R"(,"labels":{"set":")", label, "\"}");
        if (!client()
                 .Create(ConfigMaps(), ns(),
                         ConfigMap(absl::StrCat(label, "-", i),
                                   R"({"i":")" + std::to_string(i) + "\"}", meta))
                 .ok()) {
          failed = true;
        }
      }
    });
  }
  for (std::thread& t : creators) t.join();
  ASSERT_FALSE(failed.load());

  int pages = 0;
  std::set<std::string> names;
  std::string first_rv;
  ASSERT_OK(client().ListPages(ConfigMaps(), ns(), {.label_selector = "set=" + label, .limit = 300},
                               [&](std::string_view page) -> absl::Status {
                                 ++pages;
                                 ASSIGN_OR_RETURN(DecodedList<RawObject> list,
                                                  DecodeList<RawObject>(page));
                                 if (first_rv.empty()) first_rv = list.resource_version;
                                 // Every page is pinned to the first page's snapshot.
                                 EXPECT_EQ(list.resource_version, first_rv);
                                 for (const RawObject& o : list.items) names.insert(o.meta.name);
                                 return absl::OkStatus();
                               }));
  EXPECT_EQ(pages, 7);  // 6 x 300 + 200
  EXPECT_EQ(names.size(), static_cast<size_t>(kObjects));

  ASSERT_OK_AND_ASSIGN(ListResult all,
                       client().List(ConfigMaps(), ns(), {.label_selector = "set=" + label}));
  EXPECT_EQ(all.items.size(), static_cast<size_t>(kObjects));
  EXPECT_FALSE(all.resource_version.empty());
}

TEST_F(CrudTest, ServerSideApplyOwnsFieldsPerManager) {
  std::string name = "ssa-" + RandomSuffix();
  std::string applied = ConfigMap(name, R"({"owned-by-a":"1","shared":"a"})");
  ASSERT_OK(client()
                .Patch(ConfigMaps(), ns(), name, PatchType::kApply, applied,
                       {.field_manager = "manager-a"})
                .status());
  // Another manager setting a field A owns is a conflict...
  absl::Status conflict =
      client()
          .Patch(ConfigMaps(), ns(), name, PatchType::kApply, ConfigMap(name, R"({"shared":"b"})"),
                 {.field_manager = "manager-b"})
          .status();
  EXPECT_TRUE(IsConflict(conflict)) << conflict;
  EXPECT_THAT(conflict.message(), HasSubstr("manager-a"));
  // ...unless it forces, which takes the field over.
  ASSERT_OK_AND_ASSIGN(std::string forced,
                       client().Patch(ConfigMaps(), ns(), name, PatchType::kApply,
                                      ConfigMap(name, R"({"shared":"b"})"),
                                      {.field_manager = "manager-b", .force = true}));
  EXPECT_EQ(Field(forced, "data", "shared"), "b");
  EXPECT_EQ(Field(forced, "data", "owned-by-a"), "1");
  EXPECT_THAT(forced, HasSubstr("\"manager\":\"manager-a\""));
  EXPECT_THAT(forced, HasSubstr("\"manager\":\"manager-b\""));
  // Re-applying A's config without the field it no longer owns... removes only its own field.
  ASSERT_OK_AND_ASSIGN(std::string reapplied,
                       client().Patch(ConfigMaps(), ns(), name, PatchType::kApply,
                                      ConfigMap(name, R"({})"), {.field_manager = "manager-a"}));
  EXPECT_EQ(Field(reapplied, "data", "owned-by-a"), "");
  EXPECT_EQ(Field(reapplied, "data", "shared"), "b");
}

TEST_F(CrudTest, OwnerReferencesAreGarbageCollected) {
  std::string owner_name = "owner-" + RandomSuffix();
  ASSERT_OK_AND_ASSIGN(std::string owner,
                       client().Create(ConfigMaps(), ns(), ConfigMap(owner_name, "{}")));
  std::string owner_uid = Field(owner, "metadata", "uid");
  std::vector<std::string> children;
  for (int i = 0; i < 3; ++i) {
    std::string child = absl::StrCat(owner_name, "-child-", i);
    std::string meta =
        absl::StrCat(R"(,"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap",)", R"("name":")",
                     owner_name, R"(","uid":")", owner_uid, R"(","blockOwnerDeletion":true}])");
    ASSERT_OK(client().Create(ConfigMaps(), ns(), ConfigMap(child, "{}", meta)).status());
    children.push_back(child);
  }
  ASSERT_OK(client().Delete(ConfigMaps(), ns(), owner_name, {.propagation_policy = "Background"}));
  // kube-controller-manager's garbage collector deletes the dependents.
  bool collected = Eventually(
      [&] {
        for (const std::string& child : children) {
          if (!absl::IsNotFound(client().Get(ConfigMaps(), ns(), child).status())) return false;
        }
        return true;
      },
      absl::Seconds(60));
  EXPECT_TRUE(collected) << "dependents still exist 60 s after the owner was deleted";
}

TEST_F(CrudTest, BindPodToKwokNode) {
  std::string node = "kwok-it-" + RandomSuffix();
  ASSERT_OK(client()
                .Create(Nodes(), "",
                        absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")",
                                     node, R"(","annotations":{"kwok.x-k8s.io/node":"fake"},)",
                                     R"("labels":{"type":"kwok"}},)",
                                     R"("status":{"allocatable":{"cpu":"32","memory":"256Gi",)",
                                     R"("nvidia.com/gpu":"8","pods":"110"},)",
                                     R"("capacity":{"cpu":"32","memory":"256Gi",)",
                                     R"("nvidia.com/gpu":"8","pods":"110"}}})"))
                .status());
  // Nodes are cluster-scoped: delete it even if an assertion below fails.
  absl::Cleanup delete_node = [&] { (void)client().Delete(Nodes(), "", node); };
  // kwok marks the node Ready.
  EXPECT_TRUE(Eventually(
      [&] {
        absl::StatusOr<std::string> n = client().Get(Nodes(), "", node);
        if (!n.ok()) return false;
        absl::StatusOr<Node> decoded = Decode<Node>(*n);
        return decoded.ok() && decoded->ready;
      },
      absl::Seconds(30)));

  std::string pod = "bind-" + RandomSuffix();
  ASSERT_OK_AND_ASSIGN(
      std::string created,
      client().Create(Pods(), ns(),
                      absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", pod,
                                   R"("},"spec":{"schedulerName":"phalanx-it-none",)",
                                   R"("containers":[{"name":"c","image":"busybox",)",
                                   R"("resources":{"requests":{"nvidia.com/gpu":"8"},)",
                                   R"("limits":{"nvidia.com/gpu":"8"}}}]}})")));
  ASSERT_OK_AND_ASSIGN(Pod created_pod, Decode<Pod>(created));
  EXPECT_EQ(created_pod.requests.at("nvidia.com/gpu"), 8);
  // A binding whose uid precondition does not match is refused.
  EXPECT_FALSE(client().Bind(ns(), pod, "00000000-0000-0000-0000-000000000000", node).ok());
  ASSERT_OK(client().Bind(ns(), pod, created_pod.meta.uid, node));
  ASSERT_OK_AND_ASSIGN(std::string bound, client().Get(Pods(), ns(), pod));
  ASSERT_OK_AND_ASSIGN(Pod bound_pod, Decode<Pod>(bound));
  EXPECT_EQ(bound_pod.node_name, node);
  // Binding twice is a conflict: the pod is already assigned.
  EXPECT_TRUE(IsConflict(client().Bind(ns(), pod, created_pod.meta.uid, node)));
  // kwok's fake kubelet runs it.
  EXPECT_TRUE(Eventually(
      [&] {
        absl::StatusOr<std::string> p = client().Get(Pods(), ns(), pod);
        absl::StatusOr<Pod> decoded = p.ok() ? Decode<Pod>(*p) : absl::StatusOr<Pod>(p.status());
        return decoded.ok() && decoded->phase == "Running";
      },
      absl::Seconds(60)));
  ASSERT_OK(client().Delete(Pods(), ns(), pod, {.grace_period_seconds = 0}));
}

}  // namespace
}  // namespace kube::integration
