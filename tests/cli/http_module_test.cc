// http_service_binder (cli/http_module.h): a linked server wins; otherwise
// the module named by FERRITE_HTTP_MODULE is the only one tried, and one
// that is missing or is not Ferrite's is an error naming the path and why.
// (Loading the real module and serving through it: tests/cli/serve_module_test.sh.)
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
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

TEST_F(HttpModuleTest, ALibraryWithoutTheEntryPointIsRefused) {
  // A shared library that is not the module: the C library this test runs on.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::strlen), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  setenv("FERRITE_HTTP_MODULE", info.dli_fname, 1);
  auto bind = http_service_binder();
  ASSERT_FALSE(bind);
  EXPECT_NE(bind.error().message().find(std::string(info.dli_fname) +
                                        ": no entry point `ferrite_http_module_v1`"),
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
