#include "sim/training_job.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api_labels.h"
#include "common/object_names.h"
#include "common/resources.h"
#include "common/status.h"
#include "common/text_input.h"
#include "scheduler/node_affinity.h"
#include "sim/crd_schema.h"
#include "sim/job_shape.h"
#include "sim/trainingjob_crd.h"
#include "sim/yaml_input.h"

namespace phalanx::sim {

namespace {

absl::StatusOr<std::map<std::string, std::string>> StringMap(const YamlReader& in,
                                                             const YAML::Node& node,
                                                             const std::string& field) {
  std::map<std::string, std::string> out;
  if (!node.IsDefined() || node.IsNull()) return out;
  if (!node.IsMap()) return in.Error(node, field, "want a map");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>("");
    ASSIGN_OR_RETURN(out[key], in.Scalar(entry.second, absl::StrCat(field, ".", key)));
  }
  return out;
}

absl::Status ReadRequirements(const YamlReader& in, const YAML::Node& term, const char* key,
                              const std::string& field,
                              std::vector<placement::NodeSelectorRequirement>* out) {
  ASSIGN_OR_RETURN(YAML::Node list, in.Sequence(term, key, field));
  for (size_t i = 0; list.IsDefined() && i < list.size(); ++i) {
    const std::string at = absl::StrCat(field, "[", i, "]");
    if (!list[i].IsMap()) return in.Error(list[i], at, "want a map");
    placement::NodeSelectorRequirement& r = out->emplace_back();
    ASSIGN_OR_RETURN(r.key, in.String(list[i], "key", at + ".key", ""));
    ASSIGN_OR_RETURN(r.op, in.String(list[i], "operator", at + ".operator", ""));
    ASSIGN_OR_RETURN(YAML::Node values, in.Sequence(list[i], "values", at + ".values"));
    for (size_t v = 0; values.IsDefined() && v < values.size(); ++v) {
      ASSIGN_OR_RETURN(r.values.emplace_back(),
                       in.Scalar(values[v], absl::StrCat(at, ".values[", v, "]")));
    }
  }
  return absl::OkStatus();
}

// The pod template's required node affinity, refused as the operator refuses it
// (kube/api/training_job.h: template_problem) when placement cannot honour it.
absl::StatusOr<std::vector<placement::NodeSelectorTerm>> RequiredNodeAffinity(
    const YamlReader& in, const YAML::Node& pod) {
  std::string field = "spec.template.spec.affinity";
  ASSIGN_OR_RETURN(YAML::Node affinity, in.Map(pod, "affinity", field));
  if (!affinity.IsDefined()) return std::vector<placement::NodeSelectorTerm>{};
  ASSIGN_OR_RETURN(YAML::Node node, in.Map(affinity, "nodeAffinity", field += ".nodeAffinity"));
  if (!node.IsDefined()) return std::vector<placement::NodeSelectorTerm>{};
  ASSIGN_OR_RETURN(YAML::Node required,
                   in.Map(node, "requiredDuringSchedulingIgnoredDuringExecution",
                          field += ".requiredDuringSchedulingIgnoredDuringExecution"));
  if (!required.IsDefined()) return std::vector<placement::NodeSelectorTerm>{};
  ASSIGN_OR_RETURN(YAML::Node terms,
                   in.Sequence(required, "nodeSelectorTerms", field += ".nodeSelectorTerms"));
  if (!terms.IsDefined() || terms.size() == 0) {
    return in.Error(required, field, "must have at least one node selector term");
  }
  std::vector<placement::NodeSelectorTerm> out(terms.size());
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::string at = absl::StrCat(field, "[", t, "]");
    if (!terms[t].IsMap()) return in.Error(terms[t], at, "want a map");
    RETURN_IF_ERROR(ReadRequirements(in, terms[t], "matchExpressions", at + ".matchExpressions",
                                     &out[t].match_expressions));
    RETURN_IF_ERROR(ReadRequirements(in, terms[t], "matchFields", at + ".matchFields",
                                     &out[t].match_fields));
  }
  if (absl::Status status = placement::ValidateNodeAffinity(out, field); !status.ok()) {
    // "<field>: <why>", said at the terms' line.
    const std::string message(status.message());
    const size_t colon = message.find(": ");
    return in.Error(terms, message.substr(0, colon), message.substr(colon + 2));
  }
  return out;
}

