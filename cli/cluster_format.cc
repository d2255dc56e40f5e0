#include "cli/cluster_format.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/api_labels.h"
#include "common/counted_noun.h"
#include "common/quantity.h"
#include "common/resources.h"
#include "common/status.h"
#include "kube/api/training_job.h"
#include "kube/json.h"
#include "operator/server/queue_objects.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/topology.h"

namespace phalanx::cli {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;
using rapidjson::Value;

constexpr char kAbsent[] = "-";
constexpr size_t kReasonWidth = 60;
// explain's condition and event messages: shown whole, wrapped to lines this long.
constexpr size_t kMessageWidth = 80;

// ---- Reading API objects ---------------------------------------------------------------------

// The member at `path` below `object`, or null if any step is missing, null or not an object.
const Value* Find(const Value& object, std::initializer_list<const char*> path) {
  const Value* at = &object;
  for (const char* key : path) {
    at = kube::Member(*at, key);
    if (at == nullptr) return nullptr;
  }
  return at;
}

std::string Text(const Value& object, std::initializer_list<const char*> path) {
  const Value* v = Find(object, path);
  return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

std::optional<int64_t> Int(const Value& object, std::initializer_list<const char*> path) {
  const Value* v = Find(object, path);
  if (v == nullptr || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

// An int-or-string quantity in whole units ("256", 256, "1k"); nullopt if absent or malformed.
std::optional<int64_t> WholeUnits(const Value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsNumber()) return static_cast<int64_t>(v->GetDouble());
  if (!v->IsString()) return std::nullopt;
  absl::StatusOr<Quantity> q = Quantity::Parse(v->GetString());
  if (!q.ok()) return std::nullopt;
  return q->Value();
}

// The element of array `array` whose "name" is `name`, or null.
const Value* Named(const Value* array, std::string_view name) {
  if (array == nullptr || !array->IsArray()) return nullptr;
  for (const Value& item : array->GetArray()) {
    if (Text(item, {"name"}) == name) return &item;
  }
  return nullptr;
}

std::optional<absl::Time> Timestamp(const Value& object, std::initializer_list<const char*> path) {
  std::string text = Text(object, path);
  absl::Time t;
  if (text.empty() || !absl::ParseTime(absl::RFC3339_full, text, &t, nullptr)) return std::nullopt;
  return t;
}

// RFC 3339 in UTC as Kubernetes writes it ("2026-11-23T19:22:41Z"), or "" for none.
std::string Rfc3339(const std::optional<absl::Time>& t) {
  return t ? absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", *t, absl::UTCTimeZone()) : "";
}

std::string Age(const std::optional<absl::Time>& since, absl::Time now) {
  return since ? HumanAge(now - *since) : kAbsent;
}

absl::StatusOr<rapidjson::Document> ParseObject(std::string_view json, const std::string& what) {
  absl::StatusOr<rapidjson::Document> doc = kube::ParseJson(json);
  if (!doc.ok()) return Annotate(doc.status(), what);
  if (!doc->IsObject()) return absl::InvalidArgumentError(absl::StrCat(what, ": not an object"));
  return doc;
}

absl::StatusOr<std::vector<rapidjson::Document>> ParseObjects(const std::vector<std::string>& items,
                                                              const std::string& kind) {
  std::vector<rapidjson::Document> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    ASSIGN_OR_RETURN(rapidjson::Document doc, ParseObject(items[i], absl::StrCat(kind, " #", i)));
    out.push_back(std::move(doc));
  }
  return out;
}

std::string OrAbsent(std::string text) { return text.empty() ? kAbsent : text; }
std::string OrAbsent(const std::optional<int64_t>& n) {
  return n ? absl::StrCat(*n) : std::string(kAbsent);
}

// One line, at most `width` characters.
std::string Clip(const std::string& text, size_t width) {
  std::string line = absl::StrReplaceAll(text, {{"\r", ""}, {"\n", " "}});
  if (line.size() <= width) return line;
  return absl::StrCat(line.substr(0, width - 3), "...");
}

// All of `text`, in lines of at most `width` characters broken at spaces (a longer word keeps
// its own line whole), joined by '\n'; its own line breaks are kept.
std::string Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  const std::string clean = absl::StrReplaceAll(text, {{"\r", ""}});
  for (absl::string_view paragraph : absl::StrSplit(clean, '\n')) {
    std::string line;
    for (absl::string_view word : absl::StrSplit(paragraph, ' ', absl::SkipEmpty())) {
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        lines.push_back(std::move(line));
        line.clear();
      }
      absl::StrAppend(&line, line.empty() ? "" : " ", word);
    }
    lines.push_back(std::move(line));
  }
  return absl::StrJoin(lines, "\n");
}

// metav1.Condition.
struct Condition {
  std::string type, status, reason, message;
  std::optional<absl::Time> since;
};

