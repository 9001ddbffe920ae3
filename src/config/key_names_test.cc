#include "config/key_names.h"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

namespace tony::config {
namespace {

// The regular expressions tony used before the plain matchers; on short keys (where std::regex
// cannot overflow the stack) the matchers must accept exactly the same names.
const std::regex kInstancesKey(R"(tony\.([a-z][a-z0-9_-]*)\.instances)");
const std::regex kGroupKey(R"(tony\.application\.group\.([A-Za-z0-9_-]+))");
const std::regex kDependencyKey(
    R"(tony\.application\.dependency\.([a-z][a-z0-9_-]*)\.timeout\.after\.([A-Za-z0-9_-]+))");
const std::regex kFamilies(
    R"(tony\.application\.group\.[A-Za-z0-9_-]+|)"
    R"(tony\.docker\.[a-z][a-z0-9_-]*\.image|)"
    R"(tony\.application\.dependency\.[a-z][a-z0-9_-]*\.timeout\.after\.[A-Za-z0-9_-]+)"
    R"((\.ignored)?)");

// Keys of each family's shape with short random names, some of them mutated, so that most are
// matches or near misses.
std::vector<std::string> NearMissKeys() {
  std::mt19937 random(20261203);
  const std::string alphabet = "azAZ09_-. \n\xc3";
  const std::string valid = "az09_-";
  auto name = [&] {  // mostly of the characters of names
    std::string out;
    for (int n = static_cast<int>(random() % 5); n > 0; --n) {
      const std::string& from = random() % 4 == 0 ? alphabet : valid;
      out += from[random() % from.size()];
    }
    return out;
  };
  auto pick = [&](const std::vector<std::string>& options) {
    return options[random() % options.size()];
  };
  const std::vector<std::string> middles = {".timeout.after.", ".timeout.after",
                                            "timeout.after.",  ".timeout.",
                                            ".after.",         ".timeout.after.."};
  std::vector<std::string> keys;
  for (int i = 0; i < 60000; ++i) {
    std::string key;
    switch (random() % 4) {
      case 0:
        key = "tony." + name() + pick({".instances", "instances", ".instance", ""});
        break;
      case 1:
        key = "tony.docker." + name() + pick({".image", "image", ".images"});
        break;
      case 2:
        key = "tony.application.group" + pick({".", "", ".."}) + name();
        break;
      default:
        key = "tony.application.dependency." + name() + pick(middles) + name() +
              pick({"", "", ".ignored", "ignored", ".ignore"});
        break;
    }
    if (random() % 4 == 0 && !key.empty()) {  // one random edit
      const size_t at = random() % key.size();
      switch (random() % 3) {
        case 0:
          key[at] = alphabet[random() % alphabet.size()];
          break;
        case 1:
          key.erase(at, 1);
          break;
        default:
          key.insert(at, 1, alphabet[random() % alphabet.size()]);
          break;
      }
    }
    keys.push_back(key);
  }
  for (const char* key : {"tony.worker.instances",
                          "tony.instances",
                          "tony..instances",
                          "tony.a.instances",
                          "tony.1a.instances",
                          "tony.a-_1.instances",
                          "tony.Worker.instances",
                          "tony.a.b.instances",
                          "tony.application.group.",
                          "tony.application.group.A-b_0",
                          "tony.application.group.a.b",
                          "tony.application.dependency.ev.timeout.after.G",
                          "tony.application.dependency.ev.timeout.after.G.ignored",
                          "tony.application.dependency.ev.timeout.after.ignored",
                          "tony.application.dependency.ev.timeout.after.",
                          "tony.application.dependency.Ev.timeout.after.G",
                          "tony.docker.worker.image",
                          "tony.docker.image",
                          "tony.docker.Worker.image",
                          "tony.docker.a.b.image"}) {
    keys.emplace_back(key);
  }
  return keys;
}

TEST(KeyNamesTest, AcceptExactlyWhatTheRegularExpressionsAccepted) {
  int accepted[4] = {0, 0, 0, 0};
  for (const std::string& key : NearMissKeys()) {
    std::smatch match;
    const bool instances = std::regex_match(key, match, kInstancesKey);
    std::optional<std::string_view> type = JobTypeOfInstancesKey(key);
    ASSERT_EQ(type.has_value(), instances) << key;
    if (instances) {
      EXPECT_EQ(*type, match[1].str()) << key;
    }

    const bool group = std::regex_match(key, match, kGroupKey);
    std::optional<std::string_view> group_name = GroupOfGroupKey(key);
    ASSERT_EQ(group_name.has_value(), group) << key;
    if (group) {
      EXPECT_EQ(*group_name, match[1].str()) << key;
    }

    const bool dependency = std::regex_match(key, match, kDependencyKey);
    std::optional<DependencyKey> parts = ParseDependencyKey(key);
    ASSERT_EQ(parts.has_value(), dependency) << key;
    if (dependency) {
      EXPECT_EQ(parts->type, match[1].str()) << key;
      EXPECT_EQ(parts->group, match[2].str()) << key;
    }

    ASSERT_EQ(IsKnownFamilyKey(key), std::regex_match(key, kFamilies)) << key;
    accepted[0] += instances;
    accepted[1] += group;
    accepted[2] += dependency;
    accepted[3] += IsKnownFamilyKey(key);
  }
  for (int count : accepted) EXPECT_GT(count, 50) << "the keys must exercise every family";
}

TEST(KeyNamesTest, LongKeysAreMatchedWithoutRecursion) {
  // std::regex overflowed the stack on names of about 50 KB; the matchers are loops.
  const std::string name(1 << 20, 'a');
  EXPECT_EQ(JobTypeOfInstancesKey("tony." + name + ".instances")->size(), name.size());
  EXPECT_EQ(GroupOfGroupKey("tony.application.group." + name)->size(), name.size());
  EXPECT_TRUE(ParseDependencyKey("tony.application.dependency." + name + ".timeout.after." + name));
  EXPECT_TRUE(IsKnownFamilyKey("tony.docker." + name + ".image"));
  EXPECT_FALSE(JobTypeOfInstancesKey("tony." + name + "!.instances"));
}

TEST(KeyNamesTest, JobTypeNames) {
  EXPECT_TRUE(IsJobTypeName("worker"));
  EXPECT_TRUE(IsJobTypeName("w-1_x"));
  EXPECT_FALSE(IsJobTypeName(""));
  EXPECT_FALSE(IsJobTypeName("1w"));
  EXPECT_FALSE(IsJobTypeName("Worker"));
  EXPECT_FALSE(IsJobTypeName("a.b"));
  EXPECT_TRUE(IsGroupName("A-b_0"));
  EXPECT_FALSE(IsGroupName(""));
  EXPECT_FALSE(IsGroupName("a.b"));
}

TEST(KeyNamesTest, ForMessageKeepsOneShortLine) {
  EXPECT_EQ(ForMessage("tony.worker.memory"), "tony.worker.memory");
  EXPECT_EQ(ForMessage(std::string("a\nb\tc\0d\x7f", 8)), "a\\nb\\tc\\x00d\\x7f");
  EXPECT_EQ(ForMessage(std::string(50000, 'a'), 10), "aaaaaaaaaa... (50000 bytes)");
  EXPECT_EQ(ForMessage(std::string(10, 'a'), 10), "aaaaaaaaaa");
}

}  // namespace
}  // namespace tony::config
