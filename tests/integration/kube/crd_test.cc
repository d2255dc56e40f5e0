// A custom resource with a status subresource, created by the test itself.
#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/decode.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "tests/integration/kube/cluster.h"

namespace kube::integration {
namespace {

const Resource kWidgets{.group = "it.phalanx.dev",
                        .version = "v1",
                        .plural = "widgets",
                        .namespaced = true,
                        .kind = "Widget"};

constexpr char kCrd[] = R"({
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.it.phalanx.dev"},
  "spec": {
    "group": "it.phalanx.dev", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}},
        "status": {"type": "object", "properties": {"phase": {"type": "string"},
                                                     "observed": {"type": "integer"}}}}}}
    }]
  }})";

std::string Widget(const std::string& name, int size, const std::string& extra = "") {
  return absl::StrCat(R"({"apiVersion":"it.phalanx.dev/v1","kind":"Widget","metadata":{"name":")",
                      name, R"("},"spec":{"size":)", size, "}", extra, "}");
}

std::string StatusPhase(const std::string& json) {
  rapidjson::Document doc = *ParseJson(json);
  if (!doc.HasMember("status")) return "";
  return std::string(StringMember(doc["status"], "phase"));
}

class CrdTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (HasFatalFailure()) return;
    absl::Status created = client().Create(CustomResourceDefinitions(), "", kCrd).status();
    ASSERT_TRUE(created.ok() || absl::IsAlreadyExists(created)) << created;
    // Served once Established and discovery has caught up: a list stops being 404.
    ASSERT_TRUE(Eventually([&] { return client().List(kWidgets, ns()).ok(); }, absl::Seconds(60)))
        << "the Widget CRD never became served";
  }
};

TEST_F(CrdTest, StatusSubresourceIsSeparateFromSpec) {
  std::string name = "w-" + RandomSuffix();
  // Status in a create is dropped: status is only written through the subresource.
  ASSERT_OK_AND_ASSIGN(
      std::string created,
      client().Create(kWidgets, ns(), Widget(name, 3, R"(,"status":{"phase":"Bogus"})")));
  EXPECT_EQ(StatusPhase(created), "");
  ASSERT_OK_AND_ASSIGN(RawObject widget, Decode<RawObject>(created));
  EXPECT_EQ(widget.meta.namespace_, ns());

  // UpdateStatus with the current resourceVersion.
  ASSERT_OK_AND_ASSIGN(rapidjson::Document doc, ParseJson(created));
  rapidjson::Value& status = ObjectMember(doc, "status", doc.GetAllocator());
  SetMember(status, "phase", JsonString("Ready", doc.GetAllocator()), doc.GetAllocator());
  ASSERT_OK_AND_ASSIGN(std::string with_status,
                       client().UpdateStatus(kWidgets, ns(), name, ToJson(doc)));
  EXPECT_EQ(StatusPhase(with_status), "Ready");

  // A main-resource update does not touch status, whatever its body says.
  ASSERT_OK_AND_ASSIGN(rapidjson::Document edit, ParseJson(with_status));
  edit["spec"]["size"].SetInt(5);
  SetMember(edit["status"], "phase", JsonString("Ignored", edit.GetAllocator()),
            edit.GetAllocator());
  ASSERT_OK_AND_ASSIGN(std::string updated, client().Update(kWidgets, ns(), name, ToJson(edit)));
  EXPECT_EQ(StatusPhase(updated), "Ready");

  // Merge-patch the status subresource and read it back through GetStatus.
  ASSERT_OK(client()
                .PatchStatus(kWidgets, ns(), name, PatchType::kMerge,
                             R"({"status":{"phase":"Done","observed":2}})")
                .status());
  ASSERT_OK_AND_ASSIGN(std::string read_status, client().GetStatus(kWidgets, ns(), name));
  EXPECT_EQ(StatusPhase(read_status), "Done");
  ASSERT_OK_AND_ASSIGN(std::string read, client().Get(kWidgets, ns(), name));
  EXPECT_THAT(read, ::testing::HasSubstr("\"size\":5"));

  // Schema validation comes back as Invalid with the field.
  absl::Status invalid = client().Create(kWidgets, ns(), Widget(name + "-bad", 0)).status();
  EXPECT_TRUE(IsInvalid(invalid)) << invalid;
  ASSERT_TRUE(KubeErrorOf(invalid).has_value());
  EXPECT_THAT(KubeErrorOf(invalid)->causes, ::testing::Contains(::testing::HasSubstr("spec.size")));

  ASSERT_OK(client().Delete(kWidgets, ns(), name));
  EXPECT_TRUE(absl::IsNotFound(client().Get(kWidgets, ns(), name).status()));
}

}  // namespace
}  // namespace kube::integration
