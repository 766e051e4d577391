// ferrite/core/element_type.h — the scalar element types of tensors.
//
// Contract: the enumerator order is the seed's declared order and is semantic:
// a set of element types iterates in this order ("first allowed dtype"), so do
// not reorder. Sizes are in bytes. Names: `element_type_name` is the wire name
// ("f32"); `element_type_debug_name` is the seed's variant name ("F32") used in
// error messages.
//
// Example:
//   auto t = parse_element_type("bf16");   // Result<ElementType>
//   element_type_size_bytes(*t);           // 2
#pragma once

#include <cstdint>
#include <string_view>

#include "ferrite/core/status.h"

namespace ferrite {

enum class ElementType : uint8_t { kBool, kU8, kU32, kI8, kI32, kF16, kBf16, kF32 };

inline constexpr ElementType kAllElementTypes[] = {
    ElementType::kBool, ElementType::kU8,  ElementType::kU32,  ElementType::kI8,
    ElementType::kI32,  ElementType::kF16, ElementType::kBf16, ElementType::kF32};

uint64_t element_type_size_bytes(ElementType type);
std::string_view element_type_name(ElementType type);        // "f32"
std::string_view element_type_debug_name(ElementType type);  // "F32"
// Parses a wire name ("bool", "u8", "u32", "i8", "i32", "f16", "bf16", "f32").
Result<ElementType> parse_element_type(std::string_view name);

}  // namespace ferrite
