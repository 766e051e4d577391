// ferrite/core/tensor_contract.h — what an operation accepts or produces.
//
// Contract (spec §2.5): a `TensorContract` constrains one operand of an
// operation signature: per-axis dimension constraints (exact / inclusive range
// / symbol), the allowed element types, the allowed layouts (contiguous,
// strided with exact-or-symbolic byte strides, blocked), the access mode and
// the alias policy. `create` sorts and de-duplicates the layouts (variant
// order Contiguous < Strided < Blocked, then field-wise) and rejects: no
// element types, no layouts, `Exact(0)`, ranges starting at 0 or inverted,
// blank symbols, stride lists of the wrong rank, zero strides or blocks, and
// blocked axis orders that are not permutations.
//
// Dimension symbols and stride symbols are separate namespaces: a dimension
// symbol "n" never constrains a stride symbol "n".
//
// Example:
//   auto c = TensorContract::create(
//       {DimensionSymbol{"tokens"}, DimensionExact{64}}, {ElementType::kF32},
//       {ContiguousLayoutConstraint{}}, TensorAccess::kRead, NoAlias{});
#pragma once

#include <compare>
#include <cstdint>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "ferrite/core/element_type.h"
#include "ferrite/core/status.h"

namespace ferrite {

// Variant order is the seed's: Exact, Symbol, Range.
struct DimensionExact {
  uint64_t value = 0;
  friend auto operator<=>(const DimensionExact&, const DimensionExact&) = default;
};
struct DimensionSymbol {
  std::string name;
  friend auto operator<=>(const DimensionSymbol&, const DimensionSymbol&) = default;
};
struct DimensionRange {
  uint64_t minimum = 0;  // inclusive
  uint64_t maximum = 0;  // inclusive
  friend auto operator<=>(const DimensionRange&, const DimensionRange&) = default;
};
using DimensionConstraint = std::variant<DimensionExact, DimensionSymbol, DimensionRange>;

struct StrideExactBytes {
  uint64_t value = 0;
  friend auto operator<=>(const StrideExactBytes&, const StrideExactBytes&) = default;
};
struct StrideSymbol {
  std::string name;
  friend auto operator<=>(const StrideSymbol&, const StrideSymbol&) = default;
};
using StrideConstraint = std::variant<StrideExactBytes, StrideSymbol>;

struct ContiguousLayoutConstraint {
  friend auto operator<=>(const ContiguousLayoutConstraint&,
                          const ContiguousLayoutConstraint&) = default;
};
struct StridedLayoutConstraint {
  std::vector<StrideConstraint> strides;
  friend auto operator<=>(const StridedLayoutConstraint&, const StridedLayoutConstraint&) = default;
};
struct BlockedLayoutConstraint {
  std::vector<uint64_t> block;
  std::vector<uint32_t> axis_order;
  friend auto operator<=>(const BlockedLayoutConstraint&, const BlockedLayoutConstraint&) = default;
};
using LayoutConstraint =
    std::variant<ContiguousLayoutConstraint, StridedLayoutConstraint, BlockedLayoutConstraint>;

enum class TensorAccess : uint8_t { kRead, kWrite, kReadWrite };

struct NoAlias {
  friend auto operator<=>(const NoAlias&, const NoAlias&) = default;
};
struct MayAlias {
  uint32_t tensor_index = 0;  // input ordinal of the same operation
  friend auto operator<=>(const MayAlias&, const MayAlias&) = default;
};
struct MustAlias {
  uint32_t tensor_index = 0;  // input ordinal of the same operation
  friend auto operator<=>(const MustAlias&, const MustAlias&) = default;
};
using AliasPolicy = std::variant<NoAlias, MayAlias, MustAlias>;

std::string_view tensor_access_name(TensorAccess access);  // "read", "write", "read_write"
Result<TensorAccess> parse_tensor_access(std::string_view name);
bool access_reads(TensorAccess access);
bool access_writes(TensorAccess access);

// Seed-style debug renderings used in error messages:
//   Exact(4), Symbol("n"), Range { minimum: 1, maximum: 8 },
//   Contiguous, Strided { strides: [ExactBytes(16), Symbol("s")] }, ...
std::string describe_dimension_constraint(const DimensionConstraint& constraint);
std::string describe_layout_constraint(const LayoutConstraint& constraint);
std::string describe_layout_constraints(const std::vector<LayoutConstraint>& constraints);
std::string describe_alias_policy(const AliasPolicy& alias);

class TensorContract {
 public:
  static Result<TensorContract> create(std::vector<DimensionConstraint> dimensions,
                                       std::set<ElementType> element_types,
                                       std::vector<LayoutConstraint> layouts, TensorAccess access,
                                       AliasPolicy alias);

  const std::vector<DimensionConstraint>& dimensions() const { return dimensions_; }
  const std::set<ElementType>& element_types() const { return element_types_; }
  const std::vector<LayoutConstraint>& layouts() const { return layouts_; }  // sorted, unique
  TensorAccess access() const { return access_; }
  const AliasPolicy& alias() const { return alias_; }
  size_t rank() const { return dimensions_.size(); }

  friend bool operator==(const TensorContract&, const TensorContract&) = default;

 private:
  TensorContract() = default;
  std::vector<DimensionConstraint> dimensions_;
  std::set<ElementType> element_types_;
  std::vector<LayoutConstraint> layouts_;
  TensorAccess access_ = TensorAccess::kRead;
  AliasPolicy alias_ = NoAlias{};
};

}  // namespace ferrite
