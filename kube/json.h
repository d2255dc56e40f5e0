// RapidJSON helpers for documents the client builds or edits (Leases, Events, Bindings, patches).
// Reading API objects goes through simdjson (kube/decode.h); RapidJSON is for writing because its
// DOM can be edited in place and serialised back, and for reading the few custom resources whose
// decoders want a DOM (the Read* helpers below).
//
//   rapidjson::Document doc;
//   ASSIGN_OR_RETURN(doc, kube::ParseJson(lease_json));
//   kube::SetMember(doc, "spec", "holderIdentity", "operator-0");
//   std::string body = kube::ToJson(doc);
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace kube {

absl::StatusOr<rapidjson::Document> ParseJson(std::string_view text);
std::string ToJson(const rapidjson::Value& value);

// A new API object: {"apiVersion", "kind", "metadata": {"name", "namespace"}} (namespace left out
// when empty). Add the rest with AddMember / SetMember.
rapidjson::Document NewApiObject(std::string_view api_version, std::string_view kind,
                                 std::string_view name, std::string_view ns);

// A string Value copied into `doc`'s allocator.
rapidjson::Value JsonString(std::string_view text, rapidjson::Document::AllocatorType& alloc);

// Returns the object member `key` of `parent`, creating it (as an empty object) if missing or
// not an object.
rapidjson::Value& ObjectMember(rapidjson::Value& parent, std::string_view key,
                               rapidjson::Document::AllocatorType& alloc);

// Sets parent[key] = value, replacing any existing member.
void SetMember(rapidjson::Value& parent, std::string_view key, rapidjson::Value value,
               rapidjson::Document::AllocatorType& alloc);

// The string member `key` of an object, or "" if absent or not a string.
std::string_view StringMember(const rapidjson::Value& object, std::string_view key);

// Reading objects the API server validated, leniently: the member `key` of `object`, or nullptr
// when `object` is not an object or the member is absent or null (null means absent anywhere in
// Kubernetes JSON).
const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view key);

// Read the member `key` into `out` when present, leaving `out` alone when absent; a member of
// another type is InvalidArgument "<field>: not a string" (a 32-bit integer, an integer).
absl::Status ReadString(const rapidjson::Value& object, std::string_view key,
                        std::string_view field, std::string* out);
absl::Status ReadInt32(const rapidjson::Value& object, std::string_view key,
                       std::string_view field, int32_t* out);
absl::Status ReadInt64(const rapidjson::Value& object, std::string_view key,
                       std::string_view field, int64_t* out);

}  // namespace kube
