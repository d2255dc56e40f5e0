// Reads recorded Kubernetes JSON from tests/unit/kube/testdata/.
//
//   std::string pod = kube::testing::Testdata("pod_with_managed_fields.json");
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace kube::testing {

inline std::string TestdataPath(const std::string& name) {
  return std::string(PHALANX_KUBE_TESTDATA) + "/" + name;
}

inline std::string Testdata(const std::string& name) {
  std::ifstream in(TestdataPath(name), std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing testdata " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kube::testing
