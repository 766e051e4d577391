#include "ferrite/catalog/storage_profile.h"

#include <optional>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/text.h"

namespace ferrite {
namespace {

constexpr std::string_view kProfileForms =
    "linear/contiguous, fixed_block:<bytes>/contiguous or fixed_block:<bytes>/paged:<bytes>";

}  // namespace

Result<DynamicStorageProfile> DynamicStorageProfile::create(DynamicStorageAllocator allocator,
                                                            DynamicStorageView view) {
  if (const auto* fixed = std::get_if<FixedBlockArena>(&allocator)) {
    if (!is_power_of_two(fixed->block_bytes)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "fixed-block arena block size {} is not a non-zero power of two",
                        fixed->block_bytes);
    }
    if (const auto* paged = std::get_if<PagedRegionsView>(&view);
        paged && paged->block_bytes != fixed->block_bytes) {
      return make_error(
          ErrorCode::kInvalidArgument,
          "paged view region size {} differs from the fixed-block arena block size {}",
          paged->block_bytes, fixed->block_bytes);
    }
  } else if (const auto* paged = std::get_if<PagedRegionsView>(&view)) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "a paged view (region size {}) requires a fixed-block arena, not a linear arena",
        paged->block_bytes);
  }
  return DynamicStorageProfile(allocator, view);
}

Result<DynamicStorageProfile> DynamicStorageProfile::parse(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    return make_error(ErrorCode::kInvalidArgument,
                      "storage profile `{}` is invalid: missing `/` between allocator and view "
                      "(expected {})",
                      text, kProfileForms)
        .with_field("profile", text);
  }
  const std::string_view allocator_text = text.substr(0, slash);
  const std::string_view view_text = text.substr(slash + 1);

  DynamicStorageAllocator allocator = LinearArena{};
  constexpr std::string_view kFixedPrefix = "fixed_block:";
  if (allocator_text == "linear") {
    allocator = LinearArena{};
  } else if (allocator_text.starts_with(kFixedPrefix)) {
    const auto bytes = parse_decimal_u64(allocator_text.substr(kFixedPrefix.size()));
    if (!bytes) {
      return make_error(ErrorCode::kInvalidArgument,
                        "storage profile `{}` is invalid: block size `{}` is not a plain decimal "
                        "u64 (expected {})",
                        text, allocator_text.substr(kFixedPrefix.size()), kProfileForms)
          .with_field("profile", text);
    }
    allocator = FixedBlockArena{*bytes};
  } else {
    return make_error(ErrorCode::kInvalidArgument,
                      "storage profile `{}` is invalid: unknown allocator `{}` (expected {})", text,
                      allocator_text, kProfileForms)
        .with_field("profile", text);
  }

  DynamicStorageView view = ContiguousView{};
  constexpr std::string_view kPagedPrefix = "paged:";
  if (view_text == "contiguous") {
    view = ContiguousView{};
  } else if (view_text.starts_with(kPagedPrefix)) {
    const auto bytes = parse_decimal_u64(view_text.substr(kPagedPrefix.size()));
    if (!bytes) {
      return make_error(ErrorCode::kInvalidArgument,
                        "storage profile `{}` is invalid: region size `{}` is not a plain decimal "
                        "u64 (expected {})",
                        text, view_text.substr(kPagedPrefix.size()), kProfileForms)
          .with_field("profile", text);
    }
    view = PagedRegionsView{*bytes};
  } else {
    return make_error(ErrorCode::kInvalidArgument,
                      "storage profile `{}` is invalid: unknown view `{}` (expected {})", text,
                      view_text, kProfileForms)
        .with_field("profile", text);
  }

  auto profile = create(allocator, view);
  if (!profile) {
    return make_error(ErrorCode::kInvalidArgument,
                      "storage profile `{}` is invalid: {} (expected {})", text,
                      profile.error().message(), kProfileForms)
        .with_field("profile", text);
  }
  return *profile;
}

std::string DynamicStorageProfile::to_string() const {
  std::string allocator = std::holds_alternative<LinearArena>(allocator_)
                              ? std::string("linear")
                              : fmt::format("fixed_block:{}",
                                            std::get<FixedBlockArena>(allocator_).block_bytes);
  std::string view = std::holds_alternative<ContiguousView>(view_)
                         ? std::string("contiguous")
                         : fmt::format("paged:{}", std::get<PagedRegionsView>(view_).block_bytes);
  return allocator + "/" + view;
}

}  // namespace ferrite
