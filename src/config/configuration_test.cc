#include "config/configuration.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

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

TEST(ConfigurationTest, ADumpedConfigurationKeepsWhereEachValueCameFrom) {
  Configuration conf;
  conf.Set("tony.worker.instances", "2", ValueSource::Flag("--num_workers"));
  conf.Set("tony.am.memory", "2g", ValueSource::Default());
  char dir[] = "/tmp/tony_conf_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/tony-final.xml";
  { std::ofstream(path) << conf.ToXml(); }
  absl::StatusOr<std::vector<Configuration::DumpedProperty>> rows = Configuration::ReadDumped(path);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].key, "tony.am.memory");
  EXPECT_EQ((*rows)[0].source, ValueSource::Default().ToString());
  EXPECT_EQ((*rows)[1].key, "tony.worker.instances");
  EXPECT_EQ((*rows)[1].value, "2");
  EXPECT_EQ((*rows)[1].source, "--num_workers");
  EXPECT_FALSE(Configuration::ReadDumped("/nonexistent/tony-final.xml").ok());
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

TEST(KeyCatalogTest, ManyUnknownKeysAreSummarised) {
  const KeyCatalog& catalog = KeyCatalog::BuiltIn();
  Configuration conf = catalog.Defaults();
  for (int i = 0; i < 5000; ++i) {
    conf.Set("tony.unknown" + std::to_string(i) + ".thing", "x", ValueSource::ConfFlag());
  }
  const std::vector<std::string> warnings = catalog.Lint(conf);
  ASSERT_EQ(warnings.size(), 21u);
  EXPECT_EQ(warnings.back(),
            "4980 more unknown tony.* keys are ignored (tony config --explain lists every key and "
            "its source)");
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

// Hostile inputs: each is an error naming the file and line, or loads; none crashes or hangs.
class HostileConfigurationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "tony-hostile-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static absl::Status Load(std::string_view xml, Configuration* conf = nullptr) {
    Configuration scratch;
    return (conf ? conf : &scratch)->LoadXmlString(xml, "h.xml", SourceKind::kConfFile);
  }
  static std::string Message(const absl::Status& status) { return std::string(status.message()); }

  std::filesystem::path dir_;
};

TEST_F(HostileConfigurationTest, LineNumbersStayRightAcrossManyProperties) {
  std::string xml = "<configuration>\n";
  for (int i = 0; i < 20000; ++i) {
    xml += "<property><name>k" + std::to_string(i) + "</name><value>v</value></property>\n";
  }
  xml += "</configuration>\n";
  Configuration conf;
  ASSERT_TRUE(Load(xml, &conf).ok());
  EXPECT_EQ(conf.Find("k0")->source.ToString(), "h.xml:2");
  EXPECT_EQ(conf.Find("k19999")->source.ToString(), "h.xml:20001");
}

TEST_F(HostileConfigurationTest, NulByteIsAnErrorNamingTheLine) {
  absl::Status status = Load(
      std::string_view("<configuration>\n<property><name>a</name><value>x\0y</value></property>\n"
                       "</configuration>\n",
                       86));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(status), "h.xml:2: NUL byte (a configuration file must be UTF-8 text)");
  // UTF-16 (here with its byte order mark) has NUL bytes too.
  status = Load(std::string_view("\xff\xfe<\0c\0/\0>\0", 10));
  EXPECT_EQ(Message(status), "h.xml:1: NUL byte (a configuration file must be UTF-8 text)");
}

TEST_F(HostileConfigurationTest, DoctypeWithEntitiesIsRefused) {
  std::string laughs =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE configuration [\n<!ENTITY lol \"lol\">\n";
  for (int i = 1; i < 10; ++i) {
    laughs += "<!ENTITY lol" + std::to_string(i) + " \"";
    for (int j = 0; j < 10; ++j) laughs += "&lol" + (i == 1 ? "" : std::to_string(i - 1)) + ";";
    laughs += "\">\n";
  }
  laughs +=
      "]>\n<configuration><property><name>a</name><value>&lol9;</value></property>"
      "</configuration>\n";
  absl::Status status = Load(laughs);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(status),
            "h.xml:2: <!DOCTYPE> is not allowed in a configuration file (tony reads no DTD and "
            "expands no entities)");
  EXPECT_FALSE(Load("<!DOCTYPE configuration SYSTEM \"file:///etc/passwd\"><configuration/>").ok());
  // Deeply nested declarations inside the internal subset.
  std::string nested = "<!DOCTYPE c [";
  for (int i = 0; i < 100000; ++i) nested += "<![";
  EXPECT_FALSE(Load(nested).ok());
}

TEST_F(HostileConfigurationTest, UnknownEntityReferencesAreNotExpanded) {
  Configuration conf;
  ASSERT_TRUE(Load("<configuration><property><name>a</name><value>&lol9;&amp;</value>"
                   "</property></configuration>",
                   &conf)
                  .ok());
  EXPECT_EQ(conf.Get("a"), "&lol9;&");
}