// The CRD's CEL rules, by message. The shape rules map to nullptr: ValidateJobShape checks them,
// with the same messages, once the schema holds (FromDocument).
const RuleChecks& TrainingJobRules() {
  static const RuleChecks* rules = new RuleChecks{
      {"spec.elastic.minReplicas must not exceed spec.elastic.maxReplicas", nullptr},
      {"spec.elastic.minReplicas and spec.elastic.maxReplicas must be multiples of "
       "spec.elastic.step",
       nullptr},
      {"spec.topology.groupLevel is required when spec.topology.groupSize is set", nullptr},
      {"spec.topology.groupSize is required when spec.topology.groupLevel is set", nullptr},
      {"spec.replicas must be within [spec.elastic.minReplicas, spec.elastic.maxReplicas]",
       nullptr},
      {"spec.replicas must be a multiple of spec.elastic.step", nullptr},
      {"spec.topology.groupSize must divide spec.replicas", nullptr},
      {"spec.topology.groupSize must divide spec.elastic.minReplicas, spec.elastic.maxReplicas "
       "and spec.elastic.step",
       nullptr},
      {"spec.failurePolicy.rules[].onExitCodes.values must not contain 0 with operator In",
       [](const YAML::Node& self) {
         if (self["operator"].as<std::string>("") != "In") return true;
         for (const YAML::Node& v : self["values"]) {
           if (v.IsScalar() && v.Scalar() == "0") return false;
         }
         return true;
       }},
      {"spec.template.spec.nodeName must not be set; Phalanx places the pods",
       [](const YAML::Node& self) { return !self["nodeName"].IsDefined(); }},
      {"metadata.name must be a DNS-1035 label (lowercase letters, digits, '-', starting with a "
       "letter) of at most 57 characters: the headless Service is named after the job and pods "
       "are <name>-<rank>",
       [](const YAML::Node& self) {
         const YAML::Node metadata = self["metadata"];
         if (!metadata.IsMap()) return false;  // the schema reports its type
         const YAML::Node name = metadata["name"];
         return name.IsDefined() && name.IsScalar() && IsDns1035Label(name.Scalar(), 57);
       }},
  };
  return *rules;
}

