// tests/format/format_test_util.h — helpers shared by the format tests.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/core/status.h"

namespace ferrite::format_test {

inline std::filesystem::path source_path(std::string_view relative) {
  return std::filesystem::path(FERRITE_SOURCE_DIR) / relative;
}

inline std::string read_source_file(std::string_view relative) {
  std::ifstream in(source_path(relative), std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Asserts `result` failed with `code` and a message that contains the JSON
// path in backticks (and, for kSerialization, the structured field "path").
template <class T>
::testing::AssertionResult FailsAt(const Result<T>& result, ErrorCode code,
                                   std::string_view path) {
  if (result) return ::testing::AssertionFailure() << "expected an error at " << path;
  const Status& status = result.error();
  if (status.code() != code) {
    return ::testing::AssertionFailure()
           << "expected code " << error_code_name(code) << ", got " << status.to_string();
  }
  const std::string quoted = "`" + std::string(path) + "`";
  if (status.message().find(quoted) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks " << quoted << ": " << status.message();
  }
  if (code == ErrorCode::kSerialization) {
    auto it = status.fields().find("path");
    if (it == status.fields().end() || it->second != path) {
      return ::testing::AssertionFailure() << "field path differs from " << path << ": "
                                           << status.message();
    }
  }
  return ::testing::AssertionSuccess();
}

template <class T>
::testing::AssertionResult FailsWith(const Result<T>& result, ErrorCode code,
                                     std::string_view fragment) {
  if (result) return ::testing::AssertionFailure() << "expected an error containing " << fragment;
  const Status& status = result.error();
  if (status.code() != code) {
    return ::testing::AssertionFailure()
           << "expected code " << error_code_name(code) << ", got " << status.to_string();
  }
  if (status.message().find(fragment) == std::string::npos) {
    return ::testing::AssertionFailure() << "message lacks `" << fragment
                                         << "`: " << status.message();
  }
  return ::testing::AssertionSuccess();
}

#define FERRITE_ASSERT_OK(expr)                                          \
  do {                                                                   \
    const auto& ferrite_ok_ = (expr);                                    \
    ASSERT_TRUE(ferrite_ok_) << ferrite_ok_.error().to_string();         \
  } while (false)

}  // namespace ferrite::format_test
