#include "config/config_loader.h"

#include <filesystem>

#include "common/strings.h"
#include "config/key_catalog.h"

namespace tony::config {
namespace {

namespace fs = std::filesystem;

bool IsFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

absl::Status ApplyConfFlags(const std::vector<std::string>& conf, Configuration* out) {
  for (const std::string& item : conf) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(StrCat("--conf \"", item, "\": expected key=value"));
    }
    out->Set(item.substr(0, eq), item.substr(eq + 1), ValueSource::ConfFlag());
  }
  return absl::OkStatus();
}

absl::Status CheckEnvFlag(const char* flag, const std::string& item) {
  const size_t eq = item.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(StrCat(flag, " \"", item, "\": expected NAME=VALUE"));
  }
  return absl::OkStatus();
}

absl::Status ApplySubmitFlags(const SubmitFlags& flags, Configuration* out) {
  auto set = [&](const char* flag, const char* key, const std::string& value) {
    out->Set(key, value, ValueSource::Flag(flag));
  };
  if (flags.executes) {
    set("--executes", "tony.application.executes", *flags.executes);
    set("--executes", "tony.containers.command", BuildTaskCommand(flags));
  }
  if (flags.python_binary_path) {
    set("--python_binary_path", "tony.python-exec-path", PythonInterpreter(flags));
  }
  if (flags.python_venv) set("--python_venv", "tony.application.python-venv", *flags.python_venv);
  if (flags.src_dir) set("--src_dir", "tony.application.src-dir", *flags.src_dir);
  for (const std::string& env : flags.shell_env) {
    if (absl::Status s = CheckEnvFlag("--shell_env", env); !s.ok()) return s;
    set("--shell_env", "tony.execution.envs", env);
  }
  for (const std::string& env : flags.container_env) {
    if (absl::Status s = CheckEnvFlag("--container_env", env); !s.ok()) return s;
    set("--container_env", "tony.containers.envs", env);
  }
  if (flags.hdfs_classpath) {
    set("--hdfs_classpath", "tony.containers.resources", *flags.hdfs_classpath);
    set("--hdfs_classpath", "tony.application.hdfs-classpath", *flags.hdfs_classpath);
  }
  if (flags.sidecar_tensorboard_log_dir) {
    set("--sidecar_tensorboard_log_dir", "tony.application.tensorboard-log-dir",
        *flags.sidecar_tensorboard_log_dir);
  }
  if (flags.backend) set("--backend", "tony.application.backend", *flags.backend);
  if (flags.output_dir) set("--output_dir", "tony.application.output-dir", *flags.output_dir);
  return absl::OkStatus();
}

}  // namespace

std::string PythonInterpreter(const SubmitFlags& flags) {
  if (!flags.python_binary_path || flags.python_binary_path->empty()) return "";
  const std::string& python = *flags.python_binary_path;
  if (python.front() == '/' || !flags.python_venv) return python;
  return StrCat("venv/", python);
}

std::string BuildTaskCommand(const SubmitFlags& flags) {
  std::vector<std::string> parts;
  if (std::string python = PythonInterpreter(flags); !python.empty()) parts.push_back(python);
  if (flags.executes) parts.push_back(*flags.executes);
  if (flags.task_params && !flags.task_params->empty()) parts.push_back(*flags.task_params);
  return Join(parts, " ");
}

absl::StatusOr<ResolvedConfig> ResolveConfiguration(const ConfigRequest& request) {
  const KeyCatalog& catalog = KeyCatalog::BuiltIn();
  ResolvedConfig resolved{catalog.Defaults(), {}};
  Configuration& conf = resolved.conf;

  if (request.conf_file && request.conf_file_text) {
    if (absl::Status s =
            conf.LoadXmlString(*request.conf_file_text, *request.conf_file, SourceKind::kConfFile);
        !s.ok()) {
      return s;
    }
  } else if (request.conf_file) {
    std::error_code ec;
    if (!fs::exists(*request.conf_file, ec)) {
      return absl::NotFoundError(StrCat("--conf_file ", *request.conf_file, ": no such file"));
    }
    if (absl::Status s = conf.LoadXmlFile(*request.conf_file, SourceKind::kConfFile); !s.ok()) {
      return s;
    }
  } else if (std::string local = (fs::path(request.working_dir) / "tony.xml").string();
             IsFile(local)) {
    if (absl::Status s = conf.LoadXmlFile(local, SourceKind::kConfFile); !s.ok()) return s;
  }
  if (request.tony_conf_dir && !request.tony_conf_dir->empty()) {
    std::string site = (fs::path(*request.tony_conf_dir) / "tony-site.xml").string();
    if (IsFile(site)) {
      if (absl::Status s = conf.LoadXmlFile(site, SourceKind::kSiteFile); !s.ok()) return s;
    }
  }
  if (absl::Status s = ApplyConfFlags(request.conf, &conf); !s.ok()) return s;
  if (absl::Status s = ApplySubmitFlags(request.flags, &conf); !s.ok()) return s;

  resolved.warnings = catalog.Lint(conf);
  for (const std::string& ignored : conf.ignored_final()) {
    resolved.warnings.push_back(StrCat("ignored a new value of final key ", ignored));
  }
  return resolved;
}

}  // namespace tony::config
