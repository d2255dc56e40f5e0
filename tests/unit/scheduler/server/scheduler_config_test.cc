// phalanx-scheduler's flags and config file: what an operator of the binary sees when a value is
// wrong, and which source wins.
#include "scheduler/server/scheduler_config.h"
#include "scheduler/server/serving.h"

#include <cstdio>
#include <fstream>
#include <string>

#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace phalanx::scheduler {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::HasSubstr;

std::string WriteTemp(const std::string& text) {
  std::string path = ::testing::TempDir() + "/phalanx-scheduler-config-" +
                     std::to_string(reinterpret_cast<uintptr_t>(&text)) + ".yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(SchedulerConfigTest, DefaultsListenOnLoopback) {
  ASSERT_OK_AND_ASSIGN(SchedulerConfig c, ParseSchedulerFlags({}));
  EXPECT_EQ(c.extender_address, "127.0.0.1:8888");
  EXPECT_EQ(c.grpc_address, "127.0.0.1:9443");
  EXPECT_EQ(c.health_address, "127.0.0.1:8080");
  EXPECT_EQ(c.topology_preset, "eks");
  EXPECT_EQ(c.kubeconfig, "");
}

TEST(SchedulerConfigTest, FlagsOverrideTheFileWhateverTheOrder) {
  std::string path = WriteTemp("extenderAddress: 127.0.0.1:7000\ngrpcAddress: 127.0.0.1:7001\n"
                               "topologyPreset: gb200\nlogLevel: debug\n");
  ASSERT_OK_AND_ASSIGN(SchedulerConfig c,
                       ParseSchedulerFlags({"--grpc-address=127.0.0.1:0", "--config", path}));
  EXPECT_EQ(c.extender_address, "127.0.0.1:7000");
  EXPECT_EQ(c.grpc_address, "127.0.0.1:0");
  EXPECT_EQ(c.topology_preset, "gb200");
  EXPECT_EQ(c.log_level, "debug");
  std::remove(path.c_str());
}

TEST(SchedulerConfigTest, BadInputNamesTheFlagOrKey) {
  EXPECT_THAT(ParseSchedulerFlags({"--extender-addres=1"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown flag --extender-addres")));
  EXPECT_THAT(ParseSchedulerFlags({"--extender-address", "localhost"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--extender-address")));
  EXPECT_THAT(ParseSchedulerFlags({"--grpc-address=127.0.0.1:99999"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grpcAddress port")));
  EXPECT_THAT(ParseSchedulerFlags({"--topology-preset=dgx"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown preset \"dgx\"")));
  EXPECT_THAT(ParseSchedulerFlags({"--kubeconfig"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--kubeconfig needs a value")));
  EXPECT_THAT(ParseSchedulerFlags({"--bogus"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown flag --bogus")));
  EXPECT_THAT(ParseSchedulerFlags({"stray"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unexpected argument")));
  EXPECT_THAT(ParseSchedulerFlags({"--extenderAddress=127.0.0.1:1"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown flag")));
  std::string path = WriteTemp("extenderAdress: 127.0.0.1:7000\n");
  EXPECT_THAT(ParseSchedulerFlags({"--config=" + path}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown key \"extenderAdress\"")));
  std::remove(path.c_str());
  EXPECT_THAT(ParseSchedulerFlags({"--config=/nonexistent/phalanx.yaml"}),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/phalanx.yaml")));
}

TEST(SchedulerConfigTest, HelpAndVersion) {
  ASSERT_OK_AND_ASSIGN(SchedulerConfig c, ParseSchedulerFlags({"--help"}));
  EXPECT_TRUE(c.show_help);
  ASSERT_OK_AND_ASSIGN(c, ParseSchedulerFlags({"--version"}));
  EXPECT_TRUE(c.show_version);
  // Every option the file accepts is documented in --help.
  for (const char* flag : {"--config", "--kubeconfig", "--context", "--extender-address",
                           "--grpc-address", "--health-address", "--topology-preset",
                           "--topology ", "--log-level", "--http-threads",
                           "--sync-timeout-seconds", "--extender-max-body-bytes",
                           "--grpc-max-message-bytes", "--http-read-timeout-seconds",
                           "--http-max-connections", "--grpc-tls-writers"}) {
    EXPECT_THAT(SchedulerUsage(), HasSubstr(flag));
  }
}

TEST(SchedulerConfigTest, WritersAreACommaSeparatedList) {
  ASSERT_OK_AND_ASSIGN(SchedulerConfig c, ParseSchedulerFlags({}));
  EXPECT_TRUE(c.grpc_tls_writers.empty());
  ASSERT_OK_AND_ASSIGN(
      c, ParseSchedulerFlags({"--grpc-tls-writers", "phalanx-operator, ops.example,"}));
  EXPECT_EQ(c.grpc_tls_writers, (std::vector<std::string>{"phalanx-operator", "ops.example"}));
  std::string path = WriteTemp("grpcTlsWriters: a,b\n");
  ASSERT_OK_AND_ASSIGN(c, ParseSchedulerFlags({"--config", path}));
  EXPECT_EQ(c.grpc_tls_writers, (std::vector<std::string>{"a", "b"}));
}

TEST(SchedulerConfigTest, WritersNeedClientCertificates) {
  ASSERT_OK_AND_ASSIGN(SchedulerConfig c, ParseSchedulerFlags({"--grpc-tls-writers=op"}));
  EXPECT_THAT(LoadGrpcTls(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--grpc-tls-writers needs --grpc-tls-client-ca")));
}

TEST(SchedulerConfigTest, RequestLimitsHaveDefaultsAndRefuseNonsense) {
  ASSERT_OK_AND_ASSIGN(SchedulerConfig c, ParseSchedulerFlags({}));
  EXPECT_EQ(c.extender_max_body_bytes, 8 << 20);
  EXPECT_EQ(c.grpc_max_message_bytes, 64 << 20);
  EXPECT_EQ(c.http_read_timeout_seconds, 60);
  EXPECT_EQ(c.http_max_connections, 512);
  ASSERT_OK_AND_ASSIGN(c, ParseSchedulerFlags({"--extender-max-body-bytes", "65536",
                                               "--grpc-max-message-bytes=1048576",
                                               "--http-read-timeout-seconds", "2",
                                               "--http-max-connections", "16"}));
  EXPECT_EQ(c.extender_max_body_bytes, 65536);
  EXPECT_EQ(c.grpc_max_message_bytes, 1 << 20);
  EXPECT_EQ(c.http_read_timeout_seconds, 2);
  EXPECT_EQ(c.http_max_connections, 16);
  EXPECT_THAT(ParseSchedulerFlags({"--extender-max-body-bytes", "0"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("extenderMaxBodyBytes")));
  EXPECT_THAT(ParseSchedulerFlags({"--grpc-max-message-bytes", "4294967296"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grpcMaxMessageBytes")));
  EXPECT_THAT(ParseSchedulerFlags({"--http-max-connections", "0"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("httpMaxConnections")));
}

}  // namespace
}  // namespace phalanx::scheduler
