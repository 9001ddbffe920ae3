// tony: one binary, every role as a subcommand (client, AM, executor).

#include <openssl/crypto.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "absl/synchronization/mutex.h"
#include "cli/app_commands.h"
#include "cli/cluster_command.h"
#include "cli/config_command.h"
#include "cli/roles.h"
#include "cli/submit_options.h"
#include "common/resident_pages.h"
#include "common/strings.h"
#include "config/key_names.h"

namespace {

#ifndef TONY_SANITIZED
// Runs before every initializer of tony's and of its libraries' (an executable's .preinit_array),
// with main's arguments: an executor, which runs in the user's container and counts against its
// memory, maps its pages of code only as they are touched from here on (resident_pages.h),
// starting up included. Not under the sanitizers, whose runtimes initialize from the same array.
void MapAnExecutorsCodeAsTouched(int argc, char** argv, char** /*envp*/) {
  if (argc < 2 || std::string_view(argv[1]) != "executor") return;
  // What the dynamic loader touched (symbol tables, relocations) is not touched again.
  if (tony::MapCodePagesAsTouched()) (void)tony::ReleaseCleanFilePages();
}
[[gnu::section(".preinit_array"),
  gnu::used]] void (*const kBeforeInitializers)(int, char**, char**) = MapAnExecutorsCodeAsTouched;
#endif

int Main(int argc, char** argv) {
  // A crash of any role prints a symbolized stack trace into that role's log.
  absl::InitializeSymbolizer(argv[0]);
  absl::InstallFailureSignalHandler({});
  // gRPC locks absl mutexes on every call; their deadlock detection (on in Debian's abseil) costs
  // the AM several percent of its CPU with thousands of heartbeats a second, and checks nothing of
  // tony's.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"tony: run distributed deep-learning jobs as one unit, locally or on YARN"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tony 0.1.0"));

  tony::cli::SubmitOptions config_options;
  CLI::App* config = app.add_subcommand("config", "Print the resolved configuration of a job");
  tony::cli::AddSubmitFlags(config, &config_options);
  config->add_flag("--explain", config_options.explain, "Show where each value came from");
  config->add_flag("--xml", config_options.xml, "Print as tony-final.xml");

  tony::cli::SubmitOptions submit_options;
  CLI::App* submit = app.add_subcommand("submit", "Run a job and exit with its result");
  tony::cli::AddSubmitFlags(submit, &submit_options);
  submit->add_flag("--tee", submit_options.tee,
                   "Print every task's output as it comes, each line with its task "
                   "(\"[worker:1] ...\"), as torchrun --tee does");
  tony::cli::AddOutputFlag(submit, &submit_options.json,
                           "text (default), or json: a JSON line when the job is submitted and "
                           "one when it ends on stdout, everything else on stderr");

  tony::cli::SubmitOptions cluster_options;
  CLI::App* cluster = app.add_subcommand(
      "cluster", "Show the YARN cluster's metrics and nodes (like yarn node -list)");
  cluster->add_option("--conf", cluster_options.request.conf, "key=value (repeatable)");

  tony::cli::ListOptions list_options;
  CLI::App* list_cmd =
      app.add_subcommand("list", "List the running jobs (like yarn application -list)");
  tony::cli::AddListFlags(list_cmd, &list_options);
  tony::cli::AppCommandOptions status_options;
  CLI::App* status_cmd =
      app.add_subcommand("status", "Show a submitted job: its state, tracking URL and tasks");
  tony::cli::AddAppCommandFlags(status_cmd, &status_options);
  tony::cli::AddOutputFlag(status_cmd, &status_options.json,
                           "text (default), or json: the job as one JSON object");
  tony::cli::AppCommandOptions kill_options;
  CLI::App* kill_cmd = app.add_subcommand(
      "kill", "Kill a submitted job (its tasks get their grace period; the job ends KILLED)");
  tony::cli::AddAppCommandFlags(kill_cmd, &kill_options);

  tony::cli::LogsCommandOptions logs_options;
  CLI::App* logs_cmd = app.add_subcommand(
      "logs", "Show what a job's tasks printed, during the job or after it (from its history)");
  tony::cli::AddLogsFlags(logs_cmd, &logs_options);

  tony::cli::HistoryCommandOptions history_options;
  CLI::App* history_cmd = app.add_subcommand(
      "history",
      "Serve the jobs' history (tasks, timeline, metrics, configuration, logs) on the web");
  tony::cli::AddHistoryFlags(history_cmd, &history_options);

  tony::cli::GcOptions gc_options;
  CLI::App* gc_cmd = app.add_subcommand(
      "gc", "Remove ended jobs' directories older than tony.history.retention-sec");
  tony::cli::AddGcFlags(gc_cmd, &gc_options);

  CLI::App* am = app.add_subcommand("am", "The ApplicationMaster (started by the backend)");
  CLI::App* executor =
      app.add_subcommand("executor", "The task executor (started by the AM in each container)");
  am->group("Internal");
  executor->group("Internal");

  // An unknown command is named as such (CLI11 would say only that a subcommand is required).
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    bool known = false;
    for (const CLI::App* command : app.get_subcommands({})) {
      known = known || command->get_name() == argv[1];
      if (command->get_group() != "Internal") names.push_back(command->get_name());
    }
    if (!known) {
      std::cerr << "tony: error: unknown command '" << tony::config::ForMessage(argv[1])
                << "' (commands: " << tony::Join(names, ", ") << "; tony --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tony: error: " << e.what() << "\n";
    return 2;
  }

  if (submit->parsed()) return tony::cli::RunSubmit(submit_options);
  if (cluster->parsed()) return tony::cli::RunClusterCommand(cluster_options);
  if (list_cmd->parsed()) return tony::cli::RunListCommand(list_options);
  if (status_cmd->parsed()) return tony::cli::RunStatusCommand(status_options);
  if (kill_cmd->parsed()) return tony::cli::RunKillCommand(kill_options);
  if (gc_cmd->parsed()) return tony::cli::RunGcCommand(gc_options);
  if (logs_cmd->parsed()) return tony::cli::RunLogsCommand(logs_options);
  if (history_cmd->parsed()) return tony::cli::RunHistoryCommand(history_options);
  if (am->parsed()) return tony::cli::RunAm();
  if (executor->parsed()) {
    char** role = std::find_if(argv + 1, argv + argc,
                               [](const char* arg) { return std::string_view(arg) == "executor"; });
    return tony::cli::RunExecutor(role == argv + argc ? nullptr : *role);
  }
  if (config->parsed()) {
    tony::cli::CompleteFromEnvironment(&config_options);
    return tony::cli::RunConfigCommand(config_options);
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // OpenSSL cleans itself up at exit unless told not to, and gRPC's threads may still be running
  // then: a thread that ends after that cleanup never frees its own OpenSSL state (its error
  // queue, which AddressSanitizer's leak check then reports), and one that still uses OpenSSL
  // uses what was freed. The process's exit frees everything anyway. This must be OpenSSL's first
  // initialization in the process (nothing before main initializes it).
  OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  // What escapes a command (CLI11's or the standard library's exceptions; tony's own code returns
  // statuses) ends it with one line rather than std::terminate's abort.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fputs("tony: error: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
  } catch (...) {
    std::fputs("tony: error: an unknown exception\n", stderr);
  }
  return 1;
}
