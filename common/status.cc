#include "common/status.h"

#include "absl/strings/str_cat.h"

namespace phalanx {

absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  absl::Status annotated(status.code(),
                         absl::StrCat(absl::string_view(context.data(), context.size()), ": ",
                                      status.message()));
  // Payloads carry structured detail (the Kubernetes reason and Retry-After of a kube error):
  // keep them, so callers up the stack can still act on it.
  status.ForEachPayload([&annotated](absl::string_view type_url, const absl::Cord& payload) {
    annotated.SetPayload(type_url, payload);
  });
  return annotated;
}

}  // namespace phalanx
