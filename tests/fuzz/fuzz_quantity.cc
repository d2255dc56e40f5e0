// Fuzzes Kubernetes quantity parsing (common/quantity.h): any text either parses or is refused
// with a status; a parsed quantity prints as text that parses back to the same value.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<phalanx::Quantity> q = phalanx::Quantity::Parse(text);
  if (!q.ok()) {
    if (q.status().message().empty()) abort();  // every refusal says why
    return 0;
  }
  (void)q->Value();
  std::string printed = q->ToString();
  absl::StatusOr<phalanx::Quantity> back = phalanx::Quantity::Parse(printed);
  if (!back.ok() || *back != *q) {
    fprintf(stderr, "round trip: \"%.*s\" -> \"%s\" -> %s\n", static_cast<int>(size),
            text.data(), printed.c_str(),
            back.ok() ? back->ToString().c_str() : back.status().ToString().c_str());
    abort();
  }
  return 0;
}
