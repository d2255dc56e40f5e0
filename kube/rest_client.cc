#include "kube/rest_client.h"

#include <utility>

#include "common/status.h"
#include "kube/decode.h"
#include "kube/errors.h"
#include "kube/internal/strings.h"
#include "kube/json.h"
#include "simdjson.h"

namespace kube {
namespace {

constexpr char kJson[] = "application/json";

std::string_view ContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return kJson;
}

HttpRequest MakeRequest(std::string method, std::string path, std::string_view body = "",
                        std::string_view content_type = kJson) {
  HttpRequest request;
  request.method = std::move(method);
  request.path = std::move(path);
  request.headers.emplace_back("Accept", kJson);
  if (!body.empty()) {
    request.headers.emplace_back("Content-Type", std::string(content_type));
    request.body = std::string(body);
  }
  return request;
}

std::vector<std::pair<std::string_view, std::string>> WriteQuery(const WriteOptions& options,
                                                                 bool allow_force) {
  std::vector<std::pair<std::string_view, std::string>> query;
  query.emplace_back("fieldManager", options.field_manager);
  if (allow_force && options.force) query.emplace_back("force", "true");
  if (options.dry_run) query.emplace_back("dryRun", "All");
  if (!options.field_validation.empty()) {
    query.emplace_back("fieldValidation", options.field_validation);
  }
  return query;
}

}  // namespace

absl::StatusOr<std::string> RestClient::Call(HttpRequest request) {
  ASSIGN_OR_RETURN(HttpResponse response, transport_.Send(request));
  if (response.status < 200 || response.status >= 300) {
    return phalanx::Annotate(StatusFromResponse(response),
                             internal::Cat(request.method, " ", request.path));
  }
  return std::move(response.body);
}

absl::StatusOr<std::string> RestClient::DoGet(const Resource& resource, std::string_view ns,
                                              std::string_view name, std::string_view subresource) {
  return Call(MakeRequest("GET", ObjectPath(resource, ns, name, subresource)));
}

absl::Status RestClient::DoListPages(const Resource& resource, std::string_view ns,
                                     const ListOptions& options,
                                     const std::function<absl::Status(std::string_view)>& on_page) {
  std::string continue_token;
  bool first = true;
  while (first || !continue_token.empty()) {
    std::vector<std::pair<std::string_view, std::string>> query = {
        {"labelSelector", options.label_selector},
        {"fieldSelector", options.field_selector},
        {"limit", options.limit > 0 ? internal::Cat(options.limit) : ""},
        // resourceVersion may only accompany the first page; the token pins later ones.
        {"resourceVersion", first ? options.resource_version : ""},
        {"continue", continue_token},
    };
    ASSIGN_OR_RETURN(std::string page,
                     Call(MakeRequest("GET", WithQuery(CollectionPath(resource, ns), query))));
    ASSIGN_OR_RETURN(ListMeta meta, DecodeListMeta(page));
    continue_token = std::move(meta.continue_token);
    RETURN_IF_ERROR(on_page(page));
    first = false;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RestClient::DoCreate(const Resource& resource, std::string_view ns,
                                                 std::string_view body, const WriteOptions& options,
                                                 std::string_view name,
                                                 std::string_view subresource) {
  std::string path = subresource.empty() ? CollectionPath(resource, ns)
                                         : ObjectPath(resource, ns, name, subresource);
  return Call(MakeRequest("POST", WithQuery(path, WriteQuery(options, false)), body));
}

absl::StatusOr<std::string> RestClient::DoUpdate(const Resource& resource, std::string_view ns,
                                                 std::string_view name, std::string_view body,
                                                 const WriteOptions& options,
                                                 std::string_view subresource) {
  std::string path = ObjectPath(resource, ns, name, subresource);
  return Call(MakeRequest("PUT", WithQuery(path, WriteQuery(options, false)), body));
}

absl::StatusOr<std::string> RestClient::DoPatch(const Resource& resource, std::string_view ns,
                                                std::string_view name, PatchType type,
                                                std::string_view body, const WriteOptions& options,
                                                std::string_view subresource) {
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return absl::InvalidArgumentError("server-side apply needs a field manager");
  }
  std::string path = ObjectPath(resource, ns, name, subresource);
  return Call(MakeRequest("PATCH", WithQuery(path, WriteQuery(options, type == PatchType::kApply)),
                          body, ContentType(type)));
}

absl::Status RestClient::DoDelete(const Resource& resource, std::string_view ns,
                                  std::string_view name, const DeleteOptions& options) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& alloc = doc.GetAllocator();
  doc.AddMember("kind", "DeleteOptions", alloc);
  doc.AddMember("apiVersion", "v1", alloc);
  if (!options.propagation_policy.empty()) {
    doc.AddMember("propagationPolicy", JsonString(options.propagation_policy, alloc), alloc);
  }
  if (options.grace_period_seconds.has_value()) {
    doc.AddMember("gracePeriodSeconds", rapidjson::Value(*options.grace_period_seconds), alloc);
  }
  if (!options.precondition_uid.empty() || !options.precondition_resource_version.empty()) {
    rapidjson::Value preconditions(rapidjson::kObjectType);
    if (!options.precondition_uid.empty()) {
      preconditions.AddMember("uid", JsonString(options.precondition_uid, alloc), alloc);
    }
    if (!options.precondition_resource_version.empty()) {
      preconditions.AddMember("resourceVersion",
                              JsonString(options.precondition_resource_version, alloc), alloc);
    }
    doc.AddMember("preconditions", preconditions, alloc);
  }
  return Call(MakeRequest("DELETE", ObjectPath(resource, ns, name), ToJson(doc))).status();
}

