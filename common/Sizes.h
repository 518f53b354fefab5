// Numbers on a command line: element counts as the suite spells them, and plain unsigned
// integers. Free of OpenCL, so the bench references (CUDA, Boost.Compute) share it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace rsb {

// The largest n the kernels index with 32-bit unsigned arithmetic without overflow.
constexpr size_t kMaxElements = size_t(1) << 31;

// A whole string as an unsigned integer; nullopt on anything else or overflow.
std::optional<unsigned long long> ParseUnsigned(const std::string& s);

// "16777216", "16M" (binary multiples K, M, G), "2^24" or "2^24+3"; nullopt if malformed or 0.
std::optional<size_t> ParseSize(const std::string& text);

}  // namespace rsb
