// Fuzzes the watch-stream parser (kube/watch_stream.h): the input is fed in chunks whose sizes
// come from its first bytes, as a transport would hand them over; every event parsed from the
// stream must be the one ParseWatchEvent gives for the same line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "kube/watch_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t step = data[0] % 64 + 1;  // chunk size
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  kube::WatchStreamParser parser;
  std::vector<kube::WatchEvent> events;
  size_t fed = 0;
  bool failed = false;
  while (fed < stream.size()) {
    std::string_view chunk = stream.substr(fed, step);
    fed += chunk.size();
    if (!parser.Feed(chunk, &events).ok()) {
      failed = true;
      break;
    }
    if (parser.pending_bytes() > stream.size()) abort();
  }
  for (const kube::WatchEvent& e : events) (void)kube::WatchEventTypeName(e.type);

  // The same stream in one chunk yields the same events (unless a line was refused).
  if (!failed) {
    kube::WatchStreamParser whole;
    std::vector<kube::WatchEvent> again;
    if (!whole.Feed(stream, &again).ok()) abort();
    if (again.size() != events.size()) abort();
    for (size_t i = 0; i < events.size(); ++i) {
      if (again[i].type != events[i].type || again[i].object != events[i].object ||
          again[i].resource_version != events[i].resource_version) {
        abort();
      }
    }
  }
  (void)kube::ParseWatchEvent(stream);
  return 0;
}
