#include "ferrite/format/tensor_reader.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace ferrite {

Result<ElementType> read_element_type(const JsonCursor& cursor) {
  return cursor.parsed_string(parse_element_type, "element type");
}

namespace {

Result<BlockedTensorPadding> read_blocked_padding(const JsonCursor& cursor) {
  if (cursor.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::string name, cursor.string());
    if (name == "exact") return BlockedPaddingExact{};
    return cursor.error("must be \"exact\" or {{\"zero_fill\":[...]}}, found string `{}`", name);
  }
  if (!cursor.is_object()) {
    return cursor.type_error("\"exact\" or {\"zero_fill\":[...]}");
  }
  FERRITE_ASSIGN_OR_RETURN(auto entry, cursor.single_key({"zero_fill"}));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> physical, entry.second.u64_array());
  return BlockedPaddingZeroFill{std::move(physical)};
}

// The outer shape shared by tensor layouts and layout constraints:
// "contiguous" → nullopt; {"strided":X} or {"blocked":X} → (key, X).
Result<std::optional<std::pair<std::string, JsonCursor>>> read_layout_shape(
    const JsonCursor& cursor) {
  if (cursor.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::string name, cursor.string());
    if (name == "contiguous") return std::nullopt;
    return cursor.error(
        "must be \"contiguous\", {{\"strided\":...}} or {{\"blocked\":...}}, found string `{}`",
        name);
  }
  if (!cursor.is_object()) {
    return cursor.type_error("\"contiguous\", {\"strided\":...} or {\"blocked\":...}");
  }
  FERRITE_ASSIGN_OR_RETURN(auto entry, cursor.single_key({"strided", "blocked"}));
  return std::optional<std::pair<std::string, JsonCursor>>(std::move(entry));
}

}  // namespace

Result<ResolvedTensorLayout> read_tensor_layout(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(auto shape, read_layout_shape(cursor));
  if (!shape) return ContiguousLayout{};
  const auto& entry = *shape;
  const JsonCursor& body = entry.second;
  if (entry.first == "strided") {
    FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> strides, body.u64_array());
    return StridedLayout{std::move(strides)};
  }
  FERRITE_ASSIGN_OR_RETURN(ObjectReader blocked, body.object({"block", "axis_order", "padding"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor block, blocked.required("block"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> block_extents, block.u64_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor order, blocked.required("axis_order"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint32_t> axis_order, order.u32_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor padding_cursor, blocked.required("padding"));
  FERRITE_ASSIGN_OR_RETURN(BlockedTensorPadding padding, read_blocked_padding(padding_cursor));
  return ResolvedTensorLayout(
      BlockedLayout{std::move(block_extents), std::move(axis_order), std::move(padding)});
}

Result<ProgramTensorSpec> read_program_tensor_spec(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"dimensions", "element_type", "layout"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor dims, object.required("dimensions"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> dimensions, dims.u64_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor type_cursor, object.required("element_type"));
  FERRITE_ASSIGN_OR_RETURN(ElementType element_type, read_element_type(type_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor layout_cursor, object.required("layout"));
  FERRITE_ASSIGN_OR_RETURN(ResolvedTensorLayout layout, read_tensor_layout(layout_cursor));
  return ProgramTensorSpec{std::move(dimensions), element_type, std::move(layout)};
}

Result<ResolvedTensorSpec> read_resolved_tensor_spec(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ProgramTensorSpec spec, read_program_tensor_spec(cursor));
  auto resolved = spec.resolve();
  if (!resolved) return with_json_path(std::move(resolved).error(), cursor.path());
  return std::move(*resolved);
}

Result<DimensionConstraint> read_dimension_constraint(const JsonCursor& cursor) {
  if (cursor.is_integer()) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t value, cursor.u64());
    return DimensionExact{value};
  }
  if (cursor.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::string name, cursor.string());
    return DimensionSymbol{std::move(name)};
  }
  if (cursor.is_object()) {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader range, cursor.object({"min", "max"}));
    FERRITE_ASSIGN_OR_RETURN(uint64_t minimum, range.required_u64("min"));
    FERRITE_ASSIGN_OR_RETURN(uint64_t maximum, range.required_u64("max"));
    return DimensionRange{minimum, maximum};
  }
  return cursor.type_error(
      "an unsigned integer (exact), a string (symbol) or {\"min\":N,\"max\":N} (range)");
}

