#include "history/history_pages.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include "common/strings.h"

namespace tony::history {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

constexpr const char* kStyle = R"(<style>
body{font-family:sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top;font-size:.92em}
th{background:#f3f3f3}
.SUCCEEDED{color:#2e7d32}.FAILED{color:#c62828}.KILLED{color:#c62828}.RUNNING{color:#1565c0}
.STOPPED{color:#616161}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.problem{background:#fff3cd;padding:.4em .6em;border:1px solid #e0c36d}
svg text{font-size:11px;font-family:sans-serif}
</style>)";

std::string Page(const std::string& title, const std::string& body, int refresh_seconds = 0) {
  return StrCat("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">",
                refresh_seconds > 0
                    ? StrCat(R"(<meta http-equiv="refresh" content=")", refresh_seconds, "\">")
                    : "",
                "<title>", HtmlEscape(title), "</title>", kStyle, "</head><body>\n", body,
                "</body></html>\n");
}

bool IsWebAddress(std::string_view url) {
  return url.starts_with("http://") || url.starts_with("https://");
}

// "2026-12-04 07:11:10" (UTC), or "" for 0.
std::string Time(int64_t ms) {
  if (ms <= 0) return "";
  const auto seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

std::string Seconds(int64_t ms) {
  char text[32];
  if (ms < 60000) {
    std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3600000) {
    std::snprintf(text, sizeof(text), "%" PRId64 " min %" PRId64 " s", ms / 60000,
                  (ms / 1000) % 60);
  } else {
    std::snprintf(text, sizeof(text), "%" PRId64 " h %" PRId64 " min", ms / 3600000,
                  (ms / 60000) % 60);
  }
  return text;
}

std::string Mib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

// A coordinate for SVG.
std::string At(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

// The task's last reported progress: a bar where it said its total, else its step.
std::string ProgressCell(const TaskRow& task) {
  if (!task.step) return "";
  if (task.total <= 0) return StrCat("step ", *task.step);
  const int64_t step = std::clamp<int64_t>(*task.step, 0, task.total);
  return StrCat("<progress value=\"", step, "\" max=\"", task.total, "\"></progress> ", *task.step,
                "/", task.total);
}

std::string StateCell(const std::string& state) {
  return StrCat("<td class=\"", HtmlEscape(state), "\">", HtmlEscape(state), "</td>");
}

// Percent-encodes a path segment for a link (file names are [A-Za-z0-9._-] by construction, but
// a type from the configuration may hold more).
std::string UrlSegment(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '.' || c == '_' || c == '-' || c == ':') {
      out += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", u);
      out += hex;
    }
  }
  return out;
}

struct Attempt {
  std::string task;
  int attempt = 0;
  std::optional<int64_t> requested, allocated, started, finished;
  std::string state;  // of TASK_FINISHED
  std::optional<int> exit_code;
};

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (length > 1) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\n':
      case '\t':
        out += static_cast<char>(c);
        break;
      default:
        out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string RenderJobList(const std::vector<JobInfo>& jobs, const ListFilter& filter,
                          int64_t now_ms) {
  std::string body = "<h1>tony: job history</h1>\n<form method=\"get\" action=\"/\">State ";
  body += "<select name=\"state\">";
  for (const char* state : {"", "RUNNING", "SUCCEEDED", "FAILED", "KILLED"}) {
    body += StrCat("<option value=\"", state, "\"", filter.state == state ? " selected" : "", ">",
                   *state ? state : "any", "</option>");
  }
  body += StrCat(R"(</select> User <input name="user" value=")", HtmlEscape(filter.user),
                 "\"> <button type=\"submit\">Filter</button></form>\n");
  body +=
      "<table id=\"jobs\"><tr><th>Application</th><th>Name</th><th>User</th><th>Framework</th>"
      "<th>State</th><th>Started (UTC)</th><th>Duration</th></tr>\n";
  int shown = 0;
  for (const JobInfo& job : jobs) {
    const std::string state = job.state.empty() ? "UNKNOWN" : job.state;
    if (!filter.state.empty() && state != filter.state) continue;
    if (!filter.user.empty() && job.user != filter.user) continue;
    ++shown;
    const int64_t start = job.start_ms > 0 ? job.start_ms : job.submitted_ms;
    const int64_t end = job.complete && job.end_ms > 0 ? job.end_ms : now_ms;
    std::string note;
    if (!job.problems.empty()) note = " <span class=\"problem\">damaged</span>";
    if (!job.complete && job.finished) note += " <span class=\"problem\">incomplete</span>";
    body += StrCat(R"(<tr class="job"><td><a href="/jobs/)", UrlSegment(job.app_id), "\">",
                   HtmlEscape(job.app_id), "</a>", note, "</td><td>", HtmlEscape(job.name),
                   "</td><td>", HtmlEscape(job.user), "</td><td>", HtmlEscape(job.framework),
                   "</td>", StateCell(state), "<td>", Time(start), "</td><td>",
                   start > 0 ? Seconds(std::max<int64_t>(0, end - start)) : "", "</td></tr>\n");
  }
  body += "</table>\n";
  body += StrCat("<p>", shown, " of ", jobs.size(), " jobs</p>\n");
  return Page("tony job history", body);
}

