// http_service_binder (cli/http_module.h): a linked server wins; otherwise
// the module named by FERRITE_HTTP_MODULE is the only one tried, and one
// that is missing or is not Ferrite's is an error naming the path and why.
// (Loading the real module and serving through it: tests/cli/serve_module_test.sh.)
#include <gtest/gtest.h>

#include <link.h>

#include <cstdlib>
#include <string>

#include "cli/http_module.h"

namespace ferrite::cli {
namespace http_module_test {

class HttpModuleTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("FERRITE_HTTP_MODULE");
    use_linked_http_service(nullptr);
  }
};

TEST_F(HttpModuleTest, AMissingModuleIsAnErrorNamingItsPath) {
  setenv("FERRITE_HTTP_MODULE", "/nonexistent/ferrite-http.so", 1);
  auto bind = http_service_binder();
  ASSERT_FALSE(bind);
  EXPECT_EQ(bind.error().code(), ErrorCode::kIo);
  EXPECT_NE(bind.error().message().find("/nonexistent/ferrite-http.so: no such file"),
            std::string::npos)
      << bind.error().message();
}

// The path of a shared library this process has loaded that is not the
// module: libstdc++ (found by name, not by a symbol's address, which a
// sanitizer's interceptor in the executable would answer for).
std::string loaded_library_path() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.find("libstdc++.so") == std::string::npos) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &found);
  return found;
}

TEST_F(HttpModuleTest, ALibraryWithoutTheEntryPointIsRefused) {
  const std::string library = loaded_library_path();
  ASSERT_FALSE(library.empty()) << "libstdc++ is not among the loaded libraries";
  setenv("FERRITE_HTTP_MODULE", library.c_str(), 1);
  auto bind = http_service_binder();
  ASSERT_FALSE(bind);
  EXPECT_NE(bind.error().message().find(library + ": no entry point `ferrite_http_module_v1`"),
            std::string::npos)
      << bind.error().message();
}

TEST_F(HttpModuleTest, ALinkedServerIsUsedWithoutLoadingAnything) {
  setenv("FERRITE_HTTP_MODULE", "/nonexistent/ferrite-http.so", 1);
  use_linked_http_service(&serve::bind_http_service);
  auto bind = http_service_binder();
  ASSERT_TRUE(bind) << bind.error().message();
  EXPECT_EQ(*bind, &serve::bind_http_service);
}

TEST_F(HttpModuleTest, TheExpectedAbiDescribesThisBuild) {
  const HttpModuleAbi abi = expected_http_module_abi();
  EXPECT_EQ(abi.abi_version, kHttpModuleAbiVersion);
  EXPECT_EQ(abi.server_options_bytes, sizeof(serve::ServerOptions));
  EXPECT_EQ(abi.engine_bytes, sizeof(serve::Engine));
  EXPECT_EQ(abi.bind, nullptr);
}

}  // namespace http_module_test
}  // namespace ferrite::cli
