// Named providers: names are checked, a selection takes names in preference
// order, adds fallbacks, registers the kernels of every chosen provider with
// their shared allocator, records a preference only when there is a choice,
// and unknown names list what is registered.
#include "ferrite/runtime/provider_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace provider_registry_test {

using ::testing::HasSubstr;

// A provider whose kernels are recorded in `added` (by name) when registered.
NamedProvider fake(std::string name, std::vector<std::string> fallbacks,
                   std::vector<std::string>* added,
                   std::shared_ptr<const DeviceAllocator> allocator = host_allocator()) {
  const std::string prefix = "provider.test." + name;
  return NamedProvider{
      .name = name,
      .id_prefix = prefix,
      .summary = "test provider " + name,
      .allocator = std::move(allocator),
      .fallbacks = std::move(fallbacks),
      .add_kernels = [added, name](CpuProviderRegistry&, const ProviderSettings&) -> Result<void> {
        added->push_back(name);
        return {};
      },
      .instruction_set = [](const ProviderSettings& s) -> Result<std::string> {
        return s.isa.value_or("portable");
      },
      .describe = [name](const ProviderSettings& s) -> Result<std::string> {
        return name + " x" + std::to_string(s.threads);
      }};
}

TEST(ProviderRegistryTest, NamesAreCheckedAndUnique) {
  std::vector<std::string> added;
  ProviderRegistry registry;
  ASSERT_TRUE(registry.add(fake("fast", {}, &added)));
  EXPECT_FALSE(registry.add(fake("fast", {}, &added)));
  EXPECT_FALSE(registry.add(fake("Fast", {}, &added)));
  EXPECT_FALSE(registry.add(fake("a,b", {}, &added)));
  EXPECT_FALSE(registry.add(fake("", {}, &added)));
  NamedProvider incomplete = fake("gpu", {}, &added);
  incomplete.add_kernels = nullptr;
  EXPECT_FALSE(registry.add(std::move(incomplete)));
  EXPECT_EQ(registry.names(), std::vector<std::string>{"fast"});
  ASSERT_NE(registry.find("fast"), nullptr);
  EXPECT_EQ(registry.find("slow"), nullptr);
}

TEST(ProviderRegistryTest, SelectionAddsFallbacksInPreferenceOrder) {
  std::vector<std::string> added;
  ProviderRegistry registry;
  ASSERT_TRUE(registry.add(fake("fast", {"reference"}, &added)));
  ASSERT_TRUE(registry.add(fake("tiled", {"fast"}, &added)));
  ASSERT_TRUE(registry.add(fake("reference", {}, &added)));
  const std::vector<std::string> names{"tiled"};
  auto chosen = registry.select(names, ProviderSettings{.threads = 3, .isa = std::nullopt});
  ASSERT_TRUE(chosen) << chosen.error().to_string();
  EXPECT_EQ(added, (std::vector<std::string>{"tiled", "fast", "reference"}));
  EXPECT_EQ(chosen->description, "tiled x3");
  EXPECT_EQ(chosen->kernels.allocator(), host_allocator());

  added.clear();
  const std::vector<std::string> both{"reference", "fast"};
  auto explicit_order = registry.select(both, {});
  ASSERT_TRUE(explicit_order);
  EXPECT_EQ(added, (std::vector<std::string>{"reference", "fast"}));
}

TEST(ProviderRegistryTest, UnknownRepeatedAndEmptyChoicesAreErrors) {
  std::vector<std::string> added;
  ProviderRegistry registry;
  ASSERT_TRUE(registry.add(fake("fast", {}, &added)));
  ASSERT_TRUE(registry.add(fake("reference", {}, &added)));
  const std::vector<std::string> unknown{"gpu"};
  auto missing = registry.select(unknown, {});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(missing.error().message(),
              HasSubstr("unknown provider `gpu` (registered: fast, reference)"));
  const std::vector<std::string> twice{"fast", "fast"};
  EXPECT_FALSE(registry.select(twice, {}));
  EXPECT_FALSE(registry.select(std::vector<std::string>{}, {}));
}

TEST(ProviderRegistryTest, ProvidersOfDifferentMemoryCannotBeChosenTogether) {
  class OtherMemory final : public DeviceAllocator {
   public:
    std::string_view memory_name() const override { return "other"; }
    Result<DeviceBuffer> allocate(uint64_t, uint64_t) const override {
      return make_error(ErrorCode::kInvalidArgument, "no memory");
    }

   private:
    void release(std::byte*, uint64_t, uint64_t) const noexcept override {}
  };
  std::vector<std::string> added;
  ProviderRegistry registry;
  ASSERT_TRUE(registry.add(fake("device", {"reference"}, &added, std::make_shared<OtherMemory>())));
  ASSERT_TRUE(registry.add(fake("reference", {}, &added)));
  const std::vector<std::string> names{"device"};
  auto mixed = registry.select(names, {});
  ASSERT_FALSE(mixed);
  EXPECT_THAT(mixed.error().message(), HasSubstr("different devices"));
}

TEST(ProviderRegistryTest, ProviderListsSplitAtCommas) {
  const std::vector<std::string> arguments{"fast,reference", "tiled"};
  auto names = split_provider_names(arguments);
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"fast", "reference", "tiled"}));
  const std::vector<std::string> empty{"fast,"};
  EXPECT_FALSE(split_provider_names(empty));
}

}  // namespace provider_registry_test
}  // namespace ferrite
