// cli/http_module.h — how `ferrite serve` reaches its HTTP server.
//
// Contract: `http_service_binder()` returns the function that binds the
// server (serve::bind_http_service, serve/http_service.h):
//  * the one given to `use_linked_http_service` when a program linked the
//    server itself (ferrite_serve holds it: tests, embedders of the library);
//  * else the one exported by the HTTP module, `ferrite-http.so`, loaded
//    with dlopen the first time: from $FERRITE_HTTP_MODULE when set (only
//    there), else beside the running executable (the build tree), else in
//    the install's lib/ferrite/ folder relative to it (FERRITE_HTTP_MODULE_
//    INSTALL_RELATIVE, set by the build). The module is linked against the
//    executable, whose symbols it uses (the executable exports them), and
//    brings cpp-httplib with libssl, zlib and brotli: only `serve` pays for
//    loading them (about 7 ms of every other command's start-up before).
//  * A module that is missing, does not load, lacks the entry point, or was
//    built for another layout (HttpModuleAbi differs) is an error naming
//    every path tried and the loader's reason; `serve` reports it and exits
//    with an error code, never a crash.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(serve::BindHttpService bind, http_service_binder());
//   FERRITE_ASSIGN_OR_RETURN(auto service, bind(options, *engine));
#pragma once

#include <cstddef>
#include <cstdint>

#include "ferrite/core/status.h"
#include "ferrite/serve/http_service.h"

namespace ferrite::cli {

// What the module's entry point returns: the binder, and what must match
// between the executable and the module for the binder's types to agree.
struct HttpModuleAbi {
  uint32_t abi_version = 0;
  const char* ferrite_version = "";  // FERRITE_VERSION_STRING
  const char* compiler = "";         // __VERSION__
  size_t server_options_bytes = 0;   // sizeof(serve::ServerOptions)
  size_t engine_bytes = 0;           // sizeof(serve::Engine)
  serve::BindHttpService bind = nullptr;
};

inline constexpr uint32_t kHttpModuleAbiVersion = 1;
// The entry point's name (extern "C", returns const HttpModuleAbi*).
inline constexpr const char* kHttpModuleEntryPoint = "ferrite_http_module_v1";

// The ABI this side was compiled with (binder left null).
HttpModuleAbi expected_http_module_abi();

// Use `bind` instead of the module (a program that links the server).
void use_linked_http_service(serve::BindHttpService bind);

Result<serve::BindHttpService> http_service_binder();

}  // namespace ferrite::cli
