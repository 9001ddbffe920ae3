#include "client/job_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <map>
#include <vector>

#include "common/strings.h"
#include "common/task_exit.h"
#include "fmt/format.h"

namespace tony::client {
namespace {

std::string Seconds(int64_t ms) {
  if (ms < 1000) return StrCat(ms, " ms");
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ms) / 1000.0);
  return text;
}

std::string Indent(const std::string& text, const std::string& prefix) {
  std::string out;
  for (std::string_view line : Split(text, '\n')) out += StrCat(prefix, line, "\n");
  return out;
}

// "exit code 3"; "exit code -1001 (hung)" where the code has a name.
std::string CodeAndName(int exit_code) {
  std::string name = ExitText(exit_code);
  std::string code = StrCat("exit code ", exit_code);
  return name == code ? code : StrCat(code, " (", name, ")");
}

}  // namespace

std::string_view ToString(rpc::JobState state) {
  switch (state) {
    case rpc::JOB_RUNNING:
      return "RUNNING";
    case rpc::JOB_SUCCEEDED:
      return "SUCCEEDED";
    case rpc::JOB_FAILED:
      return "FAILED";
    case rpc::JOB_KILLED:
      return "KILLED";
    default:
      return "UNKNOWN";
  }
}

std::string_view ToString(rpc::TaskState state) {
  switch (state) {
    case rpc::TASK_NEW:
      return "NEW";
    case rpc::TASK_REQUESTED:
      return "REQUESTED";
    case rpc::TASK_ALLOCATED:
      return "ALLOCATED";
    case rpc::TASK_REGISTERED:
      return "REGISTERED";
    case rpc::TASK_RUNNING:
      return "RUNNING";
    case rpc::TASK_SUCCEEDED:
      return "SUCCEEDED";
    case rpc::TASK_FAILED:
      return "FAILED";
    case rpc::TASK_FINISHED:
      return "STOPPED";
    default:
      return "UNKNOWN";
  }
}

std::string LingeringTasksHint(const rpc::JobStatus& status, int64_t now_wall_ms,
                               int64_t after_ms) {
  if (status.state() != rpc::JOB_RUNNING) return "";
  const rpc::TaskStatus* chief = nullptr;
  for (const rpc::TaskStatus& task : status.tasks()) {
    if (task.type() == "chief" && task.index() == 0) chief = &task;
  }
  if (chief == nullptr || chief->state() != rpc::TASK_SUCCEEDED || chief->end_ms() <= 0 ||
      now_wall_ms - chief->end_ms() < after_ms) {
    return "";
  }
  std::vector<std::string> running;
  std::vector<std::string> types;
  for (const rpc::TaskStatus& task : status.tasks()) {
    if (task.role() != "tracked" || task.state() != rpc::TASK_RUNNING) continue;
    running.push_back(StrCat(task.type(), ":", task.index()));
    if (std::find(types.begin(), types.end(), task.type()) == types.end()) {
      types.push_back(task.type());
    }
  }
  if (running.empty()) return "";
  return StrCat("chief:0 succeeded ", (now_wall_ms - chief->end_ms()) / 1000,
                " s ago; the job waits for its tracked tasks still running (", Join(running, ", "),
                "). If they serve until stopped (TensorFlow ParameterServerStrategy's workers and "
                "ps), make them untracked: tony.application.untracked.jobtypes=",
                Join(types, ","));
}

std::string ProgressLine(const rpc::JobStatus& status) {
  // Each task state the line tells apart, in the order it names them. "waiting": no container
  // asked for yet (a task of a later stage waits for the stages before it); "starting": its
  // container granted, its executor starting or waiting for the cluster spec.
  static constexpr const char* kNames[] = {"waiting",   "requested", "starting", "running",
                                           "succeeded", "failed",    "stopped"};
  constexpr size_t kKinds = std::size(kNames);
  std::map<std::string, std::array<int, kKinds>> counts;
  for (const rpc::TaskStatus& task : status.tasks()) {
    std::array<int, kKinds>& c = counts[task.type()];
    switch (task.state()) {
      case rpc::TASK_REQUESTED:
        ++c[1];
        break;
      case rpc::TASK_ALLOCATED:
      case rpc::TASK_REGISTERED:
        ++c[2];
        break;
      case rpc::TASK_RUNNING:
        ++c[3];
        break;
      case rpc::TASK_SUCCEEDED:
        ++c[4];
        break;
      case rpc::TASK_FAILED:
        ++c[5];
        break;
      case rpc::TASK_FINISHED:
        ++c[6];
        break;
      default:  // TASK_NEW
        ++c[0];
        break;
    }
  }
  std::vector<std::string> types;
  for (const auto& [type, c] : counts) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < kKinds; ++i) {
      if (c[i] > 0) parts.push_back(StrCat(c[i], " ", kNames[i]));
    }
    types.push_back(StrCat(type, ": ", Join(parts, ", ")));
  }
  return Join(types, " | ");
}

std::string FormatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cell = row[i];
      if (i + 1 < row.size()) cell.resize(widths[i] + 2, ' ');
      out += cell;
    }
    out += "\n";
  }
  return out;
}

