// Kubernetes API errors as absl::Status. A failed call keeps the HTTP code, the Status object's
// `reason` (NotFound, AlreadyExists, Conflict, Expired, Invalid, ...) and Retry-After, so callers
// branch on what Kubernetes said rather than on message text:
//
//   absl::StatusOr<std::string> pod = client.Get(kube::Pods(), "ns", "p");
//   if (absl::IsNotFound(pod.status())) { ... }
//   if (kube::IsConflict(status)) { ... }   // re-read and retry (kube::RetryOnConflict)
//   if (std::optional<kube::KubeError> e = kube::KubeErrorOf(status); e && e->retry_after > 0) ...
//
// absl codes: 400 InvalidArgument, 401 Unauthenticated, 403 PermissionDenied, 404 NotFound,
// 409 AlreadyExists (reason AlreadyExists) or Aborted (Conflict), 410 OutOfRange (the requested
// resourceVersion is outside etcd's retained window), 422 InvalidArgument, 429 ResourceExhausted,
// 500 Internal, 503 Unavailable, 504 DeadlineExceeded.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "kube/transport.h"

namespace kube {

struct KubeError {
  int http_code = 0;
  // metav1.StatusReason: "NotFound", "Conflict", "Expired", "Gone", "Invalid", ...
  std::string reason;
  // From the Retry-After header or details.retryAfterSeconds; zero if absent.
  absl::Duration retry_after = absl::ZeroDuration();
  // For Invalid: "field: message" for each cause.
  std::vector<std::string> causes;
};

// Maps a non-2xx response (its metav1.Status body if it has one) to a status carrying a
// KubeError. A 2xx response maps to OK.
absl::Status StatusFromResponse(const HttpResponse& response);

// Builds the status for an HTTP error directly (also used for watch ERROR events, whose object is
// a metav1.Status).
absl::Status MakeKubeStatus(int http_code, std::string_view reason, std::string_view message,
                            absl::Duration retry_after = absl::ZeroDuration(),
                            const std::vector<std::string>& causes = {});

// Parses a metav1.Status JSON document into a status (code from its `code` field).
absl::Status StatusFromStatusObject(std::string_view json, int fallback_http_code);

// The Kubernetes details of a status produced by this client, if any.
std::optional<KubeError> KubeErrorOf(const absl::Status& status);

// 404 and 409 AlreadyExists map to kNotFound and kAlreadyExists, so absl::IsNotFound(status) and
// absl::IsAlreadyExists(status) answer those (our own would be ambiguous with them under ADL).
bool IsConflict(const absl::Status& status);
// 410 Gone, or reason Expired/Gone: the resourceVersion is too old, relist.
bool IsGone(const absl::Status& status);
bool IsForbidden(const absl::Status& status);
bool IsUnauthorized(const absl::Status& status);
bool IsInvalid(const absl::Status& status);
bool IsTooManyRequests(const absl::Status& status);
// 400 from a write with fieldValidation=Strict: the body has a field the schema does not know, or
// one twice ("strict decoding error: unknown field \"spec.restartPolicyy\""). The same body is
// refused every time.
bool IsStrictDecodingError(const absl::Status& status);
// 403 from the NamespaceLifecycle admission plugin: a create in a namespace being deleted (cause
// field metadata.namespace, "namespace X is being terminated"). Not an RBAC problem.
bool IsNamespaceTerminating(const absl::Status& status);
// 403 from authorization: RBAC (or another authorizer) does not let the caller do this ("User
// \"...\" cannot create resource \"pods\" ..."). Other 403s come from admission plugins that
// refuse the object itself (a ResourceQuota exceeded, a PriorityClass not found, a namespace
// being deleted): no change to the caller's permissions helps those.
bool IsAuthorizationDenied(const absl::Status& status);
// Worth retrying the same request later: 429, 500, 503, 504, or no response at all.
bool IsRetryable(const absl::Status& status);

}  // namespace kube
