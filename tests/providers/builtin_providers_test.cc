// The builtin providers by name: `fast` and `reference`, their kernels,
// formats and instruction sets, and selections that register exactly what
// `ferrite run` registered before the registry (same kernels, same
// preferences), so plans keep their bytes.
#include "providers/builtin/builtin_providers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/operations/operation_table.h"

#include "ferrite/models/ggml_blocks.h"
#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"

namespace ferrite {
namespace builtin_providers_test {

std::vector<std::string> kernel_ids(const CpuProviderRegistry& kernels) {
  std::vector<std::string> ids;
  for (const auto& [key, spec] : kernels.specs()) {
    ids.push_back(std::string(spec.provider_id.str()) + "@" + CpuProviderRegistry::implementation_fingerprint(spec));
  }
  return ids;
}

TEST(BuiltinProvidersTest, RegistersFastAndReferenceWithTheirInstructionSets) {
  auto registry = builtin_providers();
  ASSERT_TRUE(registry) << registry.error().to_string();
  EXPECT_EQ(registry->names(), (std::vector<std::string>{"fast", "reference"}));
  const NamedProvider* fast = registry->find("fast");
  ASSERT_NE(fast, nullptr);
  EXPECT_EQ(fast->id_prefix, kCpuFastProviderPrefix);
  EXPECT_EQ(fast->fallbacks, std::vector<std::string>{"reference"});
  auto isa = fast->instruction_set({});
  ASSERT_TRUE(isa);
  EXPECT_EQ(*isa, *cpu_fast_isa({}));
  auto portable = fast->instruction_set(ProviderSettings{.threads = 0, .isa = "portable"});
  ASSERT_TRUE(portable);
  EXPECT_EQ(*portable, "portable");
  EXPECT_FALSE(fast->instruction_set(ProviderSettings{.threads = 0, .isa = "sse9"}));
  auto described = fast->describe(ProviderSettings{.threads = 1, .isa = "portable"});
  ASSERT_TRUE(described);
  EXPECT_EQ(*described, "cpu.fast (portable, 1 thread)");
  const NamedProvider* reference = registry->find("reference");
  ASSERT_NE(reference, nullptr);
  EXPECT_EQ(*reference->instruction_set({}), "portable");
  EXPECT_EQ(*reference->describe({}), "cpu.reference");
}

// `--provider fast` registers cpu.fast and cpu.reference, exactly as the
// run command did before; `--provider reference` cpu.reference alone.
TEST(BuiltinProvidersTest, SelectionsRegisterTheKernelsRunRegisteredBefore) {
  auto registry = builtin_providers();
  ASSERT_TRUE(registry);
  const ProviderSettings settings{.threads = 1, .isa = std::nullopt};
  CpuProviderRegistry before_fast;
  ASSERT_TRUE(add_cpu_reference_providers(before_fast));
  ASSERT_TRUE(add_cpu_fast_providers(before_fast, {.threads = 1, .isa = std::nullopt}));
  CpuProviderRegistry before_reference;
  ASSERT_TRUE(add_cpu_reference_providers(before_reference));

  for (const auto& names : {std::vector<std::string>{"fast"},
                            std::vector<std::string>{"fast", "reference"}}) {
    auto chosen = registry->select(names, settings);
    ASSERT_TRUE(chosen) << chosen.error().to_string();
    EXPECT_EQ(kernel_ids(chosen->kernels), kernel_ids(before_fast));
    ASSERT_EQ(chosen->chosen.size(), 2u);
    EXPECT_EQ(chosen->chosen.front()->name, "fast");
  }
  auto reference = registry->select(std::vector<std::string>{"reference"}, settings);
  ASSERT_TRUE(reference);
  EXPECT_EQ(kernel_ids(reference->kernels), kernel_ids(before_reference));
  EXPECT_EQ(reference->description, "cpu.reference");
}

// Formats per operation, as `ferrite providers` lists them.
TEST(BuiltinProvidersTest, KernelsDeclareTheirWeightAndQuantizationFormats) {
  CpuProviderRegistry kernels;
  ASSERT_TRUE(add_cpu_fast_providers(kernels, {.threads = 1, .isa = std::nullopt}));
  const CpuProviderSpec* linear = kernels.find(OperationId::literal("operation.linear"),
                                               ProviderId::literal("provider.cpu.fast.linear"));
  ASSERT_NE(linear, nullptr);
  EXPECT_TRUE(linear->quantization_formats.contains(
      QuantizationFormatId::literal(kGgmlQ8_0FormatId)));
  const CpuProviderSpec* add = kernels.find(OperationId::literal("operation.add"),
                                            ProviderId::literal("provider.cpu.fast.add"));
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->quantization_formats.empty());
  // Every operation but take_last_token, token_embedding and gather_rows (reference only).
  EXPECT_EQ(kernels.specs().size(), kOpKindCount - 3);
}

}  // namespace builtin_providers_test
}  // namespace ferrite
