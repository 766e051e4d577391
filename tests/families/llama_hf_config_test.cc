// The llama room's mapping of a Hugging Face config.json (keys, defaults,
// consistency rules), over the format-only reader models/hf_config.h.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "families/llama/llama_checkpoint.h"
#include "ferrite/models/hf_config.h"
#include "models/model_test_util.h"

namespace ferrite {
namespace llama_hf_config_test {

using testing::fails_with;
using testing::TempDir;

Result<LlamaConfig> parse_llama(std::string_view text, std::string source) {
  FERRITE_ASSIGN_OR_RETURN(HfConfig json, HfConfig::parse(text, std::move(source)));
  return llama_config_from_hf(json);
}

Result<LlamaConfig> read_llama(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(HfConfig json, HfConfig::read(path));
  return llama_config_from_hf(json);
}

constexpr std::string_view kLlamaConfig = R"({
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 2048,
  "intermediate_size": 5632,
  "num_hidden_layers": 22,
  "num_attention_heads": 32,
  "num_key_value_heads": 4,
  "vocab_size": 32000,
  "max_position_embeddings": 2048,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "rope_scaling": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16"
})";

TEST(LlamaHfConfigTest, ReadsConfigFromDirectoryOrFile) {
  TempDir dir;
  const auto file = dir.write_text("config.json", kLlamaConfig);
  for (const auto& path : {dir.path(), file}) {
    auto config = read_llama(path);
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->dim, 2048u);
    EXPECT_EQ(config->hidden_dim, 5632u);
    EXPECT_EQ(config->n_layers, 22u);
    EXPECT_EQ(config->n_heads, 32u);
    EXPECT_EQ(config->n_kv_heads, 4u);
    EXPECT_EQ(config->vocab_size, 32000u);
    EXPECT_EQ(config->context_length, 2048u);
    EXPECT_EQ(config->norm_eps, "0.00001");
    EXPECT_EQ(config->rope_theta, "10000");
    EXPECT_EQ(config->rope_convention, "half_split");
    EXPECT_FALSE(config->tied_output);
  }
  EXPECT_TRUE(fails_with(read_llama(dir.path() / "missing"), ErrorCode::kIo, "missing"));
}

TEST(LlamaHfConfigTest, AppliesDefaults) {
  auto config = parse_llama(
      R"({"hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 5,
          "num_attention_heads": 8, "vocab_size": 512, "tie_word_embeddings": true})",
      "c.json");
  ASSERT_TRUE(config) << config.error().to_string();
  EXPECT_EQ(config->n_kv_heads, 8u);
  EXPECT_EQ(config->context_length, 2048u);
  EXPECT_EQ(config->norm_eps, "0.000001");
  EXPECT_EQ(config->rope_theta, "10000");
  EXPECT_TRUE(config->tied_output);
}

TEST(LlamaHfConfigTest, RejectsBadConfigs) {
  auto with = [](std::string_view key, std::string_view value) {
    nlohmann::json doc = nlohmann::json::parse(kLlamaConfig);
    if (value.empty()) {
      doc.erase(std::string(key));
    } else {
      doc[std::string(key)] = nlohmann::json::parse(value);
    }
    return parse_llama(doc.dump(), "c.json");
  };
  EXPECT_TRUE(fails_with(with("hidden_size", ""), ErrorCode::kSerialization,
                         "c.json: `hidden_size` is required"));
  EXPECT_TRUE(fails_with(with("hidden_size", "\"2048\""), ErrorCode::kSerialization,
                         "`hidden_size` must be an integer, found string"));
  EXPECT_TRUE(fails_with(with("hidden_size", "2048.5"), ErrorCode::kSerialization,
                         "`hidden_size` must be an integer, found float"));
  EXPECT_TRUE(fails_with(with("num_hidden_layers", "-1"), ErrorCode::kInvalidModelConfig,
                         "`num_hidden_layers` must be positive, found -1"));
  EXPECT_TRUE(fails_with(with("vocab_size", "0"), ErrorCode::kInvalidModelConfig,
                         "`vocab_size` must be positive, found 0"));
  EXPECT_TRUE(fails_with(with("hidden_size", "2050"), ErrorCode::kInvalidModelConfig,
                         "`hidden_size` 2050 is not divisible by num_attention_heads 32"));
  EXPECT_TRUE(fails_with(with("num_key_value_heads", "5"), ErrorCode::kInvalidModelConfig,
                         "`num_key_value_heads` 5 does not divide num_attention_heads 32"));
  EXPECT_TRUE(fails_with(with("rms_norm_eps", "-1e-5"), ErrorCode::kInvalidModelConfig,
                         "`rms_norm_eps` must be a finite positive number"));
  EXPECT_TRUE(fails_with(with("rope_theta", "\"big\""), ErrorCode::kSerialization,
                         "`rope_theta` must be a number, found string"));
  EXPECT_TRUE(fails_with(with("tie_word_embeddings", "1"), ErrorCode::kSerialization,
                         "`tie_word_embeddings` must be a boolean"));
  EXPECT_TRUE(fails_with(parse_llama("{\"hidden_size\": ", "c.json"),
                         ErrorCode::kSerialization, "c.json: offset "));
  EXPECT_TRUE(fails_with(parse_llama("[]", "c.json"), ErrorCode::kSerialization,
                         "must be a JSON object, found array"));
  EXPECT_TRUE(fails_with(parse_llama(std::string(100000, '['), "c.json"),
                         ErrorCode::kSerialization, "nests deeper than the limit of 64 containers"));
}

TEST(LlamaHfConfigTest, ArchitecturesAreTheStringEntriesInOrder) {
  auto json = HfConfig::parse(R"({"architectures": ["A", 3, "B"]})", "c.json");
  ASSERT_TRUE(json) << json.error().to_string();
  EXPECT_EQ(json->architectures(), (std::vector<std::string>{"A", "B"}));
  auto none = HfConfig::parse(R"({"architectures": "A"})", "c.json");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->architectures().empty());
}

}  // namespace llama_hf_config_test
}  // namespace ferrite
