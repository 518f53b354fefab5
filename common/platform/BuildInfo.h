// What produced a result file: this build (version, git revision, build type, compiler and
// flags) and the kernel files it read (a hash of each), for the record in every result file.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace rsb {

struct BuildInfo {
  std::string version, gitRevision, buildType, compiler, cxxFlags;
};
const BuildInfo& ThisBuild();

// "reduce-scan-bench 0.1 (git 1a2b3c4d5e6f, Release, GNU 12.2.0)": what --version prints.
std::string VersionLine();

// FNV-1a (64 bit) of bytes: tells files and names apart (not a cryptographic hash).
uint64_t Fnv1a64(const std::string& bytes);

// FNV-1a (64 bit) of each .cl and .clh file in the kernels folder, "fnv1a64:<16 hex digits>" by
// file name: tells two kernel folders apart (not a cryptographic hash).
std::map<std::string, std::string> KernelFileHashes(const std::string& kernelDir);

// This machine's host name ("" if unknown).
std::string HostName();

// The time now, ISO 8601 in UTC ("YYYY-MM-DDTHH:MM:SSZ"): when a result file was written.
std::string UtcNow();

}  // namespace rsb
