#include "am/page_renderer.h"

namespace tony::am {

PageRenderer::PageRenderer(Render render) : render_(std::move(render)) {
  thread_ = std::thread([this] { Loop(); });
}

PageRenderer::~PageRenderer() { Stop(); }

void PageRenderer::Submit(rpc::JobStatus status, LiveHistory live) {
  auto snapshot = std::make_unique<Snapshot>(Snapshot{std::move(status), std::move(live)});
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    waiting_ = std::move(snapshot);
  }
  changed_.NotifyOne();
}

void PageRenderer::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  changed_.NotifyOne();
  if (thread_.joinable()) thread_.join();
}

void PageRenderer::Loop() {
  while (true) {
    std::unique_ptr<Snapshot> snapshot;
    {
      MutexLock lock(mu_);
      while (waiting_ == nullptr && !stopping_) changed_.Wait(mu_);
      if (waiting_ == nullptr) return;  // stopping, and nothing left to render
      snapshot = std::move(waiting_);
    }
    render_(snapshot->status, snapshot->live);
  }
}

}  // namespace tony::am
