#include "weight_layout_validation.h"

#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/checked_math.h"

namespace ferrite::weight_internal {
namespace {

// ceil(a / b) for b > 0 without overflow.
uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

bool boxes_overlap(const CompositePart& a, const CompositePart& b) {
  for (size_t axis = 0; axis < a.extents.size(); ++axis) {
    // All offsets + extents were checked to fit within the tensor dims.
    const uint64_t a_begin = a.logical_offsets[axis];
    const uint64_t b_begin = b.logical_offsets[axis];
    if (a_begin >= b_begin + b.extents[axis] || b_begin >= a_begin + a.extents[axis]) return false;
  }
  return true;
}

}  // namespace

Result<void> check_component_shape(const FailFn& fail, const std::string& field,
                                   const WeightComponentSpec& component) {
  const std::string_view id = component.id.str();
  if (component.dimensions.empty()) {
    return fail(field + ".dimensions",
                fmt::format("component `{}` must have at least one dimension", id));
  }
  for (size_t axis = 0; axis < component.dimensions.size(); ++axis) {
    if (component.dimensions[axis] == 0) {
      return fail(field + ".dimensions",
                  fmt::format("component `{}` dimension[{}] is zero", id, axis));
    }
  }
  if (auto problem = weight_encoding_problem(component.encoding)) {
    return fail(field + ".encoding", fmt::format("component `{}`: {}", id, *problem));
  }
  if (auto problem = weight_role_encoding_problem(component.role, component.encoding)) {
    return fail(field + ".role", fmt::format("component `{}`: {}", id, *problem));
  }
  if (!checked_weight_physical_bytes(component.dimensions, component.encoding)) {
    return fail(field + ".dimensions",
                fmt::format("component `{}` physical byte size [{}] overflows u64", id,
                            fmt::join(component.dimensions, ",")));
  }
  return {};
}

Result<void> check_layout_limits(const FailFn& fail, const std::string& field,
                                 const PhysicalWeightLayout& layout) {
  // A leaf (every layout but a composite) is one node at depth 1, within
  // both limits: checked about a dozen times per weight in a compile, it
  // allocates nothing.
  if (!std::holds_alternative<CompositeLayout>(layout.node)) return {};
  std::vector<std::pair<const PhysicalWeightLayout*, size_t>> pending{{&layout, 1}};
  size_t nodes = 0;
  while (!pending.empty()) {
    auto [current, depth] = pending.back();
    pending.pop_back();
    if (depth > kMaxWeightLayoutDepth) {
      return fail(field, fmt::format("layout tree is deeper than {} levels",
                                     kMaxWeightLayoutDepth));
    }
    if (++nodes > kMaxWeightLayoutNodes) {
      return fail(field, fmt::format("layout tree has more than {} nodes",
                                     kMaxWeightLayoutNodes));
    }
    if (const auto* composite = std::get_if<CompositeLayout>(&current->node)) {
      for (const CompositePart& part : composite->parts) {
        pending.emplace_back(&*part.layout, depth + 1);
      }
    }
  }
  return {};
}

Result<void> LayoutChecker::check_tree(const WeightId& tensor_id, const std::string& field,
                                       const PhysicalWeightLayout& layout,
                                       std::span<const uint64_t> dimensions,
                                       ElementType logical_element_type) {
  tensor_id_ = &tensor_id;
  if (dimensions.empty()) {
    return fail_(field, fmt::format("logical weight `{}` must have at least one dimension",
                                    tensor_id.str()));
  }
  for (size_t axis = 0; axis < dimensions.size(); ++axis) {
    if (dimensions[axis] == 0) {
      return fail_(field, fmt::format("logical weight `{}` dimension[{}] is zero",
                                      tensor_id.str(), axis));
    }
  }
  if (!checked_product(dimensions)) {
    return fail_(field, fmt::format("logical weight `{}` element count [{}] overflows u64",
                                    tensor_id.str(), fmt::join(dimensions, ",")));
  }
  FERRITE_RETURN_IF_ERROR(check_layout_limits(fail_, field, layout));
  return check_node(field, layout, dimensions, logical_element_type);
}

Result<void> LayoutChecker::check_node(const std::string& field,
                                       const PhysicalWeightLayout& layout,
                                       std::span<const uint64_t> dimensions, ElementType dtype) {
  // Callers guarantee non-empty, non-zero dims whose product fits u64.
  const uint64_t count = checked_product(dimensions).value_or(0);
  if (const auto* dense = std::get_if<DenseLayout>(&layout.node)) {
    return check_dense(field, *dense, dimensions, count, dtype);
  }
  if (const auto* quantized = std::get_if<QuantizedLayout>(&layout.node)) {
    return check_quantized(field, *quantized, dimensions, count);
  }
  if (const auto* block = std::get_if<BlockQuantizedLayout>(&layout.node)) {
    return check_block_quantized(field, *block, dimensions, count);
  }
  return check_composite(field, std::get<CompositeLayout>(layout.node), dimensions, count, dtype);
}

Result<const WeightComponentSpec*> LayoutChecker::bind(const std::string& field,
                                                       const WeightId& id) {
  auto found = components_.find(id);
  if (found == components_.end()) {
    return fail_(field, fmt::format("logical weight `{}` references unknown weight component `{}`",
                                    tensor_id_->str(), id.str()));
  }
  auto [slot, inserted] = bound_by_.emplace(id, *tensor_id_);
  if (!inserted) {
    return fail_(field, fmt::format("component `{}` is bound by logical weight `{}` and again by "
                                    "logical weight `{}`; a component may be bound only once",
                                    id.str(), slot->second.str(), tensor_id_->str()));
  }
  return found->second;
}

Result<void> LayoutChecker::check_dense(const std::string& field, const DenseLayout& layout,
                                        std::span<const uint64_t> dimensions, uint64_t count,
                                        ElementType dtype) {
  FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* component,
                           bind(field, layout.component_id));
  const std::string_view id = component->id.str();
  if (component->role != WeightComponentRole::kValues) {
    return fail_(field, fmt::format("dense layout component `{}` has role `{}`; expected `values`",
                                    id, weight_component_role_name(component->role)));
  }
  if (is_quantized_encoding(component->encoding)) {
    return fail_(field, fmt::format("dense layout component `{}` has a `{}` encoding", id,
                                    weight_encoding_kind(component->encoding)));
  }
  const ElementType stored = component->physical_element_type();
  if (stored != dtype) {
    return fail_(field, fmt::format("dense layout component `{}` stores {} elements but logical "
                                    "weight `{}` is {}",
                                    id, element_type_debug_name(stored), tensor_id_->str(),
                                    element_type_debug_name(dtype)));
  }
  auto stored_count = checked_product(component->dimensions);
  if (!stored_count || *stored_count != count) {
    return fail_(field, fmt::format("dense layout component `{}` dimensions [{}] do not hold the "
                                    "{} elements of logical extent [{}]",
                                    id, fmt::join(component->dimensions, ","), count,
                                    fmt::join(dimensions, ",")));
  }
  return {};
}

