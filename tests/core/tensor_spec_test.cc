#include "ferrite/core/tensor_spec.h"

#include <gtest/gtest.h>

namespace ferrite {
namespace {

TEST(ResolvedTensorSpecTest, ContiguousBytes) {
  auto t = ResolvedTensorSpec::create({2, 3}, ElementType::kF16, ContiguousLayout{});
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->minimum_storage_bytes(), 12u);
}

}  // namespace
}  // namespace ferrite
