// `phalanx queues|jobs|explain|topology` (also `kubectl phalanx ...`): read-only views of a
// cluster through the kube client, and of a running phalanx-scheduler through the Placement API
// when one is given. This file is the I/O: flags, credentials, API calls, error lines. What is
// printed is cli/cluster_format.h; the topology snapshot is cli/topology_view.h.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cli/cluster_format.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/invariants.h"
#include "cli/scheduler_client.h"
#include "cli/topology_view.h"
#include "common/api_labels.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/text_input.h"
#include "kube/api/resources.h"
#include "kube/api/training_job.h"
#include "kube/config.h"
#include "kube/errors.h"
#include "kube/rest_client.h"
#include "kube/transport_cpprest.h"
#include "scheduler/grpc/placement_grpc_client.h"
#include "scheduler/server/live_snapshot.h"
#include "scheduler/server/topology_loader.h"

namespace phalanx::cli {
namespace {

// `phalanx check` found broken invariants.
constexpr int kExitViolations = 3;

constexpr char kCommonFlags[] =
    R"(  --kubeconfig PATH     kubeconfig to use (default $KUBECONFIG, then ~/.kube/config; inside a
                        pod without either, the service account)
  --context NAME        kubeconfig context (default: its current-context)
  -n, --namespace NS    namespace (default: the context's namespace, else "default")
  --json                one JSON document instead of the table
  --request-timeout S   seconds per API call (default 30))";

constexpr char kExitCodes[] =
    "Exit codes: 0 printed, 1 the cluster or scheduler could not be read (one line on stderr), 2 "
    "bad flags.";

const std::string kQueuesUsage = absl::StrCat(
    R"usage(Usage: phalanx queues [-n NS | -A] [--json]

ClusterTrainingQueues with their cohort, pending and admitted jobs, GPU quota per flavor as
"<flavor> <used>/<nominal> (+<borrowed> borrowed)" and the Active condition; then the
TrainingQueues of the namespace (all namespaces with -A). "-" is a status field nobody wrote yet.

  -A, --all-namespaces  TrainingQueues of every namespace
)usage",
    kCommonFlags, "\n\n", kExitCodes);

const std::string kJobsUsage = absl::StrCat(
    R"usage(Usage: phalanx jobs [-n NS | -A] [--queue Q[,Q]] [--phase P[,P]] [--wide] [--json]

TrainingJobs: queue, phase, admitted/requested replicas, the topology domain the gang was placed
in, restarts, age, and for jobs not admitted the operator's reason (the Queued condition).
Sorted by namespace, then name with numbers in numeric order (job-9 before job-10).

  -A, --all-namespaces  jobs of every namespace
  --queue Q[,Q]         only jobs of these TrainingQueues (spec.queueName)
  --phase P[,P]         only jobs in these phases (Queued, Admitted, Running, Restarting,
                        Suspended, Succeeded, Failed, ...; any case; "-" for no status yet)
  --wide                the whole reason, not cut to 60 characters
)usage",
    kCommonFlags, "\n\n", kExitCodes);

const std::string kExplainUsage = absl::StrCat(
    R"usage(Usage: phalanx explain JOB [-n NS] [--server HOST:PORT] [--events N] [--json]

Why TrainingJob JOB waits, or where it runs: its spec (replicas, per-pod requests, topology),
its status and conditions, its latest Events, and — with a phalanx-scheduler address — the
scheduler's dry run for its gang now (Placement.Explain: where it would go, or why it does not
fit; nothing is reserved).

  --server HOST:PORT    phalanx-scheduler's gRPC address (default $PHALANX_SCHEDULER_GRPC)
  --events N            latest events shown (default 10)
)usage",
    kSchedulerTlsUsage, "\n",
    kCommonFlags, "\n\n", kExitCodes);