// The API server's verdict on `doc` by the CRD's schema: OK, or InvalidArgument with one line
// per error ("job.yaml:9: spec.queueName: Required value").
absl::Status CheckAgainstCrd(const YAML::Node& doc, const std::string& source) {
  static const absl::StatusOr<CrdSchema>* schema = new absl::StatusOr<CrdSchema>(
      CrdSchema::Parse(TrainingJobCrdYaml(), "crds/phalanx.dev_trainingjobs.yaml"));
  if (!schema->ok()) return absl::InternalError(schema->status().message());
  std::vector<std::string> lines;
  for (const SchemaError& error : (*schema)->Validate(doc, TrainingJobRules())) {
    if (error.unimplemented_rule) return absl::InternalError(error.message);
    lines.push_back(error.line > 0 ? absl::StrCat(source, ":", error.line, ": ", error.message)
                                   : absl::StrCat(source, ": ", error.message));
  }
  if (lines.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

absl::StatusOr<PlannedJob> FromDocument(const YamlReader& in, const YAML::Node& doc) {
  PlannedJob job;
  ASSIGN_OR_RETURN(std::string api, in.String(doc, "apiVersion", "apiVersion"));
  if (api != "phalanx.dev/v1alpha1") {
    return in.Error(doc["apiVersion"], "apiVersion",
                    absl::StrCat("want phalanx.dev/v1alpha1, got \"", api, "\""));
  }
  ASSIGN_OR_RETURN(YAML::Node metadata, in.Map(doc, "metadata", "metadata", true));
  ASSIGN_OR_RETURN(job.name, in.String(metadata, "name", "metadata.name"));
  ASSIGN_OR_RETURN(job.namespace_name,
                   in.String(metadata, "namespace", "metadata.namespace", "default"));
  ASSIGN_OR_RETURN(YAML::Node spec, in.Map(doc, "spec", "spec", true));
  ASSIGN_OR_RETURN(job.queue_name, in.String(spec, "queueName", "spec.queueName", ""));
  placement::GangRequest& r = job.request;
  r.job = absl::StrCat(job.namespace_name, "/", job.name);
  ASSIGN_OR_RETURN(int64_t replicas, in.Int(spec, "replicas", "spec.replicas"));
  // Sizes are int32 in the CRD; clamping keeps an absurd value an out-of-range message.
  auto size = [](int64_t v) {
    return static_cast<int32_t>(std::clamp<int64_t>(v, -1, int64_t{kMaxReplicas} + 1));
  };
  r.count = size(replicas);
  ASSIGN_OR_RETURN(int64_t priority, in.Int(spec, "priority", "spec.priority", 0));
  r.priority = static_cast<int32_t>(priority);
  ASSIGN_OR_RETURN(YAML::Node elastic, in.Map(spec, "elastic", "spec.elastic"));
  if (elastic.IsDefined()) {
    ASSIGN_OR_RETURN(int64_t min, in.Int(elastic, "minReplicas", "spec.elastic.minReplicas"));
    ASSIGN_OR_RETURN(int64_t max, in.Int(elastic, "maxReplicas", "spec.elastic.maxReplicas"));
    ASSIGN_OR_RETURN(int64_t step, in.Int(elastic, "step", "spec.elastic.step", 1));
    r.elastic = placement::ElasticRange{size(min), size(max), size(step)};
  }
  std::optional<int32_t> group_size;
  ASSIGN_OR_RETURN(YAML::Node topology, in.Map(spec, "topology", "spec.topology"));
  if (topology.IsDefined()) {
    ASSIGN_OR_RETURN(r.required_level,
                     in.String(topology, "required", "spec.topology.required", ""));
    ASSIGN_OR_RETURN(r.preferred_level,
                     in.String(topology, "preferred", "spec.topology.preferred", ""));
    if (topology["groupSize"].IsDefined()) {
      ASSIGN_OR_RETURN(int64_t value, in.Int(topology, "groupSize", "spec.topology.groupSize"));
      group_size = size(value);
      r.group_size = *group_size;
    }
    ASSIGN_OR_RETURN(r.group_level,
                     in.String(topology, "groupLevel", "spec.topology.groupLevel", ""));
    for (const char* key : {"required", "preferred", "groupLevel"}) {
      if (!topology[key].IsDefined()) continue;
      job.level_origins[absl::StrCat("spec.topology.", key)] =
          absl::StrCat(in.source(), ":", topology[key].Mark().line + 1);
    }
  }
  // The CRD's shape rules, in its words (sim/job_shape.h); the line is the spec's.
  const absl::Status shape = ValidateJobShape(
      JobShape{r.count, r.elastic, r.required_level, r.preferred_level, group_size, r.group_level},
      kTrainingJobFields);
  if (!shape.ok()) return in.Error(spec, "spec", std::string(shape.message()));
  ASSIGN_OR_RETURN(YAML::Node tmpl, in.Map(spec, "template", "spec.template", true));
  ASSIGN_OR_RETURN(YAML::Node pod, in.Map(tmpl, "spec", "spec.template.spec", true));
  ASSIGN_OR_RETURN(r.node_selector,
                   StringMap(in, pod["nodeSelector"], "spec.template.spec.nodeSelector"));
  ASSIGN_OR_RETURN(r.node_affinity, RequiredNodeAffinity(in, pod));
  ASSIGN_OR_RETURN(YAML::Node tolerations,
                   in.Sequence(pod, "tolerations", "spec.template.spec.tolerations"));
  for (size_t i = 0; tolerations.IsDefined() && i < tolerations.size(); ++i) {
    const std::string f = absl::StrCat("spec.template.spec.tolerations[", i, "]");
    placement::Toleration t;
    ASSIGN_OR_RETURN(t.key, in.String(tolerations[i], "key", f + ".key", ""));
    ASSIGN_OR_RETURN(t.op, in.String(tolerations[i], "operator", f + ".operator", "Equal"));
    ASSIGN_OR_RETURN(t.value, in.String(tolerations[i], "value", f + ".value", ""));
    ASSIGN_OR_RETURN(t.effect, in.String(tolerations[i], "effect", f + ".effect", ""));
    if (t.op != "Equal" && t.op != "Exists") {
      return in.Error(tolerations[i]["operator"], f + ".operator", "want Equal or Exists");
    }
    r.tolerations.push_back(std::move(t));
  }
  // As the operator refuses them (kube/api/training_job.cc): constraints placement cannot keep.
  // The pod spec is not schema-checked: any of these may be missing or not a map.
  auto child = [](const YAML::Node& node, const char* key) -> YAML::Node {
    if (!node.IsDefined() || !node.IsMap()) return YAML::Node();
    const YAML::Node found = node[key];
    return found.IsDefined() ? found : YAML::Node();
  };
  // The template's labels, for a pod anti-affinity that keeps its own pods one per node (the one
  // kind modelled: phalanx::OneRankPerNode).
  auto labels_of = [&](const YAML::Node& node) {
    std::map<std::string, std::string> out;
    if (!node.IsDefined() || !node.IsMap()) return out;
    for (const auto& entry : node) {
      if (entry.second.IsScalar()) out[entry.first.as<std::string>()] = entry.second.Scalar();
    }
    return out;
  };
  auto anti_term = [&](const YAML::Node& term) {
    AntiAffinityTermView view;
    if (!term.IsMap()) return std::optional<AntiAffinityTermView>();
    const YAML::Node key = child(term, "topologyKey");
    view.topology_key = key.IsScalar() ? key.Scalar() : "";
    const YAML::Node namespaces = child(term, "namespaces");
    // `child` answers a Null node for a missing key: present means not Null.
    view.beyond_own_namespace = !child(term, "namespaceSelector").IsNull() ||
                                (namespaces.IsSequence() && namespaces.size() > 0);
    view.label_keys = !child(term, "matchLabelKeys").IsNull() ||
                      !child(term, "mismatchLabelKeys").IsNull();
    const YAML::Node selector = child(term, "labelSelector");
    view.has_selector = selector.IsMap();
    view.match_labels = labels_of(child(selector, "matchLabels"));
    const YAML::Node exprs = child(selector, "matchExpressions");
    for (size_t i = 0; exprs.IsSequence() && i < exprs.size(); ++i) {
      if (!exprs[i].IsMap()) return std::optional<AntiAffinityTermView>();
      AntiAffinityTermView::Expression& e = view.match_expressions.emplace_back();
      const YAML::Node k = child(exprs[i], "key"), op = child(exprs[i], "operator");
      e.key = k.IsScalar() ? k.Scalar() : "";
      e.op = op.IsScalar() ? op.Scalar() : "";
      const YAML::Node values = child(exprs[i], "values");
      for (size_t j = 0; values.IsSequence() && j < values.size(); ++j) {
        if (values[j].IsScalar()) e.values.push_back(values[j].Scalar());
      }
    }
    return std::optional<AntiAffinityTermView>(std::move(view));
  };
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    const YAML::Node required = child(child(child(pod, "affinity"), kind),
                                      "requiredDuringSchedulingIgnoredDuringExecution");
    if (!required.IsSequence() || required.size() == 0) continue;
    const std::string field = absl::StrCat("spec.template.spec.affinity.", kind,
                                           ".requiredDuringSchedulingIgnoredDuringExecution");
    if (std::string_view(kind) == "podAffinity") {
      return in.Error(required, field, UnmodelledSchedulingProblem(field).substr(field.size() + 2));
    }
    // The pods carry the template's labels and the job label the operator adds.
    std::map<std::string, std::string> labels = labels_of(child(child(tmpl, "metadata"),
                                                                "labels"));
    labels.emplace(std::string(kJobLabel), job.name);
    for (size_t i = 0; i < required.size(); ++i) {
      const std::optional<AntiAffinityTermView> term = anti_term(required[i]);
      if (term && OneRankPerNode(*term, labels)) continue;
      const std::string at = absl::StrCat(field, "[", i, "]");
      return in.Error(required[i], at, UnmodelledSchedulingProblem(at).substr(at.size() + 2));
    }
    r.max_pods_per_node = 1;
  }
  const YAML::Node spread = child(pod, "topologySpreadConstraints");
  for (size_t i = 0; spread.IsSequence() && i < spread.size(); ++i) {
    const YAML::Node when = child(spread[i], "whenUnsatisfiable");
    if (!when.IsScalar() || when.Scalar() != "DoNotSchedule") continue;
    const std::string field = absl::StrCat("spec.template.spec.topologySpreadConstraints[", i, "]");
    return in.Error(spread[i], field, UnmodelledSchedulingProblem(field).substr(field.size() + 2));
  }
  ASSIGN_OR_RETURN(YAML::Node containers,
                   in.Sequence(pod, "containers", "spec.template.spec.containers", true));
  if (containers.size() == 0) {
    return in.Error(containers, "spec.template.spec.containers", "needs at least one container");
  }
  for (size_t i = 0; i < containers.size(); ++i) {
    const std::string f = absl::StrCat("spec.template.spec.containers[", i, "].resources");
    // The CRD keeps the pod template's fields unchecked, so a container or its resources may
    // be anything here: read them as maps or say which field is not one.
    ASSIGN_OR_RETURN(const YAML::Node resources, in.Map(containers[i], "resources", f));
    ASSIGN_OR_RETURN(auto requests, StringMap(in, resources["requests"], f + ".requests"));
    ASSIGN_OR_RETURN(auto limits, StringMap(in, resources["limits"], f + ".limits"));
    // As the operator refuses it (kube/api/training_job.cc): every pod would be refused.
    const std::string unequal = NonOvercommitLimitProblem(requests, limits, f + ".limits");
    if (!unequal.empty()) return in.Error(resources, f, unequal);
    for (const auto& [name, value] : limits) requests.emplace(name, value);  // requests win
    absl::StatusOr<ResourceList> list = ParseResourceList(requests, f + ".requests");
    if (!list.ok()) return in.Error(resources, f, std::string(list.status().message()));
    AddTo(r.per_pod, *list);
  }
  return job;
}

}  // namespace