std::string TimelineSvg(const std::vector<HistoryEvent>& events, int64_t now_ms) {
  std::vector<std::string> order;  // tasks, by their first event
  std::map<std::pair<std::string, int>, Attempt> attempts;
  int64_t t0 = 0;
  int64_t t1 = 0;
  for (const HistoryEvent& e : events) {
    if (e.time_ms > 0) {
      t0 = t0 == 0 ? e.time_ms : std::min(t0, e.time_ms);
      t1 = std::max(t1, e.time_ms);
    }
    if (e.task.empty()) continue;
    if (std::find(order.begin(), order.end(), e.task) == order.end()) order.push_back(e.task);
    Attempt& a = attempts[{e.task, e.attempt}];
    a.task = e.task;
    a.attempt = e.attempt;
    if (e.kind == kEventTaskRequested) a.requested = e.time_ms;
    if (e.kind == kEventTaskAllocated) a.allocated = e.time_ms;
    if (e.kind == kEventTaskStarted) a.started = e.time_ms;
    if (e.kind == kEventTaskFinished) {
      a.finished = e.time_ms;
      a.state = e.state;
      a.exit_code = e.exit_code;
    }
  }
  bool running = false;
  for (const auto& [key, a] : attempts) running = running || !a.finished;
  if (running) t1 = std::max(t1, now_ms);
  if (order.empty() || t1 <= t0) return "<p>No task events.</p>";
  constexpr double kLabel = 120;
  constexpr double kWidth = 760;
  constexpr double kRow = 22;
  const double height = kRow * static_cast<double>(order.size()) + 30;
  const auto x = [&](int64_t t) {
    return kLabel + kWidth * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
  };
  std::string svg = StrCat(R"(<svg id="timeline-svg" xmlns="http://www.w3.org/2000/svg" width=")",
                           At(kLabel + kWidth + 20), "\" height=\"", At(height), "\">\n");
  for (size_t row = 0; row < order.size(); ++row) {
    const double y = kRow * static_cast<double>(row) + 4;
    svg += StrCat(R"(<text x="4" y=")", At(y + 13), "\">", HtmlEscape(order[row]), "</text>\n");
    for (const auto& [key, a] : attempts) {
      if (a.task != order[row]) continue;
      const int64_t begin = a.requested.value_or(a.allocated.value_or(a.started.value_or(t0)));
      const int64_t end = a.finished.value_or(t1);
      const std::string color = !a.finished              ? "#42a5f5"
                                : a.state == "SUCCEEDED" ? "#43a047"
                                : a.state == "FAILED"    ? "#e53935"
                                                         : "#9e9e9e";
      std::string title = StrCat(a.task, " attempt ", a.attempt, ": ");
      if (a.started) title += StrCat("ran ", Seconds(end - *a.started), ", ");
      title += a.finished ? a.state : "running";
      if (a.exit_code) title += StrCat(" (exit ", *a.exit_code, ")");
      svg += StrCat(R"(<g class="attempt" data-task=")", HtmlEscape(a.task), "\" data-attempt=\"",
                    a.attempt, "\" data-state=\"", a.finished ? HtmlEscape(a.state) : "RUNNING",
                    "\"><title>", HtmlEscape(title), "</title>");
      // Waiting for a container, then starting, then running.
      const int64_t granted = a.allocated.value_or(end);
      const int64_t running_from = a.started.value_or(end);
      svg += StrCat("<rect x=\"", At(x(begin)), "\" y=\"", At(y), "\" width=\"",
                    At(std::max(0.5, x(granted) - x(begin))), R"(" height="16" fill="#ddd"/>)");
      if (a.allocated) {
        svg += StrCat("<rect x=\"", At(x(granted)), "\" y=\"", At(y), "\" width=\"",
                      At(std::max(0.5, x(running_from) - x(granted))),
                      R"(" height="16" fill="#f0c36d"/>)");
      }
      if (a.started) {
        svg += StrCat(R"(<rect class="run" x=")", At(x(running_from)), "\" y=\"", At(y),
                      "\" width=\"", At(std::max(1.0, x(end) - x(running_from))),
                      R"(" height="16" fill=")", color, "\"/>");
      }
      svg += "</g>\n";
    }
  }
  const double axis = kRow * static_cast<double>(order.size()) + 8;
  svg += StrCat("<line x1=\"", At(kLabel), "\" y1=\"", At(axis), "\" x2=\"", At(kLabel + kWidth),
                "\" y2=\"", At(axis), "\" stroke=\"#999\"/>\n");
  for (int tick = 0; tick <= 4; ++tick) {
    const int64_t t = t0 + (t1 - t0) * tick / 4;
    svg += StrCat("<text x=\"", At(x(t) - (tick == 4 ? 30 : 0)), "\" y=\"", At(axis + 14), "\">",
                  Seconds(t - t0), "</text>\n");
  }
  svg += "</svg>\n";
  return svg;
}

