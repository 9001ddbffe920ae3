#pragma once
// Checking a /metrics body as Prometheus's tools read it.

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "e2e/tony_runner.h"

namespace tony::testing {

// Prometheus text (a /metrics body) as prometheus_client's own parser reads it
// (tests/e2e/scripts/parse_metrics.py): a line per sample, name{label="value",...} value, labels
// sorted; the parser's complaint, with ok false, where it refuses the text (or promtool's, where
// its lint does).
struct ParsedMetrics {
  bool ok = false;
  std::string samples;
};
inline ParsedMetrics ParseMetricsText(const std::string& text) {
  char path[] = "/tmp/tony-metrics-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {false, "mkstemp failed"};
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  ParsedMetrics parsed;
  if (written) {
    const std::string command =
        "/usr/bin/python3 '" + TonyRunner::Script("parse_metrics.py") + "' < '" + path + "' 2>&1";
    if (FILE* out = popen(command.c_str(), "r"); out != nullptr) {
      char buffer[4096];
      size_t n;
      while ((n = fread(buffer, 1, sizeof(buffer), out)) > 0) parsed.samples.append(buffer, n);
      const int status = pclose(out);
      parsed.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
  }
  // Prometheus's own linter too, where Debian's prometheus package is installed (install-deps'
  // tests group): a name, type or help text against its conventions fails the check.
  if (parsed.ok && access("/usr/bin/promtool", X_OK) == 0) {
    const std::string lint = std::string("/usr/bin/promtool check metrics < '") + path + "' 2>&1";
    if (FILE* out = popen(lint.c_str(), "r"); out != nullptr) {
      std::string said;
      char buffer[4096];
      size_t n;
      while ((n = fread(buffer, 1, sizeof(buffer), out)) > 0) said.append(buffer, n);
      const int status = pclose(out);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        parsed.ok = false;
        parsed.samples = "promtool check metrics: " + said;
      }
    }
  }
  unlink(path);
  return parsed;
}

}  // namespace tony::testing
