#include "kube/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/strip.h"
#include "common/status.h"
#include "kube/internal/strings.h"
#include "yaml-cpp/yaml.h"

namespace kube {

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string message = internal::Cat("cannot read ", path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    if (err == EACCES) return absl::PermissionDeniedError(message);
    return absl::InternalError(message);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TokenFile::TokenFile(std::string path, Clock& clock, absl::Duration refresh)
    : path_(std::move(path)), clock_(clock), refresh_(refresh) {}

absl::StatusOr<std::string> TokenFile::Token() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Time now = clock_.Now();
  if (!token_.empty() && now - read_at_ < refresh_) return token_;
  absl::StatusOr<std::string> text = ReadFileToString(path_);
  if (!text.ok()) {
    if (!token_.empty()) return token_;
    return text.status();
  }
  std::string token(absl::StripTrailingAsciiWhitespace(*text));
  if (token.empty()) {
    if (!token_.empty()) return token_;
    return absl::FailedPreconditionError(internal::Cat("token file ", path_, " is empty"));
  }
  token_ = std::move(token);
  read_at_ = now;
  return token_;
}

absl::StatusOr<std::string> RestConfig::BearerToken() const {
  if (token_file != nullptr) return token_file->Token();
  return bearer_token;
}

namespace {

std::string Resolve(std::string_view base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return internal::Cat(base_dir, "/", path);
}

// Finds the entry named `name` in a kubeconfig list such as `clusters:` and returns its
// `inner` map (e.g. the `cluster:` of a named cluster).
absl::StatusOr<YAML::Node> FindNamed(const YAML::Node& root, const char* list, const char* inner,
                                     const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries && entries.IsSequence()) {
    for (const YAML::Node& entry : entries) {
      if (entry["name"] && entry["name"].as<std::string>() == name) {
        if (!entry[inner]) return YAML::Node(YAML::NodeType::Map);
        return entry[inner];
      }
    }
  }
  return absl::NotFoundError(
      internal::Cat("kubeconfig has no ", list, " entry named \"", name, "\""));
}

std::string StringField(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  if (!value || !value.IsScalar()) return "";
  return value.as<std::string>();
}

// Reads a credential given inline as `<key>-data` (base64) or by file as `<key>`.
absl::StatusOr<std::string> DataOrFile(const YAML::Node& node, const std::string& key,
                                       std::string_view base_dir) {
  std::string data = StringField(node, (key + "-data").c_str());
  if (!data.empty()) {
    std::string decoded;
    if (!absl::Base64Unescape(data, &decoded)) {
      return absl::InvalidArgumentError(internal::Cat("kubeconfig ", key, "-data is not base64"));
    }
    return decoded;
  }
  std::string file = StringField(node, key.c_str());
  if (file.empty()) return std::string();
  return ReadFileToString(Resolve(base_dir, file));
}

absl::StatusOr<RestConfig> ParseKubeconfigNode(const YAML::Node& root, std::string_view base_dir,
                                               std::string_view context_name, Clock& clock) {
  std::string context = std::string(context_name);
  if (context.empty()) context = StringField(root, "current-context");
  if (context.empty()) {
    return absl::InvalidArgumentError("kubeconfig has no current-context and none was given");
  }
  ASSIGN_OR_RETURN(YAML::Node ctx, FindNamed(root, "contexts", "context", context));
  std::string cluster_name = StringField(ctx, "cluster");
  std::string user_name = StringField(ctx, "user");
  ASSIGN_OR_RETURN(YAML::Node cluster, FindNamed(root, "clusters", "cluster", cluster_name));

  RestConfig config;
  config.server = std::string(absl::StripSuffix(StringField(cluster, "server"), "/"));
  if (config.server.empty()) {
    return absl::InvalidArgumentError(
        internal::Cat("kubeconfig cluster \"", cluster_name, "\" has no server"));
  }
  config.insecure_skip_tls_verify = StringField(cluster, "insecure-skip-tls-verify") == "true";
  ASSIGN_OR_RETURN(config.ca_pem, DataOrFile(cluster, "certificate-authority", base_dir));
  std::string ns = StringField(ctx, "namespace");
  if (!ns.empty()) config.default_namespace = ns;

  if (!user_name.empty()) {
    ASSIGN_OR_RETURN(YAML::Node user, FindNamed(root, "users", "user", user_name));
    ASSIGN_OR_RETURN(config.client_cert_pem, DataOrFile(user, "client-certificate", base_dir));
    ASSIGN_OR_RETURN(config.client_key_pem, DataOrFile(user, "client-key", base_dir));
    if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
      return absl::InvalidArgumentError(internal::Cat(
          "kubeconfig user \"", user_name, "\" has a client certificate or key but not both"));
    }
    config.bearer_token = StringField(user, "token");
    std::string token_file = StringField(user, "tokenFile");
    if (!token_file.empty()) {
      config.token_file = std::make_shared<TokenFile>(Resolve(base_dir, token_file), clock);
    }
  }
  return config;
}

}  // namespace

absl::StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, std::string_view base_dir,
                                           std::string_view context, Clock& clock) {
  YAML::Node root;
  try {
    // yaml-cpp reports syntax errors only by exception; they stop here.
    root = YAML::Load(std::string(yaml));
    return ParseKubeconfigNode(root, base_dir, context, clock);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(internal::Cat("kubeconfig is not valid YAML: ", e.what()));
  }
}

absl::StatusOr<RestConfig> LoadKubeconfig(const std::string& path, std::string_view context,
                                          Clock& clock) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::string base_dir;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) base_dir = path.substr(0, slash);
  absl::StatusOr<RestConfig> config = ParseKubeconfig(text, base_dir, context, clock);
  if (!config.ok()) return phalanx::Annotate(config.status(), path);
  return config;
}

absl::StatusOr<RestConfig> LoadInClusterConfig(const InClusterPaths& paths, Clock& clock) {
  std::string host = paths.host;
  std::string port = paths.port;
  if (host.empty()) {
    const char* env = std::getenv("KUBERNETES_SERVICE_HOST");
    host = env == nullptr ? "" : env;
  }
  if (port.empty()) {
    const char* env = std::getenv("KUBERNETES_SERVICE_PORT");
    port = env == nullptr ? "" : env;
  }
  if (host.empty() || port.empty()) {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  RestConfig config;
  // An IPv6 service address needs brackets in a URL.
  bool ipv6 = host.find(':') != std::string::npos;
  config.server = internal::Cat("https://", ipv6 ? "[" : "", host, ipv6 ? "]" : "", ":", port);
  config.token_file = std::make_shared<TokenFile>(paths.token, clock);
  // Fail fast if the token is unreadable now, rather than on the first request.
  RETURN_IF_ERROR(config.token_file->Token().status());
  ASSIGN_OR_RETURN(config.ca_pem, ReadFileToString(paths.ca));
  absl::StatusOr<std::string> ns = ReadFileToString(paths.namespace_file);
  if (ns.ok()) {
    std::string trimmed(absl::StripAsciiWhitespace(*ns));
    if (!trimmed.empty()) config.default_namespace = trimmed;
  }
  return config;
}

}  // namespace kube
