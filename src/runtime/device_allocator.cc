#include "ferrite/runtime/device_allocator.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"

namespace ferrite {

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      alignment_(std::exchange(other.alignment_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    alignment_ = std::exchange(other.alignment_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() noexcept {
  if (owner_ != nullptr && data_ != nullptr) owner_->release(data_, size_, alignment_);
  owner_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  alignment_ = 0;
}

namespace {

class HostAllocator final : public DeviceAllocator {
 public:
  std::string_view memory_name() const override { return "host"; }

  Result<DeviceBuffer> allocate(uint64_t bytes, uint64_t alignment) const override {
    if (!is_power_of_two(alignment)) {
      return make_error(ErrorCode::kInvalidArgument, "alignment {} is not a power of two",
                        alignment);
    }
    // aligned_alloc wants a size that is a multiple of an alignment it supports.
    const uint64_t effective = std::max<uint64_t>(alignment, alignof(std::max_align_t));
    auto size = checked_align_up(std::max<uint64_t>(bytes, 1), effective);
    if (!size) {
      return make_error(ErrorCode::kIo, "cannot allocate {} bytes", bytes);
    }
    void* data = std::aligned_alloc(static_cast<size_t>(effective), static_cast<size_t>(*size));
    if (data == nullptr) {
      return make_error(ErrorCode::kIo, "cannot allocate {} bytes", *size);
    }
    std::memset(data, 0, static_cast<size_t>(*size));
    return adopt(static_cast<std::byte*>(data), *size, alignment);
  }

 private:
  void release(std::byte* data, uint64_t, uint64_t) const noexcept override { std::free(data); }
};

}  // namespace

std::shared_ptr<const DeviceAllocator> host_allocator() {
  static const std::shared_ptr<const DeviceAllocator> host = std::make_shared<HostAllocator>();
  return host;
}

}  // namespace ferrite
