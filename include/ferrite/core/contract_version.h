// ferrite/core/contract_version.h — versions of operations, providers, schemas.
//
// Contract: `a.satisfies(required)` iff the majors are equal and a.minor >=
// required.minor. Major 0 means "unstable" and is rejected wherever a stable
// contract is required (`is_stable()`).
//
// Example:
//   ContractVersion available{1, 2};
//   available.satisfies({1, 0});  // true
//   available.satisfies({2, 0});  // false
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace ferrite {

struct ContractVersion {
  uint16_t major = 0;
  uint16_t minor = 0;

  bool satisfies(const ContractVersion& required) const {
    return major == required.major && minor >= required.minor;
  }
  bool is_stable() const { return major != 0; }
  std::string to_string() const { return std::to_string(major) + "." + std::to_string(minor); }

  friend auto operator<=>(const ContractVersion&, const ContractVersion&) = default;
};

}  // namespace ferrite
