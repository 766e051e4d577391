#include "ferrite/format/tensor_arg.h"

#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/text.h"

namespace ferrite {
namespace {

// A cursor over the argument text that reports errors with the column.
class ArgParser {
 public:
  explicit ArgParser(std::string_view text) : text_(text) {}

  Error fail(size_t position, std::string_view problem) const {
    return make_error(ErrorCode::kInvalidArgument, "tensor argument `{}`: {} (column {})", text_,
                      problem, position + 1)
        .with_field("argument", std::string(text_))
        .with_field("column", std::to_string(position + 1));
  }

  size_t position() const { return position_; }
  bool at_end() const { return position_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[position_]; }

  bool consume(char c) {
    if (peek() != c || at_end()) return false;
    ++position_;
    return true;
  }
  bool consume(std::string_view word) {
    if (text_.substr(position_).starts_with(word)) {
      position_ += word.size();
      return true;
    }
    return false;
  }
  Result<void> expect(char c, std::string_view what) {
    if (consume(c)) return {};
    return fail(position_, at_end() ? fmt::format("expected `{}` {} but the text ends", c, what)
                                    : fmt::format("expected `{}` {}, found `{}`", c, what, peek()));
  }

  // Reads up to (not including) the first of `stops`; returns the token.
  std::string_view token(std::string_view stops) {
    const size_t start = position_;
    while (!at_end() && stops.find(text_[position_]) == std::string_view::npos) ++position_;
    return text_.substr(start, position_ - start);
  }

  // A comma-separated list of plain decimal u64 values, ended by one of
  // `terminators` (not consumed). An empty list is allowed.
  Result<std::vector<uint64_t>> number_list(std::string_view what, std::string_view terminators) {
    std::vector<uint64_t> out;
    if (!at_end() && terminators.find(peek()) != std::string_view::npos) return out;
    while (true) {
      const size_t start = position_;
      const std::string_view item = token(",[]|@");
      auto value = parse_decimal_u64(item);
      if (!value) {
        return fail(start, item.empty()
                               ? fmt::format("{} {} is empty", what, out.size())
                               : fmt::format("{} {} `{}` is not an unsigned integer", what,
                                             out.size(), item));
      }
      out.push_back(*value);
      if (!consume(',')) break;
    }
    return out;
  }