Result<LayoutConstraint> read_layout_constraint(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(auto shape, read_layout_shape(cursor));
  if (!shape) return ContiguousLayoutConstraint{};
  const auto& entry = *shape;
  const JsonCursor& body = entry.second;
  if (entry.first == "strided") {
    FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, body.array());
    std::vector<StrideConstraint> strides;
    strides.reserve(items.size());
    for (const JsonCursor& item : items) {
      if (item.is_string()) {
        FERRITE_ASSIGN_OR_RETURN(std::string name, item.string());
        strides.emplace_back(StrideSymbol{std::move(name)});
      } else if (item.is_integer()) {
        FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, item.u64());
        strides.emplace_back(StrideExactBytes{bytes});
      } else {
        return item.type_error("an unsigned integer (bytes) or a string (symbol)");
      }
    }
    return StridedLayoutConstraint{std::move(strides)};
  }
  FERRITE_ASSIGN_OR_RETURN(ObjectReader blocked, body.object({"block", "axis_order"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor block, blocked.required("block"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> block_extents, block.u64_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor order, blocked.required("axis_order"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint32_t> axis_order, order.u32_array());
  return BlockedLayoutConstraint{std::move(block_extents), std::move(axis_order)};
}

Result<TensorAccess> read_tensor_access(const JsonCursor& cursor) {
  return cursor.parsed_string(parse_tensor_access, "tensor access");
}

Result<AliasPolicy> read_alias_policy(const JsonCursor& cursor) {
  if (cursor.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::string name, cursor.string());
    if (name == "no_alias") return NoAlias{};
    return cursor.error(
        "must be \"no_alias\", {{\"may_alias\":N}} or {{\"must_alias\":N}}, found string `{}`",
        name);
  }
  if (!cursor.is_object()) {
    return cursor.type_error("\"no_alias\", {\"may_alias\":N} or {\"must_alias\":N}");
  }
  FERRITE_ASSIGN_OR_RETURN(auto entry, cursor.single_key({"may_alias", "must_alias"}));
  FERRITE_ASSIGN_OR_RETURN(uint32_t index, entry.second.u32());
  if (entry.first == "may_alias") return MayAlias{index};
  return MustAlias{index};
}

Result<TensorContract> read_tensor_contract(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(
      ObjectReader object,
      cursor.object({"dimensions", "element_types", "layouts", "access", "alias"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor dims_cursor, object.required("dimensions"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> dim_items, dims_cursor.array());
  std::vector<DimensionConstraint> dimensions;
  dimensions.reserve(dim_items.size());
  for (const JsonCursor& item : dim_items) {
    FERRITE_ASSIGN_OR_RETURN(DimensionConstraint dim, read_dimension_constraint(item));
    dimensions.push_back(std::move(dim));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor types_cursor, object.required("element_types"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> type_items, types_cursor.array());
  std::set<ElementType> element_types;
  for (const JsonCursor& item : type_items) {
    FERRITE_ASSIGN_OR_RETURN(ElementType type, read_element_type(item));
    if (!element_types.insert(type).second) {
      return item.error("repeats element type `{}`", element_type_name(type));
    }
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor layouts_cursor, object.required("layouts"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> layout_items, layouts_cursor.array());
  std::vector<LayoutConstraint> layouts;
  layouts.reserve(layout_items.size());
  for (const JsonCursor& item : layout_items) {
    FERRITE_ASSIGN_OR_RETURN(LayoutConstraint layout, read_layout_constraint(item));
    layouts.push_back(std::move(layout));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor access_cursor, object.required("access"));
  FERRITE_ASSIGN_OR_RETURN(TensorAccess access, read_tensor_access(access_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor alias_cursor, object.required("alias"));
  FERRITE_ASSIGN_OR_RETURN(AliasPolicy alias, read_alias_policy(alias_cursor));
  auto contract = TensorContract::create(std::move(dimensions), std::move(element_types),
                                         std::move(layouts), access, alias);
  if (!contract) return with_json_path(std::move(contract).error(), cursor.path());
  return std::move(*contract);
}

}  // namespace ferrite
