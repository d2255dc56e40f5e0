// `phalanx placement`: talk to a running phalanx-scheduler's Placement gRPC API directly —
// reserve, release, resize or explain one gang, or print the snapshot summary. For operators
// debugging a cluster and for the end-to-end tests; phalanx-operator makes the same calls.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/scheduler_client.h"
#include "common/text_input.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/grpc/placement_grpc_client.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::cli {
namespace {

using placement::GangRequest;
using placement::PlacementResult;

constexpr char kAbout[] =
    R"(Calls the phalanx.v1alpha1.Placement API of a running phalanx-scheduler (docs/placement-api.md).
phalanx-operator makes these calls for admitted TrainingJobs: use them by hand only to inspect or
to repair.)";

constexpr char kServerFlags[] =
    R"(  --server H:P          the scheduler's gRPC address (hack/phalanx-up.sh writes it to
                        $PHALANX_CLUSTER_DIR/env as PHALANX_SCHEDULER_GRPC)
  --timeout-ms T        per-call deadline (default 10000)
  --json                one JSON line instead of text)";

constexpr char kGangFlags[] =
    R"(  --job NS/NAME         the gang's id, as the TrainingJob's namespace/name
  --count N             pods in the gang (1 to 65536)
  --gpus G              nvidia.com/gpu per pod (default 8)
  --required LEVEL      node label key the whole gang must fit in one domain of
  --preferred LEVEL     node label key to aim for
  --group-size S, --group-level LEVEL
                        each block of S consecutive ranks inside one domain of LEVEL
  --elastic MIN:MAX[:STEP]  place the largest feasible count in the range (then --count
                        may be left out)
  --priority P          gang priority (default 0)
  --selector K=V        node selector (repeatable))";

constexpr char kExitCodes[] =
    R"(Exit codes: 0 answered (placed or not), 1 the call failed (scheduler unreachable, NotFound,
...), 2 bad input.)";

std::string Usage(absl::string_view synopsis, absl::string_view what, absl::string_view flags) {
  return absl::StrCat("Usage: phalanx placement ", synopsis, "\n\n", what, "\n", kAbout,
                      "\n\n", flags, "\n", kServerFlags, "\n", kSchedulerTlsUsage, "\n\n",
                      kExitCodes);
}

int Failed(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "phalanx %s: %s\n", command.c_str(), Printable(status.ToString()).c_str());
  return kExitFailure;
}

std::string ResultJson(const PlacementResult& result) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("placed");
  w.Bool(result.placed);
  if (result.placed) {
    w.Key("level");
    w.String(result.placement.domain.level.c_str());
    w.Key("domain");
    w.String(result.placement.domain.ToString().c_str());
    w.Key("nodes");
    w.StartArray();
    for (const std::string& node : result.placement.nodes) w.String(node.c_str());
    w.EndArray();
  } else {
    w.Key("summary");
    w.String(result.explanation.summary.c_str());
    w.Key("fit_in_best");
    w.Int(result.explanation.fit_in_best);
  }
  w.EndObject();
  return buffer.GetString();
}

void PrintResult(const PlacementResult& result, bool json) {
  if (json) {
    std::printf("%s\n", ResultJson(result).c_str());
  } else if (result.placed) {
    std::printf("placed %zu pods in %s\n", result.placement.nodes.size(),
                result.placement.domain.ToString().c_str());
    for (size_t rank = 0; rank < result.placement.nodes.size(); ++rank) {
      std::printf("  rank %zu  %s\n", rank, result.placement.nodes[rank].c_str());
    }
  } else {
    std::printf("not placed: %s\n", result.explanation.summary.c_str());
  }
}

void PrintSummary(const placement::SnapshotSummary& s, bool json) {
  if (json) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    w.StartObject();
    w.Key("nodes");
    w.Int(s.nodes);
    w.Key("schedulable_nodes");
    w.Int(s.schedulable_nodes);
    w.Key("pods");
    w.Int64(s.pods);
    w.Key("reservations");
    w.Int(s.reservations);
    w.Key("free_gpus");
    w.Int64(s.free_gpus);
    w.Key("domains");
    w.StartArray();
    for (const auto& d : s.domains) {
      w.StartObject();
      w.Key("domain");
      w.String(d.domain.ToString().c_str());
      w.Key("nodes");
      w.Int(d.nodes);
      w.Key("free_gpus");
      w.Int64(d.free_gpus);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::printf("%s\n", buffer.GetString());
    return;
  }
  std::printf("nodes %d (schedulable %d), pods %lld, reservations %d, free GPUs %lld\n", s.nodes,
              s.schedulable_nodes, static_cast<long long>(s.pods), s.reservations,
              static_cast<long long>(s.free_gpus));
  for (const auto& d : s.domains) {
    std::printf("%*s%s  nodes %d  free GPUs %lld\n", 2 * d.level_index, "",
                d.domain.ToString().c_str(), d.nodes, static_cast<long long>(d.free_gpus));
  }
}

