#include "executor/task_helper.h"

#include <csignal>

#include "common/files.h"
#include "common/strings.h"
#include "executor/progress_tracker.h"

namespace tony::executor {

// Reports are whole lines written with one write() each (O_APPEND), so the lines of several
// processes of one task never interleave.
const char kTonyTaskModule[] =
    R"PY("""Reports a task's progress to tony (docs/running-jobs.md, "Progress and hangs").

    import tony_task
    tony_task.progress(step, total=1000, loss=0.25)

Outside tony (TONY_PROGRESS_FILE unset) it does nothing.
"""
import math
import os
import signal

_PATH = os.environ.get("TONY_PROGRESS_FILE")
STACKS_SIGNAL = signal.Signals(%STACKS_SIGNAL%)


def _write(line):
    if not _PATH:
        return
    fd = os.open(_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def progress(step, total=None, **metrics):
    """Says the task reached `step` (of `total`), with numeric metrics such as loss=0.25."""
    parts = ["step=%d" % int(step)]
    if total is not None:
        parts.append("total=%d" % int(total))
    for name, value in metrics.items():
        value = float(value)
        if name.isidentifier() and math.isfinite(value):
            parts.append("%s=%r" % (name, value))
    _write(" ".join(parts))


def _enable_stacks():
    # tony asks for Python's stacks when the task hangs; only where the signal is free.
    if not _PATH or signal.getsignal(STACKS_SIGNAL) != signal.SIG_DFL:
        return
    import faulthandler
    import sys
    try:
        faulthandler.register(STACKS_SIGNAL, file=sys.stderr, all_threads=True)
    except (AttributeError, RuntimeError, ValueError, OSError):
        return
    _write("faulthandler=%d" % os.getpid())


_enable_stacks()
)PY";

absl::StatusOr<std::map<std::string, std::string>> InstallTaskHelper(
    const std::string& dir, const std::string& pythonpath) {
  if (absl::Status made = EnsurePrivateDir(dir); !made.ok()) return made;
  std::string source = kTonyTaskModule;
  const std::string placeholder = "%STACKS_SIGNAL%";
  source.replace(source.find(placeholder), placeholder.size(), std::to_string(kStacksSignal));
  if (absl::Status written = WriteFile(StrCat(dir, "/tony_task.py"), source, 0600); !written.ok()) {
    return written;
  }
  std::map<std::string, std::string> env;
  env["TONY_PROGRESS_FILE"] = StrCat(dir, "/progress");
  env["PYTHONPATH"] = pythonpath.empty() ? dir : StrCat(dir, ":", pythonpath);
  return env;
}

}  // namespace tony::executor
