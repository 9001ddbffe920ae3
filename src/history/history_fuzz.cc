// libFuzzer target for the history reader and the pages built from what it read: job.json,
// events.jsonl, metrics.jsonl and config.json (the input's parts, split at "\n\x1e\n") and log
// names. Any input, however partial or damaged, must give pages, never a crash, a hang or a
// sanitizer report, and nothing of it may reach a page unescaped.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history/history_pages.h"
#include "history/history_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tony::history;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (parts.size() < 3) {
    const size_t at = input.find("\n\x1e\n", start);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(start, at - start));
    start = at + 3;
  }
  parts.push_back(input.substr(start));
  parts.resize(4);

  JobPage page;
  page.job = ParseJob(parts[0]);
  page.events = ParseEvents(parts[1], &page.bad_event_lines);
  page.metrics = ParseMetrics(parts[2], &page.bad_metric_lines);
  page.config = ParseConfig(parts[3], &page.config_problem);
  if (std::optional<LogFile> log = ParseLogName(input.substr(0, 64))) page.logs.push_back(*log);
  page.logs_url = "/jobs/x/logs";
  page.now_ms = 2'000'000'000'000;
  const std::string html = RenderJobPage(page);
  const std::string list = RenderJobList({page.job}, {}, page.now_ms);
  const std::string log = RenderLog(page.job.app_id, "worker-0-0.stdout", input, 0, "/");
  for (const std::string* out : {&html, &list, &log}) {
    if (out->find("<script") != std::string::npos || out->find("<img") != std::string::npos) {
      __builtin_trap();  // text from the history reached the page unescaped
    }
  }
  return 0;
}
