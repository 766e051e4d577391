#include "ferrite/catalog/value_storage.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace value_storage_test {

using ::testing::HasSubstr;

ResourceId rid(std::string_view id) { return ResourceId::literal(id); }
WeightId wid(std::string_view id) { return WeightId::literal(id); }

ResolvedStorageComponent part(std::string_view component, std::string_view resource,
                              uint64_t offset, uint64_t length,
                              ElementType type = ElementType::kF32) {
  return ResolvedStorageComponent{wid(component), rid(resource), offset, length, type};
}

template <class T>
void expect_plan_error(const Result<T>& result, std::initializer_list<std::string_view> needles) {
  ASSERT_FALSE(result.has_value()) << "expected an error containing " << *needles.begin();
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan) << result.error().to_string();
  for (std::string_view needle : needles) {
    EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
  }
}

TEST(ValueStorageTest, BufferUsageWireNames) {
  const std::vector<std::pair<BufferUsage, std::string_view>> names = {
      {BufferUsage::kWeights, "weights"},       {BufferUsage::kActivations, "activations"},
      {BufferUsage::kState, "state"},           {BufferUsage::kPersistent, "persistent"},
      {BufferUsage::kBinding, "binding"},       {BufferUsage::kScratch, "scratch"},
      {BufferUsage::kTransfer, "transfer"}};
  for (const auto& [usage, name] : names) {
    EXPECT_EQ(buffer_usage_name(usage), name);
    EXPECT_EQ(parse_buffer_usage(name).value(), usage);
  }
  auto unknown = parse_buffer_usage("Weights");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(unknown.error().message(), HasSubstr("`Weights`"));
}

TEST(ValueStorageTest, ComponentCreateAcceptsAlignedRange) {
  auto component = ResolvedStorageComponent::create(std::nullopt, rid("resource.a"), 8, 16,
                                                    ElementType::kF32);
  ASSERT_TRUE(component) << component.error().to_string();
  EXPECT_EQ(component->offset_bytes, 8u);
  EXPECT_EQ(component->length_bytes, 16u);
}

TEST(ValueStorageTest, ComponentRejectsZeroLength) {
  expect_plan_error(ResolvedStorageComponent::create(wid("weight.c"), rid("resource.a"), 0, 0,
                                                     ElementType::kF32),
                    {"`weight.c`", "`resource.a`", "zero length"});
}

TEST(ValueStorageTest, ComponentRejectsRangeOverflow) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  expect_plan_error(ResolvedStorageComponent::create(std::nullopt, rid("resource.a"), max - 3, 8,
                                                     ElementType::kU8),
                    {"`resource.a`", "overflows u64"});
}

TEST(ValueStorageTest, ComponentRejectsMisalignedOffset) {
  expect_plan_error(ResolvedStorageComponent::create(std::nullopt, rid("resource.a"), 2, 16,
                                                     ElementType::kF32),
                    {"`resource.a`", "offset 2", "4-byte f32"});
}

TEST(ValueStorageTest, ComponentRejectsPartialElementLength) {
  expect_plan_error(ResolvedStorageComponent::create(std::nullopt, rid("resource.a"), 0, 6,
                                                     ElementType::kF32),
                    {"`resource.a`", "length 6"});
}

TEST(ValueStorageTest, SingleHasOneUnnamedComponent) {
  auto storage = ResolvedValueStorage::single(rid("resource.a"), 64, 32, ElementType::kF16);
  ASSERT_TRUE(storage) << storage.error().to_string();
  ASSERT_EQ(storage->components().size(), 1u);
  EXPECT_FALSE(storage->components()[0].component_id.has_value());
  EXPECT_EQ(storage->total_physical_bytes(), 32u);
  EXPECT_EQ(storage->resource_ids(), (std::set<ResourceId>{rid("resource.a")}));
}

TEST(ValueStorageTest, MoveTakesTheStateAndTheMovedFromCanBeAssignedTo) {
  auto storage = ResolvedValueStorage::single(rid("resource.a"), 64, 32, ElementType::kF16);
  ASSERT_TRUE(storage) << storage.error().to_string();
  const ResolvedValueStorage copy = *storage;
  ResolvedValueStorage moved = std::move(*storage);
  EXPECT_EQ(moved, copy);
  EXPECT_EQ(moved.canonical(), copy.canonical());
  // The moved-from storage may be assigned to (value_storage.h).
  *storage = copy;
  EXPECT_EQ(*storage, copy);
  auto other = ResolvedValueStorage::single(rid("resource.b"), 0, 8, ElementType::kU8);
  ASSERT_TRUE(other) << other.error().to_string();
  moved = std::move(*other);
  EXPECT_EQ(moved.resource_ids(), (std::set<ResourceId>{rid("resource.b")}));
  *other = std::move(moved);
  EXPECT_EQ(other->total_physical_bytes(), 8u);
  EXPECT_EQ(copy.total_physical_bytes(), 32u);
}

