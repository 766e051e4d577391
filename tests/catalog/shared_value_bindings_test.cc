// SharedValueBindings: a node's bindings shared by count, read like a vector.
#include "ferrite/catalog/shared_value_bindings.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace shared_value_bindings_test {

using testing::unwrap;

ResolvedValueBinding activation(std::string_view id, ValueBindingRole role, uint64_t offset) {
  return unwrap(ResolvedValueBinding::create(
      ProgramValueId::literal(id), role, 0,
      unwrap(ResolvedTensorSpec::create({4}, ElementType::kF32, ContiguousLayout{})),
      role == ValueBindingRole::kInput ? TensorAccess::kRead : TensorAccess::kWrite, NoAlias{},
      BufferUsage::kActivations, std::nullopt,
      unwrap(ResolvedValueStorage::single(ResourceId::literal("resource.arena"), offset, 16,
                                          ElementType::kF32))));
}

std::vector<ResolvedValueBinding> two_bindings(uint64_t output_offset) {
  return {activation("value.x", ValueBindingRole::kInput, 0),
          activation("value.y", ValueBindingRole::kOutput, output_offset)};
}

TEST(SharedValueBindingsTest, DefaultIsEmpty) {
  const SharedValueBindings none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.begin(), none.end());
  EXPECT_EQ(none, SharedValueBindings(std::vector<ResolvedValueBinding>{}));
  EXPECT_EQ(none, SharedValueBindings(std::shared_ptr<const std::vector<ResolvedValueBinding>>()));
}

TEST(SharedValueBindingsTest, ACopySharesTheBindingsAndReadsLikeTheVector) {
  const auto made = std::make_shared<const std::vector<ResolvedValueBinding>>(two_bindings(16));
  const SharedValueBindings shared(made);
  const SharedValueBindings copy = shared;  // NOLINT(performance-unnecessary-copy-initialization)
  // No binding was copied: both read the resolution's vector.
  EXPECT_EQ(&shared.vector(), made.get());
  EXPECT_EQ(&copy.vector(), made.get());
  EXPECT_EQ(&copy[1], &(*made)[1]);
  ASSERT_EQ(copy.size(), 2u);
  EXPECT_EQ(copy.front().value_id().str(), "value.x");
  EXPECT_EQ(copy.back().value_id().str(), "value.y");
  std::vector<std::string> ids;
  for (const ResolvedValueBinding& b : copy) ids.emplace_back(b.value_id().str());
  EXPECT_EQ(ids, (std::vector<std::string>{"value.x", "value.y"}));
}

TEST(SharedValueBindingsTest, EqualityComparesTheBindingsNotTheOwner) {
  const SharedValueBindings a = two_bindings(16);
  const SharedValueBindings b = two_bindings(16);  // equal, separately made
  const SharedValueBindings moved = two_bindings(32);  // the output elsewhere
  EXPECT_NE(&a.vector(), &b.vector());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, moved);
  EXPECT_NE(a, SharedValueBindings());
}

}  // namespace shared_value_bindings_test
}  // namespace ferrite
