#include "kube/config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/mocks/kube/mock_clock.h"
#include "tests/unit/kube/testdata.h"

namespace kube {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;
using testing::Testdata;
using testing::TestdataPath;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kube-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::filesystem::path file = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(KubeconfigTest, CurrentContextWithInlineCredentials) {
  ASSERT_OK_AND_ASSIGN(RestConfig config, LoadKubeconfig(TestdataPath("kubeconfig.yaml")));
  EXPECT_EQ(config.server, "https://127.0.0.1:36443");  // trailing slash dropped
  EXPECT_EQ(config.ca_pem, "-----BEGIN CERTIFICATE-----\nca-data\n-----END CERTIFICATE-----\n");
  EXPECT_EQ(config.client_cert_pem, "client-cert");
  EXPECT_EQ(config.client_key_pem, "client-key");
  EXPECT_EQ(config.default_namespace, "ml-team");
  EXPECT_FALSE(config.insecure_skip_tls_verify);
  ASSERT_OK_AND_ASSIGN(std::string token, config.BearerToken());
  EXPECT_EQ(token, "");
}

TEST(KubeconfigTest, NamedContextResolvesFilesRelativeToTheKubeconfig) {
  TempDir dir;
  dir.Write("certs/ca.crt", "CA FROM FILE");
  dir.Write("tokens/robot", "robot-token\n");
  std::string path = dir.Write("config", Testdata("kubeconfig.yaml"));
  FakeClock clock;
  ASSERT_OK_AND_ASSIGN(RestConfig config, LoadKubeconfig(path, "remote", clock));
  EXPECT_EQ(config.server, "https://10.0.0.1:6443");
  EXPECT_EQ(config.ca_pem, "CA FROM FILE");
  EXPECT_TRUE(config.insecure_skip_tls_verify);
  EXPECT_EQ(config.default_namespace, "default");
  ASSERT_OK_AND_ASSIGN(std::string token, config.BearerToken());
  EXPECT_EQ(token, "robot-token");
}

TEST(KubeconfigTest, Errors) {
  EXPECT_THAT(LoadKubeconfig("/nonexistent/kubeconfig"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ParseKubeconfig("clusters: [", ""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseKubeconfig(Testdata("kubeconfig.yaml"), "", "missing"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing")));
  EXPECT_THAT(ParseKubeconfig("apiVersion: v1\nkind: Config\n", ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("current-context")));
  // A file reference that does not exist fails at load, naming the file.
  EXPECT_THAT(ParseKubeconfig(Testdata("kubeconfig.yaml"), "/nowhere", "remote"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nowhere/certs/ca.crt")));
}

TEST(TokenFileTest, PicksUpRotatedTokenAfterRefresh) {
  TempDir dir;
  std::string path = dir.Write("token", "first\n");
  FakeClock clock;
  TokenFile token(path, clock, absl::Minutes(1));
  ASSERT_OK_AND_ASSIGN(std::string t1, token.Token());
  EXPECT_EQ(t1, "first");
  dir.Write("token", "second");
  clock.Advance(absl::Seconds(30));
  ASSERT_OK_AND_ASSIGN(std::string t2, token.Token());
  EXPECT_EQ(t2, "first");  // cached within the refresh period
  clock.Advance(absl::Seconds(31));
  ASSERT_OK_AND_ASSIGN(std::string t3, token.Token());
  EXPECT_EQ(t3, "second");
  // The kubelet swaps the file atomically, but if it is briefly missing keep the old token.
  std::filesystem::remove(path);
  clock.Advance(absl::Minutes(2));
  ASSERT_OK_AND_ASSIGN(std::string t4, token.Token());
  EXPECT_EQ(t4, "second");
}

TEST(InClusterConfigTest, ReadsServiceAccountMount) {
  TempDir dir;
  InClusterPaths paths{.token = dir.Write("token", "sa-token"),
                       .ca = dir.Write("ca.crt", "CLUSTER CA"),
                       .namespace_file = dir.Write("namespace", "phalanx-system\n"),
                       .host = "10.96.0.1",
                       .port = "443"};
  FakeClock clock;
  ASSERT_OK_AND_ASSIGN(RestConfig config, LoadInClusterConfig(paths, clock));
  EXPECT_EQ(config.server, "https://10.96.0.1:443");
  EXPECT_EQ(config.ca_pem, "CLUSTER CA");
  EXPECT_EQ(config.default_namespace, "phalanx-system");
  ASSERT_OK_AND_ASSIGN(std::string token, config.BearerToken());
  EXPECT_EQ(token, "sa-token");
  // Rotation goes through to requests made later.
  dir.Write("token", "rotated");
  clock.Advance(absl::Minutes(2));
  ASSERT_OK_AND_ASSIGN(token, config.BearerToken());
  EXPECT_EQ(token, "rotated");

  paths.host = "fd00::1";
  ASSERT_OK_AND_ASSIGN(RestConfig v6, LoadInClusterConfig(paths, clock));
  EXPECT_EQ(v6.server, "https://[fd00::1]:443");
}

TEST(InClusterConfigTest, OutsideAPodIsFailedPrecondition) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_THAT(LoadInClusterConfig(InClusterPaths{}),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  TempDir dir;
  InClusterPaths paths{.token = dir.path() + "/missing", .host = "10.96.0.1", .port = "443"};
  EXPECT_THAT(LoadInClusterConfig(paths), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace kube
