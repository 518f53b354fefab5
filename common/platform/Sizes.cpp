#include "platform/Sizes.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace rsb {

std::optional<unsigned long long> ParseUnsigned(const std::string& s) {
  if (s.empty() || s.size() > 19 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;
  return std::stoull(s);
}

std::optional<size_t> ParseSize(const std::string& text) {
  static const std::regex plain(R"(^(\d+)([kKmMgG]?)$)"), power(R"(^2\^(\d+)([+-]\d+)?$)");
  std::smatch m;
  unsigned long long n = 0;
  if (std::regex_match(text, m, power)) {
    auto e = ParseUnsigned(m[1]);
    if (!e || *e > 62)
      return std::nullopt;
    n = 1ull << *e;
    if (m[2].length()) {  // 2^28+3, 2^20-1
      auto d = ParseUnsigned(m[2].str().substr(1));
      if (!d || *d > n)
        return std::nullopt;
      n = m[2].str()[0] == '+' ? n + *d : n - *d;
    }
  } else if (std::regex_match(text, m, plain)) {
    auto v = ParseUnsigned(m[1]);
    if (!v)
      return std::nullopt;
    const char suffix = m[2].length() ? std::toupper(static_cast<unsigned char>(m[2].str()[0])) : 0;
    const unsigned shift = suffix == 'K' ? 10 : suffix == 'M' ? 20 : suffix == 'G' ? 30 : 0;
    if (*v > (~0ull >> shift))
      return std::nullopt;
    n = *v << shift;
  } else {
    return std::nullopt;
  }
  if (n == 0)
    return std::nullopt;
  return static_cast<size_t>(n);
}

}  // namespace rsb
