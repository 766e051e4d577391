// The family registry: the builtin rooms, lookups by GGUF and Hugging Face
// architecture, and the generic checkpoint opener picking the family.
#include "ferrite/families/family_registry.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "families/builtin/builtin_families.h"
#include "families/llama/llama_checkpoint.h"
#include "models/model_test_util.h"

namespace ferrite {
namespace family_registry_test {

// The builtin registry and a checkpoint opened with it (the checkpoint's
// family points into the registry, so both live here).
struct OpenedStories {
  Result<FamilyRegistry> families = builtin_families();
  Result<Checkpoint> checkpoint = make_error(ErrorCode::kIo, "not opened");
  void open(const std::filesystem::path& path) {
    ASSERT_TRUE(families) << families.error().to_string();
    checkpoint = open_checkpoint(*families, path, std::nullopt);
    ASSERT_TRUE(checkpoint) << checkpoint.error().to_string();
  }
};

TEST(FamilyRegistryTest, BuiltinFamiliesFindLlamaByArchitecture) {
  auto families = builtin_families();
  ASSERT_TRUE(families) << families.error().to_string();
  EXPECT_EQ(families->names(), (std::vector<std::string>{"gemma3", "llama", "phi3", "qwen2", "qwen3"}));
  ASSERT_NE(families->find_gguf_architecture("llama"), nullptr);
  EXPECT_EQ(families->find_gguf_architecture("llama")->name, "llama");
  EXPECT_EQ(families->find_hf_architecture("LlamaForCausalLM")->name, "llama");
  EXPECT_EQ(families->find_gguf_architecture("qwen2")->name, "qwen2");
  EXPECT_EQ(families->find_gguf_architecture("gemma3")->name, "gemma3");
  EXPECT_EQ(families->find_gguf_architecture("gemma2"), nullptr);
  EXPECT_EQ(families->readers_of("llama2.c").size(), 1u);
}

TEST(FamilyRegistryTest, NamesAndArchitecturesAreClaimedOnce) {
  FamilyRegistry registry;
  ASSERT_TRUE(registry.add(llama_family_room()));
  auto twice = registry.add(llama_family_room());
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message(), "model family `llama` is registered twice");
  FamilyRoom other = llama_family_room();
  other.name = "other";
  auto claimed = registry.add(other);
  ASSERT_FALSE(claimed);
  EXPECT_EQ(claimed.error().message(),
            "GGUF architecture `llama` is claimed by `llama` and `other`");
}

TEST(FamilyRegistryTest, ARoomMustBuildItsProgramAndStateItsLimits) {
  for (auto remove : {+[](FamilyRoom& r) { r.build_program = nullptr; },
                      +[](FamilyRoom& r) { r.context_length = nullptr; },
                      +[](FamilyRoom& r) { r.vocab_size = nullptr; }}) {
    FamilyRegistry registry;
    FamilyRoom room = llama_family_room();
    remove(room);
    auto added = registry.add(std::move(room));
    ASSERT_FALSE(added);
    EXPECT_EQ(added.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(added.error().message(),
              "model family `llama` builds no program or states no context length or "
              "vocabulary size");
  }
}

TEST(FamilyRegistryTest, TheRoomBuildsItsProgramForTheContextAsked) {
  const auto path = testing::shared_model_path("stories260K.gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no model files";
  OpenedStories opened;
  ASSERT_NO_FATAL_FAILURE(opened.open(path));
  auto& checkpoint = opened.checkpoint;
  const FamilyRoom& room = *checkpoint->family;
  EXPECT_EQ(room.vocab_size(checkpoint->config), 512u);
  EXPECT_EQ(room.context_length(checkpoint->config), 2048u);  // llama.context_length
  LlamaConfig limited = std::any_cast<const LlamaConfig&>(checkpoint->config);
  limited.context_length = 64;
  auto built = room.build_program(checkpoint->config, 64);
  ASSERT_TRUE(built) << built.error().to_string();
  EXPECT_EQ(built->fingerprint(), build_llama_family(limited)->fingerprint());
}

TEST(FamilyRegistryTest, OpenCheckpointPicksTheFamilyOfTheFile) {
  const auto path = testing::shared_model_path("stories260K.gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no model files";
  OpenedStories opened;
  ASSERT_NO_FATAL_FAILURE(opened.open(path));
  auto& checkpoint = opened.checkpoint;
  EXPECT_EQ(checkpoint->format, "gguf");
  EXPECT_EQ(checkpoint->family->name, "llama");
  auto llama = open_llama_checkpoint(path, std::nullopt);
  ASSERT_TRUE(llama);
  const auto& config = std::any_cast<const LlamaConfig&>(checkpoint->config);
  EXPECT_EQ(config.dim, llama->config.dim);
  EXPECT_EQ(config.n_layers, llama->config.n_layers);
  EXPECT_EQ(config.tied_output, llama->config.tied_output);
  EXPECT_EQ(build_llama_family(config)->fingerprint(),
            build_llama_family(llama->config)->fingerprint());
}

}  // namespace family_registry_test
}  // namespace ferrite
