// Hugging Face tokenizer.json (+ tokenizer_config.json) onto the byte-level
// BPE engine: a small tokenizer.json written here.
#include "ferrite/families/hf_tokenizer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/runtime/tokenizer.h"

namespace ferrite {
namespace hf_tokenizer_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using nlohmann::json;

std::string spell(unsigned char b) {
  uint32_t extra = 256, cp = 0;
  for (unsigned v = 0; v <= b; ++v) {
    const bool kept = (v >= '!' && v <= '~') || (v >= 0xA1 && v <= 0xAC) || (v >= 0xAE);
    cp = kept ? v : extra++;
  }
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

std::string spell(const std::string& bytes) {
  std::string out;
  for (const char c : bytes) out += spell(static_cast<unsigned char>(c));
  return out;
}

// Bytes 0..255, then "he", "ll", "hell", "hello", " w"; added tokens 261, 262.
json tokenizer_json(bool pair_merges, json pre_tokenizer) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[spell(static_cast<unsigned char>(b))] = b;
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {" ", "w"}};
  json merge_list = json::array();
  uint32_t id = 256;
  for (const auto& [a, b] : merges) {
    vocab[spell(a + b)] = id++;
    if (pair_merges) {
      merge_list.push_back(json::array({spell(a), spell(b)}));
    } else {
      merge_list.push_back(spell(a) + " " + spell(b));
    }
  }
  return json{{"version", "1.0"},
              {"added_tokens",
               json::array({json{{"id", 261}, {"content", "<|begin|>"}, {"special", true}},
                            json{{"id", 262}, {"content", "<|end|>"}, {"special", true}},
                            json{{"id", 263}, {"content", "[tool]"}, {"special", false}}})},
              {"normalizer", nullptr},
              {"pre_tokenizer", std::move(pre_tokenizer)},
              {"model",
               {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", nullptr},
                {"ignore_merges", false},
                {"byte_fallback", false},
                {"vocab", vocab},
                {"merges", merge_list}}}};
}

json llama3_style_pre() {
  return json{{"type", "Sequence"},
              {"pretokenizers",
               json::array({json{{"type", "Split"},
                                 {"pattern", {{"Regex", R"( ?\p{L}+|\p{N}{1,3}|\s+|[^\s\p{L}\p{N}]+)"}}},
                                 {"behavior", "Isolated"},
                                 {"invert", false}},
                            json{{"type", "ByteLevel"},
                                 {"add_prefix_space", false},
                                 {"trim_offsets", true},
                                 {"use_regex", false}}})}};
}

const std::string kConfig =
    R"({"add_bos_token": true, "add_eos_token": false, "bos_token": "<|begin|>",
        "eos_token": {"content": "<|end|>", "special": true}})";

Tokenizer make(const json& doc, const std::string& config = kConfig) {
  auto vocab = parse_hf_tokenizer(doc.dump(), config, "test/tokenizer.json");
  EXPECT_TRUE(vocab.has_value()) << vocab.error().to_string();
  auto tok = Tokenizer::create(std::move(*vocab));
  EXPECT_TRUE(tok.has_value()) << tok.error().to_string();
  return std::move(*tok);
}

TEST(HfTokenizerTest, BothMergeFormsGiveTheSameIds) {
  for (const bool pairs : {false, true}) {
    const Tokenizer tok = make(tokenizer_json(pairs, llama3_style_pre()));
    auto ids = tok.tokenize("hello world", true, false);
    ASSERT_TRUE(ids.has_value());
    // BOS, "hello", " w", o, r, l, d
    EXPECT_THAT(*ids, ElementsAre(261, 259, 260, 'o', 'r', 'l', 'd')) << "pairs " << pairs;
    EXPECT_TRUE(tok.is_end_of_generation(262));
    EXPECT_EQ(tok.bos_id(), 261u);
    auto text = tok.decode(*ids);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(*text, "hello world");
  }
}

TEST(HfTokenizerTest, AddedTokens) {
  const Tokenizer tok = make(tokenizer_json(false, llama3_style_pre()));
  auto special = tok.tokenize("<|end|>hello[tool]", false, true);
  ASSERT_TRUE(special.has_value());
  EXPECT_THAT(*special, ElementsAre(262, 259, 263));
  auto plain = tok.tokenize("<|end|>hello[tool]", false, false);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->back(), 263u);  // non-special added tokens are always matched
  EXPECT_GT(plain->size(), 3u);
}

TEST(HfTokenizerTest, ByteLevelWithItsOwnRegex) {
  const Tokenizer tok = make(tokenizer_json(
      false, json{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}));
  auto ids = tok.tokenize("hello  world", false, false);
  ASSERT_TRUE(ids.has_value());
  EXPECT_THAT(*ids, ElementsAre(259, ' ', 260, 'o', 'r', 'l', 'd'));
}

TEST(HfTokenizerTest, UnsupportedPartsAreNamed) {
  const auto expect_bad = [](json doc, const std::string& what) {
    auto vocab = parse_hf_tokenizer(doc.dump(), "", "dir/tokenizer.json");
    ASSERT_FALSE(vocab.has_value()) << what;
    EXPECT_THAT(vocab.error().message(), HasSubstr(what));
    EXPECT_THAT(vocab.error().message(), HasSubstr("dir/tokenizer.json"));
  };
  json doc = tokenizer_json(false, llama3_style_pre());
  {
    json d = doc;
    d["model"]["type"] = "WordPiece";
    expect_bad(d, "$.model.type");
  }
  {
    json d = doc;
    d["model"]["merges"][2] = "nospace";
    expect_bad(d, "$.model.merges[2]");
  }
  {
    json d = doc;
    d["model"]["vocab"]["x"] = 1u << 21;
    expect_bad(d, "over the limit");
  }
  {
    json d = doc;
    d["pre_tokenizer"] = json{{"type", "Whitespace"}};
    expect_bad(d, "Whitespace");
  }
  {
    json d = doc;
    d["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(";
    auto vocab = parse_hf_tokenizer(d.dump(), "", "x");
    ASSERT_TRUE(vocab.has_value());
    EXPECT_FALSE(Tokenizer::create(std::move(*vocab)).has_value());
  }
  {
    json d = doc;
    d["normalizer"] = json{{"type", "NFC"}};
    expect_bad(d, "$.normalizer");
  }
  expect_bad(json::array(), "must be a JSON object");
  auto broken = parse_hf_tokenizer("{\"model\": ", "", "dir/tokenizer.json");
  EXPECT_FALSE(broken.has_value());
  auto bad_config = parse_hf_tokenizer(doc.dump(), R"({"bos_token": "<nope>"})", "t");
  ASSERT_FALSE(bad_config.has_value());
  EXPECT_THAT(bad_config.error().message(), HasSubstr("<nope>"));
}

TEST(HfTokenizerTest, ReadsADirectory) {
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("ferrite-hf-tokenizer-{}", ::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer.json") << tokenizer_json(true, llama3_style_pre()).dump();
  std::ofstream(dir / "tokenizer_config.json") << kConfig;
  auto vocab = read_hf_tokenizer(dir);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(vocab.has_value()) << vocab.error().to_string();
  EXPECT_TRUE(vocab->add_bos);
  EXPECT_EQ(vocab->eos_id, 262u);
  EXPECT_EQ(vocab->tokens.size(), 264u);
}

}  // namespace hf_tokenizer_test
}  // namespace ferrite
