#include "platform/TimedTurns.h"

#include "platform/Errors.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rsb {

void TimedTurns::Take() const {
  if (fd_ < 0)
    return;
  const char waits = 'w';
  ssize_t done = -1;
  while ((done = ::send(fd_, &waits, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  char turn = 0;
  ssize_t got = -1;
  if (done == 1)
    while ((got = ::recv(fd_, &turn, 1, 0)) < 0 && errno == EINTR) {
    }
  if (got != 1 || turn != 'g')
    throw DeviceError("turns fd " + std::to_string(fd_) + ": no turn given (" +
                      (got < 0 || done < 0 ? std::strerror(errno) : "the parent's end closed") +
                      ")");
}

}  // namespace rsb
