// Request bodies as kube-scheduler writes them (Go's encoding/json of the extender/v1 types) and
// a reader for our replies, both with RapidJSON so the tests do not trust the codec under test.
//
//   std::string body = ArgsBody(GangPod("ml", "llama-3", "llama", "3"), {"n0", "n1"});
//   ParsedFilterResult reply = ParseFilterResult(extender.HandleFilter(body).response.body);
#pragma once

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace phalanx::extender::testing {

struct PodSpec {
  std::string ns = "ml";
  std::string name = "pod";
  std::string uid = "uid-pod";
  std::map<std::string, std::string> labels;
  std::string scheduler_name = "phalanx";
  // metadata.ownerReferences: a ReplicaSet that does not control it, then this controller
  // (none when empty).
  std::string controller_uid;
};

inline PodSpec GangPod(std::string ns, std::string name, std::string job, std::string rank) {
  PodSpec pod;
  pod.ns = std::move(ns);
  pod.name = std::move(name);
  pod.uid = "uid-" + pod.name;
  pod.labels["phalanx.dev/job"] = std::move(job);
  pod.labels["phalanx.dev/rank"] = std::move(rank);
  pod.labels["app"] = "train";
  return pod;
}

inline PodSpec PlainPod(std::string ns, std::string name) {
  PodSpec pod;
  pod.ns = std::move(ns);
  pod.name = std::move(name);
  pod.uid = "uid-" + pod.name;
  pod.labels["app"] = "notebook";
  return pod;
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

inline void Field(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str());
}

// "key":{"nvidia.com/gpu":"8"}
inline void EightGpus(Writer& w, const char* key) {
  w.Key(key);
  w.StartObject();
  Field(w, "nvidia.com/gpu", "8");
  w.EndObject();
}

// A v1.Pod roughly as kube-scheduler sends it: metadata, a spec with a GPU container and the
// fields around the ones the codec reads, and a status.
inline void WritePod(const PodSpec& pod, Writer& w) {
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  Field(w, "name", pod.name);
  Field(w, "namespace", pod.ns);
  Field(w, "uid", pod.uid);
  Field(w, "resourceVersion", "4242");
  Field(w, "creationTimestamp", "2025-01-01T00:00:00Z");
  if (!pod.labels.empty()) {
    w.Key("labels");
    w.StartObject();
    for (const auto& [key, value] : pod.labels) {
      w.Key(key.c_str());
      w.String(value.c_str());
    }
    w.EndObject();
  }
  w.Key("annotations");
  w.StartObject();
  Field(w, "note", "{\"schedulerName\":\"decoy\"}");
  w.EndObject();
  if (!pod.controller_uid.empty()) {
    auto owner = [&w](const char* api_version, const char* kind, const std::string& uid,
                      bool controller) {
      w.StartObject();
      Field(w, "apiVersion", api_version);
      Field(w, "kind", kind);
      Field(w, "uid", uid);
      w.Key("controller");
      w.Bool(controller);
      w.EndObject();
    };
    w.Key("ownerReferences");
    w.StartArray();
    owner("apps/v1", "ReplicaSet", "uid-not-the-controller", false);
    owner("phalanx.dev/v1alpha1", "TrainingJob", pod.controller_uid, true);
    w.EndArray();
  }
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Key("containers");
  w.StartArray();
  w.StartObject();
  Field(w, "name", "trainer");
  Field(w, "image", "registry.example/llama:1");
  w.Key("resources");
  w.StartObject();
  EightGpus(w, "limits");
  EightGpus(w, "requests");
  w.EndObject();
  w.EndObject();
  w.EndArray();
  Field(w, "restartPolicy", "Never");
  Field(w, "schedulerName", pod.scheduler_name);
  w.Key("priority");
  w.Int(0);
  w.Key("enableServiceLinks");
  w.Bool(true);
  w.Key("nodeName");
  w.Null();
  w.EndObject();
  w.Key("status");
  w.StartObject();
  Field(w, "phase", "Pending");
  w.EndObject();
  w.EndObject();
}

// ExtenderArgs: NodeNames (nodeCacheCapable: true) or a NodeList in Nodes (false).
inline std::string ArgsBody(const PodSpec& pod, const std::vector<std::string>& names,
                            bool as_node_list = false) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Pod");
  WritePod(pod, w);
  w.Key("Nodes");
  if (as_node_list) {
    w.StartObject();
    w.Key("metadata");
    w.StartObject();
    w.EndObject();
    w.Key("items");
    w.StartArray();
    for (const std::string& name : names) {
      w.StartObject();
      w.Key("metadata");
      w.StartObject();
      Field(w, "name", name);
      w.Key("labels");
      w.StartObject();
      Field(w, "kubernetes.io/hostname", name);
      w.EndObject();
      w.EndObject();
      w.Key("status");
      w.StartObject();
      EightGpus(w, "allocatable");
      w.EndObject();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.Key("NodeNames");
    w.Null();
  } else {
    w.Null();
    w.Key("NodeNames");
    w.StartArray();
    for (const std::string& name : names) w.String(name.c_str());
    w.EndArray();
  }
  w.EndObject();
  return buffer.GetString();
}

inline std::string BindingBody(const std::string& ns, const std::string& pod,
                               const std::string& uid, const std::string& node) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  Field(w, "PodName", pod);
  Field(w, "PodNamespace", ns);
  Field(w, "PodUID", uid);
  Field(w, "Node", node);
  w.EndObject();
  return buffer.GetString();
}

