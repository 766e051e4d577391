#include "ferrite/program/attribute_json.h"

namespace ferrite {

using nlohmann::json;

json attribute_constraint_to_json(const AttributeConstraint& constraint) {
  return std::visit(
      [](const auto& c) -> json {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, NoAttributeConstraint>) {
          return "none";
        } else if constexpr (std::is_same_v<T, BoolEqualsConstraint>) {
          return json{{"bool_equals", c.value}};
        } else if constexpr (std::is_same_v<T, IntegerRangeConstraint>) {
          return json{{"integer_range", {c.minimum, c.maximum}}};
        } else if constexpr (std::is_same_v<T, UnsignedRangeConstraint>) {
          return json{{"unsigned_range", {c.minimum, c.maximum}}};
        } else if constexpr (std::is_same_v<T, RationalRangeConstraint>) {
          return json{{"rational_range", {c.minimum.to_string(), c.maximum.to_string()}}};
        } else if constexpr (std::is_same_v<T, TextChoicesConstraint>) {
          return json{{"text_choices", c.choices}};
        } else {
          return json{{"integer_list_length", {c.minimum, c.maximum}}};
        }
      },
      constraint);
}

json attribute_schema_to_json(const AttributeSchema& schema) {
  json out = json::object();
  for (const auto& [id, spec] : schema.entries()) {
    out[id.str()] = json{{"kind", semantic_value_kind_name(spec.value_kind)},
                         {"required", spec.required},
                         {"constraint", attribute_constraint_to_json(spec.constraint)}};
  }
  return out;
}

}  // namespace ferrite
