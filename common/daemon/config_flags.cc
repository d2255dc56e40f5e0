#include "common/daemon/config_flags.h"

#include <cctype>
#include <charconv>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "yaml-cpp/yaml.h"

namespace phalanx {
namespace {

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

}  // namespace

absl::StatusOr<int> ParseIntInRange(const std::string& text, const std::string& field, int min,
                                    int max) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": want an integer in [", min, ", ", max, "], got \"", text, "\""));
  }
  return value;
}

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
  ASSIGN_OR_RETURN(hp.port, ParseIntInRange(text.substr(colon + 1), field + " port", 0, 65535));
  return hp;
}

ConfigFlags& ConfigFlags::Add(const std::string& key, Setter setter) {
  options_[key] = std::move(setter);
  return *this;
}

ConfigFlags& ConfigFlags::String(const std::string& key, std::string* target) {
  return Add(key, [target](const std::string& v) {
    *target = v;
    return absl::OkStatus();
  });
}

ConfigFlags& ConfigFlags::Int(const std::string& key, int* target, int min, int max) {
  return Add(key, [=](const std::string& v) -> absl::Status {
    ASSIGN_OR_RETURN(*target, ParseIntInRange(v, key, min, max));
    return absl::OkStatus();
  });
}

ConfigFlags& ConfigFlags::Address(const std::string& key, std::string* target) {
  return Add(key, [=](const std::string& v) -> absl::Status {
    RETURN_IF_ERROR(ParseHostPort(v, key).status());
    *target = v;
    return absl::OkStatus();
  });
}

ConfigFlags& ConfigFlags::Bool(const std::string& key, bool* target) {
  return Add(key, [=](const std::string& v) -> absl::Status {
    if (v == "true") {
      *target = true;
    } else if (v == "false") {
      *target = false;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(key, ": want true or false, got \"", v, "\""));
    }
    return absl::OkStatus();
  });
}

const ConfigFlags::Setter* ConfigFlags::FlagSetter(const std::string& flag) const {
  for (const auto& [key, setter] : options_) {
    if (Dashed(key) == flag) return &setter;
  }
  return nullptr;
}

absl::Status ConfigFlags::ApplyFile(const std::string& path) const {
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
    auto option = options_.find(key);
    if (option == options_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("config file ", path, ": unknown key \"",
                                                     key, "\" (see ", program_, " --help)"));
    }
    if (!entry.second.IsScalar()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config file ", path, ": ", key, ": want a single value"));
    }
    absl::Status status = option->second(entry.second.Scalar());
    if (!status.ok()) return Annotate(status, absl::StrCat("config file ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<ConfigFlags::Parsed> ConfigFlags::Parse(const std::vector<std::string>& args) const {
  // Split into (name, value) pairs first, so --config can be applied before the other flags.
  Parsed parsed;
  std::vector<std::pair<std::string, std::string>> flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      continue;
    }
    if (arg == "--version") {
      parsed.version = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", arg, "\" (see ", program_, " --help)"));
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
          absl::StrCat("unknown flag --", name, " (see ", program_, " --help)"));
    }
    if (eq == std::string::npos) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
      }
      value = args[++i];
    }
    flags.emplace_back(name, value);
  }
  for (const auto& [name, value] : flags) {
    if (name == "config") RETURN_IF_ERROR(ApplyFile(value));
  }
  for (const auto& [name, value] : flags) {
    if (name == "config") continue;
    absl::Status status = (*FlagSetter(name))(value);
    if (!status.ok()) return Annotate(status, absl::StrCat("--", name));
  }
  return parsed;
}

}  // namespace phalanx
