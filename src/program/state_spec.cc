#include "ferrite/program/state_spec.h"

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"

namespace ferrite {

constexpr EnumNames<StateLifetime, 3> kStateLifetimeNames{
    "state lifetime",
    {{{StateLifetime::kRequest, "request"}, {StateLifetime::kSequence, "sequence"},
      {StateLifetime::kStep, "step"}}}};
static_assert(kStateLifetimeNames.covers_in_order(StateLifetime::kStep));

std::string_view state_lifetime_name(StateLifetime lifetime) {
  return kStateLifetimeNames.name(lifetime);
}

Result<StateLifetime> parse_state_lifetime(std::string_view name) {
  return kStateLifetimeNames.parse(name);
}

constexpr EnumNames<StateInitialization, 2> kStateInitializationNames{
    "state initialization",
    {{{StateInitialization::kNone, "none"}, {StateInitialization::kZero, "zero"}}}};
static_assert(kStateInitializationNames.covers_in_order(StateInitialization::kZero));

std::string_view state_initialization_name(StateInitialization init) {
  return kStateInitializationNames.name(init);
}

Result<StateInitialization> parse_state_initialization(std::string_view name) {
  return kStateInitializationNames.parse(name);
}

Result<void> validate_capacity_demand(const StateCapacityDemand& demand,
                                      uint64_t tensor_min_bytes) {
  if (std::holds_alternative<StateCapacityFixedPerScope>(demand)) {
    if (tensor_min_bytes == 0) return invalid_plan("fixed state demand requires a non-empty tensor");
    return {};
  }
  const auto& scaled = std::get<StateCapacityTokenScaled>(demand);
  if (scaled.bytes_per_token < tensor_min_bytes) {
    return invalid_plan(fmt::format(
        "token-scaled state demand of {} bytes per token is smaller than its {}-byte tensor",
        scaled.bytes_per_token, tensor_min_bytes));
  }
  if (scaled.maximum_tokens == 0) {
    return invalid_plan("token-scaled state demand requires maximum_tokens > 0");
  }
  if (!checked_mul(scaled.bytes_per_token, scaled.maximum_tokens)) {
    return invalid_plan("token-scaled state demand overflows u64");
  }
  return {};
}

Result<uint64_t> capacity_minimum_bytes(const StateCapacityDemand& demand,
                                        uint64_t tensor_min_bytes) {
  FERRITE_RETURN_IF_ERROR(validate_capacity_demand(demand, tensor_min_bytes));
  if (std::holds_alternative<StateCapacityFixedPerScope>(demand)) return tensor_min_bytes;
  return std::get<StateCapacityTokenScaled>(demand).bytes_per_token;
}

Result<uint64_t> capacity_theoretical_bytes(const StateCapacityDemand& demand,
                                            uint64_t tensor_min_bytes) {
  FERRITE_RETURN_IF_ERROR(validate_capacity_demand(demand, tensor_min_bytes));
  if (std::holds_alternative<StateCapacityFixedPerScope>(demand)) return tensor_min_bytes;
  const auto& scaled = std::get<StateCapacityTokenScaled>(demand);
  return *checked_mul(scaled.bytes_per_token, scaled.maximum_tokens);
}

}  // namespace ferrite