std::vector<Condition> Conditions(const Value& object) {
  std::vector<Condition> out;
  const Value* list = Find(object, {"status", "conditions"});
  if (list == nullptr || !list->IsArray()) return out;
  for (const Value& c : list->GetArray()) {
    out.push_back({Text(c, {"type"}), Text(c, {"status"}), Text(c, {"reason"}),
                   Text(c, {"message"}), Timestamp(c, {"lastTransitionTime"})});
  }
  return out;
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

// ---- Writing ---------------------------------------------------------------------------------

// kubectl's table: upper-case headers, columns three spaces apart, the last one unpadded. A
// cell of several lines ('\n') makes its row that many lines high, the other cells blank below.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) { rows_.push_back(std::move(headers)); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string Render(std::string_view indent = "") const {
    std::vector<std::vector<std::vector<std::string>>> rows;  // row, cell, line
    std::vector<size_t> width(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      auto& cells = rows.emplace_back();
      for (size_t i = 0; i < row.size(); ++i) {
        cells.push_back(absl::StrSplit(row[i], '\n'));
        for (const std::string& line : cells.back()) width[i] = std::max(width[i], line.size());
      }
    }
    std::string out;
    for (const auto& cells : rows) {
      size_t height = 0;
      for (const auto& cell : cells) height = std::max(height, cell.size());
      for (size_t l = 0; l < height; ++l) {
        std::string line(indent);
        for (size_t i = 0; i < cells.size(); ++i) {
          const std::string text = l < cells[i].size() ? cells[i][l] : "";
          absl::StrAppend(&line, text);
          if (i + 1 < cells.size()) line.append(width[i] - text.size() + 3, ' ');
        }
        line.erase(line.find_last_not_of(' ') + 1);
        absl::StrAppend(&out, line, "\n");
      }
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

void Key(JsonWriter& w, std::string_view key) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}
void String(JsonWriter& w, std::string_view key, std::string_view value) {
  Key(w, key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}
void OptionalString(JsonWriter& w, std::string_view key, std::string_view value) {
  Key(w, key);
  if (value.empty()) {
    w.Null();
  } else {
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  }
}
void Number(JsonWriter& w, std::string_view key, int64_t value) {
  Key(w, key);
  w.Int64(value);
}
void OptionalNumber(JsonWriter& w, std::string_view key, const std::optional<int64_t>& value) {
  Key(w, key);
  if (value) {
    w.Int64(*value);
  } else {
    w.Null();
  }
}
void Strings(JsonWriter& w, std::string_view key, const std::vector<std::string>& values) {
  Key(w, key);
  w.StartArray();
  for (const std::string& v : values)
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  w.EndArray();
}
// "key": {members()}
template <typename F>
void Object(JsonWriter& w, std::string_view key, F members) {
  Key(w, key);
  w.StartObject();
  members();
  w.EndObject();
}
// "key": {"name": count, ...}
template <typename Map>
void Counts(JsonWriter& w, std::string_view key, const Map& counts) {
  Object(w, key, [&] {
    for (const auto& [name, count] : counts) Number(w, name, count);
  });
}
// The command's JSON output: one object, its members written by `members`, on one line.
template <typename F>
std::string JsonDocument(F members) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  members(w);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}
// "key": {members(*value)}, or null without a value.
template <typename T, typename F>
void OptionalObject(JsonWriter& w, std::string_view key, const std::optional<T>& value, F members) {
  if (!value) {
    Key(w, key);
    w.Null();
    return;
  }
  Object(w, key, [&] { members(*value); });
}
// "key": [{members(item)}, ...]
template <typename Items, typename F>
void ObjectArray(JsonWriter& w, std::string_view key, const Items& items, F members) {
  Key(w, key);
  w.StartArray();
  for (const auto& item : items) {
    w.StartObject();
    members(item);
    w.EndObject();
  }
  w.EndArray();
}

std::string Nothing(const std::string& kind, const OutputOptions& options) {
  return options.all_namespaces || options.ns.empty()
             ? absl::StrCat("No ", kind, " found.\n")
             : absl::StrCat("No ", kind, " in namespace ", options.ns, ".\n");
}

// "layer-3 nn-a" for a domain, "-" for none.
std::string DomainText(std::string_view level, const std::string& value) {
  if (value.empty()) return kAbsent;
  return absl::StrCat(ShortLevel(level), " ", value);
}

std::string DomainText(const placement::DomainId& id) {
  return id.path.empty() ? "cluster" : DomainText(id.level, id.path.back());
}

// ---- Queues ----------------------------------------------------------------------------------

struct FlavorGpus {
  std::string flavor;
  int64_t nominal = 0;
  std::optional<int64_t> used;
  std::optional<int64_t> borrowed;
};

// The Active condition in one cell: its status, and the reason when it is not True ("False
// (Terminating)", "False (Stopped)"); "" when there is none.
std::string ActiveText(const Value& queue) {
  const std::vector<Condition> conditions = Conditions(queue);
  const Condition* active = FindCondition(conditions, "Active");
  if (active == nullptr) return "";
  if (active->status == "True" || active->reason.empty()) return active->status;
  return absl::StrCat(active->status, " (", active->reason, ")");
}

struct ClusterQueueRow {
  std::string name, cohort, active, active_text;
  std::optional<int64_t> pending, admitted;
  std::vector<FlavorGpus> gpus;
};

// The spec through the operator's own decoder (quotas in the admission core's units), the
// status as the operator writes it.
absl::StatusOr<ClusterQueueRow> ClusterQueueFrom(const std::string& json) {
  ASSIGN_OR_RETURN(admission::ClusterQueue spec, operator_server::DecodeClusterQueue(json));
  ASSIGN_OR_RETURN(rapidjson::Document cq, ParseObject(json, "ClusterTrainingQueue " + spec.name));
  ClusterQueueRow row{.name = spec.name,
                      .cohort = spec.cohort,
                      .pending = Int(cq, {"status", "pendingWorkloads"}),
                      .admitted = Int(cq, {"status", "admittedWorkloads"})};
  // The conditions outlive the pointer into them (a temporary vector here was read after it
  // was freed: found by hack/sanitize.sh).
  const std::vector<Condition> conditions = Conditions(cq);
  if (const Condition* active = FindCondition(conditions, "Active")) {
    row.active = active->status;
  }
  row.active_text = ActiveText(cq);
  const Value* usage = Find(cq, {"status", "flavorsUsage"});
  for (const admission::ResourceGroup& group : spec.resource_groups) {
    for (const admission::FlavorQuotas& flavor : group.flavors) {
      for (const admission::ResourceQuota& quota : flavor.resources) {
        if (quota.resource != kResourceGpu) continue;
        FlavorGpus gpus{.flavor = flavor.flavor, .nominal = quota.nominal};
        // Once the operator writes the usage, a flavor or resource missing from it uses none.
        if (usage != nullptr && usage->IsArray()) {
          const Value* used = Named(usage, gpus.flavor);
          const Value* resource =
              used != nullptr ? Named(Find(*used, {"resources"}), kResourceGpu) : nullptr;
          gpus.used = resource ? WholeUnits(Find(*resource, {"total"})).value_or(0) : 0;
          gpus.borrowed = resource ? WholeUnits(Find(*resource, {"borrowed"})).value_or(0) : 0;
        }
        row.gpus.push_back(std::move(gpus));
      }
    }
  }
  return row;
}

// A queue without a cohort cannot borrow: usage above its nominal quota (the quota lowered
// below what its running jobs hold) is said as that.
std::string GpusText(const std::vector<FlavorGpus>& gpus, bool in_cohort) {
  if (gpus.empty()) return kAbsent;
  return absl::StrJoin(gpus, ", ", [&](std::string* out, const FlavorGpus& g) {
    absl::StrAppend(out, g.flavor, " ", OrAbsent(g.used), "/", g.nominal);
    if (!g.used) return;
    const int64_t above = g.borrowed.value_or(0);
    if (in_cohort) {
      absl::StrAppend(out, " (+", above, " borrowed)");
    } else if (above > 0) {
      absl::StrAppend(out, " (", above, " over nominal)");
    }
  });
}

}  // namespace

std::string HumanAge(absl::Duration age) {
  const int64_t seconds = absl::ToInt64Seconds(age);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return absl::StrCat(seconds, "s");
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    return seconds % 60 == 0 ? absl::StrCat(minutes, "m")
                             : absl::StrCat(minutes, "m", seconds % 60, "s");
  }
  if (minutes < 60 * 3) return absl::StrCat(minutes, "m");
  const int64_t hours = minutes / 60;
  if (hours < 8) {
    return minutes % 60 == 0 ? absl::StrCat(hours, "h")
                             : absl::StrCat(hours, "h", minutes % 60, "m");
  }
  if (hours < 48) return absl::StrCat(hours, "h");
  if (hours < 24 * 8) {
    return hours % 24 == 0 ? absl::StrCat(hours / 24, "d")
                           : absl::StrCat(hours / 24, "d", hours % 24, "h");
  }
  if (hours < 24 * 365 * 2) return absl::StrCat(hours / 24, "d");
  const int64_t days = (hours / 24) % 365;
  if (hours < 24 * 365 * 8) {
    return days == 0 ? absl::StrCat(hours / 24 / 365, "y")
                     : absl::StrCat(hours / 24 / 365, "y", days, "d");
  }
  return absl::StrCat(hours / 24 / 365, "y");
}

std::string ShortLevel(std::string_view label) {
  if (label.empty()) return "cluster";
  if (label == placement::kHostnameLabel) return "node";
  std::string_view name = label.substr(label.rfind('/') + 1);  // npos + 1 == 0
  constexpr std::string_view kNetworkNode = "network-node-";
  if (name.substr(0, kNetworkNode.size()) == kNetworkNode) name.remove_prefix(kNetworkNode.size());
  return std::string(name);
}

absl::StatusOr<std::string> FormatQueues(const std::vector<std::string>& cluster_queues,
                                         const std::vector<std::string>& local_queues,
                                         const OutputOptions& options) {
  ASSIGN_OR_RETURN(std::vector<rapidjson::Document> lqs,
                   ParseObjects(local_queues, "TrainingQueue"));
  std::vector<ClusterQueueRow> rows;
  for (const std::string& cq : cluster_queues) {
    ASSIGN_OR_RETURN(ClusterQueueRow row, ClusterQueueFrom(cq));
    rows.push_back(std::move(row));
  }

  if (options.json) {
    return JsonDocument([&](JsonWriter& w) {
      ObjectArray(w, "clusterTrainingQueues", rows, [&](const ClusterQueueRow& row) {
        String(w, "name", row.name);
        OptionalString(w, "cohort", row.cohort);
        OptionalNumber(w, "pending", row.pending);
        OptionalNumber(w, "admitted", row.admitted);
        OptionalString(w, "active", row.active);
        ObjectArray(w, "gpus", row.gpus, [&](const FlavorGpus& g) {
          String(w, "flavor", g.flavor);
          Number(w, "nominal", g.nominal);
          OptionalNumber(w, "used", g.used);
          OptionalNumber(w, "borrowed", g.borrowed);
        });
      });
      ObjectArray(w, "trainingQueues", lqs, [&](const rapidjson::Document& lq) {
        String(w, "namespace", Text(lq, {"metadata", "namespace"}));
        String(w, "name", Text(lq, {"metadata", "name"}));
        String(w, "clusterQueue", Text(lq, {"spec", "clusterQueue"}));
        OptionalNumber(w, "pending", Int(lq, {"status", "pendingWorkloads"}));
        OptionalNumber(w, "admitted", Int(lq, {"status", "admittedWorkloads"}));
      });
    });
  }

  std::string out;
  if (rows.empty()) {
    out = "No ClusterTrainingQueues found.\n";
  } else {
    Table table(
        {"CLUSTERTRAININGQUEUE", "COHORT", "PENDING", "ADMITTED", "GPUS USED/NOMINAL", "ACTIVE"});
    for (const ClusterQueueRow& row : rows) {
      table.Add({row.name, OrAbsent(row.cohort), OrAbsent(row.pending), OrAbsent(row.admitted),
                 GpusText(row.gpus, !row.cohort.empty()), OrAbsent(row.active_text)});
    }
    out = table.Render();
  }
  out += "\n";
  if (lqs.empty()) return out + Nothing("TrainingQueues", options);
  std::vector<std::string> headers = {"TRAININGQUEUE", "CLUSTERTRAININGQUEUE", "PENDING",
                                      "ADMITTED", "ACTIVE"};
  if (options.all_namespaces) headers.insert(headers.begin(), "NAMESPACE");
  Table table(std::move(headers));
  for (const auto& lq : lqs) {
    std::vector<std::string> row = {Text(lq, {"metadata", "name"}),
                                    OrAbsent(Text(lq, {"spec", "clusterQueue"})),
                                    OrAbsent(Int(lq, {"status", "pendingWorkloads"})),
                                    OrAbsent(Int(lq, {"status", "admittedWorkloads"})),
                                    OrAbsent(ActiveText(lq))};
    if (options.all_namespaces) row.insert(row.begin(), Text(lq, {"metadata", "namespace"}));
    table.Add(std::move(row));
  }
  return out + table.Render();
}

