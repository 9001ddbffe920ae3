// libFuzzer target for the configuration parsers: Hadoop XML over the built-in defaults, the
// key checks (Lint) and the job built from it, and every value parser. Any input must give a
// value or an error Status, never a crash, a hang or a sanitizer report.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "config/configuration.h"
#include "config/job_spec.h"
#include "config/key_catalog.h"
#include "config/value_parsers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  tony::config::Configuration conf = tony::config::KeyCatalog::BuiltIn().Defaults();
  if (conf.LoadXmlString(input, "fuzz.xml", tony::config::SourceKind::kConfFile).ok()) {
    tony::config::Configuration reloaded;
    if (!reloaded.LoadXmlString(conf.ToXml(), "again.xml", tony::config::SourceKind::kConfFile)
             .ok()) {
      __builtin_trap();  // what tony writes, tony must read back
    }
    for (const auto& [key, entry] : conf.entries()) {
      if (reloaded.Get(key) != entry.value) __builtin_trap();
    }
    (void)tony::config::KeyCatalog::BuiltIn().Lint(conf);
    (void)tony::config::BuildJobSpec(conf);
  }
  (void)tony::config::ParseMemoryMb(input);
  (void)tony::config::ParseInt(input);
  (void)tony::config::ParseBool(input);
  (void)tony::config::ParseEnvList(input);
  (void)tony::config::SplitList(input);
  return 0;
}