std::string TerminalSafe(std::string_view text, size_t max_line) {
  std::string out;
  size_t column = 0;
  auto put = [&](std::string_view piece) {
    if (column == max_line) out += "...";
    if (column++ < max_line) out += piece;
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += '\n';
      column = 0;
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 1 && c == '\t') {
      put(" ");
      ++i;
    } else if (length == 0 || (length == 1 && (c < 0x20 || c == 0x7f))) {
      put("?");  // a broken sequence or a control character
      ++i;
    } else {
      put(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string ProgressText(const rpc::TaskProgress& progress) {
  if (!progress.has_step()) return "-";
  std::string out = progress.total() > 0 ? StrCat(progress.step(), "/", progress.total())
                                         : StrCat("step ", progress.step());
  // The metrics by name (protobuf's map has no order of its own).
  const std::map<std::string, double> metrics(progress.metrics().begin(), progress.metrics().end());
  for (const auto& [name, value] : metrics) {
    out += StrCat(" ", TerminalSafe(name), "=", fmt::format("{:.4g}", value));
  }
  return out;
}

std::string Summary(const rpc::JobStatus& status) {
  std::string out = StrCat(status.app_id(), " ", ToString(status.state()));
  if (status.end_ms() > 0 && status.start_ms() > 0) {
    out += StrCat(" after ", Seconds(status.end_ms() - status.start_ms()));
  }
  if (!status.diagnostics().empty()) out += StrCat(": ", status.diagnostics());
  out += "\n";
  if (!status.tensorboard_url().empty())
    out += StrCat("TensorBoard: ", status.tensorboard_url(), "\n");
  if (!status.output_dir().empty())
    out += StrCat("outputs: ", TerminalSafe(status.output_dir()), "\n");
  if (!status.final_status_unsaved().empty()) {
    out += StrCat("warning: final status ", ToString(status.state()),
                  "; could not be saved: ", status.final_status_unsaved(), "\n");
  }

  std::vector<std::vector<std::string>> rows = {
      {"TASK", "STATE", "HOST:PORT", "EXIT", "ATTEMPTS", "DURATION", "PEAK RSS", "LOGS"}};
  // A PROGRESS column when a task reports its steps.
  const bool progress =
      std::any_of(status.tasks().begin(), status.tasks().end(),
                  [](const rpc::TaskStatus& t) { return t.progress().has_step(); });
  if (progress) rows[0].insert(rows[0].begin() + 6, "PROGRESS");
  for (const rpc::TaskStatus& task : status.tasks()) {
    const int64_t duration =
        task.end_ms() > 0 && task.start_ms() > 0 ? task.end_ms() - task.start_ms() : 0;
    rows.push_back({StrCat(task.type(), ":", task.index()), std::string(ToString(task.state())),
                    task.port() > 0 ? StrCat(task.host(), ":", task.port()) : "-",
                    task.has_exit_code() ? std::to_string(task.exit_code()) : "-",
                    std::to_string(task.attempt() + 1), duration > 0 ? Seconds(duration) : "-",
                    task.peak_rss_bytes() > 0 ? FormatMb(task.peak_rss_bytes()) : "-",
                    task.log_dir().empty() ? "-" : task.log_dir()});
    if (progress) rows.back().insert(rows.back().begin() + 6, ProgressText(task.progress()));
  }
  out += FormatTable(rows);
  for (const rpc::TaskStatus& task : status.tasks()) {
    if (!task.hung().empty()) out += StrCat(TerminalSafe(task.hung()), "\n");
    if (!task.straggler().empty()) out += StrCat(TerminalSafe(task.straggler()), "\n");
  }
  std::string leader;
  for (const char* type : {"chief", "worker"}) {
    for (const rpc::TaskStatus& task : status.tasks()) {
      if (leader.empty() && task.type() == type && task.index() == 0 &&
          !task.output_tail().empty()) {
        leader = StrCat("last lines of ", type, ":0's output:\n");
        const std::string safe = TerminalSafe(task.output_tail());
        for (std::string_view line : Split(safe, '\n')) {
          leader += StrCat("  ", line, "\n");
        }
      }
    }
  }
  for (const rpc::TaskStatus& task : status.tasks()) {
    for (const rpc::AttemptStatus& attempt : task.previous_attempts()) {
      out += StrCat("\n", task.type(), ":", task.index(), " attempt ", attempt.attempt(),
                    " failed with ", CodeAndName(attempt.exit_code()), " and was restarted");
      out +=
          attempt.diagnostics().empty() ? "\n" : StrCat(":\n", Indent(attempt.diagnostics(), "  "));
    }
  }
  for (const rpc::TaskStatus& task : status.tasks()) {
    if (task.state() != rpc::TASK_FAILED) continue;
    out += StrCat("\n", task.type(), ":", task.index(), " failed");
    if (task.has_exit_code()) out += StrCat(" with ", CodeAndName(task.exit_code()));
    out += task.diagnostics().empty() ? "\n" : StrCat(":\n", Indent(task.diagnostics(), "  "));
  }
  if (!leader.empty()) out += StrCat("\n", leader);
  return out;
}

}  // namespace tony::client
