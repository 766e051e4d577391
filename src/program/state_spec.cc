#include "ferrite/program/state_spec.h"

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"

namespace ferrite {

constexpr EnumNames<StateLifetime, 3> kStateLifetimeNames{
    "state lifetime",
    {{{StateLifetime::kRequest, "request"}, {StateLifetime::kSequence, "sequence"},
      {StateLifetime::kStep, "step"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kStateLifetimeNames, StateLifetime::kStep,
                            state_lifetime_name, parse_state_lifetime)

constexpr EnumNames<StateInitialization, 2> kStateInitializationNames{
    "state initialization",
    {{{StateInitialization::kNone, "none"}, {StateInitialization::kZero, "zero"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kStateInitializationNames, StateInitialization::kZero,
                            state_initialization_name, parse_state_initialization)

Result<void> validate_capacity_demand(const StateCapacityDemand& demand,
                                      uint64_t tensor_min_bytes) {
  if (std::holds_alternative<StateCapacityFixedPerScope>(demand)) {
    if (tensor_min_bytes == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "fixed state demand requires a non-empty tensor");
    }
    return {};
  }
  const auto& scaled = std::get<StateCapacityTokenScaled>(demand);
  if (scaled.bytes_per_token < tensor_min_bytes) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "token-scaled state demand of {} bytes per token is smaller than its {}-byte tensor",
        scaled.bytes_per_token, tensor_min_bytes);
  }
  if (scaled.maximum_tokens == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "token-scaled state demand requires maximum_tokens > 0");
  }
  if (!checked_mul(scaled.bytes_per_token, scaled.maximum_tokens)) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "token-scaled state demand overflows u64");
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
