#include "cli/submit_options.h"

#include <cstdlib>
#include <filesystem>

namespace tony::cli {
namespace {

// CLI11 fills std::optional<std::string> through a plain string and a callback.
void AddOptional(CLI::App* app, const std::string& name, std::optional<std::string>* target,
                 const std::string& help) {
  app->add_option_function<std::string>(
      name, [target](const std::string& value) { *target = value; }, help);
}

}  // namespace

void AddSubmitFlags(CLI::App* app, SubmitOptions* options) {
  config::SubmitFlags& f = options->request.flags;
  AddOptional(app, "--executes", &f.executes, "Entry point: a script (in --src_dir) or a command");
  AddOptional(app, "--task_params", &f.task_params, "Arguments appended to the command");
  AddOptional(app, "--python_venv", &f.python_venv,
              "Zipped virtualenv, unpacked into ./venv in every container");
  AddOptional(app, "--python_binary_path", &f.python_binary_path,
              "Python interpreter; relative paths are inside the venv");
  AddOptional(app, "--src_dir", &f.src_dir,
              "Source directory (or zip) unpacked into every container's working directory");
  app->add_option("--shell_env", f.shell_env, "NAME=VALUE for the user process (repeatable)");
  app->add_option("--container_env", f.container_env,
                  "NAME=VALUE for every container (repeatable)");
  app->add_option("--conf", options->request.conf, "key=value (repeatable)");
  AddOptional(app, "--conf_file", &options->request.conf_file,
              "Configuration file (default ./tony.xml if present)");
  AddOptional(app, "--hdfs_classpath", &f.hdfs_classpath,
              "Comma-separated HDFS paths localized into every container");
  AddOptional(app, "--sidecar_tensorboard_log_dir", &f.sidecar_tensorboard_log_dir,
              "Log directory of the TensorBoard sidecar");
  AddOptional(app, "--backend", &f.backend, "local (default) or yarn");
  AddOptional(app, "--output_dir", &f.output_dir,
              "Where the tasks' outputs go and stay (TONY_OUTPUT_DIR): a path, or hdfs:// on YARN");
}

void AddOutputFlag(CLI::App* app, bool* json, const std::string& help) {
  app->add_option_function<std::string>(
         "--output", [json](const std::string& value) { *json = value == "json"; }, help)
      ->check(CLI::IsMember({"text", "json"}));
}

void CompleteFromEnvironment(SubmitOptions* options) {
  if (const char* dir = std::getenv("TONY_CONF_DIR")) options->request.tony_conf_dir = dir;
  std::error_code ec;
  options->request.working_dir = std::filesystem::current_path(ec).string();
}

}  // namespace tony::cli
