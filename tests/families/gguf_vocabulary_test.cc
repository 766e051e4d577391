// read_gguf_vocabulary on metadata built in memory: kinds, flags, special ids,
// end-of-generation, and hostile vocabularies (errors, never crashes).
#include "ferrite/families/gguf_vocabulary.h"

#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace gguf_vocabulary_test {

using ::testing::HasSubstr;

GgufValue array_of(std::vector<std::string> v) { return GgufValue{GgufArray{std::move(v)}}; }
GgufValue array_of(std::vector<int32_t> v) { return GgufValue{GgufArray{std::move(v)}}; }
GgufValue array_of(std::vector<float> v) { return GgufValue{GgufArray{std::move(v)}}; }

// A byte-level BPE vocabulary: "a", "b", "ab", "<|endoftext|>", "<|im_end|>".
GgufModel bpe_model() {
  GgufModel m;
  m.source = "test.gguf";
  m.metadata["tokenizer.ggml.model"] = GgufValue{std::string("gpt2")};
  m.metadata["tokenizer.ggml.pre"] = GgufValue{std::string("qwen2")};
  m.metadata["tokenizer.ggml.tokens"] =
      array_of(std::vector<std::string>{"a", "b", "ab", "<|endoftext|>", "<|im_end|>"});
  m.metadata["tokenizer.ggml.token_type"] = array_of(std::vector<int32_t>{1, 1, 1, 3, 3});
  m.metadata["tokenizer.ggml.merges"] = array_of(std::vector<std::string>{"a b"});
  m.metadata["tokenizer.ggml.eos_token_id"] = GgufValue{uint32_t{3}};
  return m;
}

TEST(GgufVocabularyTest, ByteLevelBpe) {
  auto v = read_gguf_vocabulary(bpe_model());
  ASSERT_TRUE(v.has_value()) << v.error().to_string();
  EXPECT_EQ(v->kind, VocabularyKind::kByteLevelBpe);
  EXPECT_EQ(v->pre, "qwen2");
  EXPECT_FALSE(v->add_bos);
  EXPECT_FALSE(v->add_space_prefix);
  EXPECT_EQ(v->bos_id, kNoToken);
  EXPECT_EQ(v->eos_id, 3u);
  EXPECT_EQ(v->eot_id, 3u);  // found by text: the first eot-looking token
  ASSERT_EQ(v->merges.size(), 1u);
  EXPECT_EQ(v->merges[0].first, "a");
  auto tok = Tokenizer::create(std::move(*v));
  ASSERT_TRUE(tok.has_value()) << tok.error().to_string();
  EXPECT_TRUE(tok->is_end_of_generation(3));
  EXPECT_TRUE(tok->is_end_of_generation(4));  // <|im_end|>
  EXPECT_FALSE(tok->is_end_of_generation(2));
  auto ids = tok->tokenize("abab", true, false);
  ASSERT_TRUE(ids.has_value());
  EXPECT_EQ(*ids, (std::vector<uint32_t>{2, 2}));
}

TEST(GgufVocabularyTest, SentencePieceDefaultsAndUnsetIds) {
  GgufModel m;
  m.source = "spm.gguf";
  m.metadata["tokenizer.ggml.tokens"] = array_of(std::vector<std::string>{
      "<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "\xE2\x96\x81", "a"});
  m.metadata["tokenizer.ggml.scores"] = array_of(std::vector<float>{0, 0, 0, -1, -2, -2});
  m.metadata["tokenizer.ggml.padding_token_id"] = GgufValue{uint32_t{0xFFFFFFFFu}};
  m.metadata["tokenizer.ggml.seperator_token_id"] = GgufValue{int32_t{-1}};
  auto v = read_gguf_vocabulary(m);
  ASSERT_TRUE(v.has_value()) << v.error().to_string();
  EXPECT_EQ(v->kind, VocabularyKind::kSentencePiece);
  EXPECT_TRUE(v->add_bos);
  EXPECT_TRUE(v->add_space_prefix);
  EXPECT_EQ(v->tokens[3], " a");
  EXPECT_EQ(v->pad_id, kNoToken);
  EXPECT_EQ(v->sep_id, kNoToken);
  auto tok = Tokenizer::create(std::move(*v));
  ASSERT_TRUE(tok.has_value());
  EXPECT_EQ(*tok->tokenize("a", true, false), (std::vector<uint32_t>{1, 3}));
  EXPECT_TRUE(tok->is_end_of_generation(2));
}

TEST(GgufVocabularyTest, HostileMetadataIsAnError) {
  const auto expect_bad = [](GgufModel m, const std::string& what) {
    auto v = read_gguf_vocabulary(m);
    if (v.has_value()) {
      auto tok = Tokenizer::create(std::move(*v));
      ASSERT_FALSE(tok.has_value()) << what;
      EXPECT_THAT(tok.error().message(), HasSubstr(what));
      return;
    }
    EXPECT_THAT(v.error().message(), HasSubstr(what));
  };
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.model"] = GgufValue{std::string("bert")};
    expect_bad(m, "bert");
  }
  {
    GgufModel m = bpe_model();
    m.metadata.erase("tokenizer.ggml.tokens");
    expect_bad(m, "tokenizer.ggml.tokens");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.merges"] = array_of(std::vector<std::string>{"a b", "ab"});
    expect_bad(m, "entry 1");
  }
  {
    GgufModel m = bpe_model();
    m.metadata.erase("tokenizer.ggml.merges");
    expect_bad(m, "tokenizer.ggml.merges");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.token_type"] = array_of(std::vector<int32_t>{1, 1});
    expect_bad(m, "tokenizer.ggml.token_type");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.scores"] = array_of(std::vector<std::string>{"x"});
    expect_bad(m, "tokenizer.ggml.scores");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.eos_token_id"] = GgufValue{uint32_t{99}};
    expect_bad(m, "eos_id");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.bos_token_id"] = GgufValue{uint64_t{1} << 40};
    expect_bad(m, "above the largest token id");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.add_bos_token"] = GgufValue{uint32_t{1}};
    expect_bad(m, "must be a bool");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.pre"] = GgufValue{std::string("mystery")};
    expect_bad(m, "mystery");
  }
  {
    GgufModel m = bpe_model();
    m.metadata["tokenizer.ggml.tokens"] =
        array_of(std::vector<std::string>(Vocabulary::kMaxTokens + 1, "x"));
    expect_bad(m, "over the limit");
  }
}

TEST(GgufVocabularyTest, OddTokenTextsAndTypesAreTolerated) {
  GgufModel m = bpe_model();
  m.metadata["tokenizer.ggml.tokens"] = array_of(
      std::vector<std::string>{"a", "b", "ab", "<|endoftext|>", "\xFF\xC0 broken"});
  m.metadata["tokenizer.ggml.token_type"] = array_of(std::vector<int32_t>{1, 1, 1, 3, 77});
  auto v = read_gguf_vocabulary(m);
  ASSERT_TRUE(v.has_value());
  auto tok = Tokenizer::create(std::move(*v));
  ASSERT_TRUE(tok.has_value()) << tok.error().to_string();
  auto ids = tok->tokenize("\xFF\xC0 broken ab", false, true);
  ASSERT_TRUE(ids.has_value());
  auto piece = tok->token_to_piece(4, false);
  ASSERT_TRUE(piece.has_value());
  EXPECT_EQ(*piece, "\xFF\xC0 broken");
}

}  // namespace gguf_vocabulary_test
}  // namespace ferrite
