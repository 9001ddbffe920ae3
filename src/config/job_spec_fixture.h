#pragma once
// The fixture of the JobSpec tests: the built-in defaults with a command, keys set as --conf.

#include <gtest/gtest.h>

#include <string>

#include "config/job_spec.h"
#include "config/key_catalog.h"

namespace tony::config {

class JobSpecTest : public ::testing::Test {
 protected:
  JobSpecTest() : conf_(KeyCatalog::BuiltIn().Defaults()) {
    Set("tony.containers.command", "python3 train.py");
  }
  void Set(const std::string& key, const std::string& value) {
    conf_.Set(key, value, ValueSource::ConfFlag());
  }
  absl::StatusOr<JobSpec> Build() { return BuildJobSpec(conf_); }
  std::string Error() {
    absl::StatusOr<JobSpec> spec = Build();
    EXPECT_FALSE(spec.ok());
    return spec.ok() ? "" : std::string(spec.status().message());
  }

  Configuration conf_;
};

}  // namespace tony::config