inline std::vector<std::string> Names(const std::string& prefix, int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

// ExtenderFilterResult as kube-scheduler decodes it.
struct ParsedFilterResult {
  bool valid = false;
  std::optional<std::vector<std::string>> node_names;  // unset for null
  std::optional<std::vector<std::string>> nodes;       // Nodes.items[].metadata.name
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> failed_and_unresolvable;
  std::string error;
};

inline std::map<std::string, std::string> ParseFailures(const rapidjson::Value& value) {
  std::map<std::string, std::string> out;
  if (!value.IsObject()) return out;
  for (const auto& member : value.GetObject()) {
    out[member.name.GetString()] = member.value.IsString() ? member.value.GetString() : "?";
  }
  return out;
}

inline ParsedFilterResult ParseFilterResult(const std::string& body) {
  ParsedFilterResult result;
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) return result;
  result.valid = true;
  if (doc.HasMember("NodeNames") && doc["NodeNames"].IsArray()) {
    result.node_names.emplace();
    for (const auto& name : doc["NodeNames"].GetArray()) {
      result.node_names->push_back(name.GetString());
    }
  }
  if (doc.HasMember("Nodes") && doc["Nodes"].IsObject() && doc["Nodes"]["items"].IsArray()) {
    result.nodes.emplace();
    for (const auto& item : doc["Nodes"]["items"].GetArray()) {
      result.nodes->push_back(item["metadata"]["name"].GetString());
    }
  }
  if (doc.HasMember("FailedNodes")) result.failed = ParseFailures(doc["FailedNodes"]);
  if (doc.HasMember("FailedAndUnresolvableNodes")) {
    result.failed_and_unresolvable = ParseFailures(doc["FailedAndUnresolvableNodes"]);
  }
  if (doc.HasMember("Error") && doc["Error"].IsString()) result.error = doc["Error"].GetString();
  return result;
}

// HostPriorityList as host -> score; "invalid" as the only key if it does not parse.
inline std::map<std::string, int64_t> ParsePriorities(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsArray()) return {{"invalid", -1}};
  std::map<std::string, int64_t> out;
  for (const auto& item : doc.GetArray()) {
    out[item["Host"].GetString()] = item["Score"].GetInt64();
  }
  return out;
}

// ExtenderBindingResult.Error; "<invalid>" if the body does not parse.
inline std::string ParseBindingError(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("Error") ||
      !doc["Error"].IsString()) {
    return "<invalid>";
  }
  return doc["Error"].GetString();
}

// A body recorded from kube-scheduler (testdata/, see record_fixtures.sh).
inline std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(PHALANX_EXTENDER_TESTDATA) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace phalanx::extender::testing