// ---- Jobs ------------------------------------------------------------------------------------

namespace {

struct JobRow {
  std::string ns, name, queue, phase, level, domain;
  std::string reason;       // the message of the condition that says why (or its reason)
  std::string reason_code;  // that condition's reason
  int64_t replicas = 0;
  std::optional<int64_t> admitted;
  int64_t restarts = 0;
  std::optional<absl::Time> created;
  bool has_status = false;
};

// Why a job is where it is: for a job not admitted the Queued condition (the operator's pending
// reason), for a failed one the Failed condition; nullptr for the rest.
const Condition* WhyCondition(const std::vector<Condition>& conditions, const JobRow& row) {
  if (row.admitted && row.phase != "Failed") return nullptr;
  return FindCondition(conditions, row.phase == "Failed" ? "Failed" : "Queued");
}

JobRow JobFrom(const Value& job) {
  JobRow row{.ns = Text(job, {"metadata", "namespace"}),
             .name = Text(job, {"metadata", "name"}),
             .queue = Text(job, {"spec", "queueName"}),
             .phase = Text(job, {"status", "phase"}),
             .level = Text(job, {"status", "placement", "level"}),
             .domain = Text(job, {"status", "placement", "domain"}),
             .replicas = Int(job, {"spec", "replicas"}).value_or(0),
             .admitted = Int(job, {"status", "admission", "replicas"}),
             .restarts = Int(job, {"status", "restarts"}).value_or(0),
             .created = Timestamp(job, {"metadata", "creationTimestamp"})};
  const Value* status = Find(job, {"status"});
  row.has_status = status != nullptr && status->IsObject() && status->MemberCount() > 0;
  if (!row.has_status) {
    row.reason = "no status yet";
  } else if (const std::vector<Condition> conditions = Conditions(job);
             const Condition* why = WhyCondition(conditions, row)) {
    row.reason_code = why->reason;
    row.reason = why->message.empty() ? why->reason : why->message;
  }
  return row;
}

// Names with numbers in their numeric order: job-9 before job-10, as a person reads them.
bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = absl::ascii_isdigit(a[i]), db = absl::ascii_isdigit(b[j]);
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && absl::ascii_isdigit(a[ei])) ++ei;
      while (ej < b.size() && absl::ascii_isdigit(b[ej])) ++ej;
      std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

bool Selected(const std::vector<std::string>& wanted, std::string_view value) {
  if (wanted.empty()) return true;
  return std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
    return absl::EqualsIgnoreCase(w, value.empty() ? absl::string_view("-")
                                                   : absl::string_view(value.data(), value.size()));
  });
}

}  // namespace

absl::StatusOr<std::string> FormatJobs(const std::vector<std::string>& jobs,
                                       const OutputOptions& options) {
  ASSIGN_OR_RETURN(std::vector<rapidjson::Document> docs, ParseObjects(jobs, "TrainingJob"));
  std::vector<JobRow> rows;
  for (const auto& doc : docs) {
    JobRow row = JobFrom(doc);
    if (Selected(options.queues, row.queue) && Selected(options.phases, row.phase)) {
      rows.push_back(std::move(row));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const JobRow& a, const JobRow& b) {
    if (a.ns != b.ns) return a.ns < b.ns;
    return NaturalLess(a.name, b.name);
  });
  if (options.json) {
    return JsonDocument([&](JsonWriter& w) {
      ObjectArray(w, "trainingJobs", rows, [&](const JobRow& row) {
        String(w, "namespace", row.ns);
        String(w, "name", row.name);
        String(w, "queue", row.queue);
        OptionalString(w, "phase", row.phase);
        Number(w, "replicas", row.replicas);
        OptionalNumber(w, "admittedReplicas", row.admitted);
        OptionalString(w, "level", row.level);
        OptionalString(w, "domain", row.domain);
        Number(w, "restarts", row.restarts);
        OptionalString(w, "reason", row.reason);
        OptionalString(w, "conditionReason", row.reason_code);
        Key(w, "ageSeconds");
        if (row.created) {
          w.Int64(absl::ToInt64Seconds(options.now - *row.created));
        } else {
          w.Null();
        }
      });
    });
  }
  if (rows.empty() && (!options.queues.empty() || !options.phases.empty())) {
    std::vector<std::string> what;
    if (!options.queues.empty()) {
      what.push_back(absl::StrCat("queue ", absl::StrJoin(options.queues, " or ")));
    }
    if (!options.phases.empty()) {
      what.push_back(absl::StrCat("phase ", absl::StrJoin(options.phases, " or ")));
    }
    return absl::StrCat("No TrainingJobs with ", absl::StrJoin(what, " and "),
                        options.all_namespaces ? "" : absl::StrCat(" in namespace ", options.ns),
                        ".\n");
  }
  if (rows.empty()) return Nothing("TrainingJobs", options);
  std::vector<std::string> headers = {"NAME",   "QUEUE",    "PHASE", "SIZE",
                                      "DOMAIN", "RESTARTS", "AGE",   "REASON"};
  if (options.all_namespaces) headers.insert(headers.begin(), "NAMESPACE");
  Table table(std::move(headers));
  for (const JobRow& row : rows) {
    // A finished job holds no nodes and no quota, whatever status.admission still says.
    const bool finished = kube::FinishedPhase(row.phase);
    std::vector<std::string> cells = {row.name,
                                      OrAbsent(row.queue),
                                      OrAbsent(row.phase),
                                      finished ? "-"
                                               : absl::StrCat(OrAbsent(row.admitted), "/",
                                                              row.replicas),
                                      finished ? "-" : DomainText(row.level, row.domain),
                                      absl::StrCat(row.restarts),
                                      Age(row.created, options.now),
                                      Clip(row.reason_code.empty() || row.reason == row.reason_code
                                               ? row.reason
                                               : absl::StrCat(row.reason_code, ": ", row.reason),
                                           options.wide ? std::string::npos : kReasonWidth)};
    if (options.all_namespaces) cells.insert(cells.begin(), row.ns);
    table.Add(std::move(cells));
  }
  return table.Render();
}

// ---- Explain ---------------------------------------------------------------------------------

