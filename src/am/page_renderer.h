#pragma once
// Renders the status page off the AM's loop: the loop hands over a snapshot (the JobStatus and
// the live history, copied), and a thread of its own renders it (HTML and SVG over up to 100k
// samples, which would hold the loop for as long). A snapshot not rendered yet is replaced by a
// newer one: the page shows the newest, and a slow rendering never queues work behind it.
//
// Threads: Submit from any thread (the AM's loop); Stop from the owner's. The render function
// runs on the renderer's own thread, one snapshot at a time.

#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "am/status_page.h"
#include "common/mutex.h"
#include "rpc/tony.pb.h"

namespace tony::am {

class PageRenderer {
 public:
  using Render = std::function<void(const rpc::JobStatus&, const LiveHistory&)>;

  explicit PageRenderer(Render render);
  // Stop().
  ~PageRenderer();
  PageRenderer(const PageRenderer&) = delete;
  PageRenderer& operator=(const PageRenderer&) = delete;

  // Queues a snapshot to render, in place of one still waiting.
  void Submit(rpc::JobStatus status, LiveHistory live);
  // Renders what waits, then ends the thread. Submit does nothing after it. Idempotent.
  void Stop();

 private:
  struct Snapshot {
    rpc::JobStatus status;
    LiveHistory live;
  };
  void Loop();

  const Render render_;
  Mutex mu_;
  CondVar changed_;
  std::unique_ptr<Snapshot> waiting_ TONY_GUARDED_BY(mu_);
  bool stopping_ TONY_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tony::am
