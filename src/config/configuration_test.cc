#include "config/configuration.h"

#include <gtest/gtest.h>

#include "config/key_catalog.h"
#include "config/value_parsers.h"

namespace tony::config {
namespace {

TEST(ConfigurationTest, LoadsPropertiesWithFileAndLine) {
  Configuration conf;
  ASSERT_TRUE(conf.LoadXmlString(R"(<?xml version="1.0"?>
<configuration>
  <property>
    <name>tony.worker.instances</name>
    <value> 4 </value>
  </property>
  <property><name>tony.ps.instances</name><value>1</value></property>
</configuration>)",
                                 "job.xml", SourceKind::kConfFile)
                  .ok());
  const ConfigEntry* entry = conf.Find("tony.worker.instances");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->value, "4");
  EXPECT_EQ(entry->source.ToString(), "job.xml:3");
  EXPECT_EQ(conf.Find("tony.ps.instances")->source.ToString(), "job.xml:7");
}

TEST(ConfigurationTest, MalformedXmlNamesFileAndLine) {
  Configuration conf;
  absl::Status status = conf.LoadXmlString(
      "<configuration>\n<property>\n<name>a</name>\n<value>1</value>\n</propety>\n</configuration>",
      "bad.xml", SourceKind::kConfFile);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::string(status.message()).starts_with("bad.xml:5: malformed XML"))
      << status.message();
}

TEST(ConfigurationTest, PropertyWithoutNameIsAnErrorAndChangesNothing) {
  Configuration conf;
  absl::Status status = conf.LoadXmlString(
      "<configuration>\n<property><name>a.b</name><value>1</value></property>\n"
      "<property><value>2</value></property>\n</configuration>",
      "x.xml", SourceKind::kConfFile);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(std::string(status.message()), "x.xml:3: <property> has no <name>");
  EXPECT_FALSE(conf.Has("a.b"));
}

TEST(ConfigurationTest, WrongRootElementIsAnError) {
  Configuration conf;
  absl::Status status = conf.LoadXmlString("<conf></conf>", "r.xml", SourceKind::kConfFile);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("expected <configuration>"), std::string::npos);
}

TEST(ConfigurationTest, MissingFileIsNotFound) {
  Configuration conf;
  absl::Status status = conf.LoadXmlFile("/nonexistent/tony.xml", SourceKind::kConfFile);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(status.message()).find("/nonexistent/tony.xml"), std::string::npos);
}

TEST(ConfigurationTest, LaterSourcesReplaceSingleValuedKeys) {
  Configuration conf;
  conf.Set("tony.am.memory", "2g", ValueSource::Default());
  conf.Set("tony.am.memory", "4g", ValueSource::File(SourceKind::kConfFile, "t.xml", 3));
  conf.Set("tony.am.memory", "8g", ValueSource::ConfFlag());
  EXPECT_EQ(conf.Get("tony.am.memory"), "8g");
  EXPECT_EQ(conf.Find("tony.am.memory")->source.ToString(), "--conf");
  EXPECT_TRUE(conf.Find("tony.am.memory")->appended.empty());
}

TEST(ConfigurationTest, MultiValuedKeysAppendAndRememberEverySource) {
  Configuration conf;
  conf.Set("tony.execution.envs", "", ValueSource::Default());
  conf.Set("tony.execution.envs", "A=1", ValueSource::File(SourceKind::kConfFile, "t.xml", 4));
  conf.Set("tony.execution.envs", "B=2", ValueSource::ConfFlag());
  conf.Set("tony.execution.envs", "C=3", ValueSource::Flag("--shell_env"));
  const ConfigEntry* entry = conf.Find("tony.execution.envs");
  EXPECT_EQ(entry->value, "A=1,B=2,C=3");
  EXPECT_EQ(entry->source.ToString(), "--shell_env");
  ASSERT_EQ(entry->appended.size(), 2u);
  EXPECT_EQ(entry->appended[0].ToString(), "t.xml:4");
  EXPECT_EQ(entry->appended[1].ToString(), "--conf");
}

TEST(ConfigurationTest, FinalKeysKeepTheirValue) {
  Configuration conf;
  ASSERT_TRUE(
      conf.LoadXmlString("<configuration><property><name>tony.yarn.queue</name><value>prod</value>"
                         "<final>true</final></property></configuration>",
                         "site.xml", SourceKind::kSiteFile)
          .ok());
  conf.Set("tony.yarn.queue", "adhoc", ValueSource::ConfFlag());
  EXPECT_EQ(conf.Get("tony.yarn.queue"), "prod");
  ASSERT_EQ(conf.ignored_final().size(), 1u);
  EXPECT_EQ(conf.ignored_final()[0], "tony.yarn.queue (from --conf)");
}

