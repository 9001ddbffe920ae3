#include "am/watcher_registry.h"

#include <algorithm>

namespace tony::am {

void WatcherRegistry::Add(int64_t after_version, int64_t max_wait_ms, Reply<rpc::JobStatus> reply) {
  const int64_t wait = std::clamp<int64_t>(max_wait_ms, 0, kMaxWaitMs);
  watchers_.push_back({after_version, clock_->NowMs() + wait, std::move(reply)});
}

void WatcherRegistry::Poll(int64_t version, bool complete, const Fill& fill) {
  Answer(version, complete, /*all=*/false, fill);
}

void WatcherRegistry::AnswerAll(const Fill& fill) {
  Answer(/*version=*/0, /*complete=*/false, /*all=*/true, fill);
}

void WatcherRegistry::Answer(int64_t version, bool complete, bool all, const Fill& fill) {
  const int64_t now = clock_->NowMs();
  const bool may_answer_change = complete || now - last_change_answered_ms_ >= kCoalesceMs;
  bool answered_change = false;
  std::erase_if(watchers_, [&](Watcher& watcher) {
    const bool changed = version > watcher.after_version && may_answer_change;
    if (!all && !changed && now < watcher.deadline_ms) return false;
    fill(watcher.reply.response());
    std::move(watcher.reply).Send();
    answered_change |= changed;
    return true;
  });
  if (answered_change) last_change_answered_ms_ = now;
}

}  // namespace tony::am
