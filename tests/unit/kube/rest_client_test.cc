#include "kube/rest_client.h"

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "tests/mocks/kube/mock_transport.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;
using testing::Testdata;

const Resource kJobs{.group = "phalanx.dev",
                     .version = "v1alpha1",
                     .plural = "trainingjobs",
                     .namespaced = true,
                     .kind = "TrainingJob"};

HttpResponse Ok(std::string body, int status = 200) {
  return HttpResponse{.status = status, .body = std::move(body)};
}

TEST(ResourcePathTest, CoreGroupsScopesAndSubresources) {
  EXPECT_EQ(ObjectPath(Pods(), "ml", "p"), "/api/v1/namespaces/ml/pods/p");
  EXPECT_EQ(CollectionPath(Pods(), ""), "/api/v1/pods");
  EXPECT_EQ(CollectionPath(Nodes(), "ignored"), "/api/v1/nodes");
  EXPECT_EQ(ObjectPath(kJobs, "ml", "llama", "status"),
            "/apis/phalanx.dev/v1alpha1/namespaces/ml/trainingjobs/llama/status");
  EXPECT_EQ(ObjectPath(Leases(), "kube-system", "l"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l");
  EXPECT_EQ(kJobs.ApiVersion(), "phalanx.dev/v1alpha1");
  EXPECT_EQ(WithQuery("/api/v1/pods", {{"labelSelector", "app in (a,b),!x"}, {"limit", ""}}),
            "/api/v1/pods?labelSelector=app%20in%20%28a%2Cb%29%2C%21x");
}

class RestClientTest : public ::testing::Test {
 protected:
  MockTransport transport_;
  RestClient client_{transport_};
};

TEST_F(RestClientTest, GetReturnsBodyOrMappedError) {
  EXPECT_CALL(transport_, Send(Field(&HttpRequest::path, "/api/v1/namespaces/ml-team/pods/x")))
      .WillOnce(Return(Ok("{\"kind\":\"Pod\"}")));
  ASSERT_OK_AND_ASSIGN(std::string body, client_.Get(Pods(), "ml-team", "x"));
  EXPECT_EQ(body, "{\"kind\":\"Pod\"}");

  EXPECT_CALL(transport_, Send(_)).WillOnce(Return(Ok(Testdata("status_404.json"), 404)));
  absl::StatusOr<std::string> missing = client_.Get(Pods(), "ml-team", "llama-70b-9");
  EXPECT_TRUE(IsNotFound(missing.status()));
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound,
                                HasSubstr("GET /api/v1/namespaces/ml-team/pods/llama-70b-9")));

  EXPECT_CALL(transport_, Send(_)).WillOnce(Return(absl::UnavailableError("connection refused")));
  EXPECT_THAT(client_.GetStatus(kJobs, "ml", "llama"), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(RestClientTest, ListFollowsContinueTokens) {
  std::vector<std::string> paths;
  EXPECT_CALL(transport_, Send(_))
      .WillOnce(Invoke([&](const HttpRequest& r) {
        paths.push_back(r.path);
        return Ok(Testdata("pod_list_page1.json"));
      }))
      .WillOnce(Invoke([&](const HttpRequest& r) {
        paths.push_back(r.path);
        return Ok(Testdata("pod_list_page2.json"));
      }));
  ASSERT_OK_AND_ASSIGN(
      ListResult result,
      client_.List(Pods(), "",
                   {.label_selector = "phalanx.dev/job", .limit = 2, .resource_version = "0"}));
  ASSERT_EQ(result.items.size(), 3u);
  EXPECT_THAT(result.items[2], HasSubstr("\"name\":\"p-2\""));
  EXPECT_EQ(result.resource_version, "190001");
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], "/api/v1/pods?labelSelector=phalanx.dev%2Fjob&limit=2&resourceVersion=0");
  // The follow-up page carries the token (escaped) and not the resourceVersion.
  EXPECT_EQ(paths[1],
            "/api/v1/pods?labelSelector=phalanx.dev%2Fjob&limit=2&continue="
            "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTkwMDAxLCJzdGFydCI6InAtMVx1MDAwMCJ9");
}

