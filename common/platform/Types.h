// Element types and operators shared by host code and kernels.
//
// The kernels are generic: the element type and the operator reach them as build options
// (see KernelBuildOptions). On the host, DispatchType turns a run-time ElementType into a
// compile-time C++ type so that reference and validation code is written once as a template.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rsb {

enum class ElementType { Int, Uint, Long, Ulong, Float, Double };
enum class Op { Sum, Min, Max };

const std::vector<ElementType>& AllElementTypes();
const std::vector<Op>& AllOps();

std::string ToString(ElementType t);
std::string ToString(Op op);

// "uint, float": the names of types or operators, joined by sep.
template <class E>
std::string JoinNames(const std::vector<E>& v, const std::string& sep = ", ") {
  std::string s;
  for (const auto& e : v)
    s += (s.empty() ? "" : sep) + ToString(e);
  return s;
}

std::optional<ElementType> ParseElementType(const std::string& s);
std::optional<Op> ParseOp(const std::string& s);

// s in lower case (ASCII).
std::string Lower(std::string s);

size_t SizeOf(ElementType t);
bool IsFloatingPoint(ElementType t);

// "-DT=uint -DOP_SUM ..." for a program specialised to one type and operator (Boost.Compute
// style). The kernels' shared header kernels/Common.clh turns these into OP(a,b) and IDENTITY.
std::string KernelBuildOptions(ElementType t, Op op);

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with T the C++ type that matches t.
template <class F>
decltype(auto) DispatchType(ElementType t, F&& f) {
  switch (t) {
    case ElementType::Int:
      return f(TypeTag<int32_t>{});
    case ElementType::Uint:
      return f(TypeTag<uint32_t>{});
    case ElementType::Long:
      return f(TypeTag<int64_t>{});
    case ElementType::Ulong:
      return f(TypeTag<uint64_t>{});
    case ElementType::Float:
      return f(TypeTag<float>{});
    case ElementType::Double:
    default:
      return f(TypeTag<double>{});
  }
}

}  // namespace rsb
