#include "platform/DeviceLock.h"

#include "platform/Errors.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rsb {

namespace {

// flock(2) needs no write access: a sandboxed process opens lock files made for it read-only.
int OpenLockFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    throw DeviceError("--device-lock: cannot open '" + path + "': " + std::strerror(errno));
  return fd;
}

void Flock(int fd, int op) {
  while (::flock(fd, op) != 0)
    if (errno != EINTR)
      throw DeviceError(std::string("--device-lock: flock failed: ") + std::strerror(errno));
}

}  // namespace

DeviceLock::DeviceLock(const std::string& path) {
  if (path.empty())
    return;
  lock_ = OpenLockFile(path);
  turn_ = OpenLockFile(path + ".turn");
}

DeviceLock::~DeviceLock() {
  if (lock_ >= 0)
    ::close(lock_);
  if (turn_ >= 0)
    ::close(turn_);
}

// Shared: pass the turnstile (wait while a timed loop waits or runs), then share the lock.
// Alone: hold the turnstile (no new shared holder gets in), then wait for the lock alone.
DeviceLock::Hold::Hold(const DeviceLock& lock, bool alone) : lock_(lock), alone_(alone) {
  if (lock_.lock_ < 0)
    return;
  Flock(lock_.turn_, LOCK_EX);
  try {
    Flock(lock_.lock_, alone_ ? LOCK_EX : LOCK_SH);
  } catch (...) {  // the turnstile is not left closed to every other process
    ::flock(lock_.turn_, LOCK_UN);
    throw;
  }
  if (!alone_)
    Flock(lock_.turn_, LOCK_UN);
}

DeviceLock::Hold::~Hold() {
  if (lock_.lock_ < 0)
    return;
  ::flock(lock_.lock_, LOCK_UN);
  if (alone_)
    ::flock(lock_.turn_, LOCK_UN);
}

}  // namespace rsb
