#include "ferrite/core/element_type.h"

#include <fmt/format.h>

#include "ferrite/core/enum_names.h"

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

constexpr EnumNames<ElementType, 8> kElementTypeNames{
    "element type",
    {{{ElementType::kBool, "bool"}, {ElementType::kU8, "u8"}, {ElementType::kU32, "u32"},
      {ElementType::kI8, "i8"}, {ElementType::kI32, "i32"}, {ElementType::kF16, "f16"},
      {ElementType::kBf16, "bf16"}, {ElementType::kF32, "f32"}}},
    EnumListStyle::kOneOf};
FERRITE_ENUM_NAME_FUNCTION(kElementTypeNames, ElementType::kF32, element_type_name)

constexpr EnumNames<ElementType, 8> kElementTypeDebugNames{
    "element type",
    {{{ElementType::kBool, "Bool"}, {ElementType::kU8, "U8"}, {ElementType::kU32, "U32"},
      {ElementType::kI8, "I8"}, {ElementType::kI32, "I32"}, {ElementType::kF16, "F16"},
      {ElementType::kBf16, "Bf16"}, {ElementType::kF32, "F32"}}}};
FERRITE_ENUM_NAME_FUNCTION(kElementTypeDebugNames, ElementType::kF32, element_type_debug_name)

Result<ElementType> parse_element_type(std::string_view name) {
  return kElementTypeNames.parse(name);
}

}  // namespace ferrite
