// ferrite/core/json_array.h — a JSON array made from a range, in its order.
//
// Contract: `json_array_of(range, f)` returns the JSON array [f(x) for x in
// range], in the range's iteration order (callers pass ordered containers or
// vectors in program order, so the array is deterministic); f's result must
// convert to nlohmann::json. It replaces the "make an empty array, push each
// element" loop every to_json() would otherwise write out.
//
// Example:
//   json ids = json_array_of(capabilities, [](const CapabilityId& c) { return c.str(); });
#pragma once

#include <utility>

#include <nlohmann/json.hpp>

namespace ferrite {

template <class Range, class F>
nlohmann::json json_array_of(const Range& range, F&& f) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& element : range) out.push_back(f(element));
  return out;
}

// The JSON array of an ordered range of identities, as their strings.
template <class Range>
nlohmann::json json_identity_array(const Range& ids) {
  return json_array_of(ids, [](const auto& id) { return id.str(); });
}

}  // namespace ferrite
