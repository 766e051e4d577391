# FerriteInstall.cmake — the installable library and package.
#
# `cmake --install build --prefix P` installs:
#   P/bin/ferrite                          the command-line program
#   P/lib/ferrite/ferrite-http.so          its HTTP server, loaded by `ferrite serve`
#   P/include/ferrite/...                  the public headers (include/ferrite)
#   P/lib/libferrite.a                     every stage, provider and family, the C API, one archive
#   P/lib/libferrite.so.MAJOR.MINOR[.PATCH] the same objects as a shared library
#   P/lib/cmake/Ferrite/                   find_package(Ferrite CONFIG): Ferrite::ferrite
#                                          (shared), Ferrite::ferrite_static
#   P/lib/pkgconfig/ferrite.pc             pkg-config --cflags --libs ferrite
# (lib/ is GNUInstallDirs' CMAKE_INSTALL_LIBDIR.) Both libraries are made from
# the objects of the stage libraries (ferrite_stage in FerriteStages.cmake),
# which are position-independent (CMAKE_POSITION_INDEPENDENT_CODE in the
# top-level CMakeLists.txt), so nothing is compiled twice. The stage
# libraries stay the unit of the build and of the layer rule; the installed
# library is their union. Hazard: a stage added without ferrite_stage() would
# be missing from the installed library — tests/install/install_test.sh links
# a program against it to catch that.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_ferrite_objects "")
get_property(_ferrite_stages GLOBAL PROPERTY FERRITE_STAGE_TARGETS)
foreach(_stage IN LISTS _ferrite_stages)
  get_target_property(_type ${_stage} TYPE)
  if(_type STREQUAL "STATIC_LIBRARY")
    list(APPEND _ferrite_objects $<TARGET_OBJECTS:${_stage}>)
  endif()
endforeach()
# The HTTP server's objects, which the serve stage holds as an object
# library (src/CMakeLists.txt says why); on top, the CLI library (the
# model-plan path) and the C API over it.
list(APPEND _ferrite_objects $<TARGET_OBJECTS:ferrite_serve_http> $<TARGET_OBJECTS:ferrite_cli_lib>
                             $<TARGET_OBJECTS:ferrite_capi>)
list(APPEND _ferrite_stages ferrite_serve_http ferrite_cli_lib ferrite_capi)

# What a program using the library needs: the headers and their header-only
# dependencies publicly, the compiled dependencies to link.
function(_ferrite_package_library target kind)
  add_library(${target} ${kind} ${_ferrite_objects})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ferrite)
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PUBLIC nlohmann_json::nlohmann_json fmt::fmt tl::expected
                                         OpenSSL::Crypto Threads::Threads
                                         absl::btree absl::flat_hash_map absl::flat_hash_set
                                  PRIVATE PkgConfig::PCRE2 PkgConfig::HTTPLIB)
  add_dependencies(${target} ${_ferrite_stages})
endfunction()

_ferrite_package_library(ferrite_static STATIC)
set_target_properties(ferrite_static PROPERTIES EXPORT_NAME ferrite_static)
set(_ferrite_installed ferrite_static)
if(CMAKE_POSITION_INDEPENDENT_CODE)
  _ferrite_package_library(ferrite_shared SHARED)
  set_target_properties(ferrite_shared PROPERTIES
    EXPORT_NAME ferrite
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  list(APPEND _ferrite_installed ferrite_shared)
endif()

install(TARGETS ferrite
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The HTTP module of `ferrite serve`, where the executable looks for it
# (cli/http_module.h: FERRITE_HTTP_MODULE_INSTALL_RELATIVE).
install(TARGETS ferrite_http
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ferrite)
install(TARGETS ${_ferrite_installed} EXPORT FerriteTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ferrite
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

set(_ferrite_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Ferrite)
install(EXPORT FerriteTargets NAMESPACE Ferrite:: DESTINATION ${_ferrite_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/FerriteConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/FerriteConfig.cmake
  INSTALL_DESTINATION ${_ferrite_cmake_dir})
# 0.x: a minor version may break the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/FerriteConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/FerriteConfig.cmake
              ${PROJECT_BINARY_DIR}/package/FerriteConfigVersion.cmake
  DESTINATION ${_ferrite_cmake_dir})

# `cmake --install --prefix P` chooses the prefix after configuration, so the
# .pc file locates it relative to itself (pkg-config's ${pcfiledir}).
file(RELATIVE_PATH FERRITE_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(${PROJECT_SOURCE_DIR}/cmake/ferrite.pc.in ${PROJECT_BINARY_DIR}/package/ferrite.pc
  @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/ferrite.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
