// crds/phalanx.dev_trainingjobs.yaml as it was at build time (sim/CMakeLists.txt embeds it), so
// that `phalanx plan` checks a TrainingJob by the very schema the API server is given.
#pragma once

#include <string>

namespace phalanx::sim {

const std::string& TrainingJobCrdYaml();

}  // namespace phalanx::sim
