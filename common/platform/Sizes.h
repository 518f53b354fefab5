// Numbers on a command line: element counts as the suite spells them, and plain unsigned
// integers. Free of OpenCL, so the bench references (CUDA, Boost.Compute) share it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace rsb {

// The largest n the command line takes (2^40). The device is the real limit: a size whose
// buffers it cannot hold is skipped with the bytes needed and available, and sizes above 2^31
// build the kernels with 64-bit indices (LaunchPlan.h).
constexpr size_t kMaxElements = size_t(1) << 40;

// A whole string as an unsigned integer; nullopt on anything else or overflow.
std::optional<unsigned long long> ParseUnsigned(const std::string& s);

// "16777216", "16M" (binary multiples K, M, G), "2^24" or "2^24+3"; nullopt if malformed or 0.
std::optional<size_t> ParseSize(const std::string& text);

}  // namespace rsb
