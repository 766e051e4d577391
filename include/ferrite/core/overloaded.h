// ferrite/core/overloaded.h — a visitor made of lambdas, for std::visit.
//
// Contract: `Overloaded{f, g, ...}` is one callable whose operator() is the
// overload set of the given lambdas; nothing else.
//
// Example:
//   std::visit(Overloaded{[](const Dense&) { return "dense"; },
//                         [](const Quantized&) { return "quantized"; }},
//              layout);
#pragma once

namespace ferrite {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace ferrite