 private:
  std::string_view text_;
  size_t position_ = 0;
};

bool is_permutation(const std::vector<uint64_t>& order, size_t rank) {
  if (order.size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (uint64_t axis : order) {
    if (axis >= rank || seen[static_cast<size_t>(axis)]) return false;
    seen[static_cast<size_t>(axis)] = true;
  }
  return true;
}

}  // namespace

Result<std::pair<ProgramValueId, ProgramTensorSpec>> parse_value_tensor_arg(std::string_view text) {
  ArgParser parser(text);
  const std::string_view value_text = parser.token("=");
  if (parser.at_end()) {
    return parser.fail(0, "expected VALUE=DTYPE[d0,d1,...] (missing `=`)");
  }
  auto value = ProgramValueId::create(std::string(value_text));
  if (!value) {
    return parser.fail(0, fmt::format("`{}` is not a valid program value id: {}", value_text,
                                      value.error().message()));
  }
  parser.consume('=');

  const size_t dtype_start = parser.position();
  const std::string_view dtype_text = parser.token("[");
  auto element_type = parse_element_type(dtype_text);
  if (!element_type) return parser.fail(dtype_start, element_type.error().message());
  FERRITE_RETURN_IF_ERROR(parser.expect('[', "to open the dimensions"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> dims, parser.number_list("dimension", "]"));
  FERRITE_RETURN_IF_ERROR(parser.expect(']', "to close the dimensions"));
  const size_t rank = dims.size();

  ResolvedTensorLayout layout = ContiguousLayout{};
  if (parser.consume('@')) {
    const size_t layout_start = parser.position();
    if (parser.consume("strided")) {
      FERRITE_RETURN_IF_ERROR(parser.expect('[', "to open the byte strides"));
      const size_t list_start = parser.position();
      FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> strides,
                               parser.number_list("byte stride", "]"));
      FERRITE_RETURN_IF_ERROR(parser.expect(']', "to close the byte strides"));
      if (strides.size() != rank) {
        return parser.fail(list_start, fmt::format("{} byte strides for a rank-{} tensor",
                                                   strides.size(), rank));
      }
      layout = StridedLayout{std::move(strides)};
    } else if (parser.consume("blocked")) {
      FERRITE_RETURN_IF_ERROR(parser.expect('[', "to open the blocked layout"));
      const size_t block_start = parser.position();
      FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> block, parser.number_list("block", "|"));
      FERRITE_RETURN_IF_ERROR(parser.expect('|', "between block extents and axis order"));
      const size_t order_start = parser.position();
      FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> order, parser.number_list("axis", "]"));
      FERRITE_RETURN_IF_ERROR(parser.expect(']', "to close the blocked layout"));
      if (block.size() != rank) {
        return parser.fail(block_start, fmt::format("{} block extents for a rank-{} tensor",
                                                    block.size(), rank));
      }
      for (size_t axis = 0; axis < rank; ++axis) {
        if (block[axis] == 0) {
          return parser.fail(block_start, fmt::format("block {} must be greater than zero", axis));
        }
      }
      if (!is_permutation(order, rank)) {
        return parser.fail(order_start, fmt::format("axis order [{}] is not a permutation of 0..{}",
                                                    fmt::join(order, ","), rank));
      }
      std::vector<uint32_t> axis_order;
      axis_order.reserve(rank);
      for (uint64_t axis : order) axis_order.push_back(static_cast<uint32_t>(axis));
      bool exact = true;
      std::vector<uint64_t> physical;
      physical.reserve(rank);
      for (uint32_t axis : axis_order) {
        auto padded = checked_round_up(dims[axis], block[axis]);
        if (!padded) {
          return parser.fail(block_start,
                             fmt::format("padding dimension {} to block {} overflows u64", axis,
                                         block[axis]));
        }
        if (*padded != dims[axis]) exact = false;
        physical.push_back(*padded);
      }
      BlockedTensorPadding padding = BlockedPaddingExact{};
      if (!exact) padding = BlockedPaddingZeroFill{std::move(physical)};
      layout = BlockedLayout{std::move(block), std::move(axis_order), std::move(padding)};
    } else {
      return parser.fail(layout_start, "unknown layout (expected `strided[...]` or `blocked[...|...]`)");
    }
  }
  if (!parser.at_end()) {
    return parser.fail(parser.position(), fmt::format("unexpected trailing text `{}`",
                                                      text.substr(parser.position())));
  }
  ProgramTensorSpec spec{std::move(dims), *element_type, std::move(layout)};
  if (auto resolved = spec.resolve(); !resolved) {
    return make_error(ErrorCode::kInvalidArgument, "tensor argument `{}` is invalid: {}", text,
                      resolved.error().message())
        .with_field("argument", std::string(text));
  }
  return std::pair<ProgramValueId, ProgramTensorSpec>(std::move(*value), std::move(spec));
}

std::string format_value_tensor_arg(const ProgramValueId& value, const ProgramTensorSpec& tensor) {
  std::string out = fmt::format("{}={}[{}]", value.str(), element_type_name(tensor.element_type),
                                fmt::join(tensor.dimensions, ","));
  if (const auto* strided = std::get_if<StridedLayout>(&tensor.layout)) {
    out += fmt::format("@strided[{}]", fmt::join(strided->byte_strides, ","));
  } else if (const auto* blocked = std::get_if<BlockedLayout>(&tensor.layout)) {
    out += fmt::format("@blocked[{}|{}]", fmt::join(blocked->block, ","),
                       fmt::join(blocked->axis_order, ","));
  }
  return out;
}

}  // namespace ferrite