TEST(ValueStorageTest, SingleValidatesItsComponent) {
  expect_plan_error(ResolvedValueStorage::single(rid("resource.a"), 1, 4, ElementType::kF32),
                    {"`resource.a`", "offset 1"});
}

TEST(ValueStorageTest, CompositeSortsByComponentResourceOffset) {
  auto storage = ResolvedValueStorage::composite({part("weight.b", "resource.a", 0, 16),
                                                  part("weight.a", "resource.z", 0, 8),
                                                  part("weight.c", "resource.a", 16, 4)});
  ASSERT_TRUE(storage) << storage.error().to_string();
  const auto& components = storage->components();
  ASSERT_EQ(components.size(), 3u);
  EXPECT_EQ(*components[0].component_id, wid("weight.a"));
  EXPECT_EQ(*components[1].component_id, wid("weight.b"));
  EXPECT_EQ(*components[2].component_id, wid("weight.c"));
  EXPECT_EQ(storage->total_physical_bytes(), 28u);
  EXPECT_EQ(storage->resource_ids(), (std::set<ResourceId>{rid("resource.a"), rid("resource.z")}));
}

TEST(ValueStorageTest, CompositeRequiresComponentIds) {
  std::vector<ResolvedStorageComponent> one{
      ResolvedStorageComponent{std::nullopt, rid("resource.a"), 0, 4, ElementType::kF32}};
  expect_plan_error(ResolvedValueStorage::composite(one), {"composite", "`resource.a`"});
}

TEST(ValueStorageTest, RejectsEmpty) {
  expect_plan_error(ResolvedValueStorage::create({}), {"no components"});
}

TEST(ValueStorageTest, MultipleComponentsAllNeedIds) {
  expect_plan_error(
      ResolvedValueStorage::create(
          {part("weight.a", "resource.a", 0, 4),
           ResolvedStorageComponent{std::nullopt, rid("resource.b"), 0, 4, ElementType::kF32}}),
      {"2 components", "`resource.b`", "no component id"});
}

TEST(ValueStorageTest, RejectsInvalidComponentInList) {
  expect_plan_error(ResolvedValueStorage::create({part("weight.a", "resource.a", 0, 4),
                                                  part("weight.b", "resource.b", 0, 0)}),
                    {"`weight.b`", "zero length"});
}

TEST(ValueStorageTest, RejectsDuplicateComponentIds) {
  expect_plan_error(ResolvedValueStorage::create({part("weight.a", "resource.a", 0, 4),
                                                  part("weight.a", "resource.b", 0, 4)}),
                    {"repeats component id `weight.a`"});
}

TEST(ValueStorageTest, RejectsOverlapWithinOneResource) {
  expect_plan_error(ResolvedValueStorage::create({part("weight.a", "resource.a", 0, 16),
                                                  part("weight.b", "resource.a", 12, 8)}),
                    {"overlap in resource `resource.a`", "`weight.a`", "`weight.b`"});
  // A range nested inside an earlier, longer one is caught too.
  expect_plan_error(ResolvedValueStorage::create({part("weight.a", "resource.a", 0, 64),
                                                  part("weight.b", "resource.a", 16, 4),
                                                  part("weight.c", "resource.a", 32, 4)}),
                    {"overlap in resource `resource.a`"});
  // Same offsets in different resources, and touching ranges, are fine.
  EXPECT_TRUE(ResolvedValueStorage::create({part("weight.a", "resource.a", 0, 16),
                                            part("weight.b", "resource.b", 0, 16),
                                            part("weight.c", "resource.a", 16, 16)}));
}

TEST(ValueStorageTest, RejectsTotalOverflow) {
  const uint64_t big = uint64_t{1} << 63;
  expect_plan_error(
      ResolvedValueStorage::create({part("weight.a", "resource.a", 0, big, ElementType::kU8),
                                    part("weight.b", "resource.b", 0, big, ElementType::kU8)}),
      {"total byte size overflows u64", "`weight.b`"});
}

