#include "kube/json.h"

#include "kube/internal/strings.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kube {

absl::StatusOr<rapidjson::Document> ParseJson(std::string_view text) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return absl::InvalidArgumentError(
        internal::Cat("invalid JSON at offset ", doc.GetErrorOffset(), ": ",
                      rapidjson::GetParseError_En(doc.GetParseError())));
  }
  return doc;
}

std::string ToJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

rapidjson::Document NewApiObject(std::string_view api_version, std::string_view kind,
                                 std::string_view name, std::string_view ns) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& alloc = doc.GetAllocator();
  doc.AddMember("apiVersion", JsonString(api_version, alloc), alloc);
  doc.AddMember("kind", JsonString(kind, alloc), alloc);
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("name", JsonString(name, alloc), alloc);
  if (!ns.empty()) meta.AddMember("namespace", JsonString(ns, alloc), alloc);
  doc.AddMember("metadata", meta, alloc);
  return doc;
}

rapidjson::Value JsonString(std::string_view text, rapidjson::Document::AllocatorType& alloc) {
  return rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc);
}

rapidjson::Value& ObjectMember(rapidjson::Value& parent, std::string_view key,
                               rapidjson::Document::AllocatorType& alloc) {
  rapidjson::Value name(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  auto it = parent.FindMember(name);
  if (it != parent.MemberEnd()) {
    if (!it->value.IsObject()) it->value.SetObject();
    return it->value;
  }
  parent.AddMember(JsonString(key, alloc), rapidjson::Value(rapidjson::kObjectType), alloc);
  return (parent.MemberEnd() - 1)->value;
}

void SetMember(rapidjson::Value& parent, std::string_view key, rapidjson::Value value,
               rapidjson::Document::AllocatorType& alloc) {
  rapidjson::Value name(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  auto it = parent.FindMember(name);
  if (it != parent.MemberEnd()) {
    it->value = value;
    return;
  }
  parent.AddMember(JsonString(key, alloc), value, alloc);
}

std::string_view StringMember(const rapidjson::Value& object, std::string_view key) {
  if (!object.IsObject()) return "";
  rapidjson::Value name(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string_view(it->value.GetString(), it->value.GetStringLength());
}

const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(
      rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

absl::Status ReadString(const rapidjson::Value& object, std::string_view key,
                        std::string_view field, std::string* out) {
  const rapidjson::Value* v = Member(object, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->IsString()) return absl::InvalidArgumentError(internal::Cat(field, ": not a string"));
  out->assign(v->GetString(), v->GetStringLength());
  return absl::OkStatus();
}

absl::Status ReadInt32(const rapidjson::Value& object, std::string_view key,
                       std::string_view field, int32_t* out) {
  const rapidjson::Value* v = Member(object, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->IsInt()) {
    return absl::InvalidArgumentError(internal::Cat(field, ": not a 32-bit integer"));
  }
  *out = v->GetInt();
  return absl::OkStatus();
}

absl::Status ReadInt64(const rapidjson::Value& object, std::string_view key,
                       std::string_view field, int64_t* out) {
  const rapidjson::Value* v = Member(object, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->IsInt64()) return absl::InvalidArgumentError(internal::Cat(field, ": not an integer"));
  *out = v->GetInt64();
  return absl::OkStatus();
}

}  // namespace kube
