#pragma once
// Builds a job's configuration with TonY's precedence, lowest first:
//   built-in defaults < --conf_file (or ./tony.xml when none is given)
//   < $TONY_CONF_DIR/tony-site.xml < --conf key=value < dedicated flags (--executes, ...).
// Multi-valued keys (tony.containers.envs, tony.execution.envs, tony.containers.resources)
// append across all levels instead of replacing.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/configuration.h"

namespace tony::config {

// The flags of TonY's `submit` that set configuration keys.
struct SubmitFlags {
  std::optional<std::string> executes;
  std::optional<std::string> task_params;
  std::optional<std::string> python_venv;
  std::optional<std::string> python_binary_path;
  std::optional<std::string> src_dir;
  std::vector<std::string> shell_env;      // K=V, repeatable
  std::vector<std::string> container_env;  // K=V, repeatable
  std::optional<std::string> hdfs_classpath;
  std::optional<std::string> sidecar_tensorboard_log_dir;
  std::optional<std::string> backend;
  std::optional<std::string> output_dir;
};

struct ConfigRequest {
  std::optional<std::string> conf_file;  // --conf_file
  // The --conf_file's contents, when the caller fetched them (a file on HDFS); errors and
  // sources still name `conf_file`.
  std::optional<std::string> conf_file_text;
  std::vector<std::string> conf;  // --conf key=value, in command-line order
  SubmitFlags flags;
  std::string working_dir = ".";             // where ./tony.xml is looked for
  std::optional<std::string> tony_conf_dir;  // $TONY_CONF_DIR
};

struct ResolvedConfig {
  Configuration conf;
  std::vector<std::string> warnings;  // for the user, one line each
};

// Errors name the flag, file and line, or key: "--conf \"foo\": expected key=value".
[[nodiscard]] absl::StatusOr<ResolvedConfig> ResolveConfiguration(const ConfigRequest& request);

// TonY's task command: "<python> <executes> <task_params>", where the interpreter is used as is
// when absolute or when there is no venv, and is venv/<python> otherwise.
std::string BuildTaskCommand(const SubmitFlags& flags);
// The interpreter path the tasks use, or "" when no --python_binary_path was given.
std::string PythonInterpreter(const SubmitFlags& flags);

}  // namespace tony::config