Result<void> LayoutChecker::check_quantized(const std::string& field,
                                            const QuantizedLayout& layout,
                                            std::span<const uint64_t> dimensions,
                                            uint64_t count) {
  FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* packed, bind(field, layout.packed_values));
  const std::string_view packed_id = packed->id.str();
  const auto* encoding = std::get_if<QuantizedEncoding>(&packed->encoding);
  if (packed->role != WeightComponentRole::kPackedValues || encoding == nullptr) {
    return fail_(field, fmt::format("quantized layout packed_values `{}` must have role "
                                    "`packed_values` and a quantized encoding (has `{}`, `{}`)",
                                    packed_id, weight_component_role_name(packed->role),
                                    weight_encoding_kind(packed->encoding)));
  }
  const QuantizationSpec& spec = encoding->spec;
  if (layout.group_axis >= dimensions.size()) {
    return fail_(field, fmt::format("quantized layout of `{}` group_axis {} is out of range for "
                                    "rank {}",
                                    packed_id, layout.group_axis, dimensions.size()));
  }

  FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* scales, bind(field, layout.scales));
  const std::string_view scales_id = scales->id.str();
  if (scales->role != WeightComponentRole::kScales ||
      !std::holds_alternative<DenseEncoding>(scales->encoding) ||
      scales->physical_element_type() != spec.scale_type) {
    return fail_(field, fmt::format("quantized layout scales `{}` must have role `scales` and "
                                    "dense {} elements (format `{}`)",
                                    scales_id, element_type_debug_name(spec.scale_type),
                                    spec.format_id.str()));
  }

  if (layout.zero_points.has_value() != spec.zero_point_type.has_value()) {
    return fail_(field,
                 layout.zero_points
                     ? fmt::format("quantized layout of `{}` binds zero_points `{}` but format "
                                   "`{}` declares no zero_point_type",
                                   packed_id, layout.zero_points->str(), spec.format_id.str())
                     : fmt::format("quantized layout of `{}` has no zero_points but format `{}` "
                                   "declares zero_point_type {}",
                                   packed_id, spec.format_id.str(),
                                   element_type_debug_name(*spec.zero_point_type)));
  }
  if (layout.zero_points) {
    FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* zeros, bind(field, *layout.zero_points));
    if (zeros->role != WeightComponentRole::kZeroPoints ||
        !std::holds_alternative<DenseEncoding>(zeros->encoding) ||
        zeros->physical_element_type() != *spec.zero_point_type) {
      return fail_(field, fmt::format("quantized layout zero_points `{}` must have role "
                                      "`zero_points` and dense {} elements (format `{}`)",
                                      zeros->id.str(),
                                      element_type_debug_name(*spec.zero_point_type),
                                      spec.format_id.str()));
    }
  }

  // Packed bytes: ceil(N × bits / 8).
  auto total_bits = checked_mul(count, spec.bits_per_weight);
  auto packed_bytes = checked_product(packed->dimensions);
  if (!total_bits || !packed_bytes || *packed_bytes != ceil_div(*total_bits, 8)) {
    return fail_(field, fmt::format("quantized layout packed_values `{}` dimensions [{}] must hold "
                                    "ceil({} × {} / 8) bytes for logical extent [{}]",
                                    packed_id, fmt::join(packed->dimensions, ","), count,
                                    spec.bits_per_weight, fmt::join(dimensions, ",")));
  }

  // One scale per group and row: (N / D[axis]) × ceil(D[axis] / group_size).
  const uint64_t axis_extent = dimensions[layout.group_axis];
  auto expected_scales = checked_mul(count / axis_extent, ceil_div(axis_extent, spec.group_size));
  auto scale_count = checked_product(scales->dimensions);
  if (!expected_scales || !scale_count || *scale_count != *expected_scales) {
    return fail_(field, fmt::format("quantized layout scales `{}` dimensions [{}] must hold one "
                                    "scale per group of {} along axis {} of [{}]",
                                    scales_id, fmt::join(scales->dimensions, ","), spec.group_size,
                                    layout.group_axis, fmt::join(dimensions, ",")));
  }
  return {};
}