const std::string kTopologyUsage = absl::StrCat(
    R"usage(Usage: phalanx topology [--nodes] [--max-level L] [--server HOST:PORT] [--json]
                        [--topology-preset P | --topology NAME]

Free GPUs per topology domain as a tree, coarsest level first. With a scheduler address, from
phalanx-scheduler's live snapshot (Snapshot RPC: it knows every reservation); otherwise built
here from the cluster's nodes, bound pods and TrainingJob status.placement by the scheduler's
own code.

Under a domain, "(N nodes without LEVEL)" counts its nodes that lack the next level's label:
they serve no gang that needs that level.

  --nodes               also list each node under its domain (always read from the cluster)
  --max-level L         deepest level listed: 0 the cluster, 1 the coarsest label level, ...
                        (default: all)
  --topology-preset P   eks | eks-4layer | gb200 (default: phalanx-scheduler's levels when a
                        scheduler address is known, else eks, with a note when the nodes'
                        labels or the TrainingJobs suggest other levels)
  --topology NAME       the levels of phalanx.dev NetworkTopology NAME instead of a preset
  --server HOST:PORT    phalanx-scheduler's gRPC address (default $PHALANX_SCHEDULER_GRPC)
)usage",
    kSchedulerTlsUsage, "\n",
    kCommonFlags, "\n\n", kExitCodes);

const std::string kCheckUsage = absl::StrCat(
    R"usage(Usage: phalanx check [--server HOST:PORT] [--expect-jobs FILE] [--settle S] [--json]

Reads the whole cluster (every TrainingJob, pod and node, and with a scheduler address
phalanx-scheduler's reservations) and checks the invariants Phalanx keeps through faults:

  job_lost              every job named in --expect-jobs still exists (finished is fine)
  admitted_twice        no job with more live pods than admitted replicas, two pods on one rank,
                        a bound pod off its rank's node in status.placement, or bound pods while
                        it is not admitted
  partial_gang          an admitted gang has all its ranks' pods bound, or none
  node_overcommitted    bound pods that have not finished request no more GPUs than the node has
  reservation_orphan    every reservation belongs to an admitted, unfinished job...
  reservation_mismatch  ...on the nodes of its status.placement, rank by rank
  reservation_missing   every admitted, placed, unfinished job holds a reservation

node_overcommitted and job_lost count when seen; the others are states a gang passes through
while it binds, finishes or moves, so with --settle they count only if the same invariant is
still broken on the same object at every read for S seconds (a read a second).

  --server HOST:PORT    phalanx-scheduler's gRPC address (default $PHALANX_SCHEDULER_GRPC);
                        without one the reservation invariants are not checked
  --expect-jobs FILE    "namespace/name" of every job that was created, one per line
  --settle S            seconds a violation must persist to count (default 0: one read)
)usage",
    kSchedulerTlsUsage, "\n",
    kCommonFlags,
    "\n\nExit codes: 0 no violation, 3 violations (listed on stdout), 1 the cluster or scheduler "
    "could not be read, 2 bad flags or file.");

struct Flags {
  std::string kubeconfig;
  std::string context;
  std::string ns;
  bool all_namespaces = false;
  bool json = false;
  int request_timeout_seconds = 30;
  std::vector<std::string> positional;
  // explain, topology, check
  std::string server;
  SchedulerTls tls;
  placement::GrpcClientOptions scheduler;  // deadline and TLS, from the flags
  int events = 10;
  // topology
  std::string topology_preset;  // "" = the scheduler's levels if it can be asked, else eks
  std::string topology;
  bool nodes = false;
  int max_level = -1;
  // check
  std::string expect_jobs;
  int settle_seconds = 0;
  // jobs
  std::vector<std::string> queues;
  std::vector<std::string> phases;
  bool wide = false;
};

// What a command accepts besides the common flags.
struct Accepts {
  bool all_namespaces = false;
  bool server = false;
  bool events = false;
  bool topology = false;
  size_t positional = 0;
  bool check = false;
  bool jobs = false;
};

int Failed(absl::string_view command, const absl::Status& status) {
  std::fprintf(stderr, "phalanx %s: %s\n", std::string(command).c_str(),
               PrintableLines(status.message()).c_str());
  return kExitFailure;
}

