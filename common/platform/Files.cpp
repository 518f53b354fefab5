#include "platform/Files.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace rsb {

TempFolder::TempFolder(const std::string& prefix) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  std::string tmpl = ((ec ? fs::path("/tmp") : base) / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    throw DeviceError(
        fmt::format("cannot make a temporary folder '{}': {}", tmpl, std::strerror(errno)));
  path_ = tmpl;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void CheckStdout() {
  std::cout.flush();
  if (!std::cout)
    throw DeviceError(fmt::format("writing to stdout failed: {}", std::strerror(errno)));
}

namespace {

// Writes all of text to fd and closes it: "" or the reason of the first step that failed.
std::string WriteAndClose(int fd, const std::string& text) {
  size_t done = 0;
  std::string why;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      why = std::strerror(n < 0 ? errno : EIO);
      break;
    }
    done += size_t(n);
  }
  if (::close(fd) != 0 && why.empty())
    why = std::strerror(errno);
  return why;
}

// A real probe of dir: a new file made there, a byte written, the file closed and removed. ""
// or the reason it failed (a full file system fails at the byte).
std::string Probe(const fs::path& dir) {
  static std::atomic<int> counter{0};
  const fs::path probe = dir / fmt::format(".rsb-probe.{}-{}", getpid(), counter++);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return std::strerror(errno);
  const std::string why = WriteAndClose(fd, "x");
  ::unlink(probe.c_str());
  return why;
}

fs::path FolderOf(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path() : fs::path(".");
}

// A path that cannot even be looked at (a symlink loop, a name too long): bad input.
void CheckLookup(const std::string& option, const fs::path& p) {
  std::error_code ec;
  (void)fs::status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw UsageError(fmt::format("{} '{}': {}; allowed: a path that can be written", option,
                                 p.string(), ec.message()));
}

}  // namespace

void CheckOutputFile(const std::string& option, const std::string& path) {
  CheckLookup(option, path);
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(fmt::format("{} '{}': is a folder; allowed: a file path", option, path));
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {  // /dev/null, a pipe
    if (::access(path.c_str(), W_OK) != 0)
      throw DeviceError(
          fmt::format("{} '{}': cannot write there: {}", option, path, std::strerror(errno)));
    return;
  }
  if (const std::string why = Probe(FolderOf(path)); !why.empty())
    throw DeviceError(fmt::format("{} '{}': cannot write there: {}", option, path, why));
}

void CheckOutputFolder(const std::string& option, const std::string& dir) {
  CheckLookup(option, dir);
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  while (!fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path())
    p = p.parent_path();
  CheckLookup(option, p);
  if (!fs::is_directory(p, ec))
    throw UsageError(fmt::format("{} '{}': '{}' is not a folder; allowed: a folder path", option,
                                 dir, p.string()));
  if (const std::string why = Probe(p); !why.empty())
    throw DeviceError(fmt::format("{} '{}': cannot write there: {}", option, dir, why));
}

std::string ReadInput(const std::string& option, const std::string& path,
                      const std::string& allowed) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  std::string why = ec ? ec.message() : fs::is_directory(st) ? "is a folder" : "";
  std::string text;
  const int fd = why.empty() ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
  if (why.empty() && fd < 0)
    why = std::strerror(errno);
  for (char buf[65536]; fd >= 0;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      why = std::strerror(errno);
    if (n <= 0)
      break;
    text.append(buf, size_t(n));
  }
  if (fd >= 0)
    ::close(fd);
  if (!why.empty())
    throw UsageError(fmt::format("{} '{}': {}; allowed: {}", option, path, why, allowed));
  return text;
}

std::string TempBeside(const std::string& path) {
  static std::atomic<int> counter{0};
  const fs::path p(path);
  return (FolderOf(path) / fmt::format(".{}.{}-{}.tmp{}", p.filename().string(), getpid(),
                                       counter++, p.extension().string()))
      .string();
}

void DiscardTemp(const std::string& tmp) {
  ::unlink(tmp.c_str());
}

void CommitTemp(const std::string& option, const std::string& tmp, const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(tmp, ec);
  if (!ec && size == 0)
    ec = std::make_error_code(std::errc::io_error);
  if (!ec)
    fs::rename(tmp, path, ec);
  if (ec) {
    DiscardTemp(tmp);
    throw DeviceError(fmt::format("{} '{}': writing failed: {}", option, path, ec.message()));
  }
}

void WriteWhole(const std::string& option, const std::string& path, const std::string& text) {
  struct stat st {};
  const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string target = special ? path : TempBeside(path);
  const int fd = special ? ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC)
                         : ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  std::string why = fd < 0 ? std::strerror(errno) : WriteAndClose(fd, text);
  if (why.empty() && !special && ::rename(target.c_str(), path.c_str()) != 0)
    why = std::strerror(errno);
  if (why.empty())
    return;
  if (!special && fd >= 0)
    DiscardTemp(target);
  throw DeviceError(fmt::format("{} '{}': writing failed: {}", option, path, why));
}

void WriteWhole(const std::string& option, const std::string& path,
                const std::function<void(std::ostream&)>& write) {
  std::ostringstream out;
  write(out);
  WriteWhole(option, path, out.str());
}

}  // namespace rsb
