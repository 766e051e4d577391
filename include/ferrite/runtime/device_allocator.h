// ferrite/runtime/device_allocator.h — where a plan's resources live.
//
// Contract: a `DeviceAllocator` belongs to the device a provider runs on
// (the registry of kernels carries it, `CpuProviderRegistry::allocator()`);
// the executor obtains every plan resource from it and allocates none
// itself. `allocate(bytes, alignment)` returns a `DeviceBuffer` of at least
// `bytes` bytes (rounded up to a multiple of `alignment`, at least one
// alignment), whose first byte is aligned to `alignment` (a power of two),
// zero-filled, or an error naming the size (a bad alignment is
// InvalidArgument, exhausted memory is Io). The buffer is the only owner of
// its memory: it is move-only and returns the memory to its allocator when
// destroyed, so the allocator must outlive every buffer it hands out
// (holders keep a `std::shared_ptr` to it). `data()` is the address kernels
// of this device read and write; for the host allocator it is ordinary
// host memory, which the executor also writes weights and inputs into.
//
// An allocator for another device derives from DeviceAllocator, implements
// `allocate` (wrapping its memory with `adopt`) and `release`, and is
// declared by its provider (runtime/provider_registry.h).
//
// Example:
//   std::shared_ptr<const DeviceAllocator> host = host_allocator();
//   FERRITE_ASSIGN_OR_RETURN(DeviceBuffer buffer, host->allocate(4096, 64));
//   std::memcpy(buffer.data(), bytes, 16);   // freed when `buffer` goes away
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "ferrite/core/status.h"

namespace ferrite {

class DeviceAllocator;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }
  uint64_t alignment() const { return alignment_; }
  bool empty() const { return data_ == nullptr; }

 private:
  friend class DeviceAllocator;
  DeviceBuffer(const DeviceAllocator* owner, std::byte* data, uint64_t size, uint64_t alignment)
      : owner_(owner), data_(data), size_(size), alignment_(alignment) {}
  void reset() noexcept;

  const DeviceAllocator* owner_ = nullptr;
  std::byte* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t alignment_ = 0;
};

class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // A short name of the memory, for listings: "host".
  virtual std::string_view memory_name() const = 0;
  virtual Result<DeviceBuffer> allocate(uint64_t bytes, uint64_t alignment) const = 0;

 protected:
  // Makes `data` (from this allocator) a buffer that calls `release` once.
  DeviceBuffer adopt(std::byte* data, uint64_t size, uint64_t alignment) const {
    return DeviceBuffer(this, data, size, alignment);
  }

 private:
  friend class DeviceBuffer;
  virtual void release(std::byte* data, uint64_t size, uint64_t alignment) const noexcept = 0;
};

// Host memory: aligned_alloc, zero-filled; one shared instance.
std::shared_ptr<const DeviceAllocator> host_allocator();

}  // namespace ferrite
