#include "platform/BuildInfo.h"

#include "GitRevision.h"  // generated at build time (cmake/BuildInfo.cmake)

#include <fmt/format.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace rsb {

const BuildInfo& ThisBuild() {
  static const BuildInfo info{RSB_VERSION, RSB_GIT_REVISION, RSB_BUILD_TYPE, RSB_COMPILER,
                              RSB_CXX_FLAGS};
  return info;
}

std::string VersionLine() {
  const BuildInfo& b = ThisBuild();
  return fmt::format("reduce-scan-bench {} (git {}, {}, {})", b.version, b.gitRevision, b.buildType,
                     b.compiler);
}

uint64_t Fnv1a64(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;  // the offset basis
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ull;  // the prime
  return h;
}

std::map<std::string, std::string> KernelFileHashes(const std::string& kernelDir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> hashes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kernelDir, ec)) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cl" && ext != ".clh")
      continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    hashes[e.path().filename().string()] = fmt::format("fnv1a64:{:016x}", Fnv1a64(bytes));
  }
  return hashes;
}

std::string HostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace rsb