namespace {

struct EventRow {
  std::string type, reason, from, message;
  int64_t count = 1;
  std::optional<absl::Time> last;
};

EventRow EventFrom(const Value& e) {
  EventRow row{.type = Text(e, {"type"}),
               .reason = Text(e, {"reason"}),
               .from = Text(e, {"source", "component"}),
               .message = Text(e, {"message"}),
               .count = Int(e, {"count"}).value_or(1)};
  if (row.from.empty()) row.from = Text(e, {"reportingComponent"});
  // core/v1 Events carry their time in one of these, depending on who wrote them.
  for (auto path : {std::initializer_list<const char*>{"lastTimestamp"},
                    std::initializer_list<const char*>{"series", "lastObservedTime"},
                    std::initializer_list<const char*>{"eventTime"},
                    std::initializer_list<const char*>{"metadata", "creationTimestamp"}}) {
    if ((row.last = Timestamp(e, path))) break;
  }
  return row;
}

// The latest `max` events, oldest first.
absl::StatusOr<std::vector<EventRow>> LatestEvents(const std::vector<std::string>& events,
                                                   int max) {
  ASSIGN_OR_RETURN(std::vector<rapidjson::Document> docs, ParseObjects(events, "Event"));
  std::vector<EventRow> rows;
  for (const auto& doc : docs) rows.push_back(EventFrom(doc));
  std::stable_sort(rows.begin(), rows.end(), [](const EventRow& a, const EventRow& b) {
    return a.last.value_or(absl::InfinitePast()) < b.last.value_or(absl::InfinitePast());
  });
  if (max >= 0 && rows.size() > static_cast<size_t>(max)) {
    rows.erase(rows.begin(), rows.end() - max);
  }
  return rows;
}

std::string ReplicasText(const kube::TrainingJob& job) {
  std::string out = absl::StrCat(job.replicas);
  if (job.elastic) {
    absl::StrAppend(&out, " (elastic ", job.elastic->min_replicas, "-", job.elastic->max_replicas,
                    ", step ", job.elastic->step, ")");
  }
  return out;
}

std::string LevelText(const std::string& label) {
  return absl::StrCat(ShortLevel(label), " (", label, ")");
}

std::string TopologyText(const kube::TrainingJobTopology& t) {
  std::vector<std::string> parts;
  if (!t.required.empty()) parts.push_back(absl::StrCat("required ", LevelText(t.required)));
  if (!t.preferred.empty()) parts.push_back(absl::StrCat("preferred ", LevelText(t.preferred)));
  if (t.group_size > 0) {
    parts.push_back(absl::StrCat("groups of ", t.group_size, " in one ", LevelText(t.group_level)));
  }
  return parts.empty() ? "none (anywhere in the cluster)" : absl::StrJoin(parts, ", ");
}

// At most `max` names, then how many more.
std::string NodeList(const std::vector<std::string>& nodes, size_t max = 8) {
  if (nodes.size() <= max) return absl::StrJoin(nodes, ", ");
  return absl::StrCat(absl::StrJoin(nodes.begin(), nodes.begin() + static_cast<long>(max), ", "),
                      ", ... (", nodes.size() - max, " more)");
}

std::string SchedulerText(const std::optional<PlacementAnswer>& answer, bool placed,
                          std::string_view phase) {
  if (!answer && kube::FinishedPhase(phase)) {
    return absl::StrCat("Scheduler:   not asked: the job has finished (", std::string(phase),
                        "); its reservation was released\n");
  }
  if (!answer && placed) {
    return "Scheduler:   not asked: the gang holds the nodes under Placement\n";
  }
  if (!answer) {
    return "Scheduler:   not asked (give --server HOST:PORT or set PHALANX_SCHEDULER_GRPC for a "
           "dry run of this gang)\n";
  }
  const placement::GangRequest& r = answer->request;
  std::string out = absl::StrCat(
      "Scheduler:   dry run on phalanx-scheduler ", answer->server, " (holds nothing): ",
      r.elastic ? absl::StrCat(r.elastic->min, "-", r.elastic->max) : absl::StrCat(r.count),
      " pods x ", FormatResources(r.per_pod), "\n");
  if (!answer->result.ok()) {
    return absl::StrCat(out, "  the call failed: ", answer->result.status().ToString(), "\n");
  }
  const placement::PlacementResult& result = *answer->result;
  if (result.placed) {
    return absl::StrCat(out, "  would place ", result.placement.nodes.size(), " pods in ",
                        DomainText(result.placement.domain), ": ", NodeList(result.placement.nodes),
                        "\n");
  }
  const placement::Explanation& e = result.explanation;
  absl::StrAppend(&out, "  would not place it: ", e.summary, "\n");
  if (e.best_domain) {
    absl::StrAppend(&out, "  closest: ", e.best_domain->ToString(), " fits ", e.fit_in_best, " of ",
                    e.wanted, " pods\n");
  }
  if (!e.nodes_rejected.empty()) {
    absl::StrAppend(&out, "  nodes rejected: ",
                    absl::StrJoin(e.nodes_rejected, ", ", absl::PairFormatter(" ")), "\n");
  }
  return out;
}

void SchedulerMembers(JsonWriter& w, const PlacementAnswer& answer) {
  String(w, "server", answer.server);
  if (!answer.result.ok()) {
    String(w, "error", answer.result.status().ToString());
    return;
  }
  const placement::PlacementResult& result = *answer.result;
  Key(w, "placed");
  w.Bool(result.placed);
  if (result.placed) {
    OptionalString(w, "level", result.placement.domain.level);
    String(w, "domain", result.placement.domain.ToString());
    Strings(w, "nodes", result.placement.nodes);
    return;
  }
  const placement::Explanation& e = result.explanation;
  String(w, "summary", e.summary);
  Number(w, "wanted", e.wanted);
  Number(w, "fitInBest", e.fit_in_best);
  OptionalString(w, "bestDomain", e.best_domain ? e.best_domain->ToString() : "");
  Counts(w, "nodesRejected", e.nodes_rejected);
}

// One pod of the job, as `explain` shows it.
struct RankPod {
  int64_t rank = -1, restart = -1;  // -1: the label is missing or not a number
  std::string name, phase, node;
  bool terminating = false;
  bool owned = true;   // its controller is this job's uid (not an older job of the name)
  std::string detail;  // why it is not running, when something says
  std::optional<int64_t> priority;  // spec.priority, as the API server set it at creation
  // Why it is not one of the gang's ranks ("" if it is): it is being deleted, it belongs to
  // an earlier restart or an earlier job of the name, or its rank is above the gang's size.
  std::string other;
};

std::optional<int64_t> IntLabel(const Value& pod, const char* key) {
  int64_t n = 0;
  const std::string text = Text(pod, {"metadata", "labels", key});
  if (text.empty() || !absl::SimpleAtoi(text, &n)) return std::nullopt;
  return n;
}

// What keeps a pod from running, as the kubelet and kube-scheduler report it: a waiting or
// failed container, the pod's own status reason (Evicted, ...), an Unschedulable PodScheduled.
std::string PodDetail(const Value& pod) {
  std::vector<std::string> parts;
  if (const std::string reason = Text(pod, {"status", "reason"}); !reason.empty()) {
    parts.push_back(absl::StrCat(reason, ": ", Text(pod, {"status", "message"})));
  }
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const Value* statuses = Find(pod, {"status", list});
    if (statuses == nullptr || !statuses->IsArray()) continue;
    for (const Value& c : statuses->GetArray()) {
      const std::string name = Text(c, {"name"});
      if (const std::string why = Text(c, {"state", "waiting", "reason"});
          !why.empty() && why != "ContainerCreating" && why != "PodInitializing") {
        const std::string message = Text(c, {"state", "waiting", "message"});
        parts.push_back(absl::StrCat("container ", name, " waiting: ", why,
                                     message.empty() ? "" : absl::StrCat(" (", message, ")")));
      }
      const std::optional<int64_t> code = Int(c, {"state", "terminated", "exitCode"});
      if (code && *code != 0) {
        parts.push_back(absl::StrCat("container ", name, " exited with code ", *code, " (",
                                     Text(c, {"state", "terminated", "reason"}), ")"));
      }
    }
  }
  for (const Condition& c : Conditions(pod)) {
    if (c.type == "PodScheduled" && c.status == "False") {
      parts.push_back(absl::StrCat(OrAbsent(c.reason), ": ", c.message));
    }
  }
  return absl::StrJoin(parts, "; ");
}

