// Fuzzes kube-scheduler's extender wire codec (scheduler/extender/extender_codec.h): the
// ExtenderArgs and ExtenderBindingArgs decoders over arbitrary bodies, with one decoder reused
// across inputs as the server does; whatever was decoded, when echoed through the encoders,
// must come out as JSON that parses.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/extender/extender_codec.h"
#include "simdjson.h"

namespace {

void MustBeJson(const std::string& text) {
  static simdjson::dom::parser* parser = new simdjson::dom::parser();
  simdjson::dom::element doc;
  if (parser->parse(text).get(doc) != simdjson::SUCCESS) abort();
}

bool ValidUtf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace phalanx::extender;
  static ExtenderDecoder* decoder = new ExtenderDecoder();
  std::string_view body(reinterpret_cast<const char*>(data), size);

  ExtenderArgs args;
  if (decoder->DecodeArgs(body, &args).ok()) {
    FilterResult filter;
    filter.node_names = args.node_names;
    filter.as_node_list = args.from_node_list;
    filter.node_objects = args.node_objects;
    filter.failed.push_back({args.pod.name, args.pod.ns});
    filter.error = std::string(args.pod.uid);
    MustBeJson(EncodeFilterResult(filter));
    std::vector<HostPriority> priorities;
    for (std::string_view n : args.node_names) priorities.push_back({n, 3});
    MustBeJson(EncodeHostPriorityList(priorities));
  }
  BindingArgs binding;
  if (decoder->DecodeBinding(body, &binding).ok()) {
    MustBeJson(EncodeBindingResult(binding.node));
  }
  // Any valid UTF-8 text is escaped into a string literal that parses.
  if (ValidUtf8(body)) {
    std::string quoted;
    AppendJsonString(body, &quoted);
    MustBeJson(quoted);
  }
  return 0;
}
