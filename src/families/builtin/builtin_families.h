// families/builtin/builtin_families.h — every model family built into Ferrite.
//
// Contract: `builtin_families()` returns a registry holding every room
// declared with `ferrite_family(NAME)` in src/families/CMakeLists.txt (the
// build generates the list; each room defines
// `Result<void> register_family_NAME(FamilyRegistry&)`), or the first
// registration error (a name or architecture claimed twice).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(FamilyRegistry families, builtin_families());
//   FERRITE_ASSIGN_OR_RETURN(Checkpoint checkpoint, open_checkpoint(families, path, std::nullopt));
#pragma once

#include "ferrite/families/family_registry.h"

namespace ferrite {

Result<FamilyRegistry> builtin_families();

}  // namespace ferrite