TEST_F(HostileConfigurationTest, DeepNestingLoads) {
  constexpr int kDepth = 200000;
  std::string deep;
  for (int i = 0; i < kDepth; ++i) deep += "<a>";
  for (int i = 0; i < kDepth; ++i) deep += "</a>";
  Configuration conf;
  ASSERT_TRUE(Load("<configuration><property><name>n</name><value>v" + deep + "</value><x>" + deep +
                       "</x></property></configuration>",
                   &conf)
                  .ok());
  EXPECT_EQ(conf.Get("n"), "v");
  EXPECT_EQ(Message(Load("<configuration>" + deep + "</configuration>")),
            "h.xml:1: unexpected element <a> (expected <property>)");
  // Unclosed: malformed, at the end.
  EXPECT_TRUE(Message(Load("<configuration>" + deep.substr(0, 3 * static_cast<size_t>(kDepth))))
                  .starts_with("h.xml:1: malformed XML"));
}

TEST_F(HostileConfigurationTest, LongNamesAndValuesLoad) {
  const std::string name = "tony." + std::string(1 << 20, 'n');
  const std::string value(4 << 20, 'v');
  Configuration conf;
  ASSERT_TRUE(Load("<configuration><property><name>" + name + "</name><value>" + value +
                       "</value></property></configuration>",
                   &conf)
                  .ok());
  EXPECT_EQ(conf.Get(name), value);
  // A misspelling check of a long unknown key is linear, not quadratic, in its length.
  const std::string type(1 << 20, 'w');
  EXPECT_EQ(KeyCatalog::BuiltIn().Suggest("tony." + type + ".memroy"), "tony." + type + ".memory");
  EXPECT_EQ(KeyCatalog::BuiltIn().Suggest(name), std::nullopt);
}

TEST_F(HostileConfigurationTest, LongElementNameInAnErrorIsCut) {
  const std::string message =
      Message(Load("<configuration><" + std::string(100000, 'e') + "/></configuration>"));
  EXPECT_TRUE(message.starts_with("h.xml:1: unexpected element <eeee")) << message;
  EXPECT_LT(message.size(), 400u);
}

TEST_F(HostileConfigurationTest, InvalidUtf8IsKeptAsBytes) {
  Configuration conf;
  ASSERT_TRUE(Load("<configuration><property><name>a</name><value>\xff\xc3(\x80</value>"
                   "</property></configuration>",
                   &conf)
                  .ok());
  EXPECT_EQ(conf.Get("a"), "\xff\xc3(\x80");
  Configuration reloaded;
  ASSERT_TRUE(Load(conf.ToXml(), &reloaded).ok());
  EXPECT_EQ(reloaded.Get("a"), "\xff\xc3(\x80");
}

TEST_F(HostileConfigurationTest, EmptyAndBomOnlyFilesAreMalformed) {
  for (std::string_view text : {"", "\xef\xbb\xbf", "   \n\n", "<!-- only a comment -->"}) {
    EXPECT_TRUE(Message(Load(text)).starts_with("h.xml:")) << text;
    EXPECT_NE(Message(Load(text)).find("malformed XML"), std::string::npos) << Message(Load(text));
  }
  Configuration conf;
  EXPECT_TRUE(Load("\xef\xbb\xbf<configuration/>", &conf).ok());
}

TEST_F(HostileConfigurationTest, ManyAppendsToAMultiValuedKeyAreLinear) {
  std::string xml = "<configuration>\n";
  for (int i = 0; i < 50000; ++i) {
    xml += "<property><name>tony.containers.envs</name><value>V" + std::to_string(i) +
           "=1</value></property>\n";
  }
  xml += "</configuration>\n";
  Configuration conf;
  conf.Set("tony.containers.envs", "", ValueSource::Default());
  ASSERT_TRUE(Load(xml, &conf).ok());
  const ConfigEntry* entry = conf.Find("tony.containers.envs");
  EXPECT_TRUE(entry->value.starts_with("V0=1,V1=1,"));
  EXPECT_TRUE(entry->value.ends_with(",V49999=1"));
  EXPECT_EQ(entry->appended.size(), 49999u);
}

TEST_F(HostileConfigurationTest, OnlyRegularFilesAreRead) {
  Configuration conf;
  absl::Status status = conf.LoadXmlFile(dir_.string(), SourceKind::kConfFile);
  EXPECT_EQ(Message(status), dir_.string() +
                                 ": not a regular file (a configuration file must be a plain XML "
                                 "file)");
  status = conf.LoadXmlFile("/dev/zero", SourceKind::kConfFile);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(Message(status).find("not a regular file"), std::string::npos);
  // A FIFO with no writer: opening it must not block.
  const std::string fifo = (dir_ / "fifo.xml").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  status = conf.LoadXmlFile(fifo, SourceKind::kConfFile);
  EXPECT_NE(Message(status).find("not a regular file"), std::string::npos);
}

TEST_F(HostileConfigurationTest, FilesOverTheLimitAreRefusedUnread) {
  const std::string big = (dir_ / "big.xml").string();
  std::ofstream(big) << "<configuration/>";
  std::filesystem::resize_file(big, Configuration::kMaxXmlBytes + 1);  // sparse
  Configuration conf;
  absl::Status status = conf.LoadXmlFile(big, SourceKind::kConfFile);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(status), big +
                                 ": the configuration file is 67108865 bytes; tony reads at "
                                 "most 64 MiB");
  std::filesystem::resize_file(big, 16);
  EXPECT_TRUE(conf.LoadXmlFile(big, SourceKind::kConfFile).ok());
}

}  // namespace
}  // namespace tony::config
