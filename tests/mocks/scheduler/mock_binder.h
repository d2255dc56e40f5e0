// gMock twin of phalanx::extender::Binder, for the extender's unit tests.
//
//   extender::MockBinder binder;
//   EXPECT_CALL(binder, Bind("ml", "llama-3", "uid-3", "node-7"))
//       .WillOnce(Return(absl::OkStatus()));
#pragma once

#include "gmock/gmock.h"
#include "scheduler/extender/extender.h"

namespace phalanx::extender {

class MockBinder : public Binder {
 public:
  MOCK_METHOD(absl::Status, Bind,
              (std::string_view ns, std::string_view pod, std::string_view uid,
               std::string_view node),
              (override));
};

}  // namespace phalanx::extender
