#include "families/builtin/builtin_families.h"

namespace ferrite {

// builtin_family_list.inc is generated from the ferrite_family() lines of
// src/families/CMakeLists.txt: one FERRITE_FAMILY(name) per room.
#define FERRITE_FAMILY(name) Result<void> register_family_##name(FamilyRegistry& registry);
#include "builtin_family_list.inc"
#undef FERRITE_FAMILY

Result<FamilyRegistry> builtin_families() {
  FamilyRegistry registry;
#define FERRITE_FAMILY(name) FERRITE_RETURN_IF_ERROR(register_family_##name(registry));
#include "builtin_family_list.inc"
#undef FERRITE_FAMILY
  return registry;
}

}  // namespace ferrite
