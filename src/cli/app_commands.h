#pragma once
// `tony list`, `tony status APP_ID`, `tony kill APP_ID` and `tony logs APP_ID`: submitted jobs,
// from any terminal;
// `tony gc`: the ended jobs' directories.

#include <string>

#include "CLI/CLI.hpp"
#include "cli/submit_options.h"

namespace tony::cli {

struct AppCommandOptions {
  std::string app_id;
  bool json = false;  // `tony status --output json`
  // --backend and --conf, for a job this machine's TONY_HOME has no directory of (submitted
  // elsewhere); otherwise the job's own tony-final.xml says where it runs.
  SubmitOptions submit;
};

void AddAppCommandFlags(CLI::App* app, AppCommandOptions* options);

struct ListOptions {
  bool all = false;      // ended jobs too
  bool json = false;     // --output json
  SubmitOptions submit;  // --backend, --conf
};

void AddListFlags(CLI::App* app, ListOptions* options);

int RunListCommand(ListOptions& options);

struct GcOptions {
  bool dry_run = false;  // list only
  bool outputs = false;  // the expired jobs' outputs/ too
  SubmitOptions submit;  // --conf (tony.history.retention-sec)
};

void AddGcFlags(CLI::App* app, GcOptions* options);

// `tony gc`: removes the ended job directories under $TONY_HOME/jobs older than
// tony.history.retention-sec and prints each one. Exit code 0, 2 for a bad retention value, 1 if
// a directory could not be removed.
int RunGcCommand(GcOptions& options);

struct LogsCommandOptions {
  AppCommandOptions app;
  std::string task;  // TYPE:INDEX, or "" for every task
  bool stderr_only = false;
  bool all = false;  // stdout and stderr
  bool follow = false;
};

void AddLogsFlags(CLI::App* app, LogsCommandOptions* options);

// `tony logs APP`: the tasks' output from the job's history (client/job_logs.h).
int RunLogsCommand(LogsCommandOptions& options);

struct HistoryCommandOptions {
  SubmitOptions submit;  // --backend, --conf
  std::string host = "127.0.0.1";
  int port = 0;
};

void AddHistoryFlags(CLI::App* app, HistoryCommandOptions* options);

// `tony history`: serves the jobs' history UI (history/history_server.h) until interrupted.
int RunHistoryCommand(HistoryCommandOptions& options);

int RunStatusCommand(AppCommandOptions& options);
int RunKillCommand(AppCommandOptions& options);

}  // namespace tony::cli
