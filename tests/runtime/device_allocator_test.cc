// The host allocator: aligned, zero-filled, move-only buffers that give their
// memory back once; bad alignments and impossible sizes are errors.
#include "ferrite/runtime/device_allocator.h"

#include <cstring>
#include <utility>

#include <gtest/gtest.h>

namespace ferrite {
namespace device_allocator_test {

TEST(DeviceAllocatorTest, HostBuffersAreAlignedZeroFilledAndRoundedToTheAlignment) {
  auto host = host_allocator();
  EXPECT_EQ(host->memory_name(), "host");
  for (uint64_t alignment : {1u, 64u, 4096u}) {
    auto buffer = host->allocate(100, alignment);
    ASSERT_TRUE(buffer) << buffer.error().to_string();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % alignment, 0u);
    EXPECT_GE(buffer->size(), 100u);
    EXPECT_EQ(buffer->size() % alignment, 0u);
    for (uint64_t i = 0; i < buffer->size(); ++i) ASSERT_EQ(buffer->data()[i], std::byte{0});
  }
  auto empty = host->allocate(0, 64);
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->size(), 64u);
}

TEST(DeviceAllocatorTest, BadAlignmentAndImpossibleSizesAreErrors) {
  auto host = host_allocator();
  auto odd = host->allocate(64, 48);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().code(), ErrorCode::kInvalidArgument);
  auto huge = host->allocate(~uint64_t{0} - 8, 64);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), ErrorCode::kIo);
}

// An allocator that counts what is outstanding, for ownership checks.
class CountingAllocator final : public DeviceAllocator {
 public:
  std::string_view memory_name() const override { return "counted"; }
  Result<DeviceBuffer> allocate(uint64_t bytes, uint64_t alignment) const override {
    if (bytes > (uint64_t{1} << 20)) {
      return make_error(ErrorCode::kInvalidArgument, "too large for the test");
    }
    ++outstanding;
    return adopt(new std::byte[bytes], bytes, alignment);
  }
  mutable int outstanding = 0;

 private:
  void release(std::byte* data, uint64_t, uint64_t) const noexcept override {
    --outstanding;
    delete[] data;
  }
};

TEST(DeviceAllocatorTest, BuffersAreMoveOnlyOwnersThatReleaseOnce) {
  CountingAllocator counting;
  {
    auto a = counting.allocate(16, 1);
    ASSERT_TRUE(a);
    EXPECT_EQ(counting.outstanding, 1);
    DeviceBuffer moved = std::move(*a);
    EXPECT_TRUE(a->empty());
    EXPECT_EQ(moved.size(), 16u);
    auto b = counting.allocate(8, 1);
    ASSERT_TRUE(b);
    EXPECT_EQ(counting.outstanding, 2);
    moved = std::move(*b);  // releases the first buffer
    EXPECT_EQ(counting.outstanding, 1);
    EXPECT_EQ(moved.size(), 8u);
  }
  EXPECT_EQ(counting.outstanding, 0);
  static_assert(!std::is_copy_constructible_v<DeviceBuffer>);
}

}  // namespace device_allocator_test
}  // namespace ferrite
