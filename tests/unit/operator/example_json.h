// The shipped examples (deploy/examples/*.yaml) as the JSON kubectl sends for them, so operator
// tests decode exactly what a user applies. Needs yaml-cpp and PHALANX_SOURCE_DIR.
//
//   std::vector<std::string> queues =
//       ExampleJson("04-clustertrainingqueues.yaml");  // one per document
//   ASSERT_OK_AND_ASSIGN(admission::ClusterQueue llm, DecodeClusterQueue(queues[0]));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "kube/json.h"
#include "rapidjson/document.h"
#include "yaml-cpp/yaml.h"

namespace phalanx::testing {

// YAML as kubectl turns it into JSON: plain scalars that read as integers or booleans become
// numbers and booleans, quoted and block scalars stay strings.
inline rapidjson::Value FromYaml(const YAML::Node& node,
                                 rapidjson::Document::AllocatorType& alloc) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      rapidjson::Value object(rapidjson::kObjectType);
      for (const auto& it : node) {
        object.AddMember(kube::JsonString(it.first.as<std::string>(), alloc),
                         FromYaml(it.second, alloc), alloc);
      }
      return object;
    }
    case YAML::NodeType::Sequence: {
      rapidjson::Value array(rapidjson::kArrayType);
      for (const auto& item : node) array.PushBack(FromYaml(item, alloc), alloc);
      return array;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "?") {  // plain
        if (int64_t n = 0; absl::SimpleAtoi(text, &n)) return rapidjson::Value(n);
        if (text == "true" || text == "false") return rapidjson::Value(text == "true");
        if (text == "null" || text == "~") return rapidjson::Value(rapidjson::kNullType);
      }
      return kube::JsonString(text, alloc);
    }
    default:
      return rapidjson::Value(rapidjson::kNullType);
  }
}

// Every document of deploy/examples/<file>, in order, as a JSON document.
inline std::vector<rapidjson::Document> ExampleDocuments(const std::string& file) {
  std::vector<rapidjson::Document> out;
  for (const YAML::Node& yaml :
       YAML::LoadAllFromFile(std::string(PHALANX_SOURCE_DIR) + "/deploy/examples/" + file)) {
    rapidjson::Document& doc = out.emplace_back();
    rapidjson::Value converted = FromYaml(yaml, doc.GetAllocator());
    doc.CopyFrom(converted, doc.GetAllocator());
  }
  return out;
}

// The same as JSON text.
inline std::vector<std::string> ExampleJson(const std::string& file) {
  std::vector<std::string> out;
  for (const rapidjson::Document& doc : ExampleDocuments(file)) out.push_back(kube::ToJson(doc));
  return out;
}

}  // namespace phalanx::testing
