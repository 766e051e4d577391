// src/models/byte_reader.h — bounds-checked little-endian reads over a byte span
// (private to the models stage).
//
// Contract: every read checks the remaining length first and fails with
// ErrorCode::kSerialization; the message is "<source>: offset <N>: <what>: <reason>"
// and the status carries the fields "file" and "offset". Nothing is read past
// the span and nothing is allocated here.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/status.h"

namespace ferrite::models_detail {

inline Error format_error_at(ErrorCode code, std::string_view source, uint64_t offset,
                             std::string_view message,
                             SourceLocation location = SourceLocation::current()) {
  std::string text = fmt::format("{}: offset {}: {}", source, offset, message);
  return make_error(code, std::move(text), location)
      .with_field("file", source)
      .with_field("offset", offset);
}

// The bytes [offset, offset + size) of a mapped model file, for a tensor its
// reader located there; kInvalidArgument "<source>: tensor `name` lies outside
// this file" when they are not all inside `file` (a tensor of another file).
inline Result<std::span<const std::byte>> tensor_bytes(std::span<const std::byte> file,
                                                       std::string_view source,
                                                       std::string_view name, uint64_t offset,
                                                       uint64_t size) {
  const auto end = checked_add(offset, size);
  if (!end || *end > file.size()) {
    return make_error(ErrorCode::kInvalidArgument, "{}: tensor `{}` lies outside this file",
                      source, name)
        .with_field("tensor", name);
  }
  return file.subspan(static_cast<size_t>(offset), static_cast<size_t>(size));
}

// A model file's tensor looked up by name: the bytes of `tensor`, or
// kInvalidArgument "<source>: no tensor named `name`" when it is null.
template <class Tensor, class File>
Result<std::span<const std::byte>> named_tensor_bytes(const File& file, const Tensor* tensor,
                                                      std::string_view source,
                                                      std::string_view name) {
  if (tensor == nullptr) {
    return make_error(ErrorCode::kInvalidArgument, "{}: no tensor named `{}`", source, name)
        .with_field("tensor", name);
  }
  return file.tensor_data(*tensor);
}

class ByteReader {
 public:
  ByteReader(std::span<const std::byte> data, std::string_view source)
      : data_(data), source_(source) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return data_.size(); }
  uint64_t remaining() const { return data_.size() - offset_; }
  std::string_view source() const { return source_; }

  // kSerialization error at `offset` (defaults to the current offset).
  Error error(std::string_view message) const { return error_at(offset_, message); }
  Error error_at(uint64_t offset, std::string_view message) const {
    return format_error_at(ErrorCode::kSerialization, source_, offset, message);
  }

  // Fails unless `count` more bytes are available; names `what`.
  Result<void> require(uint64_t count, std::string_view what) const {
    if (count > remaining()) {
      return error(fmt::format("{}: needs {} bytes but only {} remain (file size {})", what, count,
                               remaining(), data_.size()));
    }
    return {};
  }

  Result<std::span<const std::byte>> bytes(uint64_t count, std::string_view what) {
    FERRITE_RETURN_IF_ERROR(require(count, what));
    auto out = data_.subspan(static_cast<size_t>(offset_), static_cast<size_t>(count));
    offset_ += count;
    return out;
  }

  template <class T>
  Result<T> unsigned_le(std::string_view what) {
    FERRITE_RETURN_IF_ERROR(require(sizeof(T), what));
    T value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      value = static_cast<T>(value |
                             static_cast<T>(static_cast<T>(data_[offset_ + i]) << (8 * i)));
    }
    offset_ += sizeof(T);
    return value;
  }

  Result<uint8_t> u8(std::string_view what) { return unsigned_le<uint8_t>(what); }
  Result<uint16_t> u16(std::string_view what) { return unsigned_le<uint16_t>(what); }
  Result<uint32_t> u32(std::string_view what) { return unsigned_le<uint32_t>(what); }
  Result<uint64_t> u64(std::string_view what) { return unsigned_le<uint64_t>(what); }
  Result<int8_t> i8(std::string_view what) { return signed_le<int8_t, uint8_t>(what); }
  Result<int16_t> i16(std::string_view what) { return signed_le<int16_t, uint16_t>(what); }
  Result<int32_t> i32(std::string_view what) { return signed_le<int32_t, uint32_t>(what); }
  Result<int64_t> i64(std::string_view what) { return signed_le<int64_t, uint64_t>(what); }
  Result<float> f32(std::string_view what) {
    FERRITE_ASSIGN_OR_RETURN(uint32_t bits, u32(what));
    return std::bit_cast<float>(bits);
  }
  Result<double> f64(std::string_view what) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t bits, u64(what));
    return std::bit_cast<double>(bits);
  }

 private:
  template <class S, class U>
  Result<S> signed_le(std::string_view what) {
    FERRITE_ASSIGN_OR_RETURN(U bits, unsigned_le<U>(what));
    return std::bit_cast<S>(bits);
  }

  std::span<const std::byte> data_;
  std::string_view source_;
  uint64_t offset_ = 0;
};

}  // namespace ferrite::models_detail
