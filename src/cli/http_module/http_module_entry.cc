// The entry point of the HTTP module, ferrite-http.so (cli/http_module.h):
// the one symbol the executable looks up. The module holds the HTTP server
// (serve/http_server.cc) and cpp-httplib; every other symbol it needs comes
// from the executable that loads it. The ABI fields are computed here, in
// the module's own compilation (not by a function the executable would
// resolve to its own copy), so that the executable compares two builds.
#include "cli/http_module.h"
#include "ferrite/core/version.h"
#include "ferrite/serve/http_service.h"

extern "C" __attribute__((visibility("default"))) const ferrite::cli::HttpModuleAbi*
ferrite_http_module_v1() {
  static const ferrite::cli::HttpModuleAbi abi{
      .abi_version = ferrite::cli::kHttpModuleAbiVersion,
      .ferrite_version = FERRITE_VERSION_STRING,
      .compiler = __VERSION__,
      .server_options_bytes = sizeof(ferrite::serve::ServerOptions),
      .engine_bytes = sizeof(ferrite::serve::Engine),
      .bind = &ferrite::serve::bind_http_service};
  return &abi;
}