namespace {

// Lists inside lists deeper than this are refused rather than walked.
constexpr int kMaxListDepth = 8;

// The TrainingJobs of `doc`, appended to `jobs`: the document itself, or every item of a
// `kind: List` (apiVersion v1), which kubectl apply unpacks as if each item were a document of
// the file. Other kinds are skipped. Items keep their lines in the file.
absl::Status CollectTrainingJobs(const YamlReader& in, const YAML::Node& doc, int depth,
                                 std::vector<PlannedJob>& jobs) {
  if (!doc.IsMap()) return absl::OkStatus();
  const YAML::Node kind = doc["kind"];
  if (!kind.IsDefined() || !kind.IsScalar()) return absl::OkStatus();
  if (kind.Scalar() == "TrainingJob") {
    RETURN_IF_ERROR(CheckAgainstCrd(doc, in.source()));
    ASSIGN_OR_RETURN(PlannedJob job, FromDocument(in, doc));
    job.source = in.source();
    jobs.push_back(std::move(job));
  } else if (kind.Scalar() == "List") {
    ASSIGN_OR_RETURN(std::string api, in.String(doc, "apiVersion", "apiVersion"));
    if (api != "v1") {
      return in.Error(doc["apiVersion"], "apiVersion",
                      absl::StrCat("a List is v1, got \"", api, "\""));
    }
    if (depth >= kMaxListDepth) {
      return in.Error(doc, "items", absl::StrCat("Lists nested deeper than ", kMaxListDepth));
    }
    ASSIGN_OR_RETURN(YAML::Node items, in.Sequence(doc, "items", "items"));
    for (size_t i = 0; items.IsDefined() && i < items.size(); ++i) {
      RETURN_IF_ERROR(CollectTrainingJobs(in, items[i], depth + 1, jobs));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<PlannedJob>> ParseTrainingJobs(const std::string& text,
                                                          const std::string& source) {
  ASSIGN_OR_RETURN(std::vector<YAML::Node> docs, LoadAllYamlText(text, source));
  YamlReader in(source);
  std::vector<PlannedJob> jobs;
  for (const YAML::Node& doc : docs) RETURN_IF_ERROR(CollectTrainingJobs(in, doc, 0, jobs));
  if (jobs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": kind: no TrainingJob document found"));
  }
  return jobs;
}

absl::StatusOr<std::vector<PlannedJob>> LoadTrainingJobs(const std::string& path) {
  const bool from_stdin = path == "-";
  const std::string source = from_stdin ? kStandardInputName : path;
  ASSIGN_OR_RETURN(std::string text,
                   ReadInputFile(source, from_stdin ? StandardInput() : RealFiles()));
  return ParseTrainingJobs(text, source);
}

}  // namespace phalanx::sim