absl::StatusOr<std::vector<RankPod>> RankPods(const std::vector<std::string>& pods,
                                              std::string_view job_uid) {
  ASSIGN_OR_RETURN(std::vector<rapidjson::Document> docs, ParseObjects(pods, "Pod"));
  std::vector<RankPod> out;
  for (const rapidjson::Document& pod : docs) {
    RankPod p;
    p.name = Text(pod, {"metadata", "name"});
    p.phase = Text(pod, {"status", "phase"});
    p.node = Text(pod, {"spec", "nodeName"});
    p.terminating = !Text(pod, {"metadata", "deletionTimestamp"}).empty();
    p.priority = Int(pod, {"spec", "priority"});
    p.rank = IntLabel(pod, std::string(kRankLabel).c_str()).value_or(-1);
    p.restart = IntLabel(pod, std::string(kRestartLabel).c_str()).value_or(-1);
    p.owned = false;
    if (const Value* owners = Find(pod, {"metadata", "ownerReferences"});
        owners != nullptr && owners->IsArray()) {
      for (const Value& o : owners->GetArray()) {
        const Value* controls = kube::Member(o, "controller");
        if (controls != nullptr && controls->IsBool() && controls->GetBool() &&
            Text(o, {"uid"}) == job_uid) {
          p.owned = true;
        }
      }
    }
    if (p.phase != "Running" && p.phase != "Succeeded") p.detail = PodDetail(pod);
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const RankPod& a, const RankPod& b) {
    return std::tie(a.restart, a.rank, a.name) < std::tie(b.restart, b.rank, b.name);
  });
  return out;
}

// The gang's ranks: the pods of the current restart whose rank is below the admitted size.
struct RankSummary {
  int64_t world = 0, restart = 0;
  std::map<std::string, int> phases;  // of the gang's ranks, by pod phase
  std::vector<int64_t> missing;       // ranks with no pod
  int others = 0;                     // pods that are not the gang's ranks (being replaced)
};

// Counts the gang's ranks and says of every other pod why it is not one.
RankSummary SummarizeRanks(const kube::TrainingJob& job, std::vector<RankPod>& pods) {
  RankSummary s;
  s.world = job.status.admission ? job.status.admission->replicas : 0;
  s.restart = job.status.restarts;
  std::set<int64_t> present;
  for (RankPod& p : pods) {
    if (p.terminating) {
      p.other = "terminating";
    } else if (!p.owned) {
      p.other = "not this job's";
    } else if (p.restart != s.restart) {
      p.other = absl::StrCat("restart ", p.restart < 0 ? "?" : absl::StrCat(p.restart));
    } else if (p.rank < 0 || p.rank >= s.world || !present.insert(p.rank).second) {
      p.other = s.world == 0 ? "not admitted" : absl::StrCat("not a rank of ", s.world);
    }
    if (p.other.empty()) {
      ++s.phases[OrAbsent(p.phase)];
    } else {
      ++s.others;
    }
  }
  for (int64_t r = 0; r < s.world; ++r) {
    if (!present.contains(r)) s.missing.push_back(r);
  }
  return s;
}

std::string RanksText(const RankSummary& s) {
  std::vector<std::string> parts;
  // The usual phases in a pod's order of life, then anything else.
  const std::vector<std::string> usual = {"Running", "Succeeded", "Pending", "Failed"};
  for (const std::string& phase : usual) {
    if (auto it = s.phases.find(phase); it != s.phases.end()) {
      parts.push_back(absl::StrCat(it->second, " ", phase));
    }
  }
  for (const auto& [phase, n] : s.phases) {
    if (std::find(usual.begin(), usual.end(), phase) == usual.end()) {
      parts.push_back(absl::StrCat(n, " ", phase));
    }
  }
  if (!s.missing.empty()) parts.push_back(absl::StrCat(s.missing.size(), " without a pod"));
  std::string text = s.world == 0 ? std::string("no ranks (not admitted)")
                                  : absl::StrCat(CountedNoun(s.world, "rank"), " (restart ",
                                                 s.restart, "): ", absl::StrJoin(parts, ", "));
  if (s.others > 0) {
    absl::StrAppend(&text, s.world == 0 ? "; " : ", and ", CountedNoun(s.others, "other pod"),
                    " (below)");
  }
  return text;
}

// explain lists at most this many pods that are not running; --json lists every pod.
constexpr size_t kPodRows = 10;

// Where a pending job stands, from its TrainingQueue's status.pendingJobs (written by
// phalanx-operator: the queue's first pending jobs in their ClusterTrainingQueue's order).
struct QueuePosition {
  std::string cluster_queue;                          // the TrainingQueue's spec.clusterQueue
  size_t listed = 0;                                  // how many jobs the status lists
  std::optional<int64_t> in_queue, in_cluster_queue;  // set when the job is listed
};

// nullopt when the TrainingQueue was not read or its status has no pendingJobs (an operator
// older than the field, or none written yet).
std::optional<QueuePosition> PositionIn(std::string_view queue_json, std::string_view job) {
  if (queue_json.empty()) return std::nullopt;
  absl::StatusOr<rapidjson::Document> queue = ParseObject(queue_json, "TrainingQueue");
  if (!queue.ok()) return std::nullopt;
  const Value* jobs = Find(*queue, {"status", "pendingJobs"});
  if (jobs == nullptr || !jobs->IsArray()) return std::nullopt;
  QueuePosition position{.cluster_queue = Text(*queue, {"spec", "clusterQueue"}),
                         .listed = jobs->Size()};
  if (const Value* entry = Named(jobs, job)) {
    position.in_queue = Int(*entry, {"positionInQueue"});
    position.in_cluster_queue = Int(*entry, {"positionInClusterQueue"});
  }
  return position;
}

}  // namespace

// The job's priority as phalanx-operator resolves it (operator_server::PodPriorityClass), when
// the cluster's PriorityClasses are known: "training-critical (10000)", "standard (1000, the
// cluster's globalDefault PriorityClass)", "0 (no PriorityClass, and none is the cluster's
// globalDefault)"; for an admitted job that names no class, its live pods' priority when it
// differs (operator_server::KeepPodsPriority). Without them, the class the job names.
struct ResolvedPriority {
  std::string class_name;
  std::optional<int32_t> value;  // nullopt: not known
  std::string text;
};
ResolvedPriority ResolvePriority(const kube::TrainingJob& job,
                                 const std::optional<std::vector<std::string>>& classes_json,
                                 const std::vector<RankPod>& pods) {
  if (job.priority) {
    return {.class_name = "", .value = *job.priority, .text = absl::StrCat(*job.priority)};
  }
  // The class the job names itself (spec or template), "" when it follows the default.
  const std::string named = operator_server::PodPriorityClass(job, "");
  if (!classes_json) return {.class_name = named, .value = std::nullopt, .text = OrAbsent(named)};
  std::vector<operator_server::PriorityClass> classes;
  for (const std::string& json : *classes_json) {
    absl::StatusOr<operator_server::PriorityClass> pc = operator_server::DecodePriorityClass(json);
    if (pc.ok()) classes.push_back(*std::move(pc));
  }
  const std::string global_default = operator_server::GlobalDefaultPriorityClass(classes);
  const std::string name = operator_server::PodPriorityClass(job, global_default);
  std::optional<int64_t> of_pods;  // the lowest of the live pods', for KeepPodsPriority's case
  if (job.status.admission && named.empty()) {
    for (const RankPod& p : pods) {
      if (p.terminating || !p.priority) continue;
      of_pods = of_pods ? std::min(*of_pods, *p.priority) : *p.priority;
    }
  }
  auto pc = std::find_if(classes.begin(), classes.end(),
                         [&](const operator_server::PriorityClass& c) { return c.name == name; });
  const std::optional<int64_t> of_class = name.empty()          ? std::optional<int64_t>(0)
                                          : pc == classes.end() ? std::nullopt
                                                                : std::optional<int64_t>(pc->value);
  if (of_pods && of_pods != of_class) {
    return {.class_name = "",
            .value = static_cast<int32_t>(*of_pods),
            .text = absl::StrCat(*of_pods,
                                 " (its pods', as created; the cluster's globalDefault "
                                 "PriorityClass is now ",
                                 global_default.empty() ? "none" : global_default, ")")};
  }
  if (name.empty()) {
    return {.class_name = "",
            .value = 0,
            .text = "0 (no PriorityClass, and none is the cluster's globalDefault)"};
  }
  if (pc == classes.end()) {
    return {.class_name = name, .value = std::nullopt, .text = absl::StrCat(name, " (not found)")};
  }
  return {
      .class_name = name,
      .value = pc->value,
      .text = absl::StrCat(name, " (", pc->value,
                           named.empty() ? ", the cluster's globalDefault PriorityClass)" : ")")};
}