absl::Status RestClient::DoWatch(const Resource& resource, std::string_view ns,
                                 const WatchOptions& options, const WatchCallback& on_event,
                                 const Cancellation* cancel) {
  std::vector<std::pair<std::string_view, std::string>> query = {
      {"watch", "true"},
      {"resourceVersion", options.resource_version},
      {"allowWatchBookmarks", options.allow_bookmarks ? "true" : ""},
      {"timeoutSeconds", options.timeout_seconds > 0 ? internal::Cat(options.timeout_seconds) : ""},
      {"labelSelector", options.label_selector},
      {"fieldSelector", options.field_selector},
  };
  HttpRequest request = MakeRequest("GET", WithQuery(CollectionPath(resource, ns), query));
  WatchStreamParser parser;
  std::vector<WatchEvent> events;
  absl::Status stream_status;
  bool stopped = false;
  absl::StatusOr<HttpResponse> response = transport_.Stream(
      request,
      [&](std::string_view chunk) {
        events.clear();
        stream_status = parser.Feed(chunk, &events);
        for (const WatchEvent& event : events) {
          if (!on_event(event)) {
            stopped = true;
            return false;
          }
        }
        return stream_status.ok();
      },
      cancel);
  if (!stream_status.ok()) return stream_status;
  if (stopped) return absl::OkStatus();
  if (!response.ok()) return response.status();
  if (response->status < 200 || response->status >= 300) return StatusFromResponse(*response);
  return absl::OkStatus();
}

// --- Client conveniences ---------------------------------------------------------------------

absl::StatusOr<ListResult> Client::List(const Resource& resource, std::string_view ns,
                                        const ListOptions& options) {
  ListResult result;
  simdjson::ondemand::parser parser;
  RETURN_IF_ERROR(ListPages(resource, ns, options, [&](std::string_view page) -> absl::Status {
    simdjson::padded_string padded(page);
    simdjson::ondemand::document doc;
    simdjson::ondemand::object root;
    if (parser.iterate(padded).get(doc) != simdjson::SUCCESS ||
        doc.get_object().get(root) != simdjson::SUCCESS) {
      return absl::DataLossError("list response is not a JSON object");
    }
    for (auto field : root) {
      std::string_view key;
      if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
        return absl::DataLossError("bad list response");
      }
      if (key == "metadata") {
        simdjson::ondemand::object meta;
        std::string_view rv;
        if (field.value().get_object().get(meta) == simdjson::SUCCESS &&
            meta["resourceVersion"].get_string().get(rv) == simdjson::SUCCESS) {
          result.resource_version.assign(rv);
        }
      } else if (key == "items") {
        simdjson::ondemand::array items;
        if (field.value().get_array().get(items) != simdjson::SUCCESS) continue;  // null
        for (auto item : items) {
          simdjson::ondemand::object obj;
          std::string_view raw;
          if (item.get_object().get(obj) != simdjson::SUCCESS ||
              obj.raw_json().get(raw) != simdjson::SUCCESS) {
            return absl::DataLossError("list item is not an object");
          }
          result.items.emplace_back(raw);
        }
      }
    }
    return absl::OkStatus();
  }));
  return result;
}

absl::Status Client::Bind(std::string_view ns, std::string_view pod, std::string_view pod_uid,
                          std::string_view node) {
  rapidjson::Document doc = NewApiObject("v1", "Binding", pod, ns);
  auto& alloc = doc.GetAllocator();
  if (!pod_uid.empty()) doc["metadata"].AddMember("uid", JsonString(pod_uid, alloc), alloc);
  rapidjson::Value target(rapidjson::kObjectType);
  target.AddMember("apiVersion", "v1", alloc);
  target.AddMember("kind", "Node", alloc);
  target.AddMember("name", JsonString(node, alloc), alloc);
  doc.AddMember("target", target, alloc);
  return Create(Pods(), ns, ToJson(doc), {}, pod, "binding").status();
}

}  // namespace kube