TEST(ValueStorageTest, OverlapsMeansSameResourceAndIntersectingBytes) {
  auto a = ResolvedValueStorage::single(rid("resource.a"), 0, 16, ElementType::kF32).value();
  auto b = ResolvedValueStorage::single(rid("resource.a"), 12, 8, ElementType::kF32).value();
  auto touching = ResolvedValueStorage::single(rid("resource.a"), 16, 8, ElementType::kF32).value();
  auto other = ResolvedValueStorage::single(rid("resource.b"), 0, 16, ElementType::kF32).value();
  EXPECT_TRUE(a.overlaps(b));
  EXPECT_TRUE(b.overlaps(a));
  EXPECT_TRUE(a.overlaps(a));
  EXPECT_FALSE(a.overlaps(touching));
  EXPECT_FALSE(a.overlaps(other));
  auto composite = ResolvedValueStorage::composite({part("weight.x", "resource.b", 8, 4),
                                                    part("weight.y", "resource.c", 0, 4)})
                       .value();
  EXPECT_TRUE(composite.overlaps(other));
  EXPECT_FALSE(composite.overlaps(a));
}

TEST(ValueStorageTest, EqualityAndJson) {
  auto a = ResolvedValueStorage::composite({part("weight.b", "resource.a", 0, 16),
                                            part("weight.a", "resource.a", 16, 8)})
               .value();
  auto b = ResolvedValueStorage::composite({part("weight.a", "resource.a", 16, 8),
                                            part("weight.b", "resource.a", 0, 16)})
               .value();
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.to_json(), nlohmann::json::parse(R"({"components":[
      {"component_id":"weight.a","resource_id":"resource.a","offset_bytes":16,"length_bytes":8,"element_type":"f32"},
      {"component_id":"weight.b","resource_id":"resource.a","offset_bytes":0,"length_bytes":16,"element_type":"f32"}]})"));
  auto single = ResolvedValueStorage::single(rid("resource.a"), 0, 2, ElementType::kU8).value();
  EXPECT_TRUE(single.to_json()["components"][0]["component_id"].is_null());
  EXPECT_NE(single, a);
}

// The bytes are written by whichever thread reads first: eight threads
// reading copies of one storage at once all get the one text.
TEST(ValueStorageTest, CanonicalBytesReadOnManyThreadsAtOnceAreWrittenOnce) {
  const auto storage = ResolvedValueStorage::composite({part("weight.b", "resource.b", 64, 16),
                                                        part("weight.a", "resource.a", 16, 8)})
                           .value();
  const std::string expected = storage.to_json().dump();
  std::vector<const char*> seen(8, nullptr);
  std::vector<std::string> texts(8);
  {
    std::vector<std::thread> readers;
    for (size_t i = 0; i < seen.size(); ++i) {
      readers.emplace_back([&, i, copy = storage] {
        const std::string_view bytes = copy.canonical();
        seen[i] = bytes.data();
        texts[i] = std::string(bytes);
      });
    }
    for (auto& reader : readers) reader.join();
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(texts[i], expected) << i;
    EXPECT_EQ(seen[i], storage.canonical().data()) << i;
  }
}

TEST(ValueStorageTest, CanonicalBytesAreTheCanonicalDumpAndCopiesShareThem) {
  // Overlapping resources, several components, and a single unnamed one: the
  // bytes written once, by the first reader, are what the canonical dump of
  // to_json() is, byte for byte (estimator inputs and plans hash them).
  const std::vector<ResolvedValueStorage> storages = {
      ResolvedValueStorage::composite({part("weight.b", "resource.b", 64, 16),
                                       part("weight.a", "resource.a", 16, 8, ElementType::kU8),
                                       part("weight.c", "resource.a", 0, 16)})
          .value(),
      ResolvedValueStorage::single(rid("resource/activation/sha256/ab"), 4096, 1024,
                                   ElementType::kF16)
          .value()};
  for (const ResolvedValueStorage& storage : storages) {
    EXPECT_EQ(storage.canonical(), storage.to_json().dump());
    const ResolvedValueStorage copy = storage;  // NOLINT(performance-unnecessary-copy-initialization)
    EXPECT_EQ(copy.canonical().data(), storage.canonical().data());
    EXPECT_EQ(&copy.components(), &storage.components());
    EXPECT_EQ(copy, storage);
  }
  // Equal components made apart are equal, though they share nothing.
  const auto again = ResolvedValueStorage::single(rid("resource/activation/sha256/ab"), 4096,
                                                  1024, ElementType::kF16)
                         .value();
  EXPECT_NE(again.canonical().data(), storages[1].canonical().data());
  EXPECT_EQ(again, storages[1]);
  EXPECT_NE(again, storages[0]);
}

}  // namespace value_storage_test
}  // namespace ferrite
