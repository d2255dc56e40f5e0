#include "operator/controller/pod_builder.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/api_labels.h"
#include "common/fnv.h"
#include "common/quantity.h"
#include "common/status.h"
#include "fmt/format.h"
#include "kube/errors.h"
#include "kube/json.h"
#include "rapidjson/document.h"

namespace phalanx::controller {
namespace {

using rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;
using EnvList = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view kGpuResource = "nvidia.com/gpu";

absl::Status Invalid(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, problem));
}

Value* Find(Value& object, std::string_view key) {
  auto it = object.FindMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
  return it == object.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
}

void Remove(Value& object, std::string_view key) {
  object.RemoveMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size())));
}

// parent[key] as an object or array (`type`), created empty when absent. Unlike
// kube::ObjectMember it refuses to replace a member of another type: that would silently drop
// what the user wrote.
absl::StatusOr<Value*> MemberAt(Value& parent, std::string_view key, rapidjson::Type type,
                                std::string_view field, Alloc& alloc) {
  if (Value* v = Find(parent, key); v != nullptr) {
    if (v->GetType() != type) {
      return Invalid(field, type == rapidjson::kArrayType ? "not an array" : "not an object");
    }
    return v;
  }
  kube::SetMember(parent, key, Value(type), alloc);
  return Find(parent, key);
}

absl::StatusOr<Value*> ObjectAt(Value& parent, std::string_view key, std::string_view field,
                                Alloc& alloc) {
  return MemberAt(parent, key, rapidjson::kObjectType, field, alloc);
}

absl::StatusOr<Value*> ArrayAt(Value& parent, std::string_view key, std::string_view field,
                               Alloc& alloc) {
  return MemberAt(parent, key, rapidjson::kArrayType, field, alloc);
}

