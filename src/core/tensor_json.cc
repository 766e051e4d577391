#include "ferrite/core/tensor_json.h"

#include "ferrite/core/json_array.h"

namespace ferrite {

using nlohmann::json;

json layout_to_json(const ResolvedTensorLayout& layout) {
  if (std::holds_alternative<ContiguousLayout>(layout)) return "contiguous";
  if (const auto* strided = std::get_if<StridedLayout>(&layout)) {
    return json{{"strided", strided->byte_strides}};
  }
  const auto& blocked = std::get<BlockedLayout>(layout);
  json padding = "exact";
  if (const auto* zf = std::get_if<BlockedPaddingZeroFill>(&blocked.padding)) {
    padding = json{{"zero_fill", zf->physical_dimensions}};
  }
  return json{{"blocked",
               {{"block", blocked.block}, {"axis_order", blocked.axis_order}, {"padding", padding}}}};
}

json tensor_spec_to_json(const ResolvedTensorSpec& tensor) {
  return json{{"dimensions", tensor.dimensions()},
              {"element_type", element_type_name(tensor.element_type())},
              {"layout", layout_to_json(tensor.layout())}};
}

json tensor_spec_to_json(const ProgramTensorSpec& tensor) {
  return json{{"dimensions", tensor.dimensions},
              {"element_type", element_type_name(tensor.element_type)},
              {"layout", layout_to_json(tensor.layout)}};
}

json dimension_constraint_to_json(const DimensionConstraint& constraint) {
  if (const auto* exact = std::get_if<DimensionExact>(&constraint)) return exact->value;
  if (const auto* symbol = std::get_if<DimensionSymbol>(&constraint)) return symbol->name;
  const auto& range = std::get<DimensionRange>(constraint);
  return json{{"min", range.minimum}, {"max", range.maximum}};
}

json layout_constraint_to_json(const LayoutConstraint& constraint) {
  if (std::holds_alternative<ContiguousLayoutConstraint>(constraint)) return "contiguous";
  if (const auto* strided = std::get_if<StridedLayoutConstraint>(&constraint)) {
    json strides = json::array();
    for (const auto& s : strided->strides) {
      if (const auto* exact = std::get_if<StrideExactBytes>(&s)) {
        strides.push_back(exact->value);
      } else {
        strides.push_back(std::get<StrideSymbol>(s).name);
      }
    }
    return json{{"strided", strides}};
  }
  const auto& blocked = std::get<BlockedLayoutConstraint>(constraint);
  return json{{"blocked", {{"block", blocked.block}, {"axis_order", blocked.axis_order}}}};
}

json alias_policy_to_json(const AliasPolicy& alias) {
  if (std::holds_alternative<NoAlias>(alias)) return "no_alias";
  if (const auto* may = std::get_if<MayAlias>(&alias)) return json{{"may_alias", may->tensor_index}};
  return json{{"must_alias", std::get<MustAlias>(alias).tensor_index}};
}

json tensor_contract_to_json(const TensorContract& contract) {
  json dims = json_array_of(contract.dimensions(), [&](const auto& d) {
    return dimension_constraint_to_json(d);
  });
  json types = json::array();
  for (ElementType t : contract.element_types()) types.push_back(element_type_name(t));
  json layouts = json_array_of(contract.layouts(), [&](const auto& l) {
    return layout_constraint_to_json(l);
  });
  return json{{"dimensions", dims},
              {"element_types", types},
              {"layouts", layouts},
              {"access", tensor_access_name(contract.access())},
              {"alias", alias_policy_to_json(contract.alias())}};
}

}  // namespace ferrite
