#include "platform/Files.h"

#include "platform/Errors.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace rsb {

void CheckStdout() {
  std::cout.flush();
  if (!std::cout)
    throw DeviceError(fmt::format("writing to stdout failed: {}", std::strerror(errno)));
}

}  // namespace rsb
