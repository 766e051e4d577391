// ferrite/core/version.h — the version of this Ferrite build.
//
// Contract: one source of truth. The top-level CMakeLists.txt reads
// FERRITE_VERSION_MAJOR/MINOR/PATCH from this file for `project(VERSION)`, so
// the installed CMake package (`find_package(Ferrite 0.1 CONFIG)`), the
// pkg-config file, the shared library's SONAME (libferrite.so.MAJOR.MINOR;
// before 1.0 every minor version may break the ABI) and `ferrite --version`
// all say the same. `version_string()` is the version of the library the
// program runs against; FERRITE_VERSION_STRING the one it was compiled with.
//
// Example:
//   if (std::string_view(ferrite::version_string()) != FERRITE_VERSION_STRING)
//     std::fprintf(stderr, "built against %s, running %s\n", FERRITE_VERSION_STRING,
//                  ferrite::version_string());
#pragma once

#define FERRITE_VERSION_MAJOR 0
#define FERRITE_VERSION_MINOR 1
#define FERRITE_VERSION_PATCH 0

#define FERRITE_VERSION_STRINGIFY_(x) #x
#define FERRITE_VERSION_STRINGIFY(x) FERRITE_VERSION_STRINGIFY_(x)
#define FERRITE_VERSION_STRING                                                          \
  FERRITE_VERSION_STRINGIFY(FERRITE_VERSION_MAJOR)                                      \
  "." FERRITE_VERSION_STRINGIFY(FERRITE_VERSION_MINOR) "." FERRITE_VERSION_STRINGIFY( \
      FERRITE_VERSION_PATCH)

namespace ferrite {

// The version of the linked library, e.g. "0.1.0".
const char* version_string();

}  // namespace ferrite
