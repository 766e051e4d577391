// ferrite/catalog/storage_profile.h — how dynamic (token-scaled) storage is provided.
//
// Contract: a `DynamicStorageProfile` pairs an allocator with the view a
// provider gets of the allocation. Valid combinations (anything else is
// unrepresentable: `create` and `parse` reject it with kInvalidArgument):
//   * LinearArena + Contiguous            text "linear/contiguous"
//   * FixedBlockArena{b} + Contiguous     text "fixed_block:<b>/contiguous"
//   * FixedBlockArena{b} + PagedRegions{b} text "fixed_block:<b>/paged:<b>"
// where b is a non-zero power of two and the paged region size equals the
// arena block size. Profiles are totally ordered (allocator first —
// LinearArena < FixedBlockArena, then by block size — then view, Contiguous
// < PagedRegions); the order is only a canonical sort order, not a
// preference. `parse(to_string(p)) == p`. Numbers in text are plain decimal
// u64 without sign or leading zeros.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto paged, DynamicStorageProfile::parse("fixed_block:65536/paged:65536"));
//   paged.to_string();                                // "fixed_block:65536/paged:65536"
//   DynamicStorageProfile::linear_contiguous() < paged;  // true
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "ferrite/core/status.h"

namespace ferrite {

struct LinearArena {
  friend auto operator<=>(const LinearArena&, const LinearArena&) = default;
};
struct FixedBlockArena {
  uint64_t block_bytes = 0;  // non-zero power of two
  friend auto operator<=>(const FixedBlockArena&, const FixedBlockArena&) = default;
};
using DynamicStorageAllocator = std::variant<LinearArena, FixedBlockArena>;

struct ContiguousView {
  friend auto operator<=>(const ContiguousView&, const ContiguousView&) = default;
};
struct PagedRegionsView {
  uint64_t block_bytes = 0;  // equals the FixedBlockArena block size
  friend auto operator<=>(const PagedRegionsView&, const PagedRegionsView&) = default;
};
using DynamicStorageView = std::variant<ContiguousView, PagedRegionsView>;

class DynamicStorageProfile {
 public:
  static Result<DynamicStorageProfile> create(DynamicStorageAllocator allocator,
                                              DynamicStorageView view);
  // "linear/contiguous" — always valid.
  static DynamicStorageProfile linear_contiguous() {
    return DynamicStorageProfile(LinearArena{}, ContiguousView{});
  }
  // Parses the text form; errors quote the text and name the offending part.
  static Result<DynamicStorageProfile> parse(std::string_view text);

  const DynamicStorageAllocator& allocator() const { return allocator_; }
  const DynamicStorageView& view() const { return view_; }
  bool is_paged() const { return std::holds_alternative<PagedRegionsView>(view_); }

  std::string to_string() const;

  friend auto operator<=>(const DynamicStorageProfile&, const DynamicStorageProfile&) = default;
  friend bool operator==(const DynamicStorageProfile&, const DynamicStorageProfile&) = default;

 private:
  DynamicStorageProfile(DynamicStorageAllocator allocator, DynamicStorageView view)
      : allocator_(allocator), view_(view) {}
  DynamicStorageAllocator allocator_;
  DynamicStorageView view_;
};

}  // namespace ferrite
