#include "cluster/local/kept_containers.h"

#include <filesystem>
#include <map>

#include "common/files.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace tony::cluster {

namespace fs = std::filesystem;

std::string KeptContainerPath(const std::string& job_dir, const std::string& container_id) {
  return StrCat(job_dir, "/running/", container_id, ".json");
}

absl::Status WriteKeptContainer(const std::string& job_dir, const KeptContainer& kept) {
  const Container& container = kept.container;
  const nlohmann::json record = {{"pid", kept.pid},
                                 {"start_ticks", kept.start_ticks},
                                 {"id", container.id},
                                 {"job_type", container.job_type},
                                 {"host", container.host},
                                 {"log_dir", container.log_dir},
                                 {"memory_mb", container.resources.memory_mb},
                                 {"vcores", container.resources.vcores},
                                 {"env", container.env},
                                 {"gpus", kept.gpus}};
  std::error_code ec;
  const std::string dir = StrCat(job_dir, "/running");
  fs::create_directories(dir, ec);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec) return absl::InternalError(StrCat("cannot create ", dir, ": ", ec.message()));
  return WriteFile(KeptContainerPath(job_dir, container.id), record.dump(), 0600);
}

std::vector<KeptContainer> ReadKeptContainers(const std::string& job_dir,
                                              const std::string& app_id) {
  std::vector<KeptContainer> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(StrCat(job_dir, "/running"), ec)) {
    const std::string path = entry.path().string();
    absl::StatusOr<std::string> text = ReadFile(path);
    const nlohmann::json record = nlohmann::json::parse(text.ok() ? *text : std::string("null"),
                                                        nullptr, /*allow_exceptions=*/false);
    KeptContainer kept;
    try {
      kept.pid = record.at("pid").get<pid_t>();
      kept.start_ticks = record.at("start_ticks").get<uint64_t>();
      kept.container.id = record.at("id").get<std::string>();
      kept.container.job_type = record.at("job_type").get<std::string>();
      kept.container.host = record.at("host").get<std::string>();
      kept.container.log_dir = record.at("log_dir").get<std::string>();
      kept.container.resources.memory_mb = record.at("memory_mb").get<int64_t>();
      kept.container.resources.vcores = record.at("vcores").get<int>();
      kept.container.env = record.at("env").get<std::map<std::string, std::string>>();
      kept.gpus = record.value("gpus", std::vector<int>{});
    } catch (const nlohmann::json::exception& e) {
      spdlog::warn("[{}] {} is no container record: {}", app_id, path, e.what());
      fs::remove(path, ec);
      continue;
    }
    kept.container.resources.gpus = static_cast<int>(kept.gpus.size());
    found.push_back(std::move(kept));
  }
  return found;
}

}  // namespace tony::cluster
