#include "platform/Types.h"

#include <algorithm>
#include <cctype>

namespace rsb {

const std::vector<ElementType>& AllElementTypes() {
  static const std::vector<ElementType> all = {ElementType::Int,   ElementType::Uint,
                                               ElementType::Long,  ElementType::Ulong,
                                               ElementType::Float, ElementType::Double};
  return all;
}
const std::vector<Op>& AllOps() {
  static const std::vector<Op> all = {Op::Sum, Op::Min, Op::Max};
  return all;
}

std::string ToString(ElementType t) {
  switch (t) {
    case ElementType::Int:
      return "int";
    case ElementType::Uint:
      return "uint";
    case ElementType::Long:
      return "long";
    case ElementType::Ulong:
      return "ulong";
    case ElementType::Float:
      return "float";
    case ElementType::Double:
      return "double";
  }
  return "?";
}
std::string ToString(Op op) {
  switch (op) {
    case Op::Sum:
      return "sum";
    case Op::Min:
      return "min";
    case Op::Max:
      return "max";
  }
  return "?";
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

namespace {
template <class E>
std::optional<E> ParseEnum(const std::vector<E>& all, const std::string& s) {
  for (E e : all)
    if (ToString(e) == Lower(s))
      return e;
  return std::nullopt;
}
}  // namespace

std::optional<ElementType> ParseElementType(const std::string& s) {
  return ParseEnum(AllElementTypes(), s);
}
std::optional<Op> ParseOp(const std::string& s) {
  return ParseEnum(AllOps(), s);
}

size_t SizeOf(ElementType t) {
  return DispatchType(t, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}
bool IsFloatingPoint(ElementType t) {
  return t == ElementType::Float || t == ElementType::Double;
}

std::string KernelBuildOptions(ElementType t, Op op) {
  std::string opts = "-DT=" + ToString(t);
  std::string upper = ToString(t);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  opts += " -DT_" + upper + "=1";  // T_INT, T_UINT, ..., T_DOUBLE: for atomics and fp64
  // The identity of min is the type's largest value, of max its smallest (OpenCL C macros).
  static const char* kMax[] = {"INT_MAX",   "UINT_MAX", "LONG_MAX",
                               "ULONG_MAX", "INFINITY", "INFINITY"};
  static const char* kMin[] = {"INT_MIN", "0u", "LONG_MIN", "0ul", "(-INFINITY)", "(-INFINITY)"};
  const int i = static_cast<int>(t);
  switch (op) {
    case Op::Sum:
      opts += " -DOP_SUM=1 -DIDENTITY=((T)0)";
      break;
    case Op::Min:
      opts += std::string(" -DOP_MIN=1 -DIDENTITY=((T)") + kMax[i] + ")";
      break;
    case Op::Max:
      opts += std::string(" -DOP_MAX=1 -DIDENTITY=((T)") + kMin[i] + ")";
      break;
  }
  return opts;
}

}  // namespace rsb
