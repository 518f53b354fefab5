#include "report/Comparison.h"

namespace rsb {

std::string ToString(Change c) {
  switch (c) {
    case Change::Faster:
      return "faster";
    case Change::Slower:
      return "slower";
    case Change::Same:
      return "same";
    case Change::Unknown:
      return "unknown";
  }
  return "?";
}

size_t Comparison::Regressions() const {
  size_t k = 0;
  for (const auto& m : matched)
    k += m.regression;
  return k;
}

}  // namespace rsb
