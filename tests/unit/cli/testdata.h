// Reads API objects recorded from a real control plane (tests/unit/cli/testdata/: `kubectl get
// ... -o json` on hack/phalanx-up.sh --nodes 16 with deploy/examples applied, one gang reserved
// through the Placement API, a few statuses and an Event written as the operator would, one
// node cordoned and one 2-GPU pod bound, as tests/e2e/cli/kubectl_phalanx_test.sh does).
//
//   std::vector<std::string> jobs = phalanx::cli::testing::Items("trainingjobs.json");
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kube/json.h"

namespace phalanx::cli::testing {

inline std::string Testdata(const std::string& name) {
  std::ifstream in(std::string(PHALANX_CLI_TESTDATA) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing testdata " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The items of a recorded List, each as its own JSON text (what kube::Client::List returns).
inline std::vector<std::string> Items(const std::string& name) {
  std::vector<std::string> out;
  absl::StatusOr<rapidjson::Document> list = kube::ParseJson(Testdata(name));
  EXPECT_TRUE(list.ok()) << name << ": " << list.status();
  if (!list.ok()) return out;
  for (const rapidjson::Value& item : (*list)["items"].GetArray())
    out.push_back(kube::ToJson(item));
  return out;
}

}  // namespace phalanx::cli::testing
