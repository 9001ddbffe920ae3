#include "am/page_renderer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <vector>

namespace tony::am {
namespace {

// A render function that records each version it renders and can be held inside a rendering.
class Recorder {
 public:
  PageRenderer::Render Render() {
    return [this](const rpc::JobStatus& status, const LiveHistory& live) {
      MutexLock lock(mu_);
      rendered_.push_back(status.version());
      users_.push_back(live.user);
      changed_.NotifyAll();
      while (held_) changed_.Wait(mu_);
    };
  }
  void Hold() {
    MutexLock lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      MutexLock lock(mu_);
      held_ = false;
    }
    changed_.NotifyAll();
  }
  // Waits (with a deadline) until `n` snapshots were rendered.
  bool WaitForRendered(size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    MutexLock lock(mu_);
    while (rendered_.size() < n) {
      if (!changed_.WaitUntil(mu_, deadline)) return false;
    }
    return true;
  }
  std::vector<int64_t> rendered() {
    MutexLock lock(mu_);
    return rendered_;
  }
  std::vector<std::string> users() {
    MutexLock lock(mu_);
    return users_;
  }

 private:
  Mutex mu_;
  CondVar changed_;
  bool held_ TONY_GUARDED_BY(mu_) = false;
  std::vector<int64_t> rendered_ TONY_GUARDED_BY(mu_);
  std::vector<std::string> users_ TONY_GUARDED_BY(mu_);
};

rpc::JobStatus Version(int64_t version) {
  rpc::JobStatus status;
  status.set_version(version);
  return status;
}

TEST(PageRendererTest, WhileOneRendersOnlyTheNewestWaits) {
  Recorder recorder;
  PageRenderer renderer(recorder.Render());
  recorder.Hold();
  renderer.Submit(Version(1), {});
  ASSERT_TRUE(recorder.WaitForRendered(1));  // 1 is being rendered, and held there
  renderer.Submit(Version(2), {});
  renderer.Submit(Version(3), {});  // replaces 2, which was never rendered
  recorder.Release();
  ASSERT_TRUE(recorder.WaitForRendered(2));
  renderer.Stop();
  EXPECT_EQ(recorder.rendered(), (std::vector<int64_t>{1, 3}));
}

TEST(PageRendererTest, TheSnapshotIsACopyTakenAtSubmit) {
  Recorder recorder;
  PageRenderer renderer(recorder.Render());
  LiveHistory live;
  live.user = "alice";
  renderer.Submit(Version(1), live);
  live.user = "mallory";  // the loop goes on changing its own copy
  ASSERT_TRUE(recorder.WaitForRendered(1));
  renderer.Stop();
  EXPECT_EQ(recorder.users(), std::vector<std::string>{"alice"});
}

TEST(PageRendererTest, StopRendersWhatWaitsAndThenRefusesMore) {
  Recorder recorder;
  PageRenderer renderer(recorder.Render());
  recorder.Hold();
  renderer.Submit(Version(1), {});
  ASSERT_TRUE(recorder.WaitForRendered(1));
  renderer.Submit(Version(2), {});
  // Stop waits for the thread, which is held in 1; let it go from another thread.
  std::future<void> released = std::async(std::launch::async, [&] { recorder.Release(); });
  renderer.Stop();
  released.get();
  renderer.Submit(Version(3), {});
  renderer.Stop();  // again: nothing
  EXPECT_EQ(recorder.rendered(), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace tony::am
