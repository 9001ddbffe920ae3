#include <string>
#include <string_view>

#include "common/strings.h"
#include "config/config_reader.h"
#include "config/job_spec.h"
#include "config/value_parsers.h"

namespace tony::config {

absl::StatusOr<JobControlSpec> BuildJobControlSpec(const Configuration& conf) {
  Reader reader(conf);
  JobControlSpec control;
  control.name = reader.String("tony.application.name");
  control.application_type = reader.String("tony.application.type");
  control.backend = ToLower(reader.String("tony.application.backend"));
  if (control.backend != "local" && control.backend != "yarn") {
    return reader.Error("tony.application.backend", "expected local or yarn");
  }
  TONY_ASSIGN_OR_RETURN(control.keep_staging, reader.Bool("tony.application.keep-staging"));
  TONY_ASSIGN_OR_RETURN(control.stop_grace_ms, reader.Int("tony.task.stop-grace-ms", 0));
  TONY_ASSIGN_OR_RETURN(control.history_retention_sec,
                        reader.Int("tony.history.retention-sec", INT64_MIN));
  control.history_location = std::string(StripWhitespace(reader.String("tony.history.location")));
  control.history_intermediate =
      std::string(StripWhitespace(reader.String("tony.history.intermediate")));
  control.history_finished = std::string(StripWhitespace(reader.String("tony.history.finished")));
  TONY_ASSIGN_OR_RETURN(control.history_max_log_bytes, reader.Int("tony.history.max-log-bytes", 0));
  for (const char* key : {"tony.application.hdfs-conf-path", "tony.application.yarn-conf-path"}) {
    if (std::string dir = reader.String(key); !dir.empty()) {
      control.hadoop_conf_dirs.push_back(std::move(dir));
    }
  }
  TONY_ASSIGN_OR_RETURN(control.security.enabled, reader.Bool("tony.application.security.enabled"));
  control.security.principal =
      std::string(StripWhitespace(reader.String("tony.kerberos.principal")));
  control.security.keytab = std::string(StripWhitespace(reader.String("tony.kerberos.keytab")));
  for (std::string& uri : SplitList(reader.String("tony.other.namenodes"))) {
    std::string_view rest = uri;
    if (!rest.starts_with("hdfs://") || rest.size() == 7 ||
        rest.substr(7).find_first_of("/?#") != std::string_view::npos) {
      return reader.Error("tony.other.namenodes",
                          StrCat("'", ForMessage(uri), "' is not an hdfs://host[:port] URI"));
    }
    control.security.other_namenodes.push_back(std::move(uri));
  }
  return control;
}

}  // namespace tony::config