std::string MetricsSvg(const std::vector<MetricSample>& samples, std::string_view measure) {
  // One series per task attempt: (time, value).
  std::map<std::pair<std::string, int>, std::vector<std::pair<int64_t, double>>> series;
  std::map<std::pair<std::string, int>, const MetricSample*> previous;
  int64_t t0 = 0;
  int64_t t1 = 0;
  for (const MetricSample& s : samples) {
    const std::pair<std::string, int> key{s.task, s.attempt};
    std::optional<double> value;
    if (measure == "cpu") {
      // Percent of one core between this sample and the previous one.
      auto prev = previous.find(key);
      if (prev != previous.end() && s.time_ms > prev->second->time_ms) {
        value = 100.0 * (s.cpu_seconds - prev->second->cpu_seconds) /
                (static_cast<double>(s.time_ms - prev->second->time_ms) / 1000.0);
        value = std::max(0.0, *value);
      }
      previous[key] = &s;
    } else if (measure == "memory") {
      value = static_cast<double>(s.rss_bytes) / (1 << 20);
    } else if (measure == "gpu") {
      value = s.gpu_utilization;
    } else if (measure == "gpu-memory" && s.gpu_memory_bytes) {
      value = static_cast<double>(*s.gpu_memory_bytes) / (1 << 20);
    } else if (measure == "step-rate" && s.step) {
      // Steps a second between this sample and the previous one that had a step.
      auto prev = previous.find(key);
      if (prev != previous.end() && s.time_ms > prev->second->time_ms) {
        value = static_cast<double>(*s.step - *prev->second->step) /
                (static_cast<double>(s.time_ms - prev->second->time_ms) / 1000.0);
        value = std::max(0.0, *value);
      }
      previous[key] = &s;
    } else if (measure.starts_with("value:")) {
      auto it = s.values.find(std::string(measure.substr(6)));
      if (it != s.values.end()) value = it->second;
    }
    if (!value || !std::isfinite(*value)) continue;
    series[key].emplace_back(s.time_ms, *value);
    t0 = t0 == 0 ? s.time_ms : std::min(t0, s.time_ms);
    t1 = std::max(t1, s.time_ms);
  }
  if (series.empty()) return "";
  double top = 0;
  for (const auto& [key, points] : series) {
    for (const auto& [t, v] : points) top = std::max(top, v);
  }
  if (top <= 0) top = 1;
  const bool reported = measure.starts_with("value:");
  const std::string unit = measure == "cpu"         ? "% of a core"
                           : measure == "gpu"       ? "% GPU"
                           : measure == "step-rate" ? "steps/s"
                           : reported               ? "as reported"
                                                    : "MiB";
  const std::string title = measure == "cpu"         ? "CPU"
                            : measure == "memory"    ? "Memory (RSS)"
                            : measure == "gpu"       ? "GPU utilization"
                            : measure == "step-rate" ? "Step rate"
                            : reported               ? std::string(measure.substr(6))
                                                     : "GPU memory";
  constexpr double kLeft = 60;
  constexpr double kWidth = 600;
  constexpr double kHeight = 160;
  const double span = static_cast<double>(std::max<int64_t>(1, t1 - t0));
  const auto x = [&](int64_t t) { return kLeft + kWidth * static_cast<double>(t - t0) / span; };
  const auto y = [&](double v) { return 20 + kHeight - kHeight * v / top; };
  std::string svg = StrCat(R"(<svg class="metric" data-measure=")", HtmlEscape(measure),
                           R"(" xmlns="http://www.w3.org/2000/svg" width=")",
                           At(kLeft + kWidth + 160), "\" height=\"", At(kHeight + 50),
                           "\">\n<text x=\"", At(kLeft), R"(" y="12">)", HtmlEscape(title), " (",
                           HtmlEscape(unit), ")</text>\n<text x=\"2\" y=\"", At(y(top) + 4), "\">",
                           Number(top), R"(</text><text x="2" y=")", At(y(0)), "\">0</text>\n");
  svg += StrCat("<rect x=\"", At(kLeft), R"(" y="20" width=")", At(kWidth), "\" height=\"",
                At(kHeight), "\" fill=\"none\" stroke=\"#ccc\"/>\n");
  size_t color = 0;
  double legend = 30;
  for (const auto& [key, points] : series) {
    const char* stroke = kPalette[color++ % std::size(kPalette)];
    std::string line;
    for (const auto& [t, v] : points) line += StrCat(At(x(t)), ",", At(y(v)), " ");
    const std::string name = key.second > 0 ? StrCat(key.first, " #", key.second) : key.first;
    svg += StrCat(R"(<polyline class="series" data-task=")", HtmlEscape(key.first),
                  R"(" fill="none" stroke=")", stroke, R"(" stroke-width="1.5" points=")", line,
                  "\"><title>", HtmlEscape(name), "</title></polyline>\n");
    if (points.size() == 1) {
      svg += StrCat("<circle cx=\"", At(x(points[0].first)), "\" cy=\"", At(y(points[0].second)),
                    R"(" r="2" fill=")", stroke, "\"/>\n");
    }
    svg += StrCat("<text x=\"", At(kLeft + kWidth + 10), "\" y=\"", At(legend), "\" fill=\"",
                  stroke, "\">", HtmlEscape(name), "</text>\n");
    legend += 14;
  }
  svg += StrCat("<text x=\"", At(kLeft), "\" y=\"", At(kHeight + 38), "\">0 s</text><text x=\"",
                At(kLeft + kWidth - 40), "\" y=\"", At(kHeight + 38), "\">", Seconds(t1 - t0),
                "</text>\n</svg>\n");
  return svg;
}

