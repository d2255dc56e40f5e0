#include "common/status.h"

#include "absl/strings/str_cat.h"

namespace phalanx {

absl::Status Annotate(const absl::Status& status, std::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(absl::string_view(context.data(), context.size()), ": ",
                                   status.message()));
}

}  // namespace phalanx
