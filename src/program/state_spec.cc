#include "ferrite/program/state_spec.h"

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"

namespace ferrite {

std::string_view state_lifetime_name(StateLifetime lifetime) {
  switch (lifetime) {
    case StateLifetime::kRequest: return "request";
    case StateLifetime::kSequence: return "sequence";
    case StateLifetime::kStep: return "step";
  }
  return "?";
}

Result<StateLifetime> parse_state_lifetime(std::string_view name) {
  if (name == "request") return StateLifetime::kRequest;
  if (name == "sequence") return StateLifetime::kSequence;
  if (name == "step") return StateLifetime::kStep;
  return invalid_argument(
      fmt::format("unknown state lifetime `{}` (expected request, sequence or step)", name));
}

std::string_view state_initialization_name(StateInitialization init) {
  return init == StateInitialization::kZero ? "zero" : "none";
}

Result<StateInitialization> parse_state_initialization(std::string_view name) {
  if (name == "none") return StateInitialization::kNone;
  if (name == "zero") return StateInitialization::kZero;
  return invalid_argument(
      fmt::format("unknown state initialization `{}` (expected none or zero)", name));
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