namespace {

void ConditionsJson(JsonWriter& w, const std::vector<Condition>& conditions) {
  ObjectArray(w, "conditions", conditions, [&](const Condition& c) {
    String(w, "type", c.type);
    String(w, "status", c.status);
    String(w, "reason", c.reason);
    String(w, "message", c.message);
    OptionalString(w, "lastTransitionTime", Rfc3339(c.since));
  });
}

void EventsJson(JsonWriter& w, const std::vector<EventRow>& latest) {
  ObjectArray(w, "events", latest, [&](const EventRow& e) {
    String(w, "type", e.type);
    String(w, "reason", e.reason);
    String(w, "from", e.from);
    String(w, "message", e.message);
    Number(w, "count", e.count);
    OptionalString(w, "lastSeen", Rfc3339(e.last));
  });
}

// "\nConditions:\n" and a table of them (or <none>).
std::string ConditionsText(const std::vector<Condition>& conditions, absl::Time now) {
  std::string out = "\nConditions:\n";
  if (conditions.empty()) return out + "  <none>\n";
  Table table({"TYPE", "STATUS", "REASON", "AGE", "MESSAGE"});
  for (const Condition& c : conditions) {
    table.Add(
        {c.type, c.status, OrAbsent(c.reason), Age(c.since, now), Wrap(c.message, kMessageWidth)});
  }
  return out + table.Render("  ");
}

// "\nEvents:\n" and a table of the latest (or <none>).
std::string EventsText(const std::vector<EventRow>& latest, absl::Time now) {
  std::string out = "\nEvents:\n";
  if (latest.empty()) return out + "  <none>\n";
  Table table({"LAST SEEN", "TYPE", "REASON", "FROM", "MESSAGE"});
  for (const EventRow& e : latest) {
    table.Add({Age(e.last, now) + (e.count > 1 ? absl::StrCat(" (x", e.count, ")") : ""), e.type,
               e.reason, OrAbsent(e.from), Wrap(e.message, kMessageWidth)});
  }
  return out + table.Render("  ");
}

// explain of a job whose spec cannot be read (a template quantity that is not one, which the
// CRD's schema lets through): what phalanx-operator made of it, its conditions and events, and
// the reason, instead of failing the command on it.
absl::StatusOr<std::string> FormatUnreadableExplain(const rapidjson::Document& doc,
                                                    const absl::Status& why,
                                                    const std::vector<std::string>& events,
                                                    int max_events, const OutputOptions& options) {
  const JobRow row = JobFrom(doc);
  const std::vector<Condition> conditions = Conditions(doc);
  ASSIGN_OR_RETURN(std::vector<EventRow> latest, LatestEvents(events, max_events));
  const std::string unreadable = std::string(why.message());
  if (options.json) {
    return JsonDocument([&](JsonWriter& w) {
      String(w, "namespace", row.ns);
      String(w, "name", row.name);
      String(w, "queue", row.queue);
      String(w, "unreadable", unreadable);
      OptionalString(w, "phase", row.phase);
      OptionalString(w, "reason", row.reason);
      ConditionsJson(w, conditions);
      EventsJson(w, latest);
    });
  }
  std::string out;
  auto line = [&out](const std::string& field, const std::string& value) {
    absl::StrAppend(&out, absl::StrFormat("%-13s%s\n", absl::StrCat(field, ":"), value));
  };
  line("TrainingJob", absl::StrCat(row.ns, "/", row.name));
  line("Queue", absl::StrCat(row.queue, " (TrainingQueue ", row.ns, "/", row.queue, ")"));
  line("Spec", absl::StrCat("cannot be read: ", unreadable));
  line("Phase", OrAbsent(row.phase));
  line("Age", Age(row.created, options.now));
  out += ConditionsText(conditions, options.now);
  out += EventsText(latest, options.now);
  out +=
      "\nphalanx-operator does not admit or run a job it cannot read: fix the field (an "
      "admitted job keeps running as it was read before the edit).\n";
  return out;
}

}  // namespace

