#pragma once
// Where a configuration value came from, so `tony config --explain` and every error message can
// name it.

#include <string>

namespace tony::config {

enum class SourceKind {
  kDefault,   // the built-in tony-default.xml
  kConfFile,  // --conf_file, or ./tony.xml when none was given
  kSiteFile,  // $TONY_CONF_DIR/tony-site.xml
  kConfFlag,  // --conf key=value
  kFlag,      // a dedicated flag such as --executes
  kDerived,   // computed by tony from other values
};

struct ValueSource {
  SourceKind kind = SourceKind::kDefault;
  std::string file;  // for kConfFile / kSiteFile
  int line = 0;      // 1-based, for kConfFile / kSiteFile
  std::string flag;  // for kFlag, e.g. "--executes"

  static ValueSource Default() { return {}; }
  static ValueSource File(SourceKind kind, std::string file, int line) {
    return {kind, std::move(file), line, {}};
  }
  static ValueSource ConfFlag() { return {SourceKind::kConfFlag, {}, 0, "--conf"}; }
  static ValueSource Flag(std::string flag) { return {SourceKind::kFlag, {}, 0, std::move(flag)}; }
  static ValueSource Derived() { return {SourceKind::kDerived, {}, 0, {}}; }

  // "default", "tony.xml:12", "--conf", "--executes", "derived".
  std::string ToString() const;
};

}  // namespace tony::config
