#include "ferrite/core/tensor_contract.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/enum_names.h"
#include "ferrite/core/tensor_spec.h"

namespace ferrite {
namespace {

bool is_blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) {
                       return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
                              c == '\r';
                     });
}

std::string describe_stride(const StrideConstraint& stride) {
  if (const auto* exact = std::get_if<StrideExactBytes>(&stride)) {
    return fmt::format("ExactBytes({})", exact->value);
  }
  return fmt::format("Symbol(\"{}\")", std::get<StrideSymbol>(stride).name);
}

}  // namespace

constexpr EnumNames<TensorAccess, 3> kTensorAccessNames{
    "tensor access",
    {{{TensorAccess::kRead, "read"}, {TensorAccess::kWrite, "write"},
      {TensorAccess::kReadWrite, "read_write"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kTensorAccessNames, TensorAccess::kReadWrite,
                            tensor_access_name, parse_tensor_access)

bool access_reads(TensorAccess access) { return access != TensorAccess::kWrite; }
bool access_writes(TensorAccess access) { return access != TensorAccess::kRead; }

std::string describe_dimension_constraint(const DimensionConstraint& constraint) {
  if (const auto* exact = std::get_if<DimensionExact>(&constraint)) {
    return fmt::format("Exact({})", exact->value);
  }
  if (const auto* symbol = std::get_if<DimensionSymbol>(&constraint)) {
    return fmt::format("Symbol(\"{}\")", symbol->name);
  }
  const auto& range = std::get<DimensionRange>(constraint);
  return fmt::format("Range {{ minimum: {}, maximum: {} }}", range.minimum, range.maximum);
}

std::string describe_layout_constraint(const LayoutConstraint& constraint) {
  if (std::holds_alternative<ContiguousLayoutConstraint>(constraint)) return "Contiguous";
  if (const auto* strided = std::get_if<StridedLayoutConstraint>(&constraint)) {
    std::vector<std::string> parts;
    for (const auto& s : strided->strides) parts.push_back(describe_stride(s));
    return fmt::format("Strided {{ strides: [{}] }}", fmt::join(parts, ", "));
  }
  const auto& blocked = std::get<BlockedLayoutConstraint>(constraint);
  return fmt::format("Blocked {{ block: [{}], axis_order: [{}] }}", fmt::join(blocked.block, ", "),
                     fmt::join(blocked.axis_order, ", "));
}

std::string describe_layout_constraints(const std::vector<LayoutConstraint>& constraints) {
  std::vector<std::string> parts;
  for (const auto& c : constraints) parts.push_back(describe_layout_constraint(c));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string describe_alias_policy(const AliasPolicy& alias) {
  if (std::holds_alternative<NoAlias>(alias)) return "NoAlias";
  if (const auto* may = std::get_if<MayAlias>(&alias)) {
    return fmt::format("MayAlias {{ tensor_index: {} }}", may->tensor_index);
  }
  return fmt::format("MustAlias {{ tensor_index: {} }}", std::get<MustAlias>(alias).tensor_index);
}

Result<TensorContract> TensorContract::create(std::vector<DimensionConstraint> dimensions,
                                              std::set<ElementType> element_types,
                                              std::vector<LayoutConstraint> layouts,
                                              TensorAccess access, AliasPolicy alias) {
  std::sort(layouts.begin(), layouts.end());
  layouts.erase(std::unique(layouts.begin(), layouts.end()), layouts.end());
  if (element_types.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "tensor contract must allow at least one element type");
  }
  if (layouts.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "tensor contract must allow at least one layout");
  }
  for (size_t axis = 0; axis < dimensions.size(); ++axis) {
    const auto& d = dimensions[axis];
    if (const auto* exact = std::get_if<DimensionExact>(&d); exact && exact->value == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "tensor contract dimension[{}] is Exact(0)", axis);
    }
    if (const auto* range = std::get_if<DimensionRange>(&d)) {
      if (range->minimum == 0) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "tensor contract dimension[{}] range starts at zero", axis);
      }
      if (range->minimum > range->maximum) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "tensor contract dimension[{}] range {}..={} is inverted", axis,
                          range->minimum, range->maximum);
      }
    }
    if (const auto* symbol = std::get_if<DimensionSymbol>(&d); symbol && is_blank(symbol->name)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "tensor contract dimension[{}] symbol is empty", axis);
    }
  }
  const size_t rank = dimensions.size();
  for (const auto& layout : layouts) {
    if (const auto* strided = std::get_if<StridedLayoutConstraint>(&layout)) {
      if (strided->strides.size() != rank) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "tensor contract strided layout has {} strides for rank {}",
                          strided->strides.size(), rank);
      }
      for (size_t axis = 0; axis < rank; ++axis) {
        const auto& s = strided->strides[axis];
        if (const auto* exact = std::get_if<StrideExactBytes>(&s); exact && exact->value == 0) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "tensor contract stride[{}] is ExactBytes(0)", axis);
        }
        if (const auto* symbol = std::get_if<StrideSymbol>(&s); symbol && is_blank(symbol->name)) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "tensor contract stride[{}] symbol is empty", axis);
        }
      }
    } else if (const auto* blocked = std::get_if<BlockedLayoutConstraint>(&layout)) {
      if (blocked->block.size() != rank) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "tensor contract blocked layout has {} block extents for rank {}",
                          blocked->block.size(), rank);
      }
      for (size_t axis = 0; axis < rank; ++axis) {
        if (blocked->block[axis] == 0) {
          return make_error(ErrorCode::kInvalidExecutionPlan, "tensor contract block[{}] is zero",
                            axis);
        }
      }
      if (!is_axis_permutation(blocked->axis_order, rank)) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "tensor contract blocked axis_order [{}] is not a permutation of 0..{}",
                          fmt::join(blocked->axis_order, ","), rank);
      }
    }
  }
  TensorContract contract;
  contract.dimensions_ = std::move(dimensions);
  contract.element_types_ = std::move(element_types);
  contract.layouts_ = std::move(layouts);
  contract.access_ = access;
  contract.alias_ = alias;
  return contract;
}

}  // namespace ferrite
