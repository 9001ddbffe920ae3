#pragma once
// `tony list`, `tony status APP_ID` and `tony kill APP_ID`: submitted jobs, from any terminal.

#include <string>

#include "CLI/CLI.hpp"
#include "cli/submit_options.h"

namespace tony::cli {

struct AppCommandOptions {
  std::string app_id;
  // --backend and --conf, for a job this machine's TONY_HOME has no directory of (submitted
  // elsewhere); otherwise the job's own tony-final.xml says where it runs.
  SubmitOptions submit;
};

void AddAppCommandFlags(CLI::App* app, AppCommandOptions* options);

struct ListOptions {
  bool all = false;      // ended jobs too
  SubmitOptions submit;  // --backend, --conf
};

void AddListFlags(CLI::App* app, ListOptions* options);

int RunListCommand(ListOptions& options);

int RunStatusCommand(AppCommandOptions& options);
int RunKillCommand(AppCommandOptions& options);

}  // namespace tony::cli