TEST(ConfigurationTest, XmlRoundTrip) {
  Configuration conf;
  conf.Set("tony.worker.command", "python train.py --lr 0.1 <&>", ValueSource::ConfFlag());
  conf.Set("tony.worker.instances", "2", ValueSource::Flag("--x"));
  Configuration reloaded;
  ASSERT_TRUE(reloaded.LoadXmlString(conf.ToXml(), "tony-final.xml", SourceKind::kConfFile).ok());
  EXPECT_EQ(reloaded.Get("tony.worker.command"), "python train.py --lr 0.1 <&>");
  EXPECT_EQ(reloaded.Get("tony.worker.instances"), "2");
}

TEST(ValueParsersTest, Memory) {
  EXPECT_EQ(*ParseMemoryMb("2g"), 2048);
  EXPECT_EQ(*ParseMemoryMb("2G"), 2048);
  EXPECT_EQ(*ParseMemoryMb("2048m"), 2048);
  EXPECT_EQ(*ParseMemoryMb("512M"), 512);
  EXPECT_EQ(*ParseMemoryMb("2048"), 2048);
  for (const char* bad : {"", "g", "2.5g", "2gb", "-1g", "0", "2k", "abc", "1 g", "99999999999g"}) {
    EXPECT_FALSE(ParseMemoryMb(bad).ok()) << bad;
  }
}

TEST(ValueParsersTest, IntBoolAndLists) {
  EXPECT_EQ(*ParseInt("42"), 42);
  EXPECT_EQ(*ParseInt(" -1 "), -1);
  EXPECT_FALSE(ParseInt("1.5").ok());
  EXPECT_FALSE(ParseInt("two").ok());
  EXPECT_FALSE(ParseInt("99999999999999999999").ok());
  EXPECT_TRUE(*ParseBool("TRUE"));
  EXPECT_FALSE(*ParseBool("false"));
  EXPECT_FALSE(ParseBool("yes").ok());
  EXPECT_EQ(SplitList(" a, ,b ,"), (std::vector<std::string>{"a", "b"}));
  auto envs = ParseEnvList("A=1,B=x=y, C=");
  ASSERT_TRUE(envs.ok());
  EXPECT_EQ((*envs)["B"], "x=y");
  EXPECT_EQ((*envs)["C"], "");
  EXPECT_FALSE(ParseEnvList("NOEQUALS").ok());
  EXPECT_FALSE(ParseEnvList("1A=2").ok());
}

TEST(KeyCatalogTest, BuiltInDefaultsCoverTonyKeys) {
  const KeyCatalog& catalog = KeyCatalog::BuiltIn();
  for (const char* key : {"tony.application.name", "tony.application.framework", "tony.am.memory",
                          "tony.task.heartbeat-interval-ms", "tony.container.allocation.timeout",
                          "tony.history.retention-sec", "tony.worker.memory", "tony.evaluator.gpus",
                          "tony.application.untracked.jobtypes", "tony.task.executor.jvm.opts"}) {
    EXPECT_NE(catalog.Lookup(key), nullptr) << key;
  }
  EXPECT_EQ(catalog.Lookup("tony.worker.memory")->default_value, "2g");
  EXPECT_EQ(catalog.Lookup("tony.task.max-missed-heartbeats")->default_value, "25");
  EXPECT_TRUE(catalog.Lookup("tony.task.executor.jvm.opts")->unsupported.has_value());
  EXPECT_EQ(catalog.Defaults().Get("tony.application.distributed-mode"), "GANG");
}

TEST(KeyCatalogTest, LintWarnsAboutMisspellingsUnsupportedAndUnknownKeys) {
  const KeyCatalog& catalog = KeyCatalog::BuiltIn();
  Configuration conf = catalog.Defaults();
  conf.Set("tony.application.framwork", "pytorch",
           ValueSource::File(SourceKind::kConfFile, "t.xml", 9));
  conf.Set("tony.worker.memroy", "4g", ValueSource::ConfFlag());
  conf.Set("tony.task.executor.jvm.opts", "-Xmx1g", ValueSource::ConfFlag());
  conf.Set("tony.application.group.A", "worker", ValueSource::ConfFlag());
  conf.Set("tony.application.dependency.evaluator.timeout.after.A", "60", ValueSource::ConfFlag());
  conf.Set("tony.docker.worker.image", "img", ValueSource::ConfFlag());
  conf.Set("fs.defaultFS", "hdfs://nn:8020", ValueSource::ConfFlag());
  std::vector<std::string> warnings = catalog.Lint(conf);
  auto has = [&](const std::string& text) {
    for (const std::string& w : warnings) {
      if (w.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(
      has("unknown key tony.application.framwork (t.xml:9); did you mean "
          "tony.application.framework?"));
  EXPECT_TRUE(has("did you mean tony.worker.memory?"));
  EXPECT_TRUE(has("tony.task.executor.jvm.opts (--conf) is not supported by tony"));
  EXPECT_FALSE(has("tony.docker.worker.image"));
  EXPECT_FALSE(has("tony.application.group.A"));
  EXPECT_FALSE(has("tony.application.dependency."));
  EXPECT_FALSE(has("fs.defaultFS"));
  EXPECT_EQ(warnings.size(), 3u);
}

}  // namespace
}  // namespace tony::config
