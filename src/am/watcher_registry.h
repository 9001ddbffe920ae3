#pragma once
// The clients' WatchJob long-polls: each waits until the job is newer than the version it has,
// or until its own deadline, and is then answered with the whole job. Changes that come close
// together (hundreds of tasks starting or ending at once) go out together: a watcher hears of a
// change at once if none went out in the last kCoalesceMs, else at the next Poll after that; the
// job's completion always at once. Each answer is the whole job, so answering every change as it
// happens would cost O(tasks) per change.
//
// Threads: the AM's loop only.

#include <cstdint>
#include <functional>
#include <vector>

#include "am/am_reply.h"
#include "common/clock.h"
#include "rpc/tony.pb.h"

namespace tony::am {

class WatcherRegistry {
 public:
  static constexpr int64_t kCoalesceMs = 100;
  static constexpr int64_t kMaxWaitMs = 60000;
  // Fills a watcher's answer with the job as it is now.
  using Fill = std::function<void(rpc::JobStatus*)>;

  explicit WatcherRegistry(const Clock* clock) : clock_(clock) {}

  // A watcher of versions after `after_version`, answered by `max_wait_ms` (clamped to
  // [0, kMaxWaitMs]) at the latest, with or without a change.
  void Add(int64_t after_version, int64_t max_wait_ms, Reply<rpc::JobStatus> reply);
  // Answers the watchers that are due: newer than they have (see above), or out of time.
  void Poll(int64_t version, bool complete, const Fill& fill);
  // Answers every watcher (the AM is ending).
  void AnswerAll(const Fill& fill);
  size_t size() const { return watchers_.size(); }

 private:
  struct Watcher {
    int64_t after_version;
    int64_t deadline_ms;
    Reply<rpc::JobStatus> reply;
  };
  void Answer(int64_t version, bool complete, bool all, const Fill& fill);

  const Clock* const clock_;
  std::vector<Watcher> watchers_;
  int64_t last_change_answered_ms_ = -kCoalesceMs;
};

}  // namespace tony::am
