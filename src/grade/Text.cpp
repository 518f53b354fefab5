#include "grade/Text.h"

#include "cli/CliChecks.h"
#include "platform/Pattern.h"

#include <sstream>

namespace rsb::grade {

std::string Join(const std::vector<std::string>& v, const char* sep) {
  return cli::Join(v, sep);
}

std::string Excerpt(const std::string& text, size_t maxLines) {
  std::istringstream in(text);
  std::string line, out;
  size_t lines = 0;
  while (std::getline(in, line) && lines < maxLines) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    out += line + "\n";
    ++lines;
  }
  if (out.size() > 4000)
    out = out.substr(0, 4000) + "...\n";
  return out;
}

std::string Headline(const std::string& text) {
  if (text.rfind(kHostCodeFails, 0) == 0)
    return text.substr(0, text.find('\n'));
  static const Pattern fileLine(R"([^\s:]+:\d+:(\d+:)? )");
  std::istringstream in(text);
  std::string line, withError, first;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (fileLine.Search(line) && line.find("rror") != std::string::npos)
      return line;
    if (withError.empty() && line.find("error") != std::string::npos)
      withError = line;
    if (first.empty())
      first = line;
  }
  return withError.empty() ? first : withError;
}

std::string ShortenPaths(std::string text, const std::string& root) {
  const std::string prefix = root + "/";
  size_t at;
  while ((at = text.find(prefix)) != std::string::npos)
    text.replace(at, prefix.size(), "");
  return text;
}

std::string DeviceText(const std::string& device, const std::string& checkDevice) {
  const std::string d = device.empty() ? "-" : device;
  if (checkDevice.empty() || checkDevice == device)
    return d;
  return d + " (correctness runs on " + checkDevice + ")";
}

}  // namespace rsb::grade