absl::Status CheckStringMap(const Value& map, std::string_view field) {
  if (!map.IsObject()) return Invalid(field, "not an object");
  for (const auto& m : map.GetObject()) {
    if (!m.value.IsString()) {
      return Invalid(fmt::format("{}[{}]", field, m.name.GetString()), "not a string");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckIdentity(const kube::TrainingJob& job) {
  if (job.meta.name.empty()) return Invalid("metadata.name", "required");
  if (job.meta.namespace_.empty()) return Invalid("metadata.namespace", "required");
  // The API server rejects an owner reference without a uid.
  if (job.meta.uid.empty()) return Invalid("metadata.uid", "required for the owner reference");
  return absl::OkStatus();
}

absl::Status CheckPort(int32_t port) {
  if (port < 1 || port > 65535) {
    return Invalid("master port", fmt::format("{} is outside 1..65535", port));
  }
  return absl::OkStatus();
}

// metadata.labels[phalanx.dev/job] and the owner reference every object of the gang carries.
void SetOwnership(const kube::TrainingJob& job, Value& meta, Alloc& alloc) {
  Value& labels = kube::ObjectMember(meta, "labels", alloc);
  kube::SetMember(labels, kJobLabel, kube::JsonString(job.meta.name, alloc), alloc);
  Value ref(rapidjson::kObjectType);
  ref.AddMember("apiVersion", kube::JsonString(kApiVersion, alloc), alloc);
  ref.AddMember("kind", kube::JsonString(kube::kTrainingJobKind, alloc), alloc);
  ref.AddMember("name", kube::JsonString(job.meta.name, alloc), alloc);
  ref.AddMember("uid", kube::JsonString(job.meta.uid, alloc), alloc);
  ref.AddMember("controller", true, alloc);
  // Foreground deletion of the job waits for its pods (and the Service) to be gone.
  ref.AddMember("blockOwnerDeletion", true, alloc);
  Value refs(rapidjson::kArrayType);
  refs.PushBack(ref, alloc);
  kube::SetMember(meta, "ownerReferences", std::move(refs), alloc);
}

// One resources.requests/limits entry in whole units.
absl::StatusOr<int64_t> WholeUnits(const Value& amount, std::string_view field) {
  if (amount.IsInt64()) {
    if (amount.GetInt64() < 0) return Invalid(field, "negative");
    return amount.GetInt64();
  }
  if (!amount.IsString()) return Invalid(field, "not a quantity");
  absl::StatusOr<Quantity> q =
      Quantity::Parse(std::string_view(amount.GetString(), amount.GetStringLength()));
  if (!q.ok()) return Annotate(q.status(), field);
  if (q->IsNegative() || !q->IsWhole()) {
    return Invalid(field, "not a whole, non-negative number of devices");
  }
  return q->Value();
}

// GPUs of one pod: each container's nvidia.com/gpu request, else its limit (the API server
// defaults a missing extended-resource request to the limit, but a TrainingJob's template is
// not defaulted), summed over the containers. Init containers and sidecars run no ranks.
absl::StatusOr<int64_t> GpusPerPod(const Value& containers, std::string_view field) {
  int64_t total = 0;
  for (rapidjson::SizeType i = 0; i < containers.Size(); ++i) {
    const Value& c = containers[i];
    if (!c.IsObject()) continue;  // InjectEnv names it
    auto resources = c.FindMember("resources");
    if (resources == c.MemberEnd() || !resources->value.IsObject()) continue;
    for (const char* kind : {"requests", "limits"}) {
      auto list = resources->value.FindMember(kind);
      if (list == resources->value.MemberEnd() || !list->value.IsObject()) continue;
      auto gpu = list->value.FindMember(
          Value(kGpuResource.data(), static_cast<rapidjson::SizeType>(kGpuResource.size())));
      if (gpu == list->value.MemberEnd()) continue;
      ASSIGN_OR_RETURN(int64_t n,
                       WholeUnits(gpu->value, fmt::format("{}[{}].resources.{}[{}]", field, i,
                                                          kind, kGpuResource)));
      total += n;
      break;
    }
  }
  return total;
}

// The env every container of `rank` gets, in this order (user entries follow, so they may refer
// to these as $(MASTER_ADDR)). Values follow Kubeflow so that a PyTorchJob's torchrun command
// runs unchanged:
//  * kubeflow/training-operator pkg/controller.v1/pytorch/envvar.go (setPodEnv): RANK = the pod's
//    index, WORLD_SIZE = replicas x nprocPerNode when nprocPerNode is an integer and replicas
//    otherwise (getNprocPerNodeInt), PET_NPROC_PER_NODE, PET_NODE_RANK = the index, PET_NNODES =
//    replicas, or "min:max" (elastic.go generateEnvNNodes) with PET_RDZV_BACKEND=c10d and
//    PET_RDZV_ENDPOINT = the first pod's host:port for elastic jobs; master.go: MASTER_ADDR and
//    MASTER_PORT.
//  * kubeflow/trainer pkg/runtime/framework/plugins/torch/torch.go also sets PET_MASTER_ADDR and
//    PET_MASTER_PORT; torchrun reads every --x-y option from PET_X_Y, so a bare `torchrun train.py`
//    finds rank 0 without flags.
// NODE_RANK is set too (Lightning and Accelerate read it; docs/operator.md "The env"). Phalanx
// has no separate master replica: rank 0 is the master, so RANK needs no +1 for workers as in
// Kubeflow.
EnvList GangEnv(const kube::TrainingJob& job, const PodContext& ctx, int rank, int64_t gpus) {
  const std::string master =
      fmt::format("{}-0.{}.{}.svc", job.meta.name, job.meta.name, job.meta.namespace_);
  const std::string port = std::to_string(ctx.master_port);
  // Without GPUs Kubeflow's default is "auto", which torchrun turns into os.cpu_count() worker
  // processes on a CPU-only pod: the node's CPUs, not the pod's (Kubeflow Trainer replaced it
  // with the CPU limit for that reason). One process per pod is what a CPU smoke test expects.
  const std::string nproc =
      !ctx.nproc_per_node.empty() ? ctx.nproc_per_node : gpus > 0 ? std::to_string(gpus) : "1";
  int64_t world = ctx.world_size;
  if (int64_t n = 0; absl::SimpleAtoi(nproc, &n) && n > 0 &&
                     n <= std::numeric_limits<int64_t>::max() / world) {
    world *= n;
  }
  std::string nnodes = std::to_string(ctx.world_size);
  if (ctx.elastic) {
    // Widened to include the gang's size: torchrun refuses nodes beyond max, and an elastic gang
    // may have been admitted or grown outside the range in the spec.
    nnodes = fmt::format("{}:{}", std::min(ctx.elastic->min_replicas, ctx.world_size),
                         std::max(ctx.elastic->max_replicas, ctx.world_size));
  }
  const std::string r = std::to_string(rank);
  EnvList env = {{"MASTER_ADDR", master},
                 {"MASTER_PORT", port},
                 {"WORLD_SIZE", std::to_string(world)},
                 {"RANK", r},
                 {"NODE_RANK", r},
                 {"PET_MASTER_ADDR", master},
                 {"PET_MASTER_PORT", port},
                 {"PET_NNODES", nnodes},
                 {"PET_NODE_RANK", r},
                 {"PET_NPROC_PER_NODE", nproc}};
  if (ctx.elastic) {
    env.emplace_back("PET_RDZV_BACKEND", "c10d");
    env.emplace_back("PET_RDZV_ENDPOINT", fmt::format("{}:{}", master, port));
  }
  return env;
}

// The processes per pod a template chooses itself: the literal value of the first
// PET_NPROC_PER_NODE it sets in a container's env ("" if none). Pods without nvidia.com/gpu
// (Trainium, AMD, CPU) have nothing else to count them by, and WORLD_SIZE follows it.
std::string TemplateNprocPerNode(const Value& containers) {
  for (const Value& c : containers.GetArray()) {
    if (!c.IsObject()) continue;
    auto env = c.FindMember("env");
    if (env == c.MemberEnd() || !env->value.IsArray()) continue;
    for (const Value& e : env->value.GetArray()) {
      if (!e.IsObject() || kube::StringMember(e, "name") != "PET_NPROC_PER_NODE") continue;
      const std::string_view value = kube::StringMember(e, "value");
      if (!value.empty()) return std::string(value);
    }
  }
  return "";
}

// Puts `env` first in every container's env list and drops the template's entries of the same
// names (ours win: a stale RANK copied into the template would split the gang).
absl::Status InjectEnv(Value& containers, std::string_view field, const EnvList& env,
                       Alloc& alloc) {
  auto ours = [&env](std::string_view name) {
    return std::any_of(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
  };
  for (rapidjson::SizeType i = 0; i < containers.Size(); ++i) {
    const std::string where = fmt::format("{}[{}]", field, i);
    Value& c = containers[i];
    if (!c.IsObject()) return Invalid(where, "not an object");
    if (kube::StringMember(c, "name").empty()) return Invalid(where + ".name", "required");
    Value merged(rapidjson::kArrayType);
    for (const auto& [name, value] : env) {
      Value entry(rapidjson::kObjectType);
      entry.AddMember("name", kube::JsonString(name, alloc), alloc);
      entry.AddMember("value", kube::JsonString(value, alloc), alloc);
      merged.PushBack(entry, alloc);
    }
    if (Value* user = Find(c, "env"); user != nullptr) {
      if (!user->IsArray()) return Invalid(where + ".env", "not an array");
      for (rapidjson::SizeType j = 0; j < user->Size(); ++j) {
        Value& entry = (*user)[j];
        std::string_view name = kube::StringMember(entry, "name");
        if (name.empty()) return Invalid(fmt::format("{}.env[{}].name", where, j), "required");
        if (!ours(name)) merged.PushBack(entry, alloc);  // moves
      }
    }
    kube::SetMember(c, "env", std::move(merged), alloc);
  }
  return absl::OkStatus();
}

absl::Status MergeNodeSelector(Value& spec, const std::map<std::string, std::string>& labels,
                               Alloc& alloc) {
  if (labels.empty()) return absl::OkStatus();
  constexpr std::string_view kField = "spec.template.spec.nodeSelector";
  ASSIGN_OR_RETURN(Value * selector, ObjectAt(spec, "nodeSelector", kField, alloc));
  RETURN_IF_ERROR(CheckStringMap(*selector, kField));
  for (const auto& [key, value] : labels) {
    if (Value* have = Find(*selector, key); have != nullptr) {
      std::string_view wanted(have->GetString(), have->GetStringLength());
      if (wanted != value) {
        // Overriding either side would run the pod off the flavor's nodes or against the
        // user's intent. Kueue's podset.Merge refuses the same conflict.
        return Invalid(fmt::format("{}[{}]", kField, key),
                       fmt::format("\"{}\" conflicts with the NodeFlavor's node label {}={}",
                                   wanted, key, value));
      }
      continue;
    }
    selector->AddMember(kube::JsonString(key, alloc), kube::JsonString(value, alloc), alloc);
  }
  return absl::OkStatus();
}

bool SameToleration(const Value& have, const kube::Toleration& t) {
  if (!have.IsObject() || have.HasMember("tolerationSeconds")) return false;
  std::string_view op = kube::StringMember(have, "operator");
  std::string_view want_op = t.operator_;
  return kube::StringMember(have, "key") == t.key.view() &&
         (op.empty() ? "Equal" : op) == (want_op.empty() ? "Equal" : want_op) &&
         kube::StringMember(have, "value") == t.value.view() &&
         kube::StringMember(have, "effect") == t.effect.view();
}

// Appends the flavor's tolerations, skipping ones the template already has (as Kueue does).
absl::Status AppendTolerations(Value& spec, const std::vector<kube::Toleration>& tolerations,
                               Alloc& alloc) {
  if (tolerations.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(Value * list,
                   ArrayAt(spec, "tolerations", "spec.template.spec.tolerations", alloc));
  for (const kube::Toleration& t : tolerations) {
    if (std::any_of(list->Begin(), list->End(),
                    [&](const Value& have) { return SameToleration(have, t); })) {
      continue;
    }
    Value entry(rapidjson::kObjectType);
    auto add = [&](const char* name, std::string_view text) {
      if (!text.empty()) entry.AddMember(Value(name, alloc), kube::JsonString(text, alloc), alloc);
    };
    add("key", t.key);
    add("operator", t.operator_);
    add("value", t.value);
    add("effect", t.effect);
    list->PushBack(entry, alloc);
  }
  return absl::OkStatus();
}

// Requires `node` by adding matchFields metadata.name In [node] to every term of the required
// node affinity (terms are ORed, so each must carry it), or to a new term when there are none.
absl::Status RequireNode(Value& spec, std::string_view node, Alloc& alloc) {
  constexpr std::string_view kField = "spec.template.spec.affinity";
  ASSIGN_OR_RETURN(Value * affinity, ObjectAt(spec, "affinity", kField, alloc));
  ASSIGN_OR_RETURN(Value * node_affinity, ObjectAt(*affinity, "nodeAffinity",
                                                   fmt::format("{}.nodeAffinity", kField), alloc));
  const std::string required_field =
      fmt::format("{}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", kField);
  ASSIGN_OR_RETURN(Value * required,
                   ObjectAt(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution",
                            required_field, alloc));
  const std::string terms_field = required_field + ".nodeSelectorTerms";
  ASSIGN_OR_RETURN(Value * terms, ArrayAt(*required, "nodeSelectorTerms", terms_field, alloc));
  if (terms->Empty()) terms->PushBack(Value(rapidjson::kObjectType), alloc);
  for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
    const std::string term_field = fmt::format("{}[{}]", terms_field, i);
    if (!(*terms)[i].IsObject()) return Invalid(term_field, "not an object");
    ASSIGN_OR_RETURN(Value * fields, ArrayAt((*terms)[i], "matchFields",
                                             term_field + ".matchFields", alloc));
    Value requirement(rapidjson::kObjectType);
    requirement.AddMember("key", "metadata.name", alloc);
    requirement.AddMember("operator", "In", alloc);
    Value values(rapidjson::kArrayType);
    values.PushBack(kube::JsonString(node, alloc), alloc);
    requirement.AddMember("values", values, alloc);
    fields->PushBack(requirement, alloc);
  }
  return absl::OkStatus();
}

// Narrows every required pod anti-affinity term (the job has only terms that keep its own pods
// one per node: phalanx::OneRankPerNode) to this job's pods of this restart, by adding the job
// and restart labels to its labelSelector.matchLabels: the rule placement modelled is "one rank
// per node", and other pods that carry the template's labels (another job's, or this job's
// previous generation while it terminates) must not make kube-scheduler refuse a reserved node.
absl::Status NarrowAntiAffinity(Value& spec, std::string_view job, int32_t restart, Alloc& alloc) {
  auto member = [](Value* v, const char* key) -> Value* {
    return v != nullptr && v->IsObject() && v->HasMember(key) ? &(*v)[key] : nullptr;
  };
  Value* required = member(member(member(&spec, "affinity"), "podAntiAffinity"),
                           "requiredDuringSchedulingIgnoredDuringExecution");
  if (required == nullptr) return absl::OkStatus();
  Value& terms = *required;
  const std::string field =
      "spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  if (!terms.IsArray()) return Invalid(field, "not an array");
  for (rapidjson::SizeType i = 0; i < terms.Size(); ++i) {
    const std::string term_field = fmt::format("{}[{}]", field, i);
    if (!terms[i].IsObject()) return Invalid(term_field, "not an object");
    ASSIGN_OR_RETURN(Value * selector, ObjectAt(terms[i], "labelSelector",
                                                term_field + ".labelSelector", alloc));
    ASSIGN_OR_RETURN(Value * labels, ObjectAt(*selector, "matchLabels",
                                              term_field + ".labelSelector.matchLabels", alloc));
    kube::SetMember(*labels, kJobLabel, kube::JsonString(job, alloc), alloc);
    kube::SetMember(*labels, kRestartLabel, kube::JsonString(std::to_string(restart), alloc),
                    alloc);
  }
  return absl::OkStatus();
}

absl::Status CheckContext(const PodContext& ctx, int rank) {
  if (ctx.world_size < 1) {
    return Invalid("world size", fmt::format("{} (want at least 1 pod)", ctx.world_size));
  }
  if (rank < 0 || rank >= ctx.world_size) {
    return Invalid("rank", fmt::format("{} is outside [0, {})", rank, ctx.world_size));
  }
  RETURN_IF_ERROR(CheckPort(ctx.master_port));
  if (ctx.restart < 0) return Invalid("restart", fmt::format("{} is negative", ctx.restart));
  if (ctx.elastic &&
      (ctx.elastic->min_replicas < 1 || ctx.elastic->min_replicas > ctx.elastic->max_replicas)) {
    return Invalid("elastic range", fmt::format("{}:{} is not a range", ctx.elastic->min_replicas,
                                                ctx.elastic->max_replicas));
  }
  if (!ctx.nodes.empty()) {
    if (static_cast<int>(ctx.nodes.size()) <= rank) {
      return Invalid("nodes",
                     fmt::format("{} nodes reserved, none for rank {}", ctx.nodes.size(), rank));
    }
    if (ctx.nodes[rank].empty()) return Invalid(fmt::format("nodes[{}]", rank), "empty");
  }
  return absl::OkStatus();
}

}  // namespace

std::string RankPodName(std::string_view job, int rank) {
  return fmt::format("{}-{}", job, rank);
}

absl::StatusOr<std::string> BuildPod(const kube::TrainingJob& job, const PodContext& ctx,
                                     int rank) {
  RETURN_IF_ERROR(CheckIdentity(job));
  RETURN_IF_ERROR(CheckContext(ctx, rank));
  absl::StatusOr<rapidjson::Document> tmpl = kube::ParseJson(job.template_json);
  if (!tmpl.ok()) return Annotate(tmpl.status(), "spec.template");
  if (!tmpl->IsObject()) return Invalid("spec.template", "not an object");

  const std::string name = RankPodName(job.meta.name, rank);
  rapidjson::Document pod = kube::NewApiObject("v1", "Pod", name, job.meta.namespace_);
  Alloc& alloc = pod.GetAllocator();
  Value& meta = pod["metadata"];

  // Metadata: the template's labels and annotations, then ours over them.
  if (Value* tmeta = Find(*tmpl, "metadata"); tmeta != nullptr) {
    if (!tmeta->IsObject()) return Invalid("spec.template.metadata", "not an object");
    for (const char* key : {"labels", "annotations"}) {
      if (Value* map = Find(*tmeta, key); map != nullptr) {
        RETURN_IF_ERROR(CheckStringMap(*map, fmt::format("spec.template.metadata.{}", key)));
        meta.AddMember(Value(key, alloc), Value(*map, alloc), alloc);
      }
    }
  }
  SetOwnership(job, meta, alloc);
  Value& labels = meta["labels"];
  kube::SetMember(labels, kRankLabel, kube::JsonString(std::to_string(rank), alloc), alloc);
  kube::SetMember(labels, kRestartLabel, kube::JsonString(std::to_string(ctx.restart), alloc),
                  alloc);

  Value* tspec = Find(*tmpl, "spec");
  if (tspec == nullptr || !tspec->IsObject()) {
    return Invalid("spec.template.spec", "missing or not an object");
  }
  pod.AddMember("spec", Value(*tspec, alloc), alloc);
  Value& spec = pod["spec"];

  if (Find(spec, "nodeName") != nullptr) {
    return Invalid("spec.template.spec.nodeName", "must not be set; Phalanx places the pods");
  }
  Value* containers = Find(spec, "containers");
  if (containers == nullptr || !containers->IsArray() || containers->Empty()) {
    return Invalid("spec.template.spec.containers", "at least one container is required");
  }
  ASSIGN_OR_RETURN(int64_t gpus, GpusPerPod(*containers, "spec.template.spec.containers"));
  PodContext context = ctx;
  if (context.nproc_per_node.empty()) context.nproc_per_node = TemplateNprocPerNode(*containers);
  const EnvList env = GangEnv(job, context, rank, gpus);
  RETURN_IF_ERROR(InjectEnv(*containers, "spec.template.spec.containers", env, alloc));
  // Init containers and sidecars get the env too: a step that waits for rank 0's DNS name or
  // stages this rank's shard needs it, and it costs the others nothing. (Kubeflow sets it on
  // the main containers only.)
  if (Value* init = Find(spec, "initContainers"); init != nullptr) {
    if (!init->IsArray()) return Invalid("spec.template.spec.initContainers", "not an array");
    RETURN_IF_ERROR(InjectEnv(*init, "spec.template.spec.initContainers", env, alloc));
  }

  kube::SetMember(spec, "schedulerName", kube::JsonString(kSchedulerName, alloc), alloc);
  // hostname.subdomain is the pod's DNS name under the headless Service of the same name.
  kube::SetMember(spec, "hostname", kube::JsonString(name, alloc), alloc);
  kube::SetMember(spec, "subdomain", kube::JsonString(job.meta.name, alloc), alloc);

  // A failed pod is the job controller's signal to restart the whole gang, so the kubelet must
  // not restart it in place behind the controller's back; OnFailure is the user's explicit
  // choice to retry a rank locally first. Always never lets a rank finish.
  std::string_view restart_policy = kube::StringMember(spec, "restartPolicy");
  if (restart_policy.empty()) {
    kube::SetMember(spec, "restartPolicy", Value("Never"), alloc);
  } else if (restart_policy != "Never" && restart_policy != "OnFailure") {
    return Invalid("spec.template.spec.restartPolicy",
                   fmt::format("\"{}\" (want Never or OnFailure: a gang pod must be able to "
                               "finish)",
                               restart_policy));
  }

  if (!job.priority_class_name.empty()) {
    kube::SetMember(spec, "priorityClassName", kube::JsonString(job.priority_class_name, alloc),
                    alloc);
    // The Priority admission plugin derives both from the class and rejects a pod whose own
    // values differ ("the integer value of priority (N) must not be provided in pod spec").
    // For the same reason spec.priority of the job (an admission-order override) is not copied.
    Remove(spec, "priority");
    Remove(spec, "preemptionPolicy");
  }
  RETURN_IF_ERROR(MergeNodeSelector(spec, ctx.node_labels, alloc));
  RETURN_IF_ERROR(AppendTolerations(spec, ctx.tolerations, alloc));
  if (job.max_pods_per_node > 0) {
    RETURN_IF_ERROR(NarrowAntiAffinity(spec, job.meta.name, ctx.restart, alloc));
  }
  if (!ctx.nodes.empty()) {
    RETURN_IF_ERROR(RequireNode(spec, ctx.nodes[rank], alloc));
    Value& annotations = kube::ObjectMember(pod["metadata"], "annotations", alloc);
    kube::SetMember(annotations, kNodeAnnotation, kube::JsonString(ctx.nodes[rank], alloc), alloc);
  }
  return kube::ToJson(pod);
}

absl::StatusOr<std::string> BuildHeadlessService(const kube::TrainingJob& job,
                                                 int32_t master_port) {
  RETURN_IF_ERROR(CheckIdentity(job));
  RETURN_IF_ERROR(CheckPort(master_port));
  rapidjson::Document service =
      kube::NewApiObject("v1", "Service", job.meta.name, job.meta.namespace_);
  Alloc& alloc = service.GetAllocator();
  SetOwnership(job, service["metadata"], alloc);

  Value spec(rapidjson::kObjectType);
  spec.AddMember("clusterIP", "None", alloc);
  // No selector: the operator writes the Service's EndpointSlices (BuildEndpointSlices).
  spec.AddMember("publishNotReadyAddresses", true, alloc);
  Value port(rapidjson::kObjectType);
  port.AddMember("name", "master", alloc);
  port.AddMember("protocol", "TCP", alloc);
  port.AddMember("port", master_port, alloc);
  port.AddMember("targetPort", master_port, alloc);
  Value ports(rapidjson::kArrayType);
  ports.PushBack(port, alloc);
  spec.AddMember("ports", ports, alloc);
  service.AddMember("spec", spec, alloc);
  return kube::ToJson(service);
}

absl::StatusOr<std::vector<EndpointSliceBody>> BuildEndpointSlices(const kube::TrainingJob& job,
                                                                   std::vector<RankAddress> ranks,
                                                                   int32_t master_port) {
  RETURN_IF_ERROR(CheckIdentity(job));
  RETURN_IF_ERROR(CheckPort(master_port));
  std::sort(ranks.begin(), ranks.end(),
            [](const RankAddress& a, const RankAddress& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].rank == ranks[i - 1].rank) {
      return Invalid("ranks", fmt::format("rank {} is given twice", ranks[i].rank));
    }
  }
  // The uid's first letters and digits tell this job's slices from a same-named predecessor's.
  std::string uid_prefix;
  for (char c : job.meta.uid) {
    if (uid_prefix.size() == 8) break;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) uid_prefix.push_back(c);
  }
  // (address type, slice index) -> ranks, in rank order.
  std::map<std::pair<std::string_view, int32_t>, std::vector<const RankAddress*>> groups;
  for (const RankAddress& r : ranks) {
    if (r.ip.empty()) continue;
    const std::string_view family = r.ip.find(':') == std::string::npos ? "IPv4" : "IPv6";
    groups[{family, r.rank / kRanksPerEndpointSlice}].push_back(&r);
  }
  std::vector<EndpointSliceBody> slices;
  for (const auto& [group, members] : groups) {
    const auto& [family, index] = group;
    std::string name = fmt::format("{}-{}-{}-{}", job.meta.name, uid_prefix,
                                   family == "IPv4" ? "ipv4" : "ipv6", index);
    rapidjson::Document slice =
        kube::NewApiObject("discovery.k8s.io/v1", "EndpointSlice", name, job.meta.namespace_);
    Alloc& alloc = slice.GetAllocator();
    Value& meta = slice["metadata"];
    SetOwnership(job, meta, alloc);
    Value& labels = kube::ObjectMember(meta, "labels", alloc);
    kube::SetMember(labels, "kubernetes.io/service-name", kube::JsonString(job.meta.name, alloc),
                    alloc);
    kube::SetMember(labels, "endpointslice.kubernetes.io/managed-by",
                    kube::JsonString(kEndpointSliceManagedBy, alloc), alloc);
    slice.AddMember("addressType", kube::JsonString(family, alloc), alloc);
    Value port(rapidjson::kObjectType);
    port.AddMember("name", "master", alloc);
    port.AddMember("protocol", "TCP", alloc);
    port.AddMember("port", master_port, alloc);
    Value ports(rapidjson::kArrayType);
    ports.PushBack(port, alloc);
    slice.AddMember("ports", ports, alloc);
    Value endpoints(rapidjson::kArrayType);
    for (const RankAddress* r : members) {
      Value endpoint(rapidjson::kObjectType);
      Value addresses(rapidjson::kArrayType);
      addresses.PushBack(kube::JsonString(r->ip, alloc), alloc);
      endpoint.AddMember("addresses", addresses, alloc);
      // publishNotReadyAddresses: kube-controller-manager marks every such address ready.
      Value conditions(rapidjson::kObjectType);
      conditions.AddMember("ready", true, alloc);
      conditions.AddMember("serving", true, alloc);
      conditions.AddMember("terminating", false, alloc);
      endpoint.AddMember("conditions", conditions, alloc);
      // The pod's spec.hostname (BuildPod): the name DNS gives the rank under the Service.
      endpoint.AddMember(
          "hostname", kube::JsonString(RankPodName(job.meta.name, r->rank), alloc), alloc);
      if (!r->node.empty()) endpoint.AddMember("nodeName", kube::JsonString(r->node, alloc), alloc);
      Value target(rapidjson::kObjectType);
      target.AddMember("kind", "Pod", alloc);
      target.AddMember("namespace", kube::JsonString(job.meta.namespace_, alloc), alloc);
      target.AddMember("name", kube::JsonString(r->pod, alloc), alloc);
      if (!r->uid.empty()) target.AddMember("uid", kube::JsonString(r->uid, alloc), alloc);
      endpoint.AddMember("targetRef", target, alloc);
      endpoints.PushBack(endpoint, alloc);
    }
    slice.AddMember("endpoints", endpoints, alloc);
    // Over the slice as written so far: name, owner, labels and every endpoint.
    std::string hash = fmt::format("{:016x}", Fnv1a64(kube::ToJson(slice)));
    Value& annotations = kube::ObjectMember(meta, "annotations", alloc);
    kube::SetMember(annotations, kEndpointsHashAnnotation, kube::JsonString(hash, alloc), alloc);
    slices.push_back({.name = std::move(name), .json = kube::ToJson(slice), .hash = std::move(hash)});
  }
  return slices;
}

std::string TemplateDecodingError(std::string_view api_message) {
  constexpr std::string_view kStrict = "strict decoding error: ";
  std::string_view fields = api_message;
  if (size_t at = fields.find(kStrict); at != std::string_view::npos) {
    fields.remove_prefix(at + kStrict.size());
  }
  // Every field of the pod the template did not give is one the operator writes, and known.
  std::string named = absl::StrReplaceAll(
      std::string(fields), {{"field \"spec.", "field \"spec.template.spec."},
                            {"field \"metadata.", "field \"spec.template.metadata."}});
  return "spec.template: " + named;
}

TemplateVerdict JudgePodDryRun(const absl::Status& status) {
  using Kind = TemplateVerdict::Kind;
  if (status.ok() || absl::IsAlreadyExists(status)) return {};
  if (kube::IsStrictDecodingError(status)) {
    return {Kind::kRefused, TemplateDecodingError(std::string(status.message()))};
  }
  // The pod's fields as the job's: the template gave every field that can be invalid but the
  // ones the operator writes, which are valid.
  auto as_job_fields = [](std::string_view text) {
    std::string named(text);
    if (named.starts_with("spec.") || named.starts_with("metadata.")) {
      named = "spec.template." + named;
    }
    return named;
  };
  if (kube::IsInvalid(status)) {
    std::optional<kube::KubeError> error = kube::KubeErrorOf(status);
    if (error.has_value() && !error->causes.empty()) {
      std::vector<std::string> causes;
      for (const std::string& cause : error->causes) causes.push_back(as_job_fields(cause));
      return {Kind::kRefused, absl::StrJoin(causes, "; ")};
    }
    return {Kind::kRefused, std::string(status.message())};
  }
  if (kube::IsForbidden(status) && !kube::IsNamespaceTerminating(status)) {
    // Refusals the operator reports itself, in its own words, where they belong: a
    // ResourceQuota's ("exceeded quota", "failed quota") and a LimitRange's max, min or ratio
    // (plugin/pkg/admission/limitranger: "maximum cpu usage per Container is 2, but limit is
    // 4") hold the job back in the admission controller, named; the operator's own RBAC
    // missing is an install problem the pods' creates record as a Forbidden event, not the
    // job's fault.
    const absl::string_view message = status.message();
    if (absl::StrContains(message, "exceeded quota: ") ||
        absl::StrContains(message, "failed quota: ")) {
      return {Kind::kDeferred, "a ResourceQuota of its namespace"};
    }
    if (absl::StrContains(message, " usage per Container is ") ||
        absl::StrContains(message, " usage per Pod is ") ||
        absl::StrContains(message, " max limit to request ratio per ")) {
      return {Kind::kDeferred, "a LimitRange of its namespace"};
    }
    if (kube::IsAuthorizationDenied(status)) {
      return {Kind::kDeferred, "the operator's RBAC, which does not let it create pods there"};
    }
    // The API server's words, without the client's "POST ...: Forbidden (HTTP 403): ".
    std::string_view words(message.data(), message.size());
    if (size_t at = words.find("(HTTP 403): "); at != std::string_view::npos) {
      words.remove_prefix(at + std::string_view("(HTTP 403): ").size());
    }
    return {Kind::kRefusedForNow, std::string(words)};
  }
  return {};
}

}  // namespace phalanx::controller
