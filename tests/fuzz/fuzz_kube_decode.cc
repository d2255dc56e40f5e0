// Fuzzes the Kubernetes object decoders (kube/decode.h, kube/api/training_job.h): Pod, Node and
// raw objects and lists, list metadata, and TrainingJobs, through both the one-shot functions
// and a reused Decoder (an informer's, whose memos and string pool persist across objects).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kube/api/training_job.h"
#include "kube/decode.h"
#include "kube/objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static kube::Decoder* decoder = new kube::Decoder();
  std::string_view json(reinterpret_cast<const char*>(data), size);

  (void)kube::Decode<kube::Pod>(json);
  (void)kube::Decode<kube::Node>(json);
  (void)kube::Decode<kube::RawObject>(json);
  (void)kube::DecodeListMeta(json);
  (void)kube::DecodeList<kube::Pod>(json);
  (void)kube::DecodeTrainingJob(json);

  (void)decoder->Decode<kube::Pod>(json);
  (void)decoder->Decode<kube::Node>(json);
  (void)decoder->DecodeList<kube::Node>(json);
  (void)decoder->DecodeList<kube::RawObject>(json);
  // The std::string overload parses in place when the capacity covers simdjson's padding.
  std::string owned(json);
  owned.reserve(owned.size() + kube::Decoder::kPadding);
  (void)decoder->DecodeList<kube::Pod>(owned);
  return 0;
}
