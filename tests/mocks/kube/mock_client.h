// gMock twin of kube::Client, for controllers tested without a transport.
//
//   kube::MockClient client;
//   EXPECT_CALL(client, DoGet(_, "ml", "job-a", "")).WillOnce(Return(job_json));
//   client.Get(kube::ConfigMaps(), "ml", "job-a");   // the public call forwards to DoGet
#pragma once

#include "gmock/gmock.h"
#include "kube/client.h"

namespace kube {

class MockClient : public Client {
 public:
  MOCK_METHOD(absl::StatusOr<std::string>, DoGet,
              (const Resource& resource, std::string_view ns, std::string_view name,
               std::string_view subresource),
              (override));
  MOCK_METHOD(absl::Status, DoListPages,
              (const Resource& resource, std::string_view ns, const ListOptions& options,
               const std::function<absl::Status(std::string_view page)>& on_page),
              (override));
  MOCK_METHOD(absl::StatusOr<std::string>, DoCreate,
              (const Resource& resource, std::string_view ns, std::string_view body,
               const WriteOptions& options, std::string_view name, std::string_view subresource),
              (override));
  MOCK_METHOD(absl::StatusOr<std::string>, DoUpdate,
              (const Resource& resource, std::string_view ns, std::string_view name,
               std::string_view body, const WriteOptions& options, std::string_view subresource),
              (override));
  MOCK_METHOD(absl::StatusOr<std::string>, DoPatch,
              (const Resource& resource, std::string_view ns, std::string_view name, PatchType type,
               std::string_view body, const WriteOptions& options, std::string_view subresource),
              (override));
  MOCK_METHOD(absl::Status, DoDelete,
              (const Resource& resource, std::string_view ns, std::string_view name,
               const DeleteOptions& options),
              (override));
  MOCK_METHOD(absl::Status, DoWatch,
              (const Resource& resource, std::string_view ns, const WatchOptions& options,
               const WatchCallback& on_event, const Cancellation* cancel),
              (override));
};

}  // namespace kube
