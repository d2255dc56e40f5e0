// Fuzzes the simulator's input readers (sim/): cluster specs, YAML and CSV traces, TrainingJob
// manifests and multi-document YAML. The first byte picks the reader, the rest is the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/cluster.h"
#include "sim/trace.h"
#include "sim/training_job.h"
#include "sim/yaml_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string source = "fuzz-input";
  switch (data[0] % 5) {
    case 0:
      (void)phalanx::sim::ParseClusterSpec(text, source);
      break;
    case 1:
      (void)phalanx::sim::ParseYamlTrace(text, source);
      break;
    case 2:
      (void)phalanx::sim::ParseCsvTrace(text, source);
      break;
    case 3:
      (void)phalanx::sim::ParseTrainingJobs(text, source);
      break;
    default:
      (void)phalanx::sim::LoadAllYamlText(text, source);
      break;
  }
  return 0;
}
