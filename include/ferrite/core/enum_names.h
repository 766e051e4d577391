// ferrite/core/enum_names.h — one name table per enum.
//
// Contract: an enum's stable text names (plan files, JSON, messages) are
// written once, as a constexpr `EnumNames` table in the order of the
// enumerators; `name()` maps a value to its name and `parse()` maps a name back
// (an unknown name is `invalid_argument` with "unknown <noun> `x` (expected
// <every name>)"). `covers_in_order(last)` is meant for a static_assert: it
// fails the build when an enumerator is added without a name, or the table's
// order drifts from the enum's.
//
// Example:
//   constexpr EnumNames<TensorAccess, 3> kTensorAccessNames{
//       "tensor access",
//       {{{TensorAccess::kRead, "read"}, {TensorAccess::kWrite, "write"},
//         {TensorAccess::kReadWrite, "read_write"}}}};
//   static_assert(kTensorAccessNames.covers_in_order(TensorAccess::kReadWrite));
//   kTensorAccessNames.name(TensorAccess::kRead);   // "read"
//   kTensorAccessNames.parse("write");              // TensorAccess::kWrite
//   kTensorAccessNames.parse("rw");  // "unknown tensor access `rw` (expected read, write or read_write)"
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "ferrite/core/status.h"

namespace ferrite {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// How `parse()` lists the accepted names: "a, b or c", or "one of a, b, c".
enum class EnumListStyle { kOr, kOneOf };

template <class E, size_t N>
struct EnumNames {
  static_assert(std::is_enum_v<E>);

  std::string_view noun;  // "tensor access", for parse errors
  std::array<EnumName<E>, N> entries;
  EnumListStyle style = EnumListStyle::kOr;

  // True when the entries are exactly the enumerators 0..N-1 in order and the
  // last one is `last`.
  constexpr bool covers_in_order(E last) const {
    for (size_t i = 0; i < N; ++i) {
      if (static_cast<size_t>(entries[i].value) != i || entries[i].name.empty()) return false;
    }
    return N > 0 && entries[N - 1].value == last;
  }

  constexpr std::string_view name(E value, std::string_view fallback = "?") const {
    for (const EnumName<E>& entry : entries) {
      if (entry.value == value) return entry.name;
    }
    return fallback;
  }

  constexpr std::optional<E> find(std::string_view text) const {
    for (const EnumName<E>& entry : entries) {
      if (entry.name == text) return entry.value;
    }
    return std::nullopt;
  }

  // "read, write or read_write" / "one of read, write, read_write".
  std::string expected_list() const {
    std::string list = style == EnumListStyle::kOneOf ? "one of " : "";
    for (size_t i = 0; i < N; ++i) {
      if (i > 0) list += style == EnumListStyle::kOr && i + 1 == N ? " or " : ", ";
      list += entries[i].name;
    }
    return list;
  }

  Result<E> parse(std::string_view text,
                  SourceLocation location = SourceLocation::current()) const {
    if (auto value = find(text)) return *value;
    std::string message = fmt::format("unknown {} `{}` (expected {})", noun, text, expected_list());
    return make_error(ErrorCode::kInvalidArgument, std::move(message), location);
  }
};

}  // namespace ferrite

// Defines the public name function of an enum over its table: after a
// static_assert that TABLE names every enumerator in order up to LAST,
// `std::string_view NAME_FN(E)` (and, with the second form, `Result<E>
// PARSE_FN(std::string_view)`), E being LAST's enum. For the tables whose
// functions only forward to them, so the forwarding is written once.
//   FERRITE_ENUM_NAME_FUNCTIONS(kTensorAccessNames, TensorAccess::kReadWrite,
//                               tensor_access_name, parse_tensor_access)
#define FERRITE_ENUM_NAME_FUNCTION(TABLE, LAST, NAME_FN) \
  static_assert((TABLE).covers_in_order(LAST));           \
  std::string_view NAME_FN(decltype(LAST) value) { return (TABLE).name(value); }
#define FERRITE_ENUM_NAME_FUNCTIONS(TABLE, LAST, NAME_FN, PARSE_FN) \
  FERRITE_ENUM_NAME_FUNCTION(TABLE, LAST, NAME_FN)                  \
  ::ferrite::Result<decltype(LAST)> PARSE_FN(std::string_view text) { return (TABLE).parse(text); }
