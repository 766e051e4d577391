// Byte-level BPE in the Tokenizer: merges by rank, pre-tokenizer splits,
// special tokens, byte-exact decoding, hostile vocabularies.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/runtime/tokenizer.h"

namespace ferrite {
namespace bpe_tokenizer_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The GPT-2 spelling of a byte, written independently of the runtime's table.
std::string spell(unsigned char b) {
  static const std::vector<uint32_t> table = [] {
    std::vector<uint32_t> t(256);
    uint32_t extra = 256;
    for (unsigned v = 0; v < 256; ++v) {
      const bool kept = (v >= '!' && v <= '~') || (v >= 0xA1 && v <= 0xAC) || (v >= 0xAE);
      t[v] = kept ? v : extra++;
    }
    return t;
  }();
  const uint32_t cp = table[b];
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

// Ids 0..255: the bytes; then merged tokens; then specials.
Vocabulary tiny_bpe(std::string pre = "gpt-2") {
  Vocabulary v;
  v.kind = VocabularyKind::kByteLevelBpe;
  v.pre = std::move(pre);
  for (int b = 0; b < 256; ++b) v.tokens.push_back(spell(static_cast<unsigned char>(b)));
  const std::vector<std::pair<std::string, std::string>> merges = {
      {"l", "l"}, {"h", "e"}, {"he", "ll"}, {" ", "w"}, {"o", "r"}, {" w", "or"}, {"hell", "o"}};
  for (const auto& [a, b] : merges) {
    v.merges.emplace_back(spell(a), spell(b));
    v.tokens.push_back(spell(a + b));  // 256..262
  }
  v.tokens.push_back("<|end|>");   // 263 control
  v.tokens.push_back("<|user|>");  // 264 user-defined
  v.token_types.assign(v.tokens.size(), TokenType::kNormal);
  v.token_types[263] = TokenType::kControl;
  v.token_types[264] = TokenType::kUserDefined;
  v.bos_id = kNoToken;
  v.eos_id = 263;
  v.unk_id = kNoToken;
  v.add_bos = false;
  v.add_space_prefix = false;
  return v;
}

Tokenizer make(Vocabulary v) {
  auto tok = Tokenizer::create(std::move(v));
  EXPECT_TRUE(tok.has_value()) << tok.error().to_string();
  return std::move(*tok);
}

std::vector<uint32_t> ids(const Tokenizer& tok, const std::string& text, bool special = false) {
  auto r = tok.tokenize(text, false, special);
  EXPECT_TRUE(r.has_value()) << r.error().to_string();
  return r ? *r : std::vector<uint32_t>{};
}

TEST(BpeTokenizerTest, MergesByRankWithinPreTokenizedWords) {
  const Tokenizer tok = make(tiny_bpe());
  // "hello" -> he, ll -> hell -> hello ; " world" -> " w" + "or" -> " wor", l, d
  EXPECT_THAT(ids(tok, "hello"), ElementsAre(262));
  EXPECT_THAT(ids(tok, "hello world"), ElementsAre(262, 261, 'l', 'd'));
  // Lowest rank first: "or" (rank 4) is taken before "hello" (rank 6).
  EXPECT_THAT(ids(tok, "hellor"), ElementsAre(258, 260));
}

TEST(BpeTokenizerTest, SpecialTokensOnlyWhenAskedUserDefinedAlways) {
  const Tokenizer tok = make(tiny_bpe());
  const std::vector<uint32_t> plain = ids(tok, "a<|end|>");
  EXPECT_GT(plain.size(), 2u);
  EXPECT_THAT(ids(tok, "a<|end|>", true), ElementsAre('a', 263));
  EXPECT_THAT(ids(tok, "<|user|>a"), ElementsAre(264, 'a'));
  auto piece = tok.token_to_piece(263, false);
  ASSERT_TRUE(piece.has_value());
  EXPECT_EQ(*piece, "");
  EXPECT_EQ(*tok.token_to_piece(263, true), "<|end|>");
  EXPECT_EQ(*tok.token_to_piece(264, false), "<|user|>");
  EXPECT_TRUE(tok.is_end_of_generation(263));
  EXPECT_FALSE(tok.is_end_of_generation(264));
}

TEST(BpeTokenizerTest, AddSpecialFollowsTheVocabulary) {
  Vocabulary v = tiny_bpe();
  v.bos_id = 264;
  v.add_bos = true;
  v.add_eos = true;
  const Tokenizer tok = make(std::move(v));
  auto r = tok.tokenize("hello", true, false);
  ASSERT_TRUE(r.has_value());
  EXPECT_THAT(*r, ElementsAre(264, 262, 263));
  auto none = tok.tokenize("hello", false, false);
  EXPECT_THAT(*none, ElementsAre(262));
}

TEST(BpeTokenizerTest, RandomBytesRoundTripExactly) {
  const Tokenizer tok = make(tiny_bpe());
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string text(rng() % 40, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    if (round % 3 == 0) text += " hello world\n\t  x";
    auto r = tok.tokenize(text, false, false);
    ASSERT_TRUE(r.has_value()) << r.error().to_string();
    auto back = tok.decode(*r);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, text);
  }
}

TEST(BpeTokenizerTest, IgnoreMergesEmitsWholeWordTokens) {
  Vocabulary v = tiny_bpe("llama-bpe");
  // A token for "hello" reachable only whole, not by merges.
  v.merges.pop_back();
  const Tokenizer with = make(v);
  EXPECT_THAT(ids(with, "hello"), ElementsAre(262));
  v.pre = "gpt-2";
  const Tokenizer without = make(v);
  EXPECT_THAT(ids(without, "hello"), ElementsAre(258, 'o'));
}

TEST(BpeTokenizerTest, UnknownPreTokenizerIsNamed) {
  auto tok = Tokenizer::create(tiny_bpe("no-such-pre"));
  ASSERT_FALSE(tok.has_value());
  EXPECT_THAT(tok.error().message(), HasSubstr("no-such-pre"));
}

TEST(BpeTokenizerTest, ExplicitPatternsAndBadPatterns) {
  Vocabulary v = tiny_bpe("");
  v.pre_patterns = {R"(\S+|\s+)"};
  const Tokenizer tok = make(v);
  EXPECT_THAT(ids(tok, "hello"), ElementsAre(262));
  v.pre_patterns = {"(unclosed"};
  auto bad = Tokenizer::create(v);
  ASSERT_FALSE(bad.has_value());
  EXPECT_THAT(bad.error().message(), HasSubstr("(unclosed"));
}

TEST(BpeTokenizerTest, HostileVocabulariesAreErrors) {
  const auto expect_bad = [](Vocabulary v, const std::string& what) {
    auto tok = Tokenizer::create(std::move(v));
    ASSERT_FALSE(tok.has_value()) << what;
    EXPECT_THAT(tok.error().message(), HasSubstr(what));
  };
  {
    Vocabulary v = tiny_bpe();
    v.merges.emplace_back("", "x");
    expect_bad(v, "merge 7");
  }
  {
    Vocabulary v = tiny_bpe();
    v.eos_id = 100000;
    expect_bad(v, "eos_id");
  }
  {
    Vocabulary v = tiny_bpe();
    v.end_of_generation.insert(5000);
    expect_bad(v, "end_of_generation");
  }
  {
    Vocabulary v = tiny_bpe();
    v.token_types.pop_back();
    expect_bad(v, "token_type");
  }
  {
    Vocabulary v = tiny_bpe();
    v.tokens[300 - 40] = "";
    expect_bad(v, "empty");
  }
  {
    Vocabulary v = tiny_bpe();
    v.tokens.resize(Vocabulary::kMaxTokens + 1, "x");
    v.token_types.clear();
    expect_bad(v, "limit");
  }
  {
    Vocabulary v = tiny_bpe();
    v.token_types[5] = static_cast<TokenType>(9);
    expect_bad(v, "token type 9");
  }
}

TEST(BpeTokenizerTest, InvalidUtf8TokenTextsAreHarmless) {
  Vocabulary v = tiny_bpe();
  v.tokens.push_back("\xFF\xFE");  // not a GPT-2 spelling
  v.token_types.push_back(TokenType::kNormal);
  v.merges.emplace_back("\xFF", "\xC0");
  const Tokenizer tok = make(v);
  EXPECT_THAT(ids(tok, "hello"), ElementsAre(262));
  auto piece = tok.token_to_piece(265, false);
  ASSERT_TRUE(piece.has_value());
  EXPECT_EQ(*piece, "\xFF\xFE");
  EXPECT_FALSE(tok.token_to_piece(266, false).has_value());
}

TEST(BpeTokenizerTest, LongWordsStayFast) {
  const Tokenizer tok = make(tiny_bpe());
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "hellohello";  // one 200 kB word
  auto r = tok.tokenize(text, false, false);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->size(), 40000u);
  EXPECT_EQ(*tok.decode(*r), text);
}

}  // namespace bpe_tokenizer_test
}  // namespace ferrite
