#include "ferrite/core/element_type.h"

#include <fmt/format.h>

namespace ferrite {

uint64_t element_type_size_bytes(ElementType type) {
  switch (type) {
    case ElementType::kBool:
    case ElementType::kU8:
    case ElementType::kI8: return 1;
    case ElementType::kF16:
    case ElementType::kBf16: return 2;
    case ElementType::kU32:
    case ElementType::kI32:
    case ElementType::kF32: return 4;
  }
  return 1;
}

std::string_view element_type_name(ElementType type) {
  switch (type) {
    case ElementType::kBool: return "bool";
    case ElementType::kU8: return "u8";
    case ElementType::kU32: return "u32";
    case ElementType::kI8: return "i8";
    case ElementType::kI32: return "i32";
    case ElementType::kF16: return "f16";
    case ElementType::kBf16: return "bf16";
    case ElementType::kF32: return "f32";
  }
  return "?";
}

std::string_view element_type_debug_name(ElementType type) {
  switch (type) {
    case ElementType::kBool: return "Bool";
    case ElementType::kU8: return "U8";
    case ElementType::kU32: return "U32";
    case ElementType::kI8: return "I8";
    case ElementType::kI32: return "I32";
    case ElementType::kF16: return "F16";
    case ElementType::kBf16: return "Bf16";
    case ElementType::kF32: return "F32";
  }
  return "?";
}

Result<ElementType> parse_element_type(std::string_view name) {
  for (ElementType type : kAllElementTypes) {
    if (element_type_name(type) == name) return type;
  }
  return invalid_argument(fmt::format(
      "unknown element type `{}` (expected one of bool, u8, u32, i8, i32, f16, bf16, f32)",
      name));
}

}  // namespace ferrite
