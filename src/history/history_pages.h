#pragma once
// The history UI's pages, as HTML built on the server: the job list, a job's page (its tasks, a
// timeline of every task attempt, plots of each task's CPU, memory and GPU use over time, the
// configuration with each value's source, the diagnostics and links to each attempt's logs) and
// a log view. Plots and the timeline are inline SVG; the pages run no script and load nothing
// from elsewhere. Every text from a job is escaped (and bytes that are not UTF-8 replaced).
//
// Pure functions: no IO.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history/history_reader.h"

namespace tony::history {

// Text for HTML element content and attribute values: &<>"' escaped, bytes that are not UTF-8
// and control characters (but newline and tab) replaced.
std::string HtmlEscape(std::string_view text);

struct ListFilter {
  std::string state;  // "" for all, else e.g. "FAILED"
  std::string user;   // "" for all
};

// The job list, newest first (the caller sorts), with the filter's form.
std::string RenderJobList(const std::vector<JobInfo>& jobs, const ListFilter& filter,
                          int64_t now_ms);

struct JobPage {
  JobInfo job;
  std::vector<HistoryEvent> events;
  int bad_event_lines = 0;
  std::vector<MetricSample> metrics;
  int bad_metric_lines = 0;
  std::vector<ConfigRow> config;
  std::string config_problem;
  std::vector<LogFile> logs;
  std::string logs_url;  // where the log links point: logs_url + "/" + file name
  std::string back_url;  // the job list, or "" for none (the AM's own page)
  int64_t now_ms = 0;    // the end of a running job's bars
  // The AM's live page: its TensorBoard, a reload every few seconds while the job runs, and
  // links of its own (status.json).
  std::string tensorboard_url;
  int refresh_seconds = 0;
  std::vector<std::pair<std::string, std::string>> links;  // text, URL
};

std::string RenderJobPage(const JobPage& page);

// The SVG parts, for tests: a row per task, a bar per attempt; a plot per measure.
std::string TimelineSvg(const std::vector<HistoryEvent>& events, int64_t now_ms);
std::string MetricsSvg(const std::vector<MetricSample>& samples, std::string_view measure);

// A log file's text. `skipped` bytes before it were left out (a long log shows its end).
std::string RenderLog(const std::string& app_id, const std::string& file, std::string_view text,
                      int64_t skipped, const std::string& job_url);

// A short page for errors ("no such job").
std::string RenderMessage(const std::string& title, const std::string& message,
                          const std::string& back_url);

}  // namespace tony::history