// One verb of `phalanx placement`; each takes only the flags it uses.
int RunPlacement(const std::string& verb, const std::vector<std::string>& args) {
  const std::string command = absl::StrCat("placement ", verb);
  const bool gang = verb == "reserve" || verb == "explain";
  const bool counted = gang || verb == "resize";
  std::string server;
  GangRequest request;
  request.per_pod = {{"nvidia.com/gpu", 8}};
  bool json = false;
  int32_t max_level = 2;
  int32_t timeout_ms = 10000;
  int32_t gpus = 8;
  std::vector<std::string> selectors;
  SchedulerTls tls = SchedulerTlsFromEnvironment();
  FlagSet flags;
  AddSchedulerTlsFlags(flags, &tls);
  flags.String({"--server"}, &server)
      .Int({"--timeout-ms"}, &timeout_ms, 1, 3'600'000)
      .Bool({"--json"}, &json);
  if (verb != "snapshot") flags.String({"--job"}, &request.job);
  if (verb == "snapshot") flags.Int({"--max-level"}, &max_level, -1, 64);
  if (counted) flags.Int({"--count"}, &request.count, 1, 65'536);
  if (gang) {
    flags.Int({"--gpus"}, &gpus, 0, 1024)
        .String({"--required"}, &request.required_level)
        .String({"--preferred"}, &request.preferred_level)
        .Int({"--group-size"}, &request.group_size, 1, 65'536)
        .String({"--group-level"}, &request.group_level)
        .Int({"--priority"}, &request.priority, std::numeric_limits<int32_t>::min(),
             std::numeric_limits<int32_t>::max())
        .Custom({"--elastic"},
                [&](const std::string& value) -> absl::Status {
                  std::vector<std::string> parts = absl::StrSplit(value, ':');
                  placement::ElasticRange range;
                  if (parts.size() < 2 || parts.size() > 3 ||
                      !absl::SimpleAtoi(parts[0], &range.min) ||
                      !absl::SimpleAtoi(parts[1], &range.max) ||
                      (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &range.step))) {
                    return absl::InvalidArgumentError(
                        absl::StrCat("want MIN:MAX or MIN:MAX:STEP, got ", Quoted(value)));
                  }
                  request.elastic = range;
                  return absl::OkStatus();
                })
        .Strings({"--selector"}, &selectors);
  }
  if (absl::Status parsed = flags.Parse(args); !parsed.ok()) return BadInput(command, parsed);
  request.per_pod["nvidia.com/gpu"] = gpus;
  for (const std::string& selector : selectors) {
    const size_t eq = selector.find('=');
    if (eq == std::string::npos || eq == 0) {
      return BadInput(command, absl::StrCat("--selector: want KEY=VALUE, got ", Quoted(selector)));
    }
    request.node_selector[selector.substr(0, eq)] = selector.substr(eq + 1);
  }
  if (server.empty()) return BadInput(command, "--server is required");
  if (verb != "snapshot" && request.job.empty()) return BadInput(command, "--job is required");
  if (counted && !flags.Seen("--count") && !request.elastic) {
    return BadInput(command, "--count is required");
  }
  absl::StatusOr<placement::GrpcClientOptions> options =
      SchedulerClientOptions(tls, std::chrono::milliseconds(timeout_ms));
  if (!options.ok()) return BadInput(command, options.status());
  placement::GrpcPlacementService service(server, *options);
  if (verb == "snapshot") {
    absl::StatusOr<placement::SnapshotSummary> summary =
        service.Snapshot({.max_level = max_level, .max_domains = 1000});
    if (!summary.ok()) return Failed(command, summary.status());
    PrintSummary(*summary, json);
    return kExitOk;
  }
  if (verb == "release") {
    absl::Status status = service.Release(request.job);
    if (!status.ok()) return Failed(command, status);
    if (!json) std::printf("released %s\n", Printable(request.job).c_str());
    return kExitOk;
  }
  absl::StatusOr<PlacementResult> result =
      verb == "reserve"   ? service.Reserve(request)
      : verb == "explain" ? service.Place(request)
                          : service.Resize(request.job, request.count);
  if (!result.ok()) return Failed(command, result.status());
  PrintResult(*result, json);
  return kExitOk;
}

PHALANX_COMMAND("placement reserve", "reserve a whole gang on a running phalanx-scheduler",
                Usage("reserve --server H:P --job NS/NAME --count N [gang flags] [--json]",
                      "Holds the whole gang or nothing.", kGangFlags),
                [](const std::vector<std::string>& args) { return RunPlacement("reserve", args); });
PHALANX_COMMAND("placement explain", "dry-run a gang's placement on a running phalanx-scheduler",
                Usage("explain --server H:P --job NS/NAME --count N [gang flags] [--json]",
                      "A dry run: where the gang would go, or why it does not fit; holds nothing.",
                      kGangFlags),
                [](const std::vector<std::string>& args) { return RunPlacement("explain", args); });
PHALANX_COMMAND("placement resize", "grow or shrink a gang's reservation",
                Usage("resize --server H:P --job NS/NAME --count N [--json]",
                      "Grows or shrinks a reservation to --count pods.",
                      "  --job NS/NAME         the gang's id\n"
                      "  --count N             the new size (1 to 65536)"),
                [](const std::vector<std::string>& args) { return RunPlacement("resize", args); });
PHALANX_COMMAND("placement release", "free a gang's reservation",
                Usage("release --server H:P --job NS/NAME", "Frees a reservation.",
                      "  --job NS/NAME         the gang's id"),
                [](const std::vector<std::string>& args) { return RunPlacement("release", args); });
PHALANX_COMMAND("placement snapshot", "the scheduler's nodes, reservations and free GPUs per domain",
                Usage("snapshot --server H:P [--max-level L] [--json]",
                      "The scheduler's snapshot summary: nodes, pods, reservations, free GPUs per "
                      "topology domain.",
                      "  --max-level L         deepest level listed, -1 to 64 (default 2)"),
                [](const std::vector<std::string>& args) { return RunPlacement("snapshot", args); });

}  // namespace
}  // namespace phalanx::cli
