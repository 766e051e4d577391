// ferrite/memory/value_classes.h — equivalence classes of values (union-find).
//
// Contract: `ValueClasses` joins value ids into classes (aliases that share
// storage); `find` returns the class representative, which is always the
// smallest id of the class, so results do not depend on the order of joins.
// Finds compress paths iteratively: alias chains of any length are safe.
//
// Example:
//   ValueClasses classes;
//   classes.join(output, input);
//   classes.find(output) == classes.find(input);  // true
#pragma once

#include <map>

#include "ferrite/core/identity.h"

namespace ferrite {

class ValueClasses {
 public:
  ProgramValueId find(const ProgramValueId& id);
  void join(const ProgramValueId& a, const ProgramValueId& b);

 private:
  std::map<ProgramValueId, ProgramValueId> parent_;
};

}  // namespace ferrite
