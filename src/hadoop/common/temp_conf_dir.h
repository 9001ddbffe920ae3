#pragma once
// For the hadoop module's unit tests: a Hadoop configuration directory of its own, removed with
// it, from which a HadoopConf is loaded after writing one site file.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "hadoop/common/hadoop_conf.h"

namespace tony::hadoop {

class TempConfDir {
 public:
  TempConfDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tony-hadoop-conf-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempConfDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempConfDir(const TempConfDir&) = delete;
  TempConfDir& operator=(const TempConfDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes `file` (core-site.xml, hdfs-site.xml, ...) with `properties`, then loads the directory.
  HadoopConf Load(const std::string& file, const std::map<std::string, std::string>& properties) {
    std::ofstream out(path_ / file);
    out << "<configuration>\n";
    for (const auto& [key, value] : properties) {
      out << "<property><name>" << key << "</name><value>" << value << "</value></property>\n";
    }
    out << "</configuration>\n";
    out.close();
    absl::StatusOr<HadoopConf> conf = HadoopConf::Load({path_.string()});
    EXPECT_TRUE(conf.ok()) << conf.status();
    return conf.ok() ? *std::move(conf) : HadoopConf();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace tony::hadoop
