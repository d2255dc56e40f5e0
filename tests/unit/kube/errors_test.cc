#include "kube/errors.h"

#include "absl/strings/str_cat.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Testdata;

absl::Status FromFile(int code, const std::string& name, HttpHeaders headers = {}) {
  return StatusFromResponse(
      HttpResponse{.status = code, .headers = std::move(headers), .body = Testdata(name)});
}

TEST(ErrorsTest, NotFound) {
  absl::Status status = FromFile(404, "status_404.json");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, HasSubstr("llama-70b-9")));
  EXPECT_TRUE(IsNotFound(status));
  EXPECT_FALSE(IsConflict(status));
  EXPECT_EQ(KubeErrorOf(status)->reason, "NotFound");
  EXPECT_EQ(KubeErrorOf(status)->http_code, 404);
}

TEST(ErrorsTest, ConflictAndAlreadyExistsShare409ButDiffer) {
  absl::Status conflict = FromFile(409, "status_409_conflict.json");
  absl::Status exists = FromFile(409, "status_409_exists.json");
  EXPECT_THAT(conflict, StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(exists, StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_TRUE(IsConflict(conflict));
  EXPECT_FALSE(IsAlreadyExists(conflict));
  EXPECT_TRUE(IsAlreadyExists(exists));
  EXPECT_FALSE(IsConflict(exists));
}

TEST(ErrorsTest, GoneFromExpiredStatus) {
  absl::Status status = FromFile(410, "status_410.json");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("too old")));
  EXPECT_TRUE(IsGone(status));
  EXPECT_EQ(KubeErrorOf(status)->reason, "Expired");
}

TEST(ErrorsTest, InvalidKeepsFieldCauses) {
  absl::Status status = FromFile(422, "status_422.json");
  EXPECT_TRUE(IsInvalid(status));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.queueName")));
  EXPECT_THAT(KubeErrorOf(status)->causes, ElementsAre(HasSubstr("spec.replicas: Invalid value: 0"),
                                                       "spec.queueName: Required value"));
}

// kube-apiserver 1.34's answer to a pod create with fieldValidation=Strict and a misspelt field.
TEST(ErrorsTest, StrictDecodingErrorIsA400SayingSo) {
  absl::Status strict = MakeKubeStatus(
      400, "BadRequest",
      "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field "
      "\"spec.restartPolicyy\"");
  EXPECT_TRUE(IsStrictDecodingError(strict));
  EXPECT_FALSE(IsRetryable(strict));
  EXPECT_FALSE(IsStrictDecodingError(FromFile(422, "status_422.json")));
  EXPECT_FALSE(IsStrictDecodingError(MakeKubeStatus(400, "BadRequest", "the body is not JSON")));
  // Not from the API server at all.
  EXPECT_FALSE(IsStrictDecodingError(absl::InvalidArgumentError("strict decoding error: x")));
}

TEST(ErrorsTest, TooManyRequestsRetryAfterFromBodyOrHeader) {
  absl::Status from_body = FromFile(429, "status_429.json");
  EXPECT_TRUE(IsTooManyRequests(from_body));
  EXPECT_TRUE(IsRetryable(from_body));
  EXPECT_THAT(from_body, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(KubeErrorOf(from_body)->retry_after, absl::Seconds(1));
  absl::Status from_header = FromFile(429, "status_429.json", {{"retry-after", "7"}});
  EXPECT_EQ(KubeErrorOf(from_header)->retry_after, absl::Seconds(7));
}

TEST(ErrorsTest, NonStatusBodiesStillMapByHttpCode) {
  absl::Status unauthorized = StatusFromResponse({.status = 401, .body = "Unauthorized\n"});
  EXPECT_TRUE(IsUnauthorized(unauthorized));
  EXPECT_THAT(unauthorized, StatusIs(absl::StatusCode::kUnauthenticated));
  absl::Status forbidden = StatusFromResponse({.status = 403, .body = "<html>denied</html>"});
  EXPECT_TRUE(IsForbidden(forbidden));
  absl::Status unavailable = StatusFromResponse({.status = 503, .body = ""});
  EXPECT_THAT(unavailable, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_TRUE(IsRetryable(unavailable));
  EXPECT_EQ(KubeErrorOf(unavailable)->reason, "ServiceUnavailable");
}

// What kube-apiserver's NamespaceLifecycle plugin answers a create in a namespace being deleted.
TEST(ErrorsTest, NamespaceTerminatingIsAForbiddenOfItsOwn) {
  absl::Status terminating = StatusFromResponse(
      {.status = 403,
       .body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"j-0\" )"
               R"(is forbidden: unable to create new content in namespace ml-a because it is )"
               R"(being terminated","reason":"Forbidden","details":{"name":"j-0","kind":"pods",)"
               R"("causes":[{"reason":"NamespaceTerminating","message":"namespace ml-a is being )"
               R"(terminated","field":"metadata.namespace"}]},"code":403})"});
  EXPECT_TRUE(IsForbidden(terminating));
  EXPECT_TRUE(IsNamespaceTerminating(terminating));
  absl::Status rbac = StatusFromResponse(
      {.status = 403,
       .body = R"({"kind":"Status","status":"Failure","message":"pods is forbidden: User )"
               R"(\"system:serviceaccount:x:y\" cannot create resource \"pods\"",)"
               R"("reason":"Forbidden","details":{"kind":"pods"},"code":403})"});
  EXPECT_TRUE(IsForbidden(rbac));
  EXPECT_FALSE(IsNamespaceTerminating(rbac));
  EXPECT_FALSE(IsNamespaceTerminating(absl::PermissionDeniedError("is being terminated")));
  EXPECT_TRUE(IsAuthorizationDenied(rbac));
  EXPECT_FALSE(IsAuthorizationDenied(terminating));
}

// 403s from admission plugins refuse the object, not the caller: a ResourceQuota, a PriorityClass
// that is gone (audit 2026-11-30: both were reported as "check the operator's RBAC").
TEST(ErrorsTest, AdmissionRefusalsAreNotAuthorizationDenials) {
  for (const char* message :
       {R"(pods \"rq-1\" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=8)",
        R"(pods \"pcj-0\" is forbidden: no PriorityClass with name training-standard was found)"}) {
    absl::Status refused = StatusFromResponse(
        {.status = 403,
         .body = absl::StrCat(R"({"kind":"Status","status":"Failure","message":")", message,
                              R"(","reason":"Forbidden","code":403})")});
    EXPECT_TRUE(IsForbidden(refused));
    EXPECT_FALSE(IsAuthorizationDenied(refused)) << message;
  }
  EXPECT_TRUE(IsAuthorizationDenied(absl::PermissionDeniedError(
      R"(forbidden: User "u" cannot get path "/metrics")")));
}

TEST(ErrorsTest, SuccessIsOkAndPlainStatusesHaveNoDetails) {
  EXPECT_OK(StatusFromResponse({.status = 201, .body = "{}"}));
  EXPECT_FALSE(KubeErrorOf(absl::UnavailableError("connection refused")).has_value());
  EXPECT_TRUE(IsRetryable(absl::UnavailableError("connection refused")));
}

TEST(ErrorsTest, StatusObjectCodeWinsOverFallback) {
  // Watch ERROR events carry a Status whose `code` is the truth.
  absl::Status status = StatusFromStatusObject(Testdata("status_410.json"), 500);
  EXPECT_TRUE(IsGone(status));
}

}  // namespace
}  // namespace kube