Result<void> LayoutChecker::check_block_quantized(const std::string& field,
                                                  const BlockQuantizedLayout& layout,
                                                  std::span<const uint64_t> dimensions,
                                                  uint64_t count) {
  FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* blocks, bind(field, layout.blocks));
  const std::string_view id = blocks->id.str();
  const auto* encoding = std::get_if<BlockQuantizedEncoding>(&blocks->encoding);
  if (blocks->role != WeightComponentRole::kPackedValues || encoding == nullptr) {
    return fail_(field, fmt::format("block-quantized layout blocks `{}` must have role "
                                    "`packed_values` and a block_quantized encoding (has `{}`, "
                                    "`{}`)",
                                    id, weight_component_role_name(blocks->role),
                                    weight_encoding_kind(blocks->encoding)));
  }
  if (layout.block_axis >= dimensions.size()) {
    return fail_(field, fmt::format("block-quantized layout of `{}` block_axis {} is out of range "
                                    "for rank {}",
                                    id, layout.block_axis, dimensions.size()));
  }
  const uint64_t per_block = encoding->logical_values_per_block;
  if (per_block == 0 || dimensions[layout.block_axis] % per_block != 0) {
    return fail_(field, fmt::format("block-quantized layout of `{}`: dimension[{}]={} is not "
                                    "divisible by {} values per block",
                                    id, layout.block_axis, dimensions[layout.block_axis],
                                    per_block));
  }
  auto grid = checked_product(blocks->dimensions);
  auto covered = grid ? checked_mul(*grid, per_block) : std::nullopt;
  if (!covered || *covered != count) {
    return fail_(field, fmt::format("block-quantized layout blocks `{}` grid [{}] × {} values per "
                                    "block does not equal the {} elements of [{}]",
                                    id, fmt::join(blocks->dimensions, ","), per_block, count,
                                    fmt::join(dimensions, ",")));
  }
  return {};
}

