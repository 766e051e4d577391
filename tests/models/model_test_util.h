// tests/models/model_test_util.h — temp directories and little-endian byte
// builders for the model-format reader tests.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "ferrite/core/status.h"

namespace ferrite::testing {

inline std::filesystem::path shared_model_path(std::string_view name) {
  return std::filesystem::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models" / name;
}

// A fresh directory removed at destruction.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "ferrite-models-" + std::to_string(::getpid());
    if (info != nullptr) name += std::string("-") + info->test_suite_name() + "-" + info->name();
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  std::filesystem::path write(std::string_view name, std::span<const std::byte> bytes) const {
    const auto file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return file;
  }
  std::filesystem::path write_text(std::string_view name, std::string_view text) const {
    return write(name, std::as_bytes(std::span(text.data(), text.size())));
  }

 private:
  std::filesystem::path path_;
};

// Appends little-endian values.
class Bytes {
 public:
  Bytes& u8(uint8_t v) { return le(v, 1); }
  Bytes& u16(uint16_t v) { return le(v, 2); }
  Bytes& u32(uint32_t v) { return le(v, 4); }
  Bytes& u64(uint64_t v) { return le(v, 8); }
  Bytes& i32(int32_t v) { return le(std::bit_cast<uint32_t>(v), 4); }
  Bytes& i64(int64_t v) { return le(std::bit_cast<uint64_t>(v), 8); }
  Bytes& f32(float v) { return le(std::bit_cast<uint32_t>(v), 4); }
  Bytes& f64(double v) { return le(std::bit_cast<uint64_t>(v), 8); }
  Bytes& raw(std::string_view text) {
    for (char c : text) data_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  Bytes& zeros(size_t count) {
    data_.insert(data_.end(), count, std::byte{0});
    return *this;
  }
  // GGUF string: u64 length + bytes.
  Bytes& str(std::string_view text) { return u64(text.size()).raw(text); }
  Bytes& pad_to(size_t alignment) {
    while (data_.size() % alignment != 0) data_.push_back(std::byte{0});
    return *this;
  }
  Bytes& append(const Bytes& other) {
    data_.insert(data_.end(), other.data_.begin(), other.data_.end());
    return *this;
  }

  size_t size() const { return data_.size(); }
  std::span<const std::byte> span() const { return data_; }
  std::vector<std::byte>& data() { return data_; }

 private:
  Bytes& le(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) data_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::vector<std::byte> data_;
};

// Asserts an error result with `code` whose message contains `substring`.
template <class T>
::testing::AssertionResult fails_with(const Result<T>& result, ErrorCode code,
                                      std::string_view substring) {
  if (result) return ::testing::AssertionFailure() << "expected an error, got a value";
  const Status& status = result.error();
  if (status.code() != code) {
    return ::testing::AssertionFailure()
           << "code " << error_code_name(status.code()) << " != " << error_code_name(code)
           << ": " << status.message();
  }
  if (status.message().find(substring) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "message `" << status.message() << "` lacks `" << substring << "`";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ferrite::testing
