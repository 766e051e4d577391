#include "ferrite/core/version.h"

namespace ferrite {

const char* version_string() { return FERRITE_VERSION_STRING; }

}  // namespace ferrite