// kubectl-style flags ("--name value", "--name=value", "-n value", "-n=value"): the common ones
// and those `accepts` names.
absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& args, const Accepts& accepts) {
  Flags flags;
  if (const char* server = std::getenv("PHALANX_SCHEDULER_GRPC")) flags.server = server;
  FlagSet set;
  set.String({"--kubeconfig"}, &flags.kubeconfig)
      .String({"--context"}, &flags.context)
      .String({"-n", "--namespace"}, &flags.ns)
      .Bool({"--json"}, &flags.json)
      .Int({"--request-timeout"}, &flags.request_timeout_seconds, 1, 86'400);
  if (accepts.all_namespaces) set.Bool({"-A", "--all-namespaces"}, &flags.all_namespaces);
  if (accepts.server) {
    flags.tls = SchedulerTlsFromEnvironment();
    set.String({"--server"}, &flags.server);
    AddSchedulerTlsFlags(set, &flags.tls);
  }
  if (accepts.events) set.Int({"--events"}, &flags.events, 0, 10'000);
  if (accepts.topology) {
    set.Bool({"--nodes"}, &flags.nodes)
        .Int({"--max-level"}, &flags.max_level, 0, 64)
        .Custom({"--topology-preset"},
                [&](const std::string& value) {
                  flags.topology_preset = value;
                  return placement::Topology::Preset(value).ok()
                             ? absl::OkStatus()
                             : absl::InvalidArgumentError(absl::StrCat(
                                   "must be eks, eks-4layer or gb200, got ", Quoted(value)));
                })
        .String({"--topology"}, &flags.topology);
  }
  if (accepts.check) {
    set.String({"--expect-jobs"}, &flags.expect_jobs)
        .Int({"--settle"}, &flags.settle_seconds, 0, 86'400);
  }
  if (accepts.jobs) {
    auto list = [](std::vector<std::string>* out) {
      return [out](const std::string& value) {
        for (absl::string_view v : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
          out->emplace_back(absl::StripAsciiWhitespace(v));
        }
        return out->empty() ? absl::InvalidArgumentError("wants a name, got nothing")
                            : absl::OkStatus();
      };
    };
    set.Custom({"--queue"}, list(&flags.queues))
        .Custom({"--phase"}, list(&flags.phases))
        .Bool({"--wide"}, &flags.wide);
  }
  RETURN_IF_ERROR(set.Parse(args, &flags.positional));
  if (accepts.server) {
    ASSIGN_OR_RETURN(flags.scheduler,
                     SchedulerClientOptions(flags.tls,
                                            std::chrono::seconds(flags.request_timeout_seconds)));
  }
  if (flags.positional.size() != accepts.positional) {
    return absl::InvalidArgumentError(
        accepts.positional == 0
            ? absl::StrCat("unexpected argument ", Quoted(flags.positional[0]))
            : absl::StrCat("wants ", accepts.positional, " argument(s), got ",
                           flags.positional.size()));
  }
  return flags;
}

// The kubeconfig kubectl would use: --kubeconfig, else the first existing file of $KUBECONFIG
// (a colon-separated list; kubectl merges them, we take the first), else ~/.kube/config. Empty
// when there is none.
std::string KubeconfigPath(const Flags& flags) {
  if (!flags.kubeconfig.empty()) return flags.kubeconfig;
  std::error_code error;
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    for (const std::string& path :
         std::vector<std::string>(absl::StrSplit(env, ':', absl::SkipEmpty()))) {
      if (std::filesystem::exists(path, error)) return path;
    }
  }
  if (const char* home = std::getenv("HOME"); home != nullptr) {
    std::string path = absl::StrCat(home, "/.kube/config");
    if (std::filesystem::exists(path, error)) return path;
  }
  return "";
}

// A client of the cluster the flags name, and the namespace they pick.
struct Cluster {
  kube::RestConfig config;
  std::unique_ptr<kube::Transport> transport;
  std::unique_ptr<kube::RestClient> client;
  std::string ns;
};

absl::StatusOr<Cluster> Connect(const Flags& flags) {
  Cluster cluster;
  const std::string path = KubeconfigPath(flags);
  if (!path.empty()) {
    ASSIGN_OR_RETURN(cluster.config, kube::LoadKubeconfig(path, flags.context));
  } else if (std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) {
    ASSIGN_OR_RETURN(cluster.config, kube::LoadInClusterConfig());
  } else {
    return absl::FailedPreconditionError(
        "no kubeconfig: pass --kubeconfig, set KUBECONFIG or create ~/.kube/config");
  }
  cluster.config.user_agent = "phalanx-cli";
  ASSIGN_OR_RETURN(
      cluster.transport,
      kube::NewCpprestTransport(cluster.config,
                                {.request_timeout = absl::Seconds(flags.request_timeout_seconds)}));
  cluster.client = std::make_unique<kube::RestClient>(*cluster.transport);
  cluster.ns = flags.ns.empty() ? cluster.config.default_namespace : flags.ns;
  return cluster;
}

std::string ResourceName(const kube::Resource& resource) {
  return resource.group.empty() ? resource.plural
                                : absl::StrCat(resource.plural, ".", resource.group);
}

// One line for a failed API call, saying what the user can do about it.
std::string Describe(const absl::Status& status, const Cluster& cluster,
                     const kube::Resource& resource) {
  const std::string& server = cluster.config.server;
  if (absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status)) {
    if (!kube::KubeErrorOf(status)) {
      return absl::StrCat("cannot reach the API server ", server, ": ", status.message());
    }
  }
  if (absl::IsNotFound(status) && !resource.group.empty()) {
    return absl::StrCat("the API server ", server, " does not serve ", ResourceName(resource), "/",
                        resource.version,
                        ": are the Phalanx CRDs installed? (kubectl apply --server-side -f crds/)");
  }
  return absl::StrCat("reading ", ResourceName(resource), " at ", server, ": ", status.message());
}

absl::StatusOr<std::vector<std::string>> ListItems(const Cluster& cluster,
                                                   const kube::Resource& resource,
                                                   std::string_view ns,
                                                   const kube::ListOptions& options = {}) {
  absl::StatusOr<kube::ListResult> list = cluster.client->List(resource, ns, options);
  if (!list.ok()) {
    return absl::Status(list.status().code(), Describe(list.status(), cluster, resource));
  }
  return std::move(list->items);
}

// GET one object. A 404 becomes "<Kind> <name> not found" when the resource is served (listing
// tells a missing object from missing CRDs), and the CRD line otherwise.
absl::StatusOr<std::string> GetObject(const Cluster& cluster, const kube::Resource& resource,
                                      const std::string& ns, const std::string& name) {
  absl::StatusOr<std::string> object = cluster.client->Get(resource, ns, name);
  if (absl::IsNotFound(object.status())) {
    RETURN_IF_ERROR(ListItems(cluster, resource, ns, {.limit = 1}).status());
    return absl::NotFoundError(absl::StrCat(resource.kind, " ", name, " not found",
                                            ns.empty() ? "" : " in namespace ", ns));
  }
  if (!object.ok()) {
    return absl::Status(object.status().code(), Describe(object.status(), cluster, resource));
  }
  return object;
}

OutputOptions OutputFor(const Flags& flags, const Cluster* cluster) {
  return {.json = flags.json,
          .all_namespaces = flags.all_namespaces,
          .ns = cluster != nullptr ? cluster->ns : flags.ns,
          .now = absl::Now()};
}

// Parses, connects and runs `body`, turning every error into one line and an exit code.
int Run(absl::string_view command, const std::vector<std::string>& args, const Accepts& accepts,
        const std::function<absl::StatusOr<std::string>(const Flags&)>& body) {
  absl::StatusOr<Flags> flags = ParseFlags(args, accepts);
  if (!flags.ok()) return BadInput(command, flags.status());
  // LiveSnapshot and the kube client log through spdlog: keep stdout for the output.
  (void)InitLogging("warn");
  absl::StatusOr<std::string> out = body(*flags);
  if (!out.ok()) return Failed(command, out.status());
  std::fputs(out->c_str(), stdout);
  return kExitOk;
}

int RunQueues(const std::vector<std::string>& args) {
  return Run("queues", args, {.all_namespaces = true},
             [](const Flags& flags) -> absl::StatusOr<std::string> {
               ASSIGN_OR_RETURN(Cluster cluster, Connect(flags));
               ASSIGN_OR_RETURN(std::vector<std::string> cqs,
                                ListItems(cluster, kube::ClusterTrainingQueues(), ""));
               ASSIGN_OR_RETURN(std::vector<std::string> lqs,
                                ListItems(cluster, kube::TrainingQueues(),
                                          flags.all_namespaces ? "" : cluster.ns));
               return FormatQueues(cqs, lqs, OutputFor(flags, &cluster));
             });
}

int RunJobs(const std::vector<std::string>& args) {
  return Run("jobs", args, {.all_namespaces = true, .jobs = true},
             [](const Flags& flags) -> absl::StatusOr<std::string> {
               ASSIGN_OR_RETURN(Cluster cluster, Connect(flags));
               ASSIGN_OR_RETURN(std::vector<std::string> jobs,
                                ListItems(cluster, kube::TrainingJobs(),
                                          flags.all_namespaces ? "" : cluster.ns));
               OutputOptions options = OutputFor(flags, &cluster);
               options.queues = flags.queues;
               options.phases = flags.phases;
               options.wide = flags.wide;
               return FormatJobs(jobs, options);
             });
}

placement::GrpcPlacementService Scheduler(const Flags& flags) {
  return placement::GrpcPlacementService(flags.server, flags.scheduler);
}

absl::StatusOr<std::string> Explain(const Flags& flags) {
  ASSIGN_OR_RETURN(Cluster cluster, Connect(flags));
  const std::string& name = flags.positional[0];
  ASSIGN_OR_RETURN(std::string job, GetObject(cluster, kube::TrainingJobs(), cluster.ns, name));
  ASSIGN_OR_RETURN(std::vector<std::string> events,
                   ListItems(cluster, kube::Events(), cluster.ns,
                             {.field_selector = absl::StrCat(
                                  "involvedObject.name=", name,
                                  ",involvedObject.kind=", std::string(kube::kTrainingJobKind))}));
  // Without the right to list pods (RBAC), explain still shows the rest and says so.
  const absl::StatusOr<std::vector<std::string>> pods =
      ListItems(cluster, kube::Pods(), cluster.ns,
                {.label_selector = absl::StrCat(std::string(kJobLabel), "=", name)});
  std::optional<PlacementAnswer> answer;
  absl::StatusOr<kube::TrainingJob> readable = kube::DecodeTrainingJob(job);
  if (!readable.ok()) {
    // Its spec cannot be read: what phalanx-operator made of it, and why (FormatExplain).
    return FormatExplain(job, events, pods, std::nullopt, flags.events, OutputFor(flags, &cluster),
                         "", std::nullopt);
  }
  const kube::TrainingJob& decoded = *readable;
  // A placed gang holds its nodes: a dry run would only say where a second copy would go; a
  // finished one needs no nodes any more.
  const bool placed = decoded.status.placement && !decoded.status.placement->nodes.empty();
  if (!flags.server.empty() && !placed && !kube::FinishedPhase(decoded.status.phase)) {
    placement::GangRequest request = scheduler::GangRequestFrom(decoded);
    answer = PlacementAnswer{
        .server = flags.server, .request = request, .result = Scheduler(flags).Place(request)};
  }
  // A pending job's position, from its TrainingQueue's status; nothing if it cannot be read.
  std::string queue;
  if (!decoded.queue_name.empty()) {
    absl::StatusOr<std::string> got =
        GetObject(cluster, kube::TrainingQueues(), cluster.ns, decoded.queue_name);
    if (got.ok()) queue = *std::move(got);
  }
  // The PriorityClasses, for the job's priority as the operator resolves it (a job that names
  // none has the globalDefault one); without the right to list them, the class it names.
  std::optional<std::vector<std::string>> priority_classes;
  if (absl::StatusOr<std::vector<std::string>> got =
          ListItems(cluster, kube::PriorityClasses(), "");
      got.ok()) {
    priority_classes = *std::move(got);
  }
  ASSIGN_OR_RETURN(std::string out,
                   FormatExplain(job, events, pods, answer, flags.events,
                                 OutputFor(flags, &cluster), queue, priority_classes));
  // Everything the cluster said is printed; a scheduler that could not be asked still fails
  // the command, after the output, so scripts notice.
  if (answer && !answer->result.ok()) {
    std::fputs(out.c_str(), stdout);
    return absl::Status(
        answer->result.status().code(),
        absl::StrCat("phalanx-scheduler ", flags.server, ": ", answer->result.status().message()));
  }
  return out;
}

int RunExplain(const std::vector<std::string>& args) {
  return Run("explain", args, {.server = true, .events = true, .positional = 1}, Explain);
}

absl::StatusOr<std::string> Topology(const Flags& flags) {
  const OutputOptions output = OutputFor(flags, nullptr);
  // The Snapshot RPC lists domains only: single nodes come from the cluster.
  if (!flags.server.empty() && !flags.nodes) {
    absl::StatusOr<placement::SnapshotSummary> summary =
        Scheduler(flags).Snapshot(TopologySummaryOptions(flags.max_level));
    if (!summary.ok()) {
      return absl::Status(summary.status().code(), absl::StrCat("phalanx-scheduler ", flags.server,
                                                                ": ", summary.status().message()));
    }
    TopologyView view{.source = absl::StrCat("phalanx-scheduler ", flags.server,
                                             " (its live snapshot, every reservation included)"),
                      .summary = *std::move(summary),
                      .max_level = flags.max_level};
    return FormatTopology(view, output);
  }
  ASSIGN_OR_RETURN(Cluster cluster, Connect(flags));
  TopologyViewOptions options{.max_level = flags.max_level, .nodes = flags.nodes};
  absl::StatusOr<placement::Topology> topology = absl::NotFoundError("no levels");
  if (!flags.topology.empty()) {
    ASSIGN_OR_RETURN(std::string object,
                     GetObject(cluster, kube::NetworkTopologies(), "", flags.topology));
    topology = scheduler::TopologyFromObject(object, flags.topology);
    options.levels_source = absl::StrCat("NetworkTopology ", flags.topology);
  } else if (!flags.topology_preset.empty()) {
    topology = placement::Topology::Preset(flags.topology_preset);
    options.levels_source = absl::StrCat("preset ", flags.topology_preset);
  } else if (!flags.server.empty()) {
    // The levels phalanx-scheduler places by.
    absl::StatusOr<std::vector<std::string>> levels = Scheduler(flags).TopologyLevels();
    if (levels.ok()) {
      topology = placement::Topology::Create(*std::move(levels));
      options.levels_source = absl::StrCat("phalanx-scheduler ", flags.server, "'s");
      options.levels_from_scheduler = true;
    } else {
      std::fprintf(stderr, "phalanx topology: phalanx-scheduler %s not asked for its levels: %s\n",
                   flags.server.c_str(), PrintableLines(levels.status().message()).c_str());
    }
  }
  if (!topology.ok() && options.levels_source.empty()) {
    topology = placement::Topology::Preset("eks");
    options.levels_source = "preset eks, the default";
  }
  RETURN_IF_ERROR(topology.status());
  ClusterObjects objects;
  ASSIGN_OR_RETURN(objects.nodes, ListItems(cluster, kube::Nodes(), ""));
  // The pods phalanx-scheduler's informer watches: bound and not finished.
  ASSIGN_OR_RETURN(objects.pods,
                   ListItems(cluster, kube::Pods(), "",
                             {.field_selector =
                                  "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"}));
  absl::StatusOr<std::vector<std::string>> jobs = ListItems(cluster, kube::TrainingJobs(), "");
  // Without the CRDs there are no recorded reservations; the nodes and pods are still worth
  // showing.
  if (jobs.ok()) {
    objects.jobs = *std::move(jobs);
  } else if (!absl::IsNotFound(jobs.status())) {
    return jobs.status();
  }
  ASSIGN_OR_RETURN(TopologyView view, TopologyFromObjects(*topology, objects, options));
  return FormatTopology(view, output);
}

int RunTopology(const std::vector<std::string>& args) {
  return Run("topology", args, {.server = true, .topology = true}, Topology);
}

// One read of everything the invariants look at.
absl::StatusOr<ClusterState> ReadClusterState(const Cluster& cluster, const Flags& flags) {
  ASSIGN_OR_RETURN(std::vector<std::string> jobs, ListItems(cluster, kube::TrainingJobs(), ""));
  ASSIGN_OR_RETURN(std::vector<std::string> pods, ListItems(cluster, kube::Pods(), ""));
  ASSIGN_OR_RETURN(std::vector<std::string> nodes, ListItems(cluster, kube::Nodes(), ""));
  ASSIGN_OR_RETURN(ClusterState state, DecodeClusterState(jobs, pods, nodes));
  if (!flags.server.empty()) {
    absl::StatusOr<placement::SnapshotSummary> summary =
        Scheduler(flags).Snapshot({.max_domains = 0, .reservations = true});
    if (!summary.ok()) {
      return absl::Status(summary.status().code(), absl::StrCat("phalanx-scheduler ", flags.server,
                                                                ": ", summary.status().message()));
    }
    state.reservations = std::move(summary->reservation_list);
  }
  return state;
}

int RunCheck(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags(args, {.server = true, .check = true});
  if (!flags.ok()) return BadInput("check", flags.status());
  InvariantOptions options;
  if (!flags->expect_jobs.empty()) {
    absl::StatusOr<std::string> text = ReadInputFile(flags->expect_jobs);
    if (!text.ok()) return BadInput("check", text.status());
    for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
      options.expected_jobs.emplace_back(absl::StripAsciiWhitespace(line));
    }
  }
  (void)InitLogging("warn");
  absl::StatusOr<Cluster> cluster = Connect(*flags);
  if (!cluster.ok()) return Failed("check", cluster.status());

  // Immediate violations count once seen; the others only if every read for --settle seconds
  // still shows them (the message of the last read is kept).
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + absl::Seconds(flags->settle_seconds);
  std::map<std::string, Violation> immediate, pending;
  CheckReport report;
  absl::Status last_error;
  bool first = true;
  while (true) {
    absl::StatusOr<ClusterState> state = ReadClusterState(*cluster, *flags);
    if (state.ok()) {
      ++report.reads;
      std::map<std::string, Violation> now;
      for (Violation& v : CheckInvariants(*state, options)) {
        if (IsImmediate(v)) {
          immediate[v.Key()] = v;
        } else {
          now[v.Key()] = std::move(v);
        }
      }
      if (first) {
        pending = std::move(now);
        first = false;
      } else {
        std::map<std::string, Violation> kept;
        for (auto& [key, v] : now) {
          if (pending.contains(key)) kept[key] = std::move(v);
        }
        pending = std::move(kept);
      }
      report.phases = PhaseCounts(*state);
      report.jobs = static_cast<int>(state->jobs.size());
      report.pods = static_cast<int>(state->pods.size());
      report.nodes = static_cast<int>(state->nodes.size());
      if (state->reservations) report.reservations = static_cast<int>(state->reservations->size());
      if (pending.empty()) break;
    } else {
      last_error = state.status();
    }
    if (absl::Now() >= deadline) break;
    absl::SleepFor(std::min(absl::Seconds(1), deadline - absl::Now()));
  }
  // Never read at all (a read that failed after a good one is retried until the deadline; the
  // violations of the good reads stand).
  if (report.reads == 0) return Failed("check", last_error);
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  for (auto* from : {&immediate, &pending}) {
    for (auto& [key, v] : *from) report.violations.push_back(std::move(v));
  }
  std::sort(report.violations.begin(), report.violations.end(),
            [](const Violation& a, const Violation& b) { return a.Key() < b.Key(); });
  std::fputs(FormatCheck(report, flags->json).c_str(), stdout);
  return report.violations.empty() ? kExitOk : kExitViolations;
}

}  // namespace

PHALANX_COMMAND("check", "check the invariants: no job lost, run twice or half-bound, ...",
                kCheckUsage, RunCheck);
PHALANX_COMMAND("queues",
                "ClusterTrainingQueues and TrainingQueues: pending, admitted, GPU quota per flavor",
                kQueuesUsage, RunQueues);
PHALANX_COMMAND("jobs", "TrainingJobs: phase, size, placement domain, why not admitted", kJobsUsage,
                RunJobs);
PHALANX_COMMAND("explain", "why a TrainingJob waits or where it runs", kExplainUsage, RunExplain);
PHALANX_COMMAND("topology", "free GPUs per topology domain, as a tree", kTopologyUsage,
                RunTopology);

}  // namespace phalanx::cli