TEST_F(RestClientTest, ExpiredContinueTokenIsGone) {
  EXPECT_CALL(transport_, Send(_))
      .WillOnce(Return(Ok(Testdata("pod_list_page1.json"))))
      .WillOnce(Return(Ok(Testdata("status_410.json"), 410)));
  EXPECT_TRUE(IsGone(client_.List(Pods(), "").status()));
}

TEST_F(RestClientTest, WritesUseTheRightVerbsPathsAndContentTypes) {
  std::vector<HttpRequest> seen;
  EXPECT_CALL(transport_, Send(_)).WillRepeatedly(Invoke([&](const HttpRequest& r) {
    seen.push_back(r);
    return Ok("{}", r.method == "POST" ? 201 : 200);
  }));
  ASSERT_OK(client_.Create(ConfigMaps(), "ml", "{\"a\":1}", {.field_manager = "phalanx"}).status());
  ASSERT_OK(client_.Update(ConfigMaps(), "ml", "cm", "{}").status());
  ASSERT_OK(client_.UpdateStatus(kJobs, "ml", "llama", "{}").status());
  ASSERT_OK(client_.Patch(kJobs, "ml", "llama", PatchType::kMerge, "{}").status());
  ASSERT_OK(client_.PatchStatus(kJobs, "ml", "llama", PatchType::kJson, "[]").status());
  ASSERT_OK(client_
                .Patch(ConfigMaps(), "ml", "cm", PatchType::kApply, "{}",
                       {.field_manager = "phalanx", .force = true})
                .status());
  ASSERT_OK(client_.Create(Pods(), "ml", "{}", {.field_validation = "Strict"}).status());
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].path, "/api/v1/namespaces/ml/configmaps?fieldManager=phalanx");
  EXPECT_EQ(seen[0].body, "{\"a\":1}");
  EXPECT_EQ(FindHeader(seen[0].headers, "content-type"), "application/json");
  EXPECT_EQ(seen[1].method, "PUT");
  EXPECT_EQ(seen[1].path, "/api/v1/namespaces/ml/configmaps/cm");
  EXPECT_EQ(seen[2].path, "/apis/phalanx.dev/v1alpha1/namespaces/ml/trainingjobs/llama/status");
  EXPECT_EQ(seen[3].method, "PATCH");
  EXPECT_EQ(FindHeader(seen[3].headers, "Content-Type"), "application/merge-patch+json");
  EXPECT_EQ(FindHeader(seen[4].headers, "Content-Type"), "application/json-patch+json");
  EXPECT_EQ(seen[4].path, "/apis/phalanx.dev/v1alpha1/namespaces/ml/trainingjobs/llama/status");
  EXPECT_EQ(FindHeader(seen[5].headers, "Content-Type"), "application/apply-patch+yaml");
  EXPECT_EQ(seen[5].path, "/api/v1/namespaces/ml/configmaps/cm?fieldManager=phalanx&force=true");
  EXPECT_EQ(seen[6].path, "/api/v1/namespaces/ml/pods?fieldValidation=Strict");
}

