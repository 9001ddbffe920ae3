#include "history/metrics_text.h"

#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "common/strings.h"
#include "common/task_exit.h"

namespace tony::history {
namespace {

constexpr const char* kJobStates[] = {"RUNNING", "SUCCEEDED", "FAILED", "KILLED"};
// Every cause ExitCause gives, and "none" for a restarted attempt that had succeeded: each
// counter starts at 0, so that a scraper sees its first increase.
constexpr const char* kCauses[] = {"exit_code",    "signal", "preempted",      "node_lost",
                                   "disks_failed", "memory", "lost_heartbeat", "hung",
                                   "gang_restart", "none"};
constexpr const char* kTaskStates[] = {"NEW",     "REQUESTED", "ALLOCATED", "REGISTERED",
                                       "RUNNING", "SUCCEEDED", "FAILED",    "STOPPED"};

// A label value: backslash, double quote and newline escaped; bytes that are not UTF-8 replaced.
std::string LabelValue(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const size_t length = Utf8SequenceLength(text, at);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++at;
      continue;
    }
    const char c = text[at];
    if (length == 1 && c == '\\') {
      out += "\\\\";
    } else if (length == 1 && c == '"') {
      out += "\\\"";
    } else if (length == 1 && c == '\n') {
      out += "\\n";
    } else {
      out.append(text.substr(at, length));
    }
    at += length;
  }
  return out;
}

// A sample's value as the format writes it.
std::string Number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  // The shortest text that reads back as the same double, as Prometheus's own clients write.
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : "NaN";
}

using Labels = std::vector<std::pair<std::string, std::string>>;

// The families in the order they are first declared, each with its samples: the format wants
// a family's samples together, after its HELP and TYPE.
class Families {
 public:
  void Add(const std::string& name, const char* type, const char* help, const Labels& labels,
           double value) {
    auto [it, added] = index_.try_emplace(name, families_.size());
    if (added) families_.push_back({name, type, help, {}});
    std::string line = name;
    if (!labels.empty()) {
      line += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) line += ',';
        line += StrCat(labels[i].first, "=\"", LabelValue(labels[i].second), "\"");
      }
      line += '}';
    }
    line += ' ';
    line += Number(value);
    line += '\n';
    families_[it->second].lines += line;
  }
  std::string Text() const {
    std::string out;
    for (const Family& family : families_) {
      out += StrCat("# HELP ", family.name, " ", family.help, "\n# TYPE ", family.name, " ",
                    family.type, "\n", family.lines);
    }
    return out;
  }

 private:
  struct Family {
    std::string name;
    const char* type;
    const char* help;
    std::string lines;
  };
  std::vector<Family> families_;
  std::map<std::string, size_t> index_;
};

Labels With(Labels labels, const std::string& key, const std::string& value) {
  labels.emplace_back(key, value);
  return labels;
}

