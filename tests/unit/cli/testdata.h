// Reads API objects recorded from a real control plane (tests/unit/cli/testdata/, written by
// `kubectl get ... -o json` on the cluster of tests/e2e/cli/kubectl_phalanx_test.sh after the
// examples were applied and a few statuses patched as the operator would).
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
