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
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/grpc/placement_grpc_client.h"
#include "scheduler/snapshot_summary.h"

namespace phalanx::cli {
namespace {

using placement::GangRequest;
using placement::PlacementResult;

constexpr char kUsage[] =
    R"(Usage: phalanx placement reserve  --server H:P --job NS/NAME --count N [gang flags] [--json]
       phalanx placement explain  --server H:P --job NS/NAME --count N [gang flags] [--json]
       phalanx placement resize   --server H:P --job NS/NAME --count N [--json]
       phalanx placement release  --server H:P --job NS/NAME
       phalanx placement snapshot --server H:P [--max-level L] [--json]

Calls the phalanx.v1alpha1.Placement API of a running phalanx-scheduler (docs/placement-api.md).
reserve holds the whole gang or nothing; explain is a dry run that holds nothing; resize grows
or shrinks a reservation; release frees it. phalanx-operator does this for admitted
TrainingJobs: use it by hand only to inspect or to repair.

  --server H:P          the scheduler's gRPC address (hack/phalanx-up.sh writes it to
                        $PHALANX_CLUSTER_DIR/env as PHALANX_SCHEDULER_GRPC)
  --job NS/NAME         the gang's id, as the TrainingJob's namespace/name
  --count N             pods in the gang
  --gpus G              nvidia.com/gpu per pod (default 8)
  --required LEVEL      node label key the whole gang must fit in one domain of
  --preferred LEVEL     node label key to aim for
  --group-size S, --group-level LEVEL
                        each block of S consecutive ranks inside one domain of LEVEL
  --elastic MIN:MAX[:STEP]  place the largest feasible count in the range
  --priority P          gang priority (default 0)
  --selector K=V        node selector (repeatable)
  --max-level L         snapshot: deepest level listed (default 2)
  --timeout-ms T        per-call deadline (default 10000)
  --json                one JSON line: {"placed":..,"domain":..,"nodes":[..]} or the summary

Exit codes: 0 answered (placed or not), 1 the call failed (scheduler unreachable, NotFound,
...), 2 bad input.)";

int BadInput(const std::string& message) {
  std::fprintf(stderr, "phalanx placement: %s\n\n%s\n", message.c_str(), kUsage);
  return kExitBadInput;
}

int Failed(const absl::Status& status) {
  std::fprintf(stderr, "phalanx placement: %s\n", std::string(status.ToString()).c_str());
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

int RunPlacement(const std::vector<std::string>& args) {
  if (WantsHelp(args) || args.empty()) {
    std::printf("%s\n", kUsage);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const std::string verb = args[0];
  if (verb != "reserve" && verb != "explain" && verb != "resize" && verb != "release" &&
      verb != "snapshot") {
    return BadInput(absl::StrCat("unknown subcommand \"", verb, "\""));
  }
  std::string server;
  GangRequest request;
  request.per_pod = {{"nvidia.com/gpu", 8}};
  bool json = false;
  bool have_count = false;
  int max_level = 2;
  int timeout_ms = 10000;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--json") {
      json = true;
      continue;
    }
    if (i + 1 >= args.size()) return BadInput(absl::StrCat(flag, " needs a value"));
    const std::string& value = args[++i];
    auto number = [&](int* out, int min) {
      return absl::SimpleAtoi(value, out) && *out >= min;
    };
    int n = 0;
    if (flag == "--server") {
      server = value;
    } else if (flag == "--job") {
      request.job = value;
    } else if (flag == "--count") {
      if (!number(&request.count, 1)) return BadInput("--count wants an integer >= 1");
      have_count = true;
    } else if (flag == "--gpus") {
      if (!number(&n, 0)) return BadInput("--gpus wants an integer >= 0");
      request.per_pod["nvidia.com/gpu"] = n;
    } else if (flag == "--required") {
      request.required_level = value;
    } else if (flag == "--preferred") {
      request.preferred_level = value;
    } else if (flag == "--group-size") {
      if (!number(&request.group_size, 1)) return BadInput("--group-size wants an integer >= 1");
    } else if (flag == "--group-level") {
      request.group_level = value;
    } else if (flag == "--priority") {
      if (!absl::SimpleAtoi(value, &request.priority)) return BadInput("--priority wants an integer");
    } else if (flag == "--elastic") {
      std::vector<std::string> parts = absl::StrSplit(value, ':');
      placement::ElasticRange range;
      if (parts.size() < 2 || parts.size() > 3 || !absl::SimpleAtoi(parts[0], &range.min) ||
          !absl::SimpleAtoi(parts[1], &range.max) ||
          (parts.size() == 3 && !absl::SimpleAtoi(parts[2], &range.step))) {
        return BadInput("--elastic wants MIN:MAX or MIN:MAX:STEP");
      }
      request.elastic = range;
    } else if (flag == "--selector") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) return BadInput("--selector wants KEY=VALUE");
      request.node_selector[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (flag == "--max-level") {
      if (!number(&max_level, -1)) return BadInput("--max-level wants an integer >= -1");
    } else if (flag == "--timeout-ms") {
      if (!number(&timeout_ms, 1)) return BadInput("--timeout-ms wants an integer >= 1");
    } else {
      return BadInput(absl::StrCat("unknown flag ", flag));
    }
  }
  if (server.empty()) return BadInput("--server is required");
  if (verb != "snapshot" && request.job.empty()) return BadInput("--job is required");
  if ((verb == "reserve" || verb == "explain" || verb == "resize") && !have_count &&
      !request.elastic) {
    return BadInput("--count is required");
  }
  placement::GrpcPlacementService service(
      server, {.deadline = std::chrono::milliseconds(timeout_ms)});
  if (verb == "snapshot") {
    absl::StatusOr<placement::SnapshotSummary> summary =
        service.Snapshot({.max_level = max_level, .max_domains = 1000});
    if (!summary.ok()) return Failed(summary.status());
    PrintSummary(*summary, json);
    return kExitOk;
  }
  if (verb == "release") {
    absl::Status status = service.Release(request.job);
    if (!status.ok()) return Failed(status);
    if (!json) std::printf("released %s\n", request.job.c_str());
    return kExitOk;
  }
  absl::StatusOr<PlacementResult> result =
      verb == "reserve"   ? service.Reserve(request)
      : verb == "explain" ? service.Place(request)
                          : service.Resize(request.job, request.count);
  if (!result.ok()) return Failed(result.status());
  PrintResult(*result, json);
  return kExitOk;
}

}  // namespace

PHALANX_COMMAND("placement", "reserve, explain, resize or release a gang on a running phalanx-scheduler",
                kUsage, RunPlacement);

}  // namespace phalanx::cli
