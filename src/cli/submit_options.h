#pragma once
// The command-line options shared by `tony submit` and `tony config`: TonY's client flags plus
// tony's own. Parsing only; meaning lives in config/ and client/.

#include <string>

#include "CLI/CLI.hpp"
#include "config/config_loader.h"

namespace tony::cli {

struct SubmitOptions {
  config::ConfigRequest request;
  bool explain = false;  // `tony config --explain`
  bool xml = false;      // `tony config --xml`
  bool tee = false;      // `tony submit --tee`: stream every task's output
  bool json = false;     // `tony submit --output json`: JSON lines on stdout, the rest on stderr
};

// Adds the submit flags to `app`, writing into `options`.
void AddSubmitFlags(CLI::App* app, SubmitOptions* options);

// --output text|json on `app`: sets *json for json.
void AddOutputFlag(CLI::App* app, bool* json, const std::string& help);

// Fills what comes from the environment and the working directory (TONY_CONF_DIR, cwd).
void CompleteFromEnvironment(SubmitOptions* options);

}  // namespace tony::cli
