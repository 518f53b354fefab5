#include "engine/StoredResult.h"

#include <fmt/format.h>

namespace rsb {

std::string DeviceId::Key() const {
  return name + '\n' + driverVersion + '\n' + platform;
}

std::string DeviceId::Label() const {
  std::string s = name.empty() ? "unknown device" : name;
  if (!driverVersion.empty())
    s += ", driver " + driverVersion;
  if (!platform.empty())
    s += " (" + platform + ")";
  return s;
}

std::string StoredResult::Extra() const {
  std::string s = result.height ? " " + SizeText(result.n, result.height) : "";
  for (const auto& [name, value] : result.params)
    s += fmt::format(" {}={}", name, value);
  return s;
}

}  // namespace rsb
