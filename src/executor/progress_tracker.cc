#include "executor/progress_tracker.h"

#include <charconv>
#include <vector>

#include "common/strings.h"
#include "re2/re2.h"

namespace tony::executor {

ProgressTracker::ProgressTracker(const std::string& pattern, const Clock* clock, int64_t start_ms)
    : clock_(clock), last_progress_ms_(start_ms) {
  if (!pattern.empty()) {
    pattern_ = std::make_unique<re2::RE2>(pattern, re2::RE2::Quiet);
    if (!pattern_->ok()) pattern_.reset();  // config validated it; never fail a task over it
  }
}

ProgressTracker::~ProgressTracker() = default;

void ProgressTracker::Active() {
  // Once the task reports steps, only a new step counts.
  if (!progress_.has_step()) last_progress_ms_ = clock_->NowMs();
}

void ProgressTracker::OnOutput(Stream stream, std::string_view bytes) {
  if (bytes.empty()) return;
  const bool reports = stream == Stream::kReports;
  if (!reports) Active();
  if (!reports && !pattern_) return;
  std::string& partial = partial_[static_cast<int>(stream)];
  if (skipping_[static_cast<int>(stream)]) {
    // After a skip the bytes start inside a line: up to its end they are not a line of their own.
    const size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) return;
    bytes.remove_prefix(newline + 1);
    skipping_[static_cast<int>(stream)] = false;
  }
  while (!bytes.empty()) {
    const size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (partial.size() < kMaxLineBytes) {
      partial.append(piece.substr(0, kMaxLineBytes - partial.size()));
    }
    if (newline == std::string_view::npos) break;
    if (reports) {
      Report(partial);
    } else {
      Line(partial);
    }
    partial.clear();
    bytes.remove_prefix(newline + 1);
  }
}

void ProgressTracker::OnSkipped(Stream stream) {
  partial_[static_cast<int>(stream)].clear();
  skipping_[static_cast<int>(stream)] = true;
}

void ProgressTracker::OnRestarted(Stream stream) {
  partial_[static_cast<int>(stream)].clear();
  skipping_[static_cast<int>(stream)] = false;
}

void ProgressTracker::OnCpu(uint64_t cpu_ticks) {
  // The sum over the processes alive now: it drops when a busy one exits, and any rise from the
  // last sample is CPU used since.
  if (cpu_ticks > cpu_ticks_) Active();
  cpu_ticks_ = cpu_ticks;
}

namespace {

bool ParseInt(std::string_view text, int64_t* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

bool ParseDouble(std::string_view text, double* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

void ProgressTracker::Line(std::string_view line) {
  const int groups = pattern_->NumberOfCapturingGroups();
  std::vector<re2::StringPiece> captured(static_cast<size_t>(groups) + 1);
  if (!pattern_->Match(line, 0, line.size(), re2::RE2::UNANCHORED, captured.data(),
                       static_cast<int>(captured.size()))) {
    return;
  }
  int64_t step = 0;
  bool has_step = false;
  int64_t total = 0;
  std::map<std::string, double> metrics;
  for (const auto& [name, index] : pattern_->NamedCapturingGroups()) {
    const re2::StringPiece value = captured[static_cast<size_t>(index)];
    if (value.data() == nullptr) continue;  // the group did not take part
    const std::string_view text(value.data(), value.size());
    if (name == "step") {
      has_step = ParseInt(text, &step);
    } else if (name == "total") {
      if (!ParseInt(text, &total)) total = 0;
    } else if (double number = 0; name.size() <= kMaxMetricName && ParseDouble(text, &number)) {
      metrics[name] = number;
    }
  }
  if (has_step) Step(step, total, metrics);
}

void ProgressTracker::Report(std::string_view line) {
  int64_t step = 0;
  bool has_step = false;
  int64_t total = 0;
  std::map<std::string, double> metrics;
  for (std::string_view pair : Split(line, ' ')) {
    const size_t equals = pair.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    const std::string_view name = pair.substr(0, equals);
    const std::string_view value = pair.substr(equals + 1);
    if (name == "faulthandler") {
      if (int64_t pid = 0; ParseInt(value, &pid) && pid > 1 && pid <= kMaxPid &&
                           faulthandler_pids_.size() < kMaxFaulthandlerPids) {
        faulthandler_pids_.insert(static_cast<pid_t>(pid));
      }
    } else if (name == "step") {
      has_step = ParseInt(value, &step);
    } else if (name == "total") {
      if (!ParseInt(value, &total)) total = 0;
    } else if (double number = 0; metrics.size() < kMaxMetrics && name.size() <= kMaxMetricName &&
                                  ParseDouble(value, &number)) {
      metrics[std::string(name)] = number;
    }
  }
  if (has_step) Step(step, total, metrics);
}

void ProgressTracker::Step(int64_t step, int64_t total,
                           const std::map<std::string, double>& metrics) {
  if (!progress_.has_step() || progress_.step() != step) last_progress_ms_ = clock_->NowMs();
  progress_.set_has_step(true);
  progress_.set_step(step);
  if (total > 0) progress_.set_total(total);
  for (const auto& [name, value] : metrics) {
    if (progress_.metrics().size() < kMaxMetrics || progress_.metrics().contains(name)) {
      (*progress_.mutable_metrics())[name] = value;
    }
  }
}

int64_t ProgressTracker::quiet_ms() const {
  return std::max<int64_t>(0, clock_->NowMs() - last_progress_ms_);
}

}  // namespace tony::executor
