#pragma once
// A thread that takes blocked signals with sigwait and hands each to a handler, for as long as
// its owner lives. Destroying the SignalThread stops delivery: once the destructor has returned,
// the handler is never called again and no longer referenced, though the thread itself (detached:
// sigwait cannot be interrupted) lives on until the process exits, swallowing further signals.
// Signals that arrive while the process is exiting therefore never reach a destroyed object.
//
// The signals must be blocked in every thread before any thread is created, so that only this
// one takes them. Declare a SignalThread after everything its handler uses, so that it is
// destroyed first.
//
// Threads: the handler runs on the signal thread, one signal at a time; it must not destroy the
// SignalThread itself.

#include <signal.h>

#include <functional>
#include <memory>

#include "common/mutex.h"

namespace tony {

class SignalThread {
 public:
  SignalThread(const sigset_t& signals, std::function<void(int)> handler);
  ~SignalThread();
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

 private:
  struct Shared {
    Mutex mu;
    std::function<void(int)> handler TONY_GUARDED_BY(mu);  // empty once the owner is gone
  };
  std::shared_ptr<Shared> shared_;
};

}  // namespace tony
