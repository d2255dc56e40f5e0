// The Placement API over TLS on 127.0.0.1: mutual TLS works; a client without a certificate,
// with one from another CA, in plain text, or trusting another CA is refused at the handshake;
// a certificate whose names do not match the target is refused unless the expected name is
// given; and every way a file can be wrong is an error naming the option.
#include "scheduler/grpc/tls.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/grpc/placement_grpc_client.h"
#include "scheduler/grpc/placement_grpc_server.h"
#include "scheduler/in_process_placement_service.h"
#include "tests/unit/scheduler/test_cluster.h"

namespace phalanx::placement {
namespace {

using ::phalanx::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace ::phalanx::placement::testing;  // NOLINT: the test cluster vocabulary

ClusterSnapshot EightNodes() {
  ClusterSnapshot snapshot(Eks());
  AddNodes(snapshot, {"a", "b", "nn-1"}, "n", 8);
  return snapshot;
}

std::string Data(const std::string& name) {
  return absl::StrCat(PHALANX_TLS_TESTDATA, "/", name);
}

const TlsOptionNames kServerNames{"--grpc-tls-cert", "--grpc-tls-key", "--grpc-tls-client-ca"};
const TlsOptionNames kClientNames{"--tls-cert", "--tls-key", "--tls-ca"};

std::optional<TlsPem> Server(const std::string& client_ca = "ca.pem") {
  absl::StatusOr<std::optional<TlsPem>> tls = LoadServerTls(
      {.cert = Data("server.pem"), .key = Data("server.key"),
       .ca = client_ca.empty() ? "" : Data(client_ca)},
      kServerNames);
  EXPECT_TRUE(tls.ok()) << tls.status();
  return tls.ok() ? *tls : std::nullopt;
}

std::optional<TlsPem> Client(const std::string& ca, const std::string& cert) {
  absl::StatusOr<std::optional<TlsPem>> tls = LoadClientTls(
      {.cert = cert.empty() ? "" : Data(cert + ".pem"),
       .key = cert.empty() ? "" : Data(cert + ".key"), .ca = Data(ca)},
      kClientNames);
  EXPECT_TRUE(tls.ok()) << tls.status();
  return tls.ok() ? *tls : std::nullopt;
}

class TlsServer : public ::testing::Test {
 protected:
  void Start(std::optional<TlsPem> tls) {
    absl::StatusOr<RunningPlacementServer> running =
        StartPlacementServer(service_, {.tls = std::move(tls)});
    ASSERT_TRUE(running.ok()) << running.status();
    server_ = *std::move(running);
  }
  std::string Target() const { return absl::StrCat("127.0.0.1:", server_.port); }
  // A call that needs the whole path: a dry-run placement of one 4-GPU pod.
  static absl::StatusOr<PlacementResult> Call(const GrpcPlacementService& client) {
    return client.Place(Gang("t/a", 1, 8));
  }

