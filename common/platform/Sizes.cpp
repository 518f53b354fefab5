#include "platform/Sizes.h"

#include <algorithm>
#include <cctype>

namespace rsb {

std::optional<unsigned long long> ParseUnsigned(const std::string& s) {
  if (s.empty() || s.size() > 19 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoull(s);
}

// Read by hand, not with <regex>: this file alone took 7 CPU-s to compile with it (at -O2, on 2
// cores), in every build, the first one a user makes among them.
std::optional<size_t> ParseSize(const std::string& text) {
  unsigned long long n = 0;
  if (text.rfind("2^", 0) == 0) {  // 2^20, 2^28+3, 2^20-1
    const std::string rest = text.substr(2);
    const size_t sign = rest.find_first_of("+-");
    const auto e = ParseUnsigned(rest.substr(0, sign));
    if (!e || *e > 62)
      return std::nullopt;
    n = 1ull << *e;
    if (sign != std::string::npos) {
      const auto d = ParseUnsigned(rest.substr(sign + 1));
      if (!d || *d > n)
        return std::nullopt;
      n = rest[sign] == '+' ? n + *d : n - *d;
    }
  } else {  // 1000, 16M, 4k
    const char last = text.empty() ? 0 : text.back();
    const char suffix = std::string("kKmMgG").find(last) != std::string::npos
                            ? std::toupper(static_cast<unsigned char>(last))
                            : 0;
    const auto v = ParseUnsigned(suffix ? text.substr(0, text.size() - 1) : text);
    if (!v)
      return std::nullopt;
    const unsigned shift = suffix == 'K' ? 10 : suffix == 'M' ? 20 : suffix == 'G' ? 30 : 0;
    if (*v > (~0ull >> shift))
      return std::nullopt;
    n = *v << shift;
  }
  if (n == 0)
    return std::nullopt;
  return static_cast<size_t>(n);
}

}  // namespace rsb
