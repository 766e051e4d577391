# FerriteStages.cmake — one library per pipeline stage, and a build that
# refuses an upward include.
#
# `ferrite_stage(TARGET SOURCES <dir under src/> [HEADERS <dir under include/>]
#                [DEPS <stage targets>...] [EXTERNAL <imported targets>...])`
# makes TARGET from src/<SOURCES>/*.cc (an INTERFACE library when the folder
# has no sources). What TARGET and its dependents may include is exactly:
#   * the public headers of TARGET: include/<HEADERS> for a stage
#     (`#include "ferrite/core/status.h"`), or, for a room without HEADERS
#     (a provider or a model family), the room's own folder
#     (`#include "providers/cpu_fast/cpu_fast.h"`);
#   * the public headers of the stages in DEPS, and theirs (transitively);
#   * privately, its own src/<SOURCES> folder (`#include "memory/packing_model.h"`).
# Each of these is a directory of symbolic links under the build tree
# (stage_include/TARGET/...), so a header of a stage that TARGET does not
# link is not on its include path at all: an upward include fails to compile
# with "No such file or directory". scripts/check_layers.py checks the same
# rule over the source text (CI runs it), reading the graph from the
# ferrite_stage() calls in src/**/CMakeLists.txt.
#
# Every stage target is appended to the global property FERRITE_STAGE_TARGETS
# in dependency order; `ferrite_lib` links them all.

set_property(GLOBAL PROPERTY FERRITE_STAGE_TARGETS "")

function(_ferrite_stage_link original linkname)
  get_filename_component(parent "${linkname}" DIRECTORY)
  file(MAKE_DIRECTORY "${parent}")
  if(IS_SYMLINK "${linkname}" OR EXISTS "${linkname}")
    file(REMOVE "${linkname}")
  endif()
  file(CREATE_LINK "${original}" "${linkname}" SYMBOLIC)
endfunction()

function(ferrite_stage target)
  cmake_parse_arguments(ARG "" "SOURCES;HEADERS" "DEPS;EXTERNAL" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "ferrite_stage(${target}): SOURCES is required")
  endif()
  set(source_dir "${PROJECT_SOURCE_DIR}/src/${ARG_SOURCES}")
  file(GLOB sources CONFIGURE_DEPENDS "${source_dir}/*.cc")

  set(public_root "${PROJECT_BINARY_DIR}/stage_include/${target}")
  set(private_root "${PROJECT_BINARY_DIR}/stage_private/${target}")
  if(ARG_HEADERS)
    _ferrite_stage_link("${PROJECT_SOURCE_DIR}/include/${ARG_HEADERS}" "${public_root}/${ARG_HEADERS}")
    _ferrite_stage_link("${source_dir}" "${private_root}/${ARG_SOURCES}")
  else()
    _ferrite_stage_link("${source_dir}" "${public_root}/${ARG_SOURCES}")
  endif()

  if(sources)
    add_library(${target} STATIC ${sources})
    target_include_directories(${target} PUBLIC "${public_root}")
    if(ARG_HEADERS)
      target_include_directories(${target} PRIVATE "${private_root}")
    endif()
    target_compile_options(${target} PRIVATE ${FERRITE_WARNINGS})
    target_link_libraries(${target} PUBLIC ${ARG_DEPS} ${ARG_EXTERNAL})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE "${public_root}")
    target_link_libraries(${target} INTERFACE ${ARG_DEPS} ${ARG_EXTERNAL})
  endif()

  set_property(GLOBAL APPEND PROPERTY FERRITE_STAGE_TARGETS ${target})
endfunction()
