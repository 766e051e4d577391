// cli/http_module.h: finding and loading the HTTP module.
#include "cli/http_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/version.h"

#ifndef FERRITE_HTTP_MODULE_INSTALL_RELATIVE
#define FERRITE_HTTP_MODULE_INSTALL_RELATIVE "../lib/ferrite/ferrite-http.so"
#endif

namespace ferrite::cli {
namespace {

constexpr const char* kModuleFileName = "ferrite-http.so";

struct Loaded {
  std::mutex mutex;
  serve::BindHttpService linked = nullptr;
  serve::BindHttpService loaded = nullptr;
};

Loaded& loaded() {
  static Loaded* state = new Loaded();  // never destroyed: a module stays loaded
  return *state;
}

std::vector<std::filesystem::path> candidate_paths() {
  if (const char* explicit_path = std::getenv("FERRITE_HTTP_MODULE");
      explicit_path != nullptr && *explicit_path != '\0') {
    return {explicit_path};
  }
  std::error_code ec;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path folder = executable.parent_path();
  return {folder / kModuleFileName,
          (folder / FERRITE_HTTP_MODULE_INSTALL_RELATIVE).lexically_normal()};
}

std::string describe(const HttpModuleAbi& abi) {
  return fmt::format("ABI {}, Ferrite {}, compiler {}, ServerOptions {} B, Engine {} B",
                     abi.abi_version, abi.ferrite_version, abi.compiler,
                     abi.server_options_bytes, abi.engine_bytes);
}

bool same_abi(const HttpModuleAbi& a, const HttpModuleAbi& b) {
  return a.abi_version == b.abi_version && std::string_view(a.ferrite_version) == b.ferrite_version &&
         std::string_view(a.compiler) == b.compiler &&
         a.server_options_bytes == b.server_options_bytes && a.engine_bytes == b.engine_bytes;
}

// Loads one candidate; `why` says why not.
serve::BindHttpService load(const std::filesystem::path& path, std::string& why) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    why = "no such file";
    return nullptr;
  }
  // RTLD_NOW: a symbol the executable lacks is reported here, not mid-request.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    why = error != nullptr ? error : "dlopen failed";
    return nullptr;
  }
  using Entry = const HttpModuleAbi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kHttpModuleEntryPoint));
  const HttpModuleAbi* abi = entry != nullptr ? entry() : nullptr;
  const HttpModuleAbi expected = expected_http_module_abi();
  if (abi == nullptr) {
    why = fmt::format("no entry point `{}`", kHttpModuleEntryPoint);
  } else if (!same_abi(*abi, expected) || abi->bind == nullptr) {
    why = fmt::format("built for another executable ({}; this one: {})", describe(*abi),
                      describe(expected));
  } else {
    return abi->bind;  // the handle stays open for the life of the process
  }
  dlclose(handle);
  return nullptr;
}

}  // namespace

HttpModuleAbi expected_http_module_abi() {
  return HttpModuleAbi{.abi_version = kHttpModuleAbiVersion,
                       .ferrite_version = FERRITE_VERSION_STRING,
                       .compiler = __VERSION__,
                       .server_options_bytes = sizeof(serve::ServerOptions),
                       .engine_bytes = sizeof(serve::Engine),
                       .bind = nullptr};
}

void use_linked_http_service(serve::BindHttpService bind) {
  std::lock_guard lock(loaded().mutex);
  loaded().linked = bind;
}

Result<serve::BindHttpService> http_service_binder() {
  Loaded& state = loaded();
  std::lock_guard lock(state.mutex);
  if (state.linked != nullptr) return state.linked;
  if (state.loaded != nullptr) return state.loaded;
  std::vector<std::string> tried;
  for (const std::filesystem::path& path : candidate_paths()) {
    std::string why;
    if (serve::BindHttpService bind = load(path, why)) {
      state.loaded = bind;
      return bind;
    }
    tried.push_back(fmt::format("{}: {}", path.string(), why));
  }
  if (tried.empty()) tried.emplace_back("(the executable's folder is unknown: /proc/self/exe)");
  return make_error(ErrorCode::kIo,
                    "`serve` needs its HTTP module, {}, which is built (CMake target "
                    "`ferrite_http`) and installed with the `ferrite` executable; none could be "
                    "loaded: {}",
                    kModuleFileName, fmt::join(tried, "; "))
      .with_field("module", kModuleFileName);
}

}  // namespace ferrite::cli