  InProcessPlacementService backend_{EightNodes()};
  PlacementGrpcService service_{backend_, nullptr};
  RunningPlacementServer server_;
};

TEST_F(TlsServer, MutualTlsWorks) {
  Start(Server());
  GrpcPlacementService client(Target(), {.tls = Client("ca.pem", "client")});
  absl::StatusOr<PlacementResult> result = Call(client);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->placed);
}

TEST_F(TlsServer, ClientsWithoutAGoodCertificateAreRefusedAtTheHandshake) {
  Start(Server());
  GrpcPlacementService plain(Target());
  EXPECT_THAT(Call(plain), StatusIs(absl::StatusCode::kUnavailable, HasSubstr(Target())));
  GrpcPlacementService no_cert(Target(), {.tls = Client("ca.pem", "")});
  EXPECT_THAT(Call(no_cert), StatusIs(absl::StatusCode::kUnavailable));
  GrpcPlacementService other_ca(Target(), {.tls = Client("ca.pem", "other-client")});
  EXPECT_THAT(Call(other_ca), StatusIs(absl::StatusCode::kUnavailable));
  // The client does not trust the server's CA.
  GrpcPlacementService distrust(Target(), {.tls = Client("other-ca.pem", "client")});
  EXPECT_THAT(Call(distrust), StatusIs(absl::StatusCode::kUnavailable));
  // The refused calls never reached the service; a good client still gets through.
  GrpcPlacementService good(Target(), {.tls = Client("ca.pem", "client")});
  EXPECT_TRUE(Call(good).ok());
}

TEST_F(TlsServer, WithoutAClientCaAnyTlsClientIsServed) {
  Start(Server(""));
  GrpcPlacementService no_cert(Target(), {.tls = Client("ca.pem", "")});
  EXPECT_TRUE(Call(no_cert).ok());
  GrpcPlacementService plain(Target());
  EXPECT_THAT(Call(plain), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(TlsServer, TheServersNameIsChecked) {
  Start(Server());
  // "localhost" is in the certificate, as is 127.0.0.1 (used above). The target stays an
  // address: resolving a name would go through c-ares, whose resolver state LeakSanitizer
  // reports at exit.
  GrpcPlacementService by_name(Target(), {.tls = Client("ca.pem", "client"),
                                          .tls_server_name = "localhost"});
  EXPECT_TRUE(Call(by_name).ok());
  // Connecting to 127.0.0.1 but expecting a name the certificate does not carry fails...
  GrpcPlacementService wrong(Target(), {.tls = Client("ca.pem", "client"),
                                        .tls_server_name = "phalanx-scheduler.elsewhere.svc"});
  EXPECT_THAT(Call(wrong), StatusIs(absl::StatusCode::kUnavailable));
  // ... and the Service's name, as through a port-forward, works.
  GrpcPlacementService forwarded(
      Target(), {.tls = Client("ca.pem", "client"),
                 .tls_server_name = "phalanx-scheduler.phalanx-system.svc"});
  EXPECT_TRUE(Call(forwarded).ok());
}

TEST(TlsFiles, NothingGivenIsPlainText) {
  absl::StatusOr<std::optional<TlsPem>> server = LoadServerTls({}, kServerNames);
  absl::StatusOr<std::optional<TlsPem>> client = LoadClientTls({}, kClientNames);
  ASSERT_TRUE(server.ok() && client.ok());
  EXPECT_FALSE(server->has_value());
  EXPECT_FALSE(client->has_value());
}

TEST(TlsFiles, EveryMistakeNamesTheOption) {
  const std::string cert = Data("server.pem"), key = Data("server.key"), ca = Data("ca.pem");
  auto server = [](TlsFiles files) { return LoadServerTls(files, kServerNames).status(); };
  auto client = [](TlsFiles files) { return LoadClientTls(files, kClientNames).status(); };
  EXPECT_THAT(server({.cert = cert}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--grpc-tls-cert and --grpc-tls-key go together: give both or neither "
                       "(--grpc-tls-cert given alone)"));
  EXPECT_THAT(server({.ca = ca}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--grpc-tls-client-ca needs --grpc-tls-cert")));
  EXPECT_THAT(client({.cert = cert, .key = key}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--tls-cert needs --tls-ca")));
  EXPECT_THAT(server({.cert = "/nonexistent/cert.pem", .key = key}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--grpc-tls-cert: /nonexistent/cert.pem: no such file or directory"));
  EXPECT_THAT(server({.cert = PHALANX_TLS_TESTDATA, .key = key}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is a directory")));
  // A key where the certificate belongs, and the other way round.
  EXPECT_THAT(server({.cert = key, .key = key}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--grpc-tls-cert: " + key + ": no PEM certificate")));
  EXPECT_THAT(server({.cert = cert, .key = cert}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--grpc-tls-key: " + cert + ": no PEM private key")));
  EXPECT_THAT(client({.ca = key}), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("--tls-ca: " + key + ": no PEM CA")));
}

TEST(TlsFiles, AKeyThatDoesNotMatchTheCertificateIsRefusedAtStart) {
  EXPECT_THAT(LoadServerTls({.cert = Data("server.pem"), .key = Data("client.key")}, kServerNames),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("--grpc-tls-key: "), HasSubstr("client.key"),
                             HasSubstr("does not match the certificate of --grpc-tls-cert"))));
  EXPECT_THAT(LoadClientTls({.cert = Data("client.pem"), .key = Data("server.key"),
                             .ca = Data("ca.pem")},
                            kClientNames),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--tls-key: ")));
}

// Rotation, as the kubelet does it for a mounted Secret: the files are symbolic links through
// `..data` to a directory of one version, and an update writes a new directory and swaps the
// `..data` link, so every file changes at once. Each side's credentials read the files again
// every reload_seconds, and new connections use the new certificates without a restart.
class TlsRotation : public TlsServer {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/phalanx-tls-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    server_ = {};
    std::filesystem::remove_all(dir_);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  // Publishes a version of the Secret: file name -> test file it holds.
  void Publish(const std::map<std::string, std::string>& files) {
    namespace fs = std::filesystem;
    const std::string version = absl::StrCat("..v", ++versions_);
    fs::create_directory(Path(version));
    for (const auto& [name, from] : files) {
      fs::copy_file(Data(from), Path(version + "/" + name));
      if (!fs::is_symlink(Path(name))) fs::create_symlink("..data/" + name, Path(name));
    }
    fs::create_symlink(version, Path("..data_tmp"));
    fs::rename(Path("..data_tmp"), Path("..data"));  // the atomic swap
  }
  static TlsPem Load(absl::StatusOr<std::optional<TlsPem>> tls) {
    EXPECT_TRUE(tls.ok()) << tls.status();
    TlsPem pem = tls.ok() && *tls ? **tls : TlsPem{};
    pem.reload_seconds = 1;
    return pem;
  }
  // A client of its own (fresh credentials, fresh connection) trusting the test CA `ca`.
  absl::Status FreshCall(const std::string& ca) {
    GrpcPlacementService client(Target(), {.tls = Client(ca, "client")});
    return Call(client).status();
  }
  // Calls until one succeeds, for at most 20 reload intervals; the last status.
  static absl::Status Eventually(const std::function<absl::Status()>& call) {
    absl::Status s;
    for (int i = 0; i < 80 && !(s = call()).ok(); ++i) absl::SleepFor(absl::Milliseconds(250));
    return s;
  }

  std::string dir_;
  int versions_ = 0;
};

TEST_F(TlsRotation, TheServerServesARotatedCertificateWithoutARestart) {
  Publish({{"tls.crt", "server.pem"}, {"tls.key", "server.key"}, {"ca.crt", "ca.pem"}});
  Start(Load(LoadServerTls({.cert = Path("tls.crt"), .key = Path("tls.key"), .ca = Path("ca.crt")},
                           kServerNames)));
  ASSERT_TRUE(FreshCall("ca.pem").ok());
  EXPECT_THAT(FreshCall("rotated-ca.pem"), StatusIs(absl::StatusCode::kUnavailable));
  // A certificate from another CA (the client CA stays): new connections get it, and a client
  // trusting only the old CA no longer connects.
  Publish({{"tls.crt", "rotated-server.pem"}, {"tls.key", "rotated-server.key"},
           {"ca.crt", "ca.pem"}});
  EXPECT_TRUE(Eventually([&] { return FreshCall("rotated-ca.pem"); }).ok());
  EXPECT_THAT(FreshCall("ca.pem"), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(TlsRotation, TheClientTrustsARotatedCaWithoutARestart) {
  Start(Server());  // serves server.pem, signed by ca.pem
  Publish({{"tls.crt", "client.pem"}, {"tls.key", "client.key"}, {"ca.crt", "rotated-ca.pem"}});
  GrpcPlacementService client(
      Target(), {.tls = Load(LoadClientTls(
                     {.cert = Path("tls.crt"), .key = Path("tls.key"), .ca = Path("ca.crt")},
                     kClientNames))});
  EXPECT_THAT(Call(client), StatusIs(absl::StatusCode::kUnavailable));  // distrusts the server
  Publish({{"tls.crt", "client.pem"}, {"tls.key", "client.key"}, {"ca.crt", "ca.pem"}});
  EXPECT_TRUE(Eventually([&] { return Call(client).status(); }).ok());  // the same client
}

// Authorization: with writers named, only their certificates may change reservations; every
// client the CA signed may still read.
class TlsWriters : public TlsServer {
 protected:
  void SetUp() override {
    service_.RequireWriters({"phalanx-operator", "phalanx-operator.example"});
    absl::StatusOr<std::optional<TlsPem>> tls = LoadServerTls(
        {.cert = Data("authz-server.pem"), .key = Data("authz-server.key"),
         .ca = Data("authz-ca.pem")},
        kServerNames);
    ASSERT_TRUE(tls.ok()) << tls.status();
    Start(*tls);
  }
  GrpcPlacementService As(const std::string& cert) {
    return GrpcPlacementService(Target(), {.tls = Client("authz-ca.pem", cert)});
  }
};

TEST_F(TlsWriters, OnlyAWriterChangesReservations) {
  GrpcPlacementService writer = As("authz-writer");  // CN phalanx-operator
  absl::StatusOr<PlacementResult> reserved = writer.Reserve(Gang("t/a", 1, 8));
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  EXPECT_TRUE(reserved->placed);

  GrpcPlacementService reader = As("authz-reader");  // CN phalanx-viewer
  EXPECT_THAT(reader.Release("t/a"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("Placement.Release changes reservations"),
                             HasSubstr("phalanx-operator, phalanx-operator.example"),
                             HasSubstr("this client presented one naming phalanx-viewer"))));
  EXPECT_THAT(reader.Reserve(Gang("t/b", 1, 8)),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(reader.Resize("t/a", 2), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(reader.ReplaceNodes("t/a", {"n-0"}), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_TRUE(Call(reader).ok());  // the reader still reads (a dry run)
  // A subject alternative name counts as well as the common name.
  // The refused calls changed nothing: t/a is still reserved, t/b never was.
  GrpcPlacementService by_san = As("authz-san-writer");
  EXPECT_TRUE(by_san.Release("t/a").ok());
  EXPECT_THAT(by_san.Release("t/b"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(TlsServer, WithoutWritersEveryClientMayChangeReservations) {
  Start(Server());
  GrpcPlacementService client(Target(), {.tls = Client("ca.pem", "client")});
  ASSERT_TRUE(client.Reserve(Gang("t/a", 1, 8)).ok());
  EXPECT_TRUE(client.Release("t/a").ok());
}

}  // namespace
}  // namespace phalanx::placement
