#include "common/daemon/signal_waiter.h"

#include <pthread.h>
#include <unistd.h>

#include <utility>

namespace phalanx {

SignalWaiter::SignalWaiter(std::function<void()> on_signal) : on_signal_(std::move(on_signal)) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  thread_ = std::thread([this] {
    int number = 0;
    sigwait(&signals_, &number);
    received_.store(number);
    on_signal_();
  });
}

SignalWaiter::~SignalWaiter() {
  if (received_.load() == 0) kill(getpid(), SIGTERM);  // wake the waiting thread
  thread_.join();
}

std::string_view SignalWaiter::received_name() const {
  switch (received_.load()) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "no signal";
  }
}

}  // namespace phalanx
