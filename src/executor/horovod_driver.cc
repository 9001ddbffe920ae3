#include "executor/horovod_driver.h"

#include <sys/stat.h>

#include <charconv>
#include <filesystem>
#include <system_error>

#include "common/strings.h"

namespace tony::executor {

namespace fs = std::filesystem;

absl::StatusOr<HorovodDriverWatch> HorovodDriverWatch::Create(std::string dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!fs::create_directories(dir, ec) || chmod(dir.c_str(), 0700) != 0) {
    return absl::InternalError(
        StrCat("cannot make the Horovod driver's directory ", dir, ": ", ec.message()));
  }
  return HorovodDriverWatch(std::move(dir));
}

std::optional<int> HorovodDriverWatch::FindPort() const {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(kDriverPortFileSuffix)) continue;
    const std::string_view digits(name.data(), name.size() - sizeof(kDriverPortFileSuffix) + 1);
    int port = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (error == std::errc() && end == digits.data() + digits.size() && port > 0 && port <= 65535) {
      return port;
    }
  }
  return std::nullopt;
}

}  // namespace tony::executor