std::string RenderJobPage(const JobPage& page) {
  const JobInfo& job = page.job;
  const std::string state = job.state.empty() ? "UNKNOWN" : job.state;
  std::string body;
  if (!page.back_url.empty()) {
    body += StrCat("<p><a href=\"", HtmlEscape(page.back_url), "\">All jobs</a></p>\n");
  }
  body += StrCat("<h1>", HtmlEscape(job.app_id), " <span class=\"", HtmlEscape(state), "\">",
                 HtmlEscape(state), "</span></h1>\n");
  if (!page.tensorboard_url.empty()) {
    // A link only to a web address: the page's viewers click it.
    const std::string url = HtmlEscape(page.tensorboard_url);
    body +=
        IsWebAddress(page.tensorboard_url)
            ? StrCat(R"(<p>TensorBoard: <a id="tensorboard" href=")", url, "\">", url, "</a></p>\n")
            : StrCat("<p>TensorBoard: ", url, "</p>\n");
  }
  for (const auto& [text, url] : page.links) {
    body += StrCat("<p><a href=\"", HtmlEscape(url), "\">", HtmlEscape(text), "</a></p>\n");
  }
  const int64_t start = job.start_ms > 0 ? job.start_ms : job.submitted_ms;
  const int64_t end = job.complete && job.end_ms > 0 ? job.end_ms : page.now_ms;
  body +=
      StrCat("<table id=\"job\"><tr><th>Name</th><td>", HtmlEscape(job.name),
             "</td></tr><tr><th>User</th><td>", HtmlEscape(job.user),
             "</td></tr><tr><th>Framework</th><td>", HtmlEscape(job.framework),
             "</td></tr><tr><th>Backend</th><td>", HtmlEscape(job.backend),
             "</td></tr><tr><th>Queue</th><td>", HtmlEscape(job.queue),
             "</td></tr><tr><th>Outputs</th><td id=\"outputs\">", HtmlEscape(job.output_dir),
             "</td></tr><tr><th>Started (UTC)</th><td>", Time(start),
             "</td></tr><tr><th>Duration</th><td>",
             start > 0 ? Seconds(std::max<int64_t>(0, end - start)) : "", "</td></tr></table>\n");
  std::vector<std::string> problems = job.problems;
  if (!job.complete && job.finished) {
    problems.emplace_back("the job's history has no end: its AM stopped before it recorded one");
  }
  if (page.bad_event_lines > 0) {
    problems.push_back(StrCat(page.bad_event_lines,
                              " line(s) of events.jsonl could not be read (partial or damaged)"));
  }
  if (page.bad_metric_lines > 0) {
    problems.push_back(StrCat(page.bad_metric_lines,
                              " line(s) of metrics.jsonl could not be read (partial or damaged)"));
  }
  if (!page.config_problem.empty()) problems.push_back(page.config_problem);
  if (!problems.empty()) {
    body +=
        R"(<div id="problems" class="problem"><b>This history is incomplete or damaged:</b><ul>)";
    for (const std::string& p : problems) body += StrCat("<li>", HtmlEscape(p), "</li>");
    body += "</ul></div>\n";
  }
  if (!job.diagnostics.empty()) {
    body += StrCat("<h2>Diagnostics</h2><pre id=\"diagnostics\">", HtmlEscape(job.diagnostics),
                   "</pre>\n");
  }

  // Log links by task: every attempt's streams.
  std::map<std::string, std::string> links;
  for (const TaskRow& task : job.tasks) {
    // The backend's own logs: the NodeManager's page on YARN, a directory locally.
    if (task.log_dir.empty()) continue;
    links[task.Task()] +=
        IsWebAddress(task.log_dir)
            ? StrCat(R"(<a class="log" href=")", HtmlEscape(task.log_dir), "\">container logs</a>")
            : StrCat("<code>", HtmlEscape(task.log_dir), "</code>");
  }
  for (const LogFile& log : page.logs) {
    links[log.Task()] +=
        StrCat(R"( <a class="log" href=")", HtmlEscape(page.logs_url), "/", UrlSegment(log.name),
               "\">", log.stream, log.attempt > 0 ? StrCat(" #", log.attempt) : "", "</a>");
  }
  body +=
      "<h2>Tasks</h2><table id=\"tasks\"><tr><th>Task</th><th>State</th><th>Attempts</th>"
      "<th>Host:port</th><th>Exit</th><th>Duration</th><th>Peak RSS</th><th>Progress</th>"
      "<th>Logs</th><th>Diagnostics</th></tr>\n";
  for (const TaskRow& task : job.tasks) {
    const int64_t task_end = task.end_ms > 0 ? task.end_ms : page.now_ms;
    body += StrCat(
        R"(<tr class="task" data-task=")", HtmlEscape(task.Task()), "\"><td>",
        HtmlEscape(task.Task()), "</td>", StateCell(task.state), "<td>", task.attempt + 1,
        "</td><td>", task.host.empty() ? "" : HtmlEscape(StrCat(task.host, ":", task.port)),
        "</td><td>", task.exit_code ? std::to_string(*task.exit_code) : "", "</td><td>",
        task.start_ms > 0 ? Seconds(std::max<int64_t>(0, task_end - task.start_ms)) : "",
        "</td><td>", task.peak_rss_bytes > 0 ? Mib(task.peak_rss_bytes) : "", "</td><td>",
        ProgressCell(task), "</td><td>", links[task.Task()], "</td><td>",
        task.diagnostics.empty() ? "" : StrCat("<pre>", HtmlEscape(task.diagnostics), "</pre>"),
        "</td></tr>\n");
  }
  body += "</table>\n";

  body += StrCat("<h2>Timeline</h2><div id=\"timeline\">", TimelineSvg(page.events, page.now_ms),
                 "<p>Grey: waiting for a container; amber: starting; then running until it "
                 "succeeded (green), failed (red) or was stopped (grey); blue: still running.</p>"
                 "</div>\n");

  body += "<h2>Resource use</h2><div id=\"metrics\">";
  std::string plots;
  for (const char* measure : {"cpu", "memory", "gpu", "gpu-memory", "step-rate"}) {
    plots += MetricsSvg(page.metrics, measure);
  }
  // The metrics the tasks report with their progress (loss, accuracy, ...), one plot each.
  std::set<std::string> reported;
  for (const MetricSample& sample : page.metrics) {
    for (const auto& [name, value] : sample.values) reported.insert(name);
  }
  for (const std::string& name : reported) plots += MetricsSvg(page.metrics, "value:" + name);
  body += plots.empty() ? "<p>No samples.</p>" : plots;
  body += "</div>\n";

  body +=
      "<h2>Events</h2><table id=\"events\"><tr><th>Time (UTC)</th><th>Event</th><th>Task</th>"
      "<th>Attempt</th><th>Detail</th></tr>\n";
  for (const HistoryEvent& e : page.events) {
    std::string detail = e.state;
    if (e.exit_code) detail += StrCat(detail.empty() ? "" : ", ", "exit ", *e.exit_code);
    if (!e.address.empty()) detail += StrCat(detail.empty() ? "" : ", ", e.address);
    if (!e.container.empty()) detail += StrCat(detail.empty() ? "" : ", ", e.container);
    if (!e.diagnostics.empty()) detail += StrCat(detail.empty() ? "" : ": ", e.diagnostics);
    body += StrCat("<tr><td>", Time(e.time_ms), "</td><td>", HtmlEscape(e.kind), "</td><td>",
                   HtmlEscape(e.task), "</td><td>", e.task.empty() ? "" : std::to_string(e.attempt),
                   "</td><td>", HtmlEscape(detail), "</td></tr>\n");
  }
  body += "</table>\n";

  body +=
      "<h2>Configuration</h2><table id=\"config\"><tr><th>Key</th><th>Value</th>"
      "<th>Source</th></tr>\n";
  for (const ConfigRow& row : page.config) {
    body += StrCat("<tr><td>", HtmlEscape(row.key), "</td><td>", HtmlEscape(row.value), "</td><td>",
                   HtmlEscape(row.source), "</td></tr>\n");
  }
  body += "</table>\n";
  return Page(StrCat(job.app_id, " ", state), body, page.refresh_seconds);
}

std::string RenderLog(const std::string& app_id, const std::string& file, std::string_view text,
                      int64_t skipped, const std::string& job_url) {
  std::string body = StrCat("<p><a href=\"", HtmlEscape(job_url), "\">", HtmlEscape(app_id),
                            "</a></p><h1>", HtmlEscape(file), "</h1>\n");
  if (skipped > 0) {
    body += StrCat("<p class=\"problem\">The first ", skipped,
                   " bytes are left out; this is the log's end.</p>\n");
  }
  body += StrCat("<pre id=\"log\">", HtmlEscape(text), "</pre>\n");
  return Page(StrCat(app_id, " ", file), body);
}

std::string RenderMessage(const std::string& title, const std::string& message,
                          const std::string& back_url) {
  std::string body = StrCat("<h1>", HtmlEscape(title), "</h1><p>", HtmlEscape(message), "</p>");
  if (!back_url.empty()) {
    body += StrCat("<p><a href=\"", HtmlEscape(back_url), "\">All jobs</a></p>");
  }
  return Page(title, body);
}

}  // namespace tony::history