absl::StatusOr<std::string> FormatExplain(
    std::string_view job_json, const std::vector<std::string>& events,
    const absl::StatusOr<std::vector<std::string>>& pods,
    const std::optional<PlacementAnswer>& placement, int max_events, const OutputOptions& options,
    std::string_view queue_json, const std::optional<std::vector<std::string>>& priority_classes) {
  ASSIGN_OR_RETURN(rapidjson::Document doc, ParseObject(job_json, "TrainingJob"));
  absl::StatusOr<kube::TrainingJob> decoded = kube::DecodeTrainingJob(job_json);
  if (!decoded.ok()) {
    return FormatUnreadableExplain(doc, decoded.status(), events, max_events, options);
  }
  const kube::TrainingJob& job = *decoded;
  const JobRow row = JobFrom(doc);
  const std::vector<Condition> conditions = Conditions(doc);
  ASSIGN_OR_RETURN(std::vector<EventRow> latest, LatestEvents(events, max_events));
  std::vector<RankPod> rank_pods;
  if (pods.ok()) {
    ASSIGN_OR_RETURN(rank_pods, RankPods(*pods, job.meta.uid));
  }
  const RankSummary ranks = SummarizeRanks(job, rank_pods);  // marks the pods not in the gang
  // When spec.activeDeadlineSeconds runs out, by the operator's own rule.
  const Condition* admitted = FindCondition(conditions, "Admitted");
  const std::optional<absl::Time> deadline = kube::ActiveDeadline(
      job, admitted != nullptr && admitted->status == "True" ? admitted->since : std::nullopt);
  // Only for a job waiting for admission.
  const std::optional<QueuePosition> position =
      row.has_status && !job.status.admission && !kube::FinishedPhase(job.status.phase)
          ? PositionIn(queue_json, row.name)
          : std::nullopt;

  const ResolvedPriority priority = ResolvePriority(job, priority_classes, rank_pods);
  if (options.json) {
    return JsonDocument([&](JsonWriter& w) {
      String(w, "namespace", row.ns);
      String(w, "name", row.name);
      String(w, "queue", row.queue);
      OptionalString(w, "priorityClassName", job.priority_class_name);
      // As phalanx-operator resolves it: the pods' class and its value, when known.
      OptionalString(w, "effectivePriorityClassName", priority.class_name);
      if (priority.value) Number(w, "priority", *priority.value);
      Number(w, "replicas", job.replicas);
      OptionalObject(w, "elastic", job.elastic, [&](const kube::TrainingJobElastic& e) {
        Number(w, "minReplicas", e.min_replicas);
        Number(w, "maxReplicas", e.max_replicas);
        Number(w, "step", e.step);
      });
      Object(w, "perPod", [&] {
        for (const auto& [name, amount] : job.pod.requests) {
          String(w, name, FormatQuantity(name, amount));
        }
      });
      Object(w, "topology", [&] {
        OptionalString(w, "required", job.topology.required);
        OptionalString(w, "preferred", job.topology.preferred);
        Number(w, "groupSize", job.topology.group_size);
        OptionalString(w, "groupLevel", job.topology.group_level);
      });
      OptionalString(w, "phase", row.phase);
      OptionalObject(w, "admission", job.status.admission,
                     [&](const kube::TrainingJobAdmission& a) {
                       String(w, "clusterQueue", a.cluster_queue);
                       String(w, "flavor", a.flavor);
                       Number(w, "replicas", a.replicas);
                     });
      if (position && position->in_queue && position->in_cluster_queue) {
        Object(w, "queuePosition", [&] {
          Number(w, "inQueue", *position->in_queue);
          Number(w, "inClusterQueue", *position->in_cluster_queue);
        });
      }
      OptionalObject(w, "placement", job.status.placement,
                     [&](const kube::TrainingJobPlacement& p) {
                       String(w, "level", p.level);
                       String(w, "domain", p.domain);
                       Strings(w, "nodes", p.nodes);
                     });
      Number(w, "restarts", row.restarts);
      Number(w, "nodeFaultRestarts", job.status.node_fault_restarts);
      Number(w, "ignoredRestarts", job.status.ignored_restarts);
      if (job.active_deadline_seconds) {
        Number(w, "activeDeadlineSeconds", *job.active_deadline_seconds);
      }
      OptionalString(w, "deadline", Rfc3339(deadline));
      OptionalObject(w, "requeueState", job.status.requeue_state,
                     [&](const kube::TrainingJobRequeueState& r) {
                       Number(w, "count", r.count);
                       OptionalString(w, "requeueAt", r.requeue_at);
                     });
      OptionalString(w, "reason", row.reason);
      ConditionsJson(w, conditions);
      if (!pods.ok()) String(w, "podsNotListed", std::string(pods.status().message()));
      if (pods.ok())
        Object(w, "ranks", [&] {
          Number(w, "size", ranks.world);
          Number(w, "restart", ranks.restart);
          Counts(w, "phases", ranks.phases);
          w.Key("withoutPod");
          w.StartArray();
          for (int64_t r : ranks.missing) w.Int64(r);
          w.EndArray();
          Number(w, "otherPods", ranks.others);
        });
      ObjectArray(w, "pods", rank_pods, [&](const RankPod& p) {
        String(w, "name", p.name);
        if (p.rank >= 0) Number(w, "rank", p.rank);
        if (p.restart >= 0) Number(w, "restart", p.restart);
        OptionalString(w, "phase", p.phase);
        OptionalString(w, "node", p.node);
        w.Key("terminating");
        w.Bool(p.terminating);
        OptionalString(w, "notInGang", p.other);
        OptionalString(w, "detail", p.detail);
      });
      EventsJson(w, latest);
      OptionalObject(w, "scheduler", placement,
                     [&](const PlacementAnswer& a) { SchedulerMembers(w, a); });
    });
  }

  std::string out;
  auto line = [&out](const std::string& field, const std::string& value) {
    absl::StrAppend(&out, absl::StrFormat("%-13s%s\n", absl::StrCat(field, ":"), value));
  };
  line("TrainingJob", absl::StrCat(row.ns, "/", row.name));
  line("Queue", absl::StrCat(row.queue, " (TrainingQueue ", row.ns, "/", row.queue, ")"));
  line("Priority", priority.text);
  line("Replicas", ReplicasText(job));
  line("Per pod", OrAbsent(FormatResources(job.pod.requests)));
  line("Topology", TopologyText(job.topology));
  if (!row.has_status) {
    line("Status", "none yet: phalanx-operator has not processed this job");
  } else {
    line("Phase", OrAbsent(row.phase));
    line("Admission", job.status.admission
                          ? absl::StrCat("ClusterTrainingQueue ",
                                         job.status.admission->cluster_queue, ", flavor ",
                                         job.status.admission->flavor, ", ",
                                         job.status.admission->replicas, " replicas")
                          : "not admitted");
    if (position) {
      const std::string queue = absl::StrCat("TrainingQueue ", row.ns, "/", row.queue);
      if (position->in_queue && position->in_cluster_queue) {
        line("Position", absl::StrCat(*position->in_cluster_queue, " in ClusterTrainingQueue ",
                                      OrAbsent(position->cluster_queue), ", ", *position->in_queue,
                                      " in ", queue));
      } else {
        // Not listed: beyond the list's length, or passed over by the queue's order (held by
        // a ResourceQuota of its namespace, or in a requeue backoff), which has no position.
        line("Position",
             absl::StrCat("not among the ", position->listed, " pending jobs ", queue,
                          " lists (status.pendingJobs: the first in the queue's order; a job "
                          "held back by a ResourceQuota or in a requeue backoff has no place "
                          "in it)"));
      }
    }
    line("Placement",
         job.status.placement
             ? absl::StrCat(DomainText(job.status.placement->level, job.status.placement->domain),
                            " on ", NodeList(job.status.placement->nodes))
             : std::string(kAbsent));
    // maxRestarts bounds the restarts the job's own failures caused; those after node failures
    // (status.nodeFaultRestarts) and those an Ignore rule matched (status.ignoredRestarts) are
    // not counted.
    const int32_t node_faults = job.status.node_fault_restarts;
    const int32_t ignored = job.status.ignored_restarts;
    std::string restarts =
        absl::StrCat(row.restarts - node_faults - ignored, " of ", job.max_restarts, " allowed");
    if (node_faults > 0) {
      absl::StrAppend(&restarts, ", and ", node_faults, " after node failures (not counted)");
    }
    if (ignored > 0) {
      absl::StrAppend(&restarts, ", and ", ignored, " ignored by failure rules (not counted)");
    }
    line("Restarts", restarts);
  }
  if (job.active_deadline_seconds) {
    std::string text = absl::StrCat(*job.active_deadline_seconds, "s from admission");
    if (deadline) {
      absl::StrAppend(&text, ": ends by ", Rfc3339(deadline),
                      *deadline > options.now
                          ? absl::StrCat(" (in ", HumanAge(*deadline - options.now), ")")
                          : std::string(" (passed)"));
    }
    line("Deadline", text);
  }
  if (const auto& rq = job.status.requeue_state) {
    // Evicted because its pods were not all running in time (phalanx-operator
    // --pods-ready-timeout-seconds): when it may be admitted again.
    std::string text = absl::StrCat(rq->count, rq->count == 1 ? " eviction" : " evictions",
                                    " for pods not ready");
    absl::Time at;
    std::string error;
    if (rq->requeue_at.empty()) {
      absl::StrAppend(&text, "; not requeued (the requeuing limit): resume the job to queue it");
    } else if (absl::ParseTime(absl::RFC3339_full, rq->requeue_at, &at, &error)) {
      absl::StrAppend(&text, at > options.now
                                 ? absl::StrCat("; backing off: not admitted before ",
                                                rq->requeue_at, " (in ",
                                                HumanAge(at - options.now), ")")
                                 : absl::StrCat("; its backoff ended at ", rq->requeue_at));
    }
    line("Requeue", text);
  }
  line("Age", Age(row.created, options.now));

  out += ConditionsText(conditions, options.now);
  out += "\nPods:\n";
  if (!pods.ok()) {
    absl::StrAppend(&out, "  not listed: ", pods.status().message(), "\n");
  } else if (ranks.world == 0 && rank_pods.empty()) {
    out += "  <none>\n";
  } else {
    absl::StrAppend(&out, "  ", RanksText(ranks), "\n");
    // The gang's ranks that are not running or done (those without a pod included), by rank;
    // then the pods that are not the gang's.
    std::vector<std::pair<std::pair<bool, int64_t>, std::vector<std::string>>> listed;
    for (int64_t r : ranks.missing) {
      listed.push_back({{false, r}, {absl::StrCat(r), kAbsent, "no pod", kAbsent, kAbsent}});
    }
    for (const RankPod& p : rank_pods) {
      if (p.other.empty() && (p.phase == "Running" || p.phase == "Succeeded")) continue;
      std::string phase = OrAbsent(p.phase);
      if (!p.other.empty()) absl::StrAppend(&phase, " (", p.other, ")");
      listed.push_back({{!p.other.empty(), p.rank},
                        {p.rank >= 0 ? absl::StrCat(p.rank) : kAbsent, p.name, phase,
                         OrAbsent(p.node), Wrap(OrAbsent(p.detail), kMessageWidth)}});
    }
    std::stable_sort(listed.begin(), listed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    Table table({"RANK", "POD", "PHASE", "NODE", "DETAIL"});
    const size_t rows = std::min(listed.size(), kPodRows);
    const size_t hidden = listed.size() - rows;
    for (size_t i = 0; i < rows; ++i) table.Add(std::move(listed[i].second));
    if (rows > 0) out += table.Render("  ");
    if (hidden > 0) {
      absl::StrAppend(&out, "  ... ", CountedNoun(static_cast<int64_t>(hidden), "more row"),
                      " (--json lists every pod)\n");
    }
  }
  out += EventsText(latest, options.now);
  out += "\n" + SchedulerText(placement,
                              job.status.placement.has_value() &&
                                  !job.status.placement->nodes.empty(),
                              row.phase);
  return out;
}

// ---- Topology --------------------------------------------------------------------------------

namespace {

// Sorts rows depth first: a domain, then its child domains (each with its subtree), then the
// nodes directly in it.
using TreeKey = std::vector<std::pair<int, std::string>>;

TreeKey DomainKey(const placement::DomainId& id) {
  TreeKey key;
  for (const std::string& value : id.path) key.emplace_back(0, value);
  return key;
}

TreeKey NodeKey(const TopologyNode& node) {
  TreeKey key = DomainKey(node.domain);
  if (!key.empty()) key.back().first = 1;
  return key;
}

// After the domain's child domains, before the nodes directly in it.
TreeKey GapKey(const placement::DomainId& id) {
  TreeKey key = DomainKey(id);
  key.emplace_back(1, "");
  return key;
}

// Per listed domain above the deepest level listed: what its nodes without the next level's
// label add up to (its totals less its children's), for the domains that have such nodes. None
// when domains were cut by the summary's limit (a child may be missing).
std::vector<placement::DomainSummary> LabelGapRows(const TopologyView& view) {
  const placement::SnapshotSummary& s = view.summary;
  std::vector<placement::DomainSummary> gaps;
  if (s.total_domains > static_cast<int32_t>(s.domains.size())) return gaps;
  const int levels = static_cast<int>(s.levels.size());
  const int last = view.max_level < 0 ? levels : std::min(view.max_level, levels);
  std::map<std::vector<std::string>, placement::DomainSummary> children;  // by parent path
  for (const placement::DomainSummary& d : s.domains) {
    if (d.domain.path.empty()) continue;
    placement::DomainSummary& sum =
        children[std::vector<std::string>(d.domain.path.begin(), d.domain.path.end() - 1)];
    sum.nodes += d.nodes;
    sum.schedulable_nodes += d.schedulable_nodes;
    sum.gpus += d.gpus;
    sum.free_gpus += d.free_gpus;
  }
  for (const placement::DomainSummary& d : s.domains) {
    if (d.level_index >= last) continue;
    placement::DomainSummary gap = d;
    if (auto it = children.find(d.domain.path); it != children.end()) {
      gap.nodes -= it->second.nodes;
      gap.schedulable_nodes -= it->second.schedulable_nodes;
      gap.gpus -= it->second.gpus;
      gap.free_gpus -= it->second.free_gpus;
    }
    if (gap.nodes > 0) gaps.push_back(std::move(gap));
  }
  return gaps;
}

// "1 node", "16 nodes".
std::string Count(int64_t n, const std::string& what) {
  return absl::StrCat(n, " ", what, n == 1 ? "" : "s");
}

std::string FreeText(int64_t free, int64_t total) {
  return absl::StrCat("free ", free, "/", total, " GPUs");
}

void SummaryMembers(JsonWriter& w, const TopologyView& view) {
  const placement::SnapshotSummary& s = view.summary;
  String(w, "source", view.source);
  Strings(w, "levels", s.levels);
  if (!view.levels_source.empty()) String(w, "levelsSource", view.levels_source);
  if (!view.notes.empty()) Strings(w, "notes", view.notes);
  Number(w, "nodes", s.nodes);
  Number(w, "schedulableNodes", s.schedulable_nodes);
  Counts(w, "nodesByCondition", s.nodes_by_condition);
  Number(w, "taintedNodes", s.tainted_nodes);
  Number(w, "pods", s.pods);
  Number(w, "reservations", s.reservations);
  Number(w, "gpus", s.gpus);
  Number(w, "freeGpus", s.free_gpus);
  Number(w, "totalDomains", s.total_domains);
  ObjectArray(w, "domains", s.domains, [&](const placement::DomainSummary& d) {
    String(w, "level", d.domain.level);
    Number(w, "levelIndex", d.level_index);
    Strings(w, "path", d.domain.path);
    Number(w, "nodes", d.nodes);
    Number(w, "schedulableNodes", d.schedulable_nodes);
    Number(w, "gpus", d.gpus);
    Number(w, "freeGpus", d.free_gpus);
  });
  if (view.nodes.empty()) return;
  ObjectArray(w, "nodeList", view.nodes, [&](const TopologyNode& n) {
    String(w, "name", n.name);
    Strings(w, "path", n.domain.path);
    String(w, "condition", n.condition);
    Number(w, "gpus", n.gpus);
    Number(w, "freeGpus", n.free_gpus);
  });
}

}  // namespace

std::string FormatTopology(const TopologyView& view, const OutputOptions& options) {
  const placement::SnapshotSummary& s = view.summary;
  if (options.json) {
    return JsonDocument([&](JsonWriter& w) { SummaryMembers(w, view); });
  }
  std::vector<std::string> levels;
  for (const std::string& level : s.levels) levels.push_back(ShortLevel(level));
  levels.push_back("node");
  std::string out = absl::StrCat(
      "source: ", view.source, "\n", "levels: ", absl::StrJoin(levels, " > "),
      view.levels_source.empty() ? "" : absl::StrCat(" (", view.levels_source, ")"), "\n");
  for (const std::string& note : view.notes) absl::StrAppend(&out, "note: ", note, "\n");
  absl::StrAppend(&out, Count(s.nodes, "node"), " (", s.schedulable_nodes, " schedulable), ",
                  Count(s.pods, "pod"), ", ", Count(s.reservations, "reservation"), ", ",
                  FreeText(s.free_gpus, s.gpus), "\n\n");

  struct Row {
    TreeKey key;
    int depth;
    std::string label, nodes, gpus, note;
  };
  std::vector<Row> rows;
  auto not_schedulable = [](int32_t nodes, int32_t schedulable) {
    return schedulable < nodes ? absl::StrCat(nodes - schedulable, " not schedulable") : "";
  };
  for (const placement::DomainSummary& d : s.domains) {
    rows.push_back({DomainKey(d.domain), d.level_index, DomainText(d.domain),
                    Count(d.nodes, "node"), FreeText(d.free_gpus, d.gpus),
                    not_schedulable(d.nodes, d.schedulable_nodes)});
  }
  for (const placement::DomainSummary& gap : LabelGapRows(view)) {
    const int below = gap.level_index + 1;
    rows.push_back({GapKey(gap.domain), below,
                    absl::StrCat("(", Count(gap.nodes, "node"), " without ",
                                 ShortLevel(s.levels[below - 1]), ")"),
                    "", FreeText(gap.free_gpus, gap.gpus),
                    not_schedulable(gap.nodes, gap.schedulable_nodes)});
  }
  // A node sits one step below the deepest domain listed above it (--max-level may hide its own).
  int deepest = 0;
  for (const placement::DomainSummary& d : s.domains) deepest = std::max(deepest, d.level_index);
  for (const TopologyNode& n : view.nodes) {
    rows.push_back({NodeKey(n), std::min(static_cast<int>(n.domain.path.size()), deepest + 1),
                    absl::StrCat("node ", n.name), "", FreeText(n.free_gpus, n.gpus),
                    n.condition == "Schedulable" ? "" : n.condition});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.key < b.key; });
  size_t label_width = 0, nodes_width = 0, gpus_width = 0;
  for (Row& row : rows) {
    row.label.insert(0, 2 * static_cast<size_t>(row.depth), ' ');
    label_width = std::max(label_width, row.label.size());
    nodes_width = std::max(nodes_width, row.nodes.size());
    gpus_width = std::max(gpus_width, row.gpus.size());
  }
  for (const Row& row : rows) {
    std::string line = absl::StrFormat("%-*s   %*s   %-*s   %s", label_width, row.label,
                                       nodes_width, row.nodes, gpus_width, row.gpus, row.note);
    line.erase(line.find_last_not_of(' ') + 1);
    absl::StrAppend(&out, line, "\n");
  }
  if (s.total_domains > static_cast<int32_t>(s.domains.size())) {
    absl::StrAppend(&out, "... ", s.total_domains - static_cast<int32_t>(s.domains.size()),
                    " more domains not listed\n");
  }
  return out;
}

}  // namespace phalanx::cli
