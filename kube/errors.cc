#include "kube/errors.h"

#include <cstdlib>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kube/internal/strings.h"
#include "simdjson.h"

namespace kube {
namespace {

constexpr char kPayloadUrl[] = "type.phalanx.dev/kube.KubeError";
constexpr char kSep = '\x1f';

absl::StatusCode CodeFor(int http_code, std::string_view reason) {
  switch (http_code) {
    case 400:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
      return absl::StatusCode::kUnimplemented;
    case 409:
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 415:
      return absl::StatusCode::kInvalidArgument;
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 500:
      return absl::StatusCode::kInternal;
    case 503:
      return absl::StatusCode::kUnavailable;
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    default:
      if (http_code >= 500) return absl::StatusCode::kUnavailable;
      return absl::StatusCode::kUnknown;
  }
}

// The reason Kubernetes would give for a bare HTTP code (used when the body is not a Status).
std::string_view DefaultReason(int http_code) {
  switch (http_code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

std::string_view StringOr(simdjson::ondemand::object& obj, std::string_view key) {
  std::string_view value;
  if (obj[key].get_string().get(value) != simdjson::SUCCESS) return "";
  return value;
}

}  // namespace

absl::Status MakeKubeStatus(int http_code, std::string_view reason, std::string_view message,
                            absl::Duration retry_after, const std::vector<std::string>& causes) {
  if (reason.empty()) reason = DefaultReason(http_code);
  std::string text = internal::Cat(reason, " (HTTP ", http_code, "): ", message);
  if (!causes.empty()) internal::Append(&text, " [", absl::StrJoin(causes, "; "), "]");
  absl::Status status(CodeFor(http_code, reason), text);
  std::string payload = internal::Cat(http_code, std::string(1, kSep), reason, std::string(1, kSep),
                                      absl::ToInt64Milliseconds(retry_after));
  for (const std::string& cause : causes) internal::Append(&payload, std::string(1, kSep), cause);
  status.SetPayload(kPayloadUrl, absl::Cord(payload));
  return status;
}

namespace {

struct ParsedStatus {
  int http_code = 0;  // 0 when the body carries no code
  std::string reason;
  std::string message;
  absl::Duration retry_after = absl::ZeroDuration();
  std::vector<std::string> causes;
};

// Reads a metav1.Status; a body that is not one (an HTML error page from a proxy, say) becomes
// the message, truncated.
ParsedStatus ParseStatusObject(std::string_view json) {
  ParsedStatus parsed;
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(obj) != simdjson::SUCCESS) {
    parsed.message = std::string(json.substr(0, 512));
    return parsed;
  }
  parsed.message = std::string(StringOr(obj, "message"));
  parsed.reason = std::string(StringOr(obj, "reason"));
  simdjson::ondemand::object details;
  if (obj["details"].get_object().get(details) == simdjson::SUCCESS) {
    simdjson::ondemand::array list;
    if (details["causes"].get_array().get(list) == simdjson::SUCCESS) {
      for (auto item : list) {
        simdjson::ondemand::object cause;
        if (item.get_object().get(cause) != simdjson::SUCCESS) continue;
        std::string field(StringOr(cause, "field"));
        std::string message(StringOr(cause, "message"));
        parsed.causes.push_back(field.empty() ? message : internal::Cat(field, ": ", message));
      }
    }
    int64_t seconds = 0;
    if (details["retryAfterSeconds"].get_int64().get(seconds) == simdjson::SUCCESS) {
      parsed.retry_after = absl::Seconds(seconds);
    }
  }
  int64_t code = 0;
  if (obj["code"].get_int64().get(code) == simdjson::SUCCESS)
    parsed.http_code = static_cast<int>(code);
  return parsed;
}

}  // namespace

absl::Status StatusFromStatusObject(std::string_view json, int fallback_http_code) {
  ParsedStatus parsed = ParseStatusObject(json);
  int code = parsed.http_code != 0 ? parsed.http_code : fallback_http_code;
  return MakeKubeStatus(code, parsed.reason, parsed.message, parsed.retry_after, parsed.causes);
}

absl::Status StatusFromResponse(const HttpResponse& response) {
  if (response.status >= 200 && response.status < 300) return absl::OkStatus();
  ParsedStatus parsed = ParseStatusObject(response.body);
  // The HTTP status line is authoritative; Retry-After may also come as a header.
  std::string header = FindHeader(response.headers, "Retry-After");
  int64_t seconds = 0;
  if (!header.empty() && absl::SimpleAtoi(header, &seconds)) {
    parsed.retry_after = absl::Seconds(seconds);
  }
  return MakeKubeStatus(response.status, parsed.reason, parsed.message, parsed.retry_after,
                        parsed.causes);
}

std::optional<KubeError> KubeErrorOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  std::vector<std::string> parts = absl::StrSplit(std::string(*payload), kSep);
  if (parts.size() < 3) return std::nullopt;
  KubeError error;
  int64_t retry_ms = 0;
  if (!absl::SimpleAtoi(parts[0], &error.http_code) || !absl::SimpleAtoi(parts[2], &retry_ms)) {
    return std::nullopt;
  }
  error.reason = parts[1];
  error.retry_after = absl::Milliseconds(retry_ms);
  error.causes.assign(parts.begin() + 3, parts.end());
  return error;
}

namespace {
bool HasCodeOrReason(const absl::Status& status, int code, std::string_view reason) {
  std::optional<KubeError> error = KubeErrorOf(status);
  return error.has_value() && (error->http_code == code || error->reason == reason);
}
}  // namespace

bool IsConflict(const absl::Status& status) {
  std::optional<KubeError> error = KubeErrorOf(status);
  return error.has_value() && error->http_code == 409 && error->reason != "AlreadyExists";
}
bool IsGone(const absl::Status& status) {
  std::optional<KubeError> error = KubeErrorOf(status);
  return error.has_value() &&
         (error->http_code == 410 || error->reason == "Expired" || error->reason == "Gone");
}
bool IsForbidden(const absl::Status& status) { return HasCodeOrReason(status, 403, "Forbidden"); }
bool IsNamespaceTerminating(const absl::Status& status) {
  if (!IsForbidden(status)) return false;
  std::optional<KubeError> error = KubeErrorOf(status);
  if (!error.has_value()) return false;
  for (const std::string& cause : error->causes) {
    if (absl::StartsWith(cause, "metadata.namespace: ") &&
        absl::EndsWith(cause, " is being terminated")) {
      return true;
    }
  }
  return false;
}
bool IsAuthorizationDenied(const absl::Status& status) {
  if (!absl::IsPermissionDenied(status)) return false;
  // The authorizer's wording (k8s.io/apiserver's forbidden message): `... cannot <verb>
  // resource "<resource>" ...`, or `cannot <verb> path "<path>"` for a non-resource URL.
  const absl::string_view message = status.message();
  return absl::StrContains(message, " cannot ") &&
         (absl::StrContains(message, " resource \"") || absl::StrContains(message, " path \""));
}
bool IsUnauthorized(const absl::Status& status) {
  return HasCodeOrReason(status, 401, "Unauthorized");
}
bool IsInvalid(const absl::Status& status) { return HasCodeOrReason(status, 422, "Invalid"); }
bool IsStrictDecodingError(const absl::Status& status) {
  std::optional<KubeError> error = KubeErrorOf(status);
  return error.has_value() && error->http_code == 400 &&
         absl::StrContains(status.message(), "strict decoding error");
}
bool IsTooManyRequests(const absl::Status& status) {
  return HasCodeOrReason(status, 429, "TooManyRequests");
}
bool IsRetryable(const absl::Status& status) {
  std::optional<KubeError> error = KubeErrorOf(status);
  if (!error.has_value()) {
    return status.code() == absl::StatusCode::kUnavailable ||
           status.code() == absl::StatusCode::kDeadlineExceeded;
  }
  return error->http_code == 429 || error->http_code == 500 || error->http_code == 503 ||
         error->http_code == 504;
}

}  // namespace kube