void AddJob(const JobInfo& job, const std::vector<MetricSample>* samples, Families& out) {
  const Labels job_labels = {{"app_id", job.app_id}};
  out.Add("tony_job_info", "gauge", "The job: its name, user, framework, backend and queue.",
          {{"app_id", job.app_id},
           {"name", job.name},
           {"user", job.user},
           {"framework", job.framework},
           {"backend", job.backend},
           {"queue", job.queue}},
          1);
  bool known = false;
  for (const char* state : kJobStates) {
    known = known || job.state == state;
    out.Add("tony_job_state", "gauge", "1 for the job's state, 0 for the others.",
            With(job_labels, "state", state), job.state == state ? 1 : 0);
  }
  if (!known && !job.state.empty()) {
    out.Add("tony_job_state", "gauge", "1 for the job's state, 0 for the others.",
            With(job_labels, "state", job.state), 1);
  }
  if (job.start_ms > 0) {
    out.Add("tony_job_start_time_seconds", "gauge", "When the job's AM started (Unix time).",
            job_labels, static_cast<double>(job.start_ms) / 1000);
  }
  if (job.end_ms > 0) {
    out.Add("tony_job_end_time_seconds", "gauge", "When the job ended (Unix time).", job_labels,
            static_cast<double>(job.end_ms) / 1000);
  }
  std::map<std::string, int> by_state;
  std::map<std::string, int> restarts;
  std::map<std::string, int> failures;
  for (const TaskRow& task : job.tasks) {
    ++by_state[task.state];
    for (int code : task.previous_exit_codes) {
      const std::string cause(ExitCause(code));
      ++restarts[cause.empty() ? "none" : cause];
      if (!cause.empty()) ++failures[cause];
    }
    if (task.state == "FAILED") {
      const std::string cause(ExitCause(task.exit_code.value_or(1)));
      ++failures[cause.empty() ? "exit_code" : cause];
    }
  }
  for (const char* state : kTaskStates) by_state.try_emplace(state, 0);
  for (const char* cause : kCauses) {
    restarts.try_emplace(cause, 0);
    if (std::string_view(cause) != "none") failures.try_emplace(cause, 0);
  }
  for (const auto& [state, count] : by_state) {
    out.Add("tony_job_tasks", "gauge", "The job's tasks by state.",
            With(job_labels, "state", state), count);
  }
  for (const auto& [cause, count] : restarts) {
    out.Add("tony_job_task_restarts_total", "counter",
            "Task attempts that ended and ran again, by cause.", With(job_labels, "cause", cause),
            count);
  }
  for (const auto& [cause, count] : failures) {
    out.Add("tony_job_task_failures_total", "counter",
            "Task attempts that ended badly (restarted or final), by cause.",
            With(job_labels, "cause", cause), count);
  }

  // The newest sample of each task's current attempt.
  std::map<std::string, const MetricSample*> newest;
  if (samples != nullptr) {
    std::map<std::string, int> attempt;
    for (const TaskRow& task : job.tasks) attempt[task.Task()] = task.attempt;
    for (const MetricSample& sample : *samples) {
      auto current = attempt.find(sample.task);
      if (current == attempt.end() || current->second != sample.attempt) continue;
      const MetricSample*& best = newest[sample.task];
      if (best == nullptr || sample.time_ms >= best->time_ms) best = &sample;
    }
  }
  for (const TaskRow& task : job.tasks) {
    const Labels labels = {{"app_id", job.app_id},
                           {"task_type", task.type},
                           {"task_index", std::to_string(task.index)}};
    out.Add("tony_task_attempt", "gauge", "The task's current attempt (0 for the first).", labels,
            task.attempt);
    out.Add("tony_task_heartbeats_total", "counter",
            "Heartbeats the AM took from the task's executors.", labels,
            static_cast<double>(task.heartbeats));
    out.Add("tony_task_peak_memory_bytes", "gauge",
            "The peak resident memory of the task's processes.", labels,
            static_cast<double>(task.peak_rss_bytes));
    const MetricSample* sample = newest.count(task.Task()) ? newest[task.Task()] : nullptr;
    std::optional<int64_t> step = task.step;
    int64_t total = task.total;
    if (sample != nullptr && sample->step.has_value()) {
      step = sample->step;
      total = sample->total;
    }
    if (step.has_value()) {
      out.Add("tony_task_progress_step", "gauge", "The last step the task reported.", labels,
              static_cast<double>(*step));
      if (total > 0) {
        out.Add("tony_task_progress_total_steps", "gauge", "The steps the task said it will run.",
                labels, static_cast<double>(total));
        out.Add("tony_task_progress_ratio", "gauge", "The task's step over its total steps.",
                labels, static_cast<double>(*step) / static_cast<double>(total));
      }
    }
    if (sample == nullptr) continue;
    out.Add("tony_task_cpu_seconds_total", "counter",
            "CPU time of the task's processes in its current attempt.", labels,
            sample->cpu_seconds);
    out.Add("tony_task_memory_bytes", "gauge", "Resident memory of the task's processes.", labels,
            static_cast<double>(sample->rss_bytes));
    if (sample->gpu_utilization.has_value()) {
      out.Add("tony_task_gpu_utilization_ratio", "gauge",
              "Utilization of the task's GPUs, averaged (0 to 1).", labels,
              *sample->gpu_utilization / 100);
    }
    if (sample->gpu_memory_bytes.has_value()) {
      out.Add("tony_task_gpu_memory_bytes", "gauge", "GPU memory the task uses, summed.", labels,
              static_cast<double>(*sample->gpu_memory_bytes));
    }
    for (const auto& [name, value] : sample->values) {
      out.Add("tony_task_reported_value", "gauge",
              "A value the task reported with its progress (e.g. its loss), by name.",
              With(labels, "name", name), value);
    }
  }
}

}  // namespace

std::string_view ExitCause(int exit_code) {
  switch (exit_code) {
    case 0:
      return "";
    case kExitPreempted:
      return "preempted";
    case kExitAborted:
      return "node_lost";
    case kExitDisksFailed:
      return "disks_failed";
    case kExitOverPhysicalMemory:
    case kExitOverVirtualMemory:
      return "memory";
    case kExitLostHeartbeat:
      return "lost_heartbeat";
    case kExitHung:
      return "hung";
    case kExitGangRestart:
      return "gang_restart";
    default:  // 128 + a signal's number, as common/task_exit.cc's ExitText reads it
      return exit_code > 128 && exit_code < 128 + 65 ? "signal" : "exit_code";
  }
}

std::string RenderMetricsText(const std::vector<JobMetrics>& jobs) {
  Families families;
  for (const JobMetrics& job : jobs) {
    if (job.job != nullptr) AddJob(*job.job, job.samples, families);
  }
  return families.Text();
}

}  // namespace tony::history
