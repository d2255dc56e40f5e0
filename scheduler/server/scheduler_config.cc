#include "scheduler/server/scheduler_config.h"

#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "scheduler/topology.h"
#include "yaml-cpp/yaml.h"

namespace phalanx::scheduler {
namespace {

absl::StatusOr<int> ParseInt(const std::string& text, const std::string& field, int min, int max) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": want an integer in [", min, ", ", max, "], got \"", text, "\""));
  }
  return value;
}

using Setter = std::function<absl::Status(SchedulerConfig&, const std::string&)>;

Setter String(std::string SchedulerConfig::*member) {
  return [member](SchedulerConfig& c, const std::string& v) {
    c.*member = v;
    return absl::OkStatus();
  };
}
Setter Address(std::string SchedulerConfig::*member, std::string field) {
  return [member, field](SchedulerConfig& c, const std::string& v) -> absl::Status {
    RETURN_IF_ERROR(ParseHostPort(v, field).status());
    c.*member = v;
    return absl::OkStatus();
  };
}
Setter Int(int SchedulerConfig::*member, std::string field, int min, int max) {
  return [=](SchedulerConfig& c, const std::string& v) -> absl::Status {
    ASSIGN_OR_RETURN(c.*member, ParseInt(v, field, min, max));
    return absl::OkStatus();
  };
}

// Option name (flag without "--", file key) -> setter.
const std::map<std::string, Setter>& Options() {
  static const auto* const kOptions = new std::map<std::string, Setter>{
      {"kubeconfig", String(&SchedulerConfig::kubeconfig)},
      {"context", String(&SchedulerConfig::context)},
      {"extenderAddress", Address(&SchedulerConfig::extender_address, "extenderAddress")},
      {"grpcAddress", Address(&SchedulerConfig::grpc_address, "grpcAddress")},
      {"healthAddress", Address(&SchedulerConfig::health_address, "healthAddress")},
      {"topologyPreset",
       [](SchedulerConfig& c, const std::string& v) -> absl::Status {
         absl::StatusOr<placement::Topology> t = placement::Topology::Preset(v);
         if (!t.ok()) {
           return absl::InvalidArgumentError(
               absl::StrCat("topologyPreset: unknown preset \"", v, "\" (known: ",
                            absl::StrJoin(placement::Topology::PresetNames(), ", "), ")"));
         }
         c.topology_preset = v;
         return absl::OkStatus();
       }},
      {"topology", String(&SchedulerConfig::topology)},
      {"logLevel", String(&SchedulerConfig::log_level)},
      {"httpThreads", Int(&SchedulerConfig::http_threads, "httpThreads", 1, 64)},
      {"syncTimeoutSeconds",
       Int(&SchedulerConfig::sync_timeout_seconds, "syncTimeoutSeconds", 1, 86400)},
  };
  return *kOptions;
}

// "extenderAddress" -> "extender-address": the flag spelling of a config key.
std::string Dashed(std::string_view key) {
  std::string flag;
  for (char c : key) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      flag += '-';
      flag += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      flag += c;
    }
  }
  return flag;
}

const Setter* FlagSetter(std::string_view flag) {
  for (const auto& [key, setter] : Options()) {
    if (Dashed(key) == flag) return &setter;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(const std::string& text, const std::string& field) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": want host:port (e.g. 127.0.0.1:8888), got \"", text, "\""));
  }
  HostPort hp;
  hp.host = text.substr(0, colon);
  if (hp.host.size() > 2 && hp.host.front() == '[' && hp.host.back() == ']') {
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  }
  ASSIGN_OR_RETURN(hp.port, ParseInt(text.substr(colon + 1), field + " port", 0, 65535));
  return hp;
}

absl::Status ApplyConfigFile(const std::string& path, SchedulerConfig& config) {
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return absl::NotFoundError(absl::StrCat("config file ", path, ": cannot be read"));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": ", e.what()));
  }
  if (doc.IsNull()) return absl::OkStatus();
  if (!doc.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": not a YAML mapping"));
  }
  for (const auto& entry : doc) {
    std::string key = entry.first.as<std::string>("");
    auto option = Options().find(key);
    if (option == Options().end()) {
      return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": unknown key \"",
                                                     key, "\" (see phalanx-scheduler --help)"));
    }
    if (!entry.second.IsScalar()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config file ", path, ": ", key, ": want a single value"));
    }
    absl::Status status = option->second(config, entry.second.Scalar());
    if (!status.ok()) return Annotate(status, absl::StrCat("config file ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<SchedulerConfig> ParseSchedulerFlags(const std::vector<std::string>& args) {
  // Split into (name, value) pairs first, so --config can be applied before the other flags.
  std::vector<std::pair<std::string, std::string>> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      flags.emplace_back("help", "");
      continue;
    }
    if (arg == "--version") {
      flags.emplace_back("version", "");
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\" (see phalanx-scheduler --help)"));
    }
    std::string name = arg.substr(2);
    std::string value;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    if (name != "config" && FlagSetter(name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " (see phalanx-scheduler --help)"));
    }
    if (eq == std::string::npos) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = args[++i];
    }
    flags.emplace_back(name, value);
  }
  SchedulerConfig config;
  for (const auto& [name, value] : flags) {
    if (name == "config") RETURN_IF_ERROR(ApplyConfigFile(value, config));
  }
  for (const auto& [name, value] : flags) {
    if (name == "config") continue;
    if (name == "help") {
      config.show_help = true;
      continue;
    }
    if (name == "version") {
      config.show_version = true;
      continue;
    }
    absl::Status status = (*FlagSetter(name))(config, value);
    if (!status.ok()) return Annotate(status, absl::StrCat("--", name));
  }
  return config;
}

std::string SchedulerUsage() {
  return R"(phalanx-scheduler: keeps a live snapshot of the cluster, owns every gang's reservation,
serves the phalanx.v1alpha1.Placement gRPC API to phalanx-operator and answers kube-scheduler's
extender webhook so that each gang pod is bound exactly where its gang was reserved.

Usage: phalanx-scheduler [flags]

Flags (each also a key of the --config file, written without dashes in camelCase):
  --config FILE               YAML file with any of the keys below; flags override it
  --kubeconfig PATH           kubeconfig to use; empty (default) = in-cluster service account
  --context NAME              kubeconfig context (default: current-context)
  --extender-address H:P      HTTP address of the extender webhook kube-scheduler calls
                              (default 127.0.0.1:8888; urlPrefix http://H:P/scheduler)
  --grpc-address H:P          address of the Placement gRPC service (default 127.0.0.1:9443)
  --health-address H:P        address of /healthz, /readyz and /metrics (default 127.0.0.1:8080)
  --topology-preset NAME      eks | eks-4layer | gb200 (default eks): node label keys of the
                              network hierarchy, coarsest first
  --topology NAME             read the levels from this phalanx.dev Topology object instead
  --log-level LEVEL           trace | debug | info | warn | error (default info)
  --http-threads N            extender HTTP worker threads (default 2)
  --sync-timeout-seconds N    give up (exit 1) if the informers have not synced by then
                              (default 300)
  --version                   print the version and exit
  -h, --help                  print this help and exit

Port 0 in an address picks a free port; the bound ports are logged at start.
/readyz answers 200 only after the first full sync and the rebuild of every reservation from
TrainingJob status.placement; the extender and gRPC servers start only then.
SIGTERM or SIGINT: stop serving, finish requests in flight, exit 0.
)";
}

}  // namespace phalanx::scheduler