TEST_F(RestClientTest, ApplyNeedsAFieldManager) {
  EXPECT_CALL(transport_, Send(_)).Times(0);
  EXPECT_THAT(client_.Patch(ConfigMaps(), "ml", "cm", PatchType::kApply, "{}"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(RestClientTest, DeleteSendsPropagationAndPreconditions) {
  HttpRequest sent;
  EXPECT_CALL(transport_, Send(_)).WillOnce(Invoke([&](const HttpRequest& r) {
    sent = r;
    return Ok("{}");
  }));
  ASSERT_OK(client_.Delete(kJobs, "ml", "llama",
                           {.propagation_policy = "Foreground",
                            .precondition_uid = "j-1",
                            .precondition_resource_version = "42",
                            .grace_period_seconds = 0}));
  EXPECT_EQ(sent.method, "DELETE");
  EXPECT_EQ(sent.path, "/apis/phalanx.dev/v1alpha1/namespaces/ml/trainingjobs/llama");
  ASSERT_OK_AND_ASSIGN(rapidjson::Document body, ParseJson(sent.body));
  EXPECT_EQ(StringMember(body, "kind"), "DeleteOptions");
  EXPECT_EQ(StringMember(body, "propagationPolicy"), "Foreground");
  EXPECT_EQ(StringMember(body["preconditions"], "uid"), "j-1");
  EXPECT_EQ(StringMember(body["preconditions"], "resourceVersion"), "42");
  EXPECT_EQ(body["gracePeriodSeconds"].GetInt64(), 0);
}

TEST_F(RestClientTest, BindPostsABindingWithTheUidPrecondition) {
  HttpRequest sent;
  EXPECT_CALL(transport_, Send(_)).WillOnce(Invoke([&](const HttpRequest& r) {
    sent = r;
    return Ok("{}", 201);
  }));
  ASSERT_OK(client_.Bind("ml", "llama-0", "u-0", "node-7"));
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.path, "/api/v1/namespaces/ml/pods/llama-0/binding");
  ASSERT_OK_AND_ASSIGN(rapidjson::Document body, ParseJson(sent.body));
  EXPECT_EQ(StringMember(body, "kind"), "Binding");
  EXPECT_EQ(StringMember(body["metadata"], "uid"), "u-0");
  EXPECT_EQ(StringMember(body["target"], "name"), "node-7");
  EXPECT_EQ(StringMember(body["target"], "kind"), "Node");
}

TEST_F(RestClientTest, WatchStreamsEventsAcrossChunkBoundaries) {
  std::string stream = Testdata("watch_stream.jsonl");
  HttpRequest sent;
  EXPECT_CALL(transport_, Stream(_, _, _))
      .WillOnce(Invoke([&](const HttpRequest& r, const ChunkCallback& on_chunk,
                           const Cancellation*) -> absl::StatusOr<HttpResponse> {
        sent = r;
        // Chunks of 7 bytes: every event straddles several.
        for (size_t i = 0; i < stream.size(); i += 7) {
          if (!on_chunk(std::string_view(stream).substr(i, 7))) break;
        }
        return HttpResponse{.status = 200};
      }));
  std::vector<WatchEvent::Type> types;
  ASSERT_OK(client_.Watch(
      Pods(), "ml-team", {.resource_version = "190001", .timeout_seconds = 317},
      [&](const WatchEvent& e) {
        types.push_back(e.type);
        return e.type != WatchEvent::Type::kDeleted;  // stop after DELETED
      },
      nullptr));
  EXPECT_EQ(sent.path,
            "/api/v1/namespaces/ml-team/pods?watch=true&resourceVersion=190001"
            "&allowWatchBookmarks=true&timeoutSeconds=317");
  EXPECT_THAT(types, ElementsAre(WatchEvent::Type::kAdded, WatchEvent::Type::kModified,
                                 WatchEvent::Type::kBookmark, WatchEvent::Type::kDeleted));
}

TEST_F(RestClientTest, WatchThatStartsTooOldIsGone) {
  EXPECT_CALL(transport_, Stream(_, _, _))
      .WillOnce(Return(HttpResponse{.status = 410, .body = Testdata("status_410.json")}));
  absl::Status status = client_.Watch(
      Pods(), "", {.resource_version = "1"}, [](const WatchEvent&) { return true; }, nullptr);
  EXPECT_TRUE(IsGone(status));
}

TEST_F(RestClientTest, WatchWithGarbageIsDataLoss) {
  EXPECT_CALL(transport_, Stream(_, _, _))
      .WillOnce(Invoke([](const HttpRequest&, const ChunkCallback& on_chunk,
                          const Cancellation*) -> absl::StatusOr<HttpResponse> {
        on_chunk("<html>proxy error</html>\n");
        return HttpResponse{.status = 200};
      }));
  EXPECT_THAT(client_.Watch(
                  Pods(), "", {}, [](const WatchEvent&) { return true; }, nullptr),
              StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace kube
