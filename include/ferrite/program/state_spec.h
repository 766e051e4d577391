// ferrite/program/state_spec.h — program states (KV caches, recurrent state).
//
// Contract (spec §3.3): a state is a value that outlives one node execution.
//   * lifetime: Request | Sequence | Step.
//   * initialization: None (the first consumer must write every byte) | Zero
//     (the runtime zeroes the backing; plan build accepts Zero only for
//     Sequence states).
//   * capacity demand:
//       FixedPerScope — valid iff tensor_min_bytes > 0; minimum = theoretical =
//         tensor_min_bytes.
//       TokenScaled{bytes_per_token, maximum_tokens} — valid iff bytes_per_token
//         >= tensor_min_bytes, maximum_tokens > 0 and their product fits u64;
//         minimum = bytes_per_token, theoretical = bytes_per_token × maximum_tokens.
//
// Example:
//   StateSpec kv{StateId::literal("state.kv.0"), ProgramValueId::literal("value.kv.0"),
//                ProgramTensorSpec{{256, 2, 4, 8}, ElementType::kF32, ContiguousLayout{}},
//                StateLifetime::kSequence, StateCapacityFixedPerScope{},
//                StateInitialization::kZero};
#pragma once

#include <cstdint>
#include <string_view>
#include <variant>

#include "ferrite/core/identity.h"
#include "ferrite/core/tensor_spec.h"

namespace ferrite {

enum class StateLifetime : uint8_t { kRequest, kSequence, kStep };
enum class StateInitialization : uint8_t { kNone, kZero };

struct StateCapacityFixedPerScope {
  friend bool operator==(const StateCapacityFixedPerScope&,
                         const StateCapacityFixedPerScope&) = default;
};
struct StateCapacityTokenScaled {
  uint64_t bytes_per_token = 0;
  uint64_t maximum_tokens = 0;
  friend bool operator==(const StateCapacityTokenScaled&, const StateCapacityTokenScaled&) = default;
};
using StateCapacityDemand = std::variant<StateCapacityFixedPerScope, StateCapacityTokenScaled>;

std::string_view state_lifetime_name(StateLifetime lifetime);  // "request", "sequence", "step"
Result<StateLifetime> parse_state_lifetime(std::string_view name);
std::string_view state_initialization_name(StateInitialization init);  // "none", "zero"
Result<StateInitialization> parse_state_initialization(std::string_view name);

// Checks the demand against the tensor's minimum byte size (see contract above).
Result<void> validate_capacity_demand(const StateCapacityDemand& demand, uint64_t tensor_min_bytes);
// Bytes the smallest runnable scope needs (after validate_capacity_demand).
Result<uint64_t> capacity_minimum_bytes(const StateCapacityDemand& demand,
                                        uint64_t tensor_min_bytes);
// Bytes the largest scope can need.
Result<uint64_t> capacity_theoretical_bytes(const StateCapacityDemand& demand,
                                            uint64_t tensor_min_bytes);

struct StateSpec {
  StateId id;
  ProgramValueId value_id;
  ProgramTensorSpec tensor;
  StateLifetime lifetime = StateLifetime::kSequence;
  StateCapacityDemand capacity_demand = StateCapacityFixedPerScope{};
  StateInitialization initialization = StateInitialization::kNone;

  friend bool operator==(const StateSpec&, const StateSpec&) = default;
};

}  // namespace ferrite
