// gMock twin of kube::Transport.
//
//   kube::MockTransport transport;
//   EXPECT_CALL(transport, Send(Field(&kube::HttpRequest::path, "/api/v1/namespaces/a/pods/p")))
//       .WillOnce(Return(kube::HttpResponse{.status = 200, .body = pod_json}));
#pragma once

#include "gmock/gmock.h"
#include "kube/transport.h"

namespace kube {

class MockTransport : public Transport {
 public:
  MOCK_METHOD(absl::StatusOr<HttpResponse>, Send, (const HttpRequest& request), (override));
  MOCK_METHOD(absl::StatusOr<HttpResponse>, Stream,
              (const HttpRequest& request, const ChunkCallback& on_chunk,
               const Cancellation* cancel),
              (override));
};

}  // namespace kube
