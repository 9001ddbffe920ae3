#include "common/signal_thread.h"

#include <thread>

namespace tony {

SignalThread::SignalThread(const sigset_t& signals, std::function<void(int)> handler)
    : shared_(std::make_shared<Shared>()) {
  shared_->handler = std::move(handler);
  std::thread([shared = shared_, signals] {
    int sig = 0;
    while (sigwait(&signals, &sig) == 0) {
      MutexLock lock(shared->mu);
      if (shared->handler) shared->handler(sig);
    }
  }).detach();
}

SignalThread::~SignalThread() {
  // Waits for a handler that is running now; none starts after this.
  MutexLock lock(shared_->mu);
  shared_->handler = nullptr;
}

}  // namespace tony
