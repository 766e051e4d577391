#include "ferrite/core/tensor_spec.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/checked_math.h"

namespace ferrite {

bool is_axis_permutation(const std::vector<uint32_t>& order, size_t rank) {
  if (order.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (uint32_t axis : order) {
    if (axis >= rank || seen[axis]) return false;
    seen[axis] = true;
  }
  return true;
}

namespace {

Result<uint64_t> product_bytes(const std::vector<uint64_t>& extents, uint64_t elem) {
  auto count = checked_product(extents);
  auto bytes = count ? checked_mul(*count, elem) : std::nullopt;
  if (!bytes) return make_error(ErrorCode::kInvalidExecutionPlan, "tensor byte size overflows u64");
  return *bytes;
}

// Validates the blocked layout and returns the stored (physical) extents.
Result<std::vector<uint64_t>> blocked_storage_extents(const std::vector<uint64_t>& dims,
                                                      const BlockedLayout& blocked) {
  const size_t rank = dims.size();
  if (blocked.block.size() != rank) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "blocked layout has {} block extents for rank {}", blocked.block.size(),
                      rank);
  }
  for (size_t axis = 0; axis < rank; ++axis) {
    if (blocked.block[axis] == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "blocked layout block[{}] must be greater than zero", axis);
    }
  }
  if (!is_axis_permutation(blocked.axis_order, rank)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "blocked layout axis_order [{}] is not a permutation of 0..{}",
                      fmt::join(blocked.axis_order, ","), rank);
  }
  if (std::holds_alternative<BlockedPaddingExact>(blocked.padding)) {
    for (size_t axis = 0; axis < rank; ++axis) {
      if (dims[axis] % blocked.block[axis] != 0) {
        return make_error(
            ErrorCode::kInvalidExecutionPlan,
            "blocked layout with exact padding requires dimension[{}]={} divisible by block {}",
            axis, dims[axis], blocked.block[axis]);
      }
    }
    return dims;
  }
  const auto& physical = std::get<BlockedPaddingZeroFill>(blocked.padding).physical_dimensions;
  if (physical.size() != rank) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "zero-fill padding lists {} physical dimensions for rank {}", physical.size(),
                      rank);
  }
  std::vector<uint64_t> expected(rank);
  bool any_padded = false;
  for (size_t position = 0; position < rank; ++position) {
    const uint32_t axis = blocked.axis_order[position];
    auto padded = checked_round_up(dims[axis], blocked.block[axis]);
    if (!padded) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "blocked tensor padding overflows u64");
    }
    expected[position] = *padded;
    if (*padded != dims[axis]) any_padded = true;
  }
  if (physical != expected) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "zero-fill physical dimensions [{}] differ from the padded extents [{}] in axis order",
        fmt::join(physical, ","), fmt::join(expected, ","));
  }
  if (!any_padded) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "zero-fill padding pads no axis; use exact padding");
  }
  return physical;
}

}  // namespace

std::string describe_layout(const ResolvedTensorLayout& layout) {
  return std::visit(
      [](const auto& l) -> std::string {
        using T = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<T, ContiguousLayout>) {
          return "Contiguous";
        } else if constexpr (std::is_same_v<T, StridedLayout>) {
          return fmt::format("Strided {{ byte_strides: [{}] }}", fmt::join(l.byte_strides, ", "));
        } else {
          std::string padding =
              std::holds_alternative<BlockedPaddingExact>(l.padding)
                  ? std::string("Exact")
                  : fmt::format(
                        "ZeroFill {{ physical_dimensions: [{}] }}",
                        fmt::join(std::get<BlockedPaddingZeroFill>(l.padding).physical_dimensions,
                                  ", "));
          return fmt::format("Blocked {{ block: [{}], axis_order: [{}], padding: {} }}",
                             fmt::join(l.block, ", "), fmt::join(l.axis_order, ", "), padding);
        }
      },
      layout);
}

std::string layout_short_name(const ResolvedTensorLayout& layout) {
  return std::visit(
      [](const auto& l) -> std::string {
        using T = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<T, ContiguousLayout>) {
          return "contiguous";
        } else if constexpr (std::is_same_v<T, StridedLayout>) {
          return fmt::format("strided[{}]", fmt::join(l.byte_strides, ","));
        } else {
          std::string out =
              fmt::format("blocked[{}|{}]", fmt::join(l.block, ","), fmt::join(l.axis_order, ","));
          if (const auto* zf = std::get_if<BlockedPaddingZeroFill>(&l.padding)) {
            out += fmt::format(" zero-fill[{}]", fmt::join(zf->physical_dimensions, ","));
          }
          return out;
        }
      },
      layout);
}

Result<ResolvedTensorSpec> ResolvedTensorSpec::create(std::vector<uint64_t> dimensions,
                                                      ElementType element_type,
                                                      ResolvedTensorLayout layout) {
  for (size_t axis = 0; axis < dimensions.size(); ++axis) {
    if (dimensions[axis] == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "tensor dimension[{}] must be greater than zero", axis);
    }
  }
  const uint64_t elem = element_type_size_bytes(element_type);
  FERRITE_ASSIGN_OR_RETURN(uint64_t dense_bytes, product_bytes(dimensions, elem));
  uint64_t minimum = dense_bytes;
  if (const auto* strided = std::get_if<StridedLayout>(&layout)) {
    if (strided->byte_strides.size() != dimensions.size()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "strided layout has {} byte strides for rank {}",
                        strided->byte_strides.size(), dimensions.size());
    }
    uint64_t span = elem;
    for (size_t axis = 0; axis < dimensions.size(); ++axis) {
      if (strided->byte_strides[axis] == 0) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "strided layout byte_strides[{}] must be greater than zero", axis);
      }
      auto term = checked_mul(dimensions[axis] - 1, strided->byte_strides[axis]);
      auto sum = term ? checked_add(span, *term) : std::nullopt;
      if (!sum) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "strided tensor byte span overflows u64");
      }
      span = *sum;
    }
    minimum = span;
  } else if (const auto* blocked = std::get_if<BlockedLayout>(&layout)) {
    FERRITE_ASSIGN_OR_RETURN(auto stored, blocked_storage_extents(dimensions, *blocked));
    FERRITE_ASSIGN_OR_RETURN(minimum, product_bytes(stored, elem));
  }
  return ResolvedTensorSpec(std::make_shared<const State>(
      State{std::move(dimensions), element_type, std::move(layout), minimum}));
}

std::string ResolvedTensorSpec::to_string() const {
  std::string out =
      fmt::format("{}[{}]", element_type_name(element_type()), fmt::join(dimensions(), ","));
  if (!is_contiguous()) out += " " + layout_short_name(layout());
  return out;
}

Result<void> ProgramTensorSpec::validate(std::string_view field) const {
  auto resolved = resolve();
  if (!resolved) {
    return make_error(resolved.error().code(), "`{}` is invalid: {}", field,
                      resolved.error().message());
  }
  return {};
}

Result<ResolvedTensorSpec> ProgramTensorSpec::resolve() const {
  return ResolvedTensorSpec::create(dimensions, element_type, layout);
}

Result<uint64_t> ProgramTensorSpec::byte_len() const {
  return product_bytes(dimensions, element_type_size_bytes(element_type));
}

}  // namespace ferrite