Result<void> LayoutChecker::check_composite(const std::string& field,
                                            const CompositeLayout& layout,
                                            std::span<const uint64_t> dimensions, uint64_t count,
                                            ElementType dtype) {
  const std::string_view tensor = tensor_id_->str();
  if (layout.parts.empty()) {
    return fail_(field, fmt::format("composite layout of `{}` has no parts", tensor));
  }
  const size_t rank = dimensions.size();
  uint64_t covered = 0;
  for (size_t i = 0; i < layout.parts.size(); ++i) {
    const CompositePart& part = layout.parts[i];
    const std::string part_field = fmt::format("{}.parts[{}]", field, i);
    if (part.logical_offsets.size() != rank || part.extents.size() != rank) {
      return fail_(part_field, fmt::format("composite part {} of `{}` has {} offsets and {} "
                                           "extents for rank {}",
                                           i, tensor, part.logical_offsets.size(),
                                           part.extents.size(), rank));
    }
    for (size_t axis = 0; axis < rank; ++axis) {
      auto end = checked_add(part.logical_offsets[axis], part.extents[axis]);
      if (part.extents[axis] == 0 || !end || *end > dimensions[axis]) {
        return fail_(part_field, fmt::format("composite part {} of `{}` box offset {} extent {} "
                                             "on axis {} is empty or exceeds dimension {}",
                                             i, tensor, part.logical_offsets[axis],
                                             part.extents[axis], axis, dimensions[axis]));
      }
    }
    // Each extent is ≤ its dimension, so the volume ≤ count fits u64.
    auto volume = checked_product(part.extents);
    auto sum = volume ? checked_add(covered, *volume) : std::nullopt;
    if (!sum) {
      return fail_(part_field, fmt::format("composite parts of `{}` volume overflows u64", tensor));
    }
    covered = *sum;
  }
  for (size_t i = 0; i < layout.parts.size(); ++i) {
    for (size_t j = i + 1; j < layout.parts.size(); ++j) {
      if (boxes_overlap(layout.parts[i], layout.parts[j])) {
        return fail_(field, fmt::format("composite parts {} and {} of `{}` overlap", i, j,
                                        tensor));
      }
    }
  }
  if (covered != count) {
    return fail_(field, fmt::format("composite parts of `{}` cover {} of {} elements of [{}]",
                                    tensor, covered, count, fmt::join(dimensions, ",")));
  }
  for (size_t i = 0; i < layout.parts.size(); ++i) {
    const CompositePart& part = layout.parts[i];
    FERRITE_RETURN_IF_ERROR(check_node(fmt::format("{}.parts[{}].layout", field, i), *part.layout,
                                       part.extents, dtype));
  }
  return {};
}

}  // namespace ferrite::weight_internal
