#include "ferrite/runtime/tokenizer.h"

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace tokenizer_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---- test-only readers for the real tokenizer files --------------------------

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Little-endian reader over a byte string; any overrun sets `ok = false`.
struct ByteReader {
  const std::string& data;
  size_t pos = 0;
  bool ok = true;

  template <class T>
  T get() {
    T value{};
    if (!ok || data.size() - pos < sizeof(T)) {
      ok = false;
      return value;
    }
    std::memcpy(&value, data.data() + pos, sizeof(T));
    pos += sizeof(T);
    return value;
  }
  std::string bytes(uint64_t n) {
    if (!ok || data.size() - pos < n) {
      ok = false;
      return {};
    }
    std::string out = data.substr(pos, static_cast<size_t>(n));
    pos += static_cast<size_t>(n);
    return out;
  }
};

const std::string kTok512Path = FERRITE_SOURCE_DIR "/../shared/models/tok512.bin";
const std::string kGgufPath = FERRITE_SOURCE_DIR "/../shared/models/stories260K.gguf";

// llama2.c tokenizer.bin: i32 max_token_length, then per token f32 score, i32 len, bytes.
std::optional<Vocabulary> read_tok512(size_t vocab_size = 512) {
  static_assert(std::endian::native == std::endian::little);
  const auto data = read_file(kTok512Path);
  if (!data) return std::nullopt;
  ByteReader in{*data};
  in.get<int32_t>();
  Vocabulary vocab;
  for (size_t i = 0; i < vocab_size; ++i) {
    vocab.scores.push_back(in.get<float>());
    const auto len = in.get<int32_t>();
    if (len < 0) return std::nullopt;
    vocab.tokens.push_back(in.bytes(static_cast<uint64_t>(len)));
  }
  if (!in.ok || in.pos != data->size()) return std::nullopt;
  return vocab;
}

// GGUF v3 metadata: just enough to read the tokenizer arrays and special ids.
struct GgufVocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  uint32_t bos = kNoToken, eos = kNoToken, unk = kNoToken;
};

bool skip_gguf_value(ByteReader& in, uint32_t type, int depth = 0) {
  static const size_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  if (type == 8) {
    in.bytes(in.get<uint64_t>());
  } else if (type == 9) {
    if (depth > 2) return false;
    const auto elem = in.get<uint32_t>();
    const auto count = in.get<uint64_t>();
    for (uint64_t i = 0; i < count && in.ok; ++i) {
      if (!skip_gguf_value(in, elem, depth + 1)) return false;
    }
  } else if (type < std::size(kSizes)) {
    in.bytes(kSizes[type]);
  } else {
    return false;
  }
  return in.ok;
}

std::optional<GgufVocab> read_gguf_vocab() {
  const auto data = read_file(kGgufPath);
  if (!data) return std::nullopt;
  ByteReader in{*data};
  if (in.bytes(4) != "GGUF" || in.get<uint32_t>() != 3) return std::nullopt;
  in.get<uint64_t>();  // tensor count
  const auto kv_count = in.get<uint64_t>();
  GgufVocab out;
  for (uint64_t k = 0; k < kv_count && in.ok; ++k) {
    const std::string key = in.bytes(in.get<uint64_t>());
    const auto type = in.get<uint32_t>();
    if (key == "tokenizer.ggml.tokens" && type == 9) {
      if (in.get<uint32_t>() != 8) return std::nullopt;
      const auto count = in.get<uint64_t>();
      for (uint64_t i = 0; i < count && in.ok; ++i) {
        out.tokens.push_back(in.bytes(in.get<uint64_t>()));
      }
    } else if (key == "tokenizer.ggml.scores" && type == 9) {
      if (in.get<uint32_t>() != 6) return std::nullopt;
      const auto count = in.get<uint64_t>();
      for (uint64_t i = 0; i < count && in.ok; ++i) out.scores.push_back(in.get<float>());
    } else if (key == "tokenizer.ggml.bos_token_id" && type == 4) {
      out.bos = in.get<uint32_t>();
    } else if (key == "tokenizer.ggml.eos_token_id" && type == 4) {
      out.eos = in.get<uint32_t>();
    } else if (key == "tokenizer.ggml.unknown_token_id" && type == 4) {
      out.unk = in.get<uint32_t>();
    } else if (!skip_gguf_value(in, type)) {
      return std::nullopt;
    }
  }
  if (!in.ok) return std::nullopt;
  return out;
}

// ---- independent brute-force reference encoder -------------------------------
//
// The naive O(n^2) loop: rescan every adjacent pair after each merge and merge
// the first one with the strictly highest score. Code points are decoded by
// value (not by table) to cross-check the library's UTF-8 splitter.

class ReferenceEncoder {
 public:
  explicit ReferenceEncoder(const Vocabulary& vocab) : vocab_(vocab) {
    for (uint32_t id = 0; id < vocab.tokens.size(); ++id) {
      if (id == vocab.bos_id || id == vocab.eos_id || id == vocab.unk_id) continue;
      const std::string& t = vocab.tokens[id];
      if (is_byte_name(t)) {
        const int b = std::stoi(t.substr(3, 2), nullptr, 16);
        if (!bytes_.count(b)) bytes_[b] = id;
      } else if (!text_.count(t)) {
        text_[t] = id;
      }
    }
  }

  std::vector<uint32_t> encode(const std::string& raw, bool add_bos) const {
    std::vector<uint32_t> ids;
    std::vector<bool> normal;
    const std::string text = raw.empty() ? raw : " " + raw;
    size_t i = 0;
    while (i < text.size()) {
      const size_t n = code_point_length(text, i);
      const std::string unit = text.substr(i, n);
      if (auto it = text_.find(unit); it != text_.end()) {
        ids.push_back(it->second);
        normal.push_back(true);
      } else {
        for (unsigned char c : unit) {
          auto b = bytes_.find(c);
          ids.push_back(b == bytes_.end() ? vocab_.unk_id : b->second);
          normal.push_back(false);
        }
      }
      i += n;
    }
    for (;;) {
      bool found = false;
      float best_score = 0;
      size_t best = 0;
      uint32_t best_id = 0;
      for (size_t k = 0; k + 1 < ids.size(); ++k) {
        if (!normal[k] || !normal[k + 1]) continue;
        auto it = text_.find(vocab_.tokens[ids[k]] + vocab_.tokens[ids[k + 1]]);
        if (it == text_.end()) continue;
        const float score = vocab_.scores[it->second];
        if (!found || score > best_score) {
          found = true;
          best_score = score;
          best = k;
          best_id = it->second;
        }
      }
      if (!found) break;
      ids[best] = best_id;
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(best) + 1);
      normal.erase(normal.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
    if (add_bos) ids.insert(ids.begin(), vocab_.bos_id);
    return ids;
  }

 private:
  static bool is_byte_name(const std::string& t) {
    if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return false;
    for (size_t k = 3; k < 5; ++k) {
      const char c = t[k];
      if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return false;
    }
    return true;
  }

  // Length of a well-formed code point at text[i], decoding its value; 1 if invalid.
  static size_t code_point_length(const std::string& text, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const unsigned lead = b(0);
    size_t n;
    uint32_t cp;
    if (lead < 0x80) return 1;
    if ((lead & 0xE0) == 0xC0) {
      n = 2;
      cp = lead & 0x1Fu;
    } else if ((lead & 0xF0) == 0xE0) {
      n = 3;
      cp = lead & 0x0Fu;
    } else if ((lead & 0xF8) == 0xF0) {
      n = 4;
      cp = lead & 0x07u;
    } else {
      return 1;
    }
    if (i + n > text.size()) return 1;
    for (size_t k = 1; k < n; ++k) {
      if ((b(k) & 0xC0) != 0x80) return 1;
      cp = (cp << 6) | (b(k) & 0x3Fu);
    }
    const uint32_t min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_length[n]) return 1;           // overlong
    if (cp >= 0xD800 && cp <= 0xDFFF) return 1;     // surrogate
    if (cp > 0x10FFFF) return 1;                    // out of range
    return n;
  }

  const Vocabulary& vocab_;
  std::map<std::string, uint32_t> text_;
  std::map<int, uint32_t> bytes_;
};

bool valid_utf8(const std::string& s) {
  // Reuse the reference splitter: valid iff every non-ASCII lead starts a code point.
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
    for (size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      return false;
    }
    i += n;
  }
  return true;
}

// Deterministic corpus of a few hundred strings of every kind the brief names.
std::vector<std::string> random_corpus(const Vocabulary& vocab) {
  std::mt19937_64 gen(20240611);  // raw engine output is fully specified by the standard
  const auto pick = [&gen](size_t n) { return static_cast<size_t>(gen() % n); };
  const std::vector<std::string> multibyte = {
      "\xC3\xA9", "\xC3\xB1", "\xE2\x80\x9C", "\xE2\x80\x9D", "\xE2\x80\x94", "\xE2\x82\xAC",
      "\xC2\xA0", "\xE4\xB8\xAD", "\xE6\x96\x87", "\xF0\x9F\x98\x80", "\xF0\x9F\x8C\x8D",
      "\xD0\x96", "\xE2\x96\x81", "\xCE\xA9", "\xE2\x80\x8A", "\xC3\xA2"};
  const std::vector<std::string> invalid = {
      "\x80", "\xBF", "\xC0\xAF", "\xC1\x81", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
      "\xF5", "\xFF", "\xFE", "\xC3", "\xE2\x82", "\xF0\x9F\x98", "\xE2\x28\xA1"};
  const std::string ascii_alphabet = "abcdefghijklmnopqrstuvwxyzTHOSLW .,!?'\"-\n\t0123456789";
  std::vector<std::string> corpus = {"", " ", "  ", "\n", "\t \n  \n", "a", " a", "a ",
                                     "Once upon a time", "Hello, world!", "<s>", "</s>",
                                     "<unk>", "<0x41>", "\n<s>\n"};
  for (int i = 0; i < 400; ++i) {
    std::string s;
    const int kind = i % 8;
    const size_t len = kind == 7 ? 1500 + pick(1500) : pick(40);
    while (s.size() < len) {
      switch (kind) {
        case 0:
        case 7:
          s += ascii_alphabet[pick(ascii_alphabet.size())];
          break;
        case 1: {  // concatenated vocabulary pieces: lots of merges
          const std::string& t = vocab.tokens[259 + pick(vocab.tokens.size() - 259)];
          s += t;
          break;
        }
        case 2:
          s += pick(3) == 0 ? multibyte[pick(multibyte.size())]
                            : std::string(1, ascii_alphabet[pick(ascii_alphabet.size())]);
          break;
        case 3:
          s += pick(3) == 0 ? invalid[pick(invalid.size())]
                            : std::string(1, ascii_alphabet[pick(ascii_alphabet.size())]);
          break;
        case 4:  // raw random bytes
          s += static_cast<char>(gen() & 0xFF);
          break;
        case 5:  // whitespace runs
          s += std::string(1 + pick(6), " \n\t"[pick(3)]);
          s += ascii_alphabet[pick(26)];
          break;
        case 6:  // words
          s += vocab.tokens[259 + pick(vocab.tokens.size() - 259)];
          s += pick(4) == 0 ? multibyte[pick(multibyte.size())] : "";
          s += pick(6) == 0 ? invalid[pick(invalid.size())] : "";
          break;
      }
    }
    corpus.push_back(std::move(s));
  }
  return corpus;
}

std::string gguf_spelling(std::string token) {
  std::string out;
  for (char c : token) {
    if (c == ' ') {
      out += "\xE2\x96\x81";
    } else {
      out += c;
    }
  }
  return out;
}

// ---- hand-made tiny vocabulary -------------------------------------------------

Vocabulary tiny_vocabulary() {
  Vocabulary v;
  const std::vector<std::pair<std::string, float>> entries = {
      {"<unk>", 0},     {"<s>", 0},     {"</s>", 0},          // 0 1 2
      {"<0x21>", 0},    {"<0xE2>", 0},  {"<0x82>", 0},        // 3 4 5   '!' and two bytes of
      {"<0xAC>", 0},                                          // 6       the euro sign
      {" ", -1},        {"a", -1},      {"b", -1},  {"c", -1},  // 7 8 9 10
      {"ab", 1},        {"bc", 2},      {" a", 0.5f},           // 11 12 13
      {"abc", 3},       {"aa", 1},                              // 14 15
      {"\xE2\x82", 5},  {"ab", 9},                              // 16 17 (17 duplicates 11)
      {"cc", -1e20f},                                           // 18: far below -1e10
      {"\xC3\xA9", 0},                                          // 19 'é' as a code point token
  };
  for (const auto& [text, score] : entries) {
    v.tokens.push_back(text);
    v.scores.push_back(score);
  }
  return v;
}

Tokenizer make(Vocabulary v) {
  auto tok = Tokenizer::create(std::move(v));
  EXPECT_TRUE(tok.has_value()) << tok.error().to_string();
  return std::move(*tok);
}

std::vector<uint32_t> enc(const Tokenizer& tok, std::string_view text, bool bos = true) {
  auto ids = tok.encode(text, bos);
  EXPECT_TRUE(ids.has_value()) << ids.error().to_string();
  return ids ? *ids : std::vector<uint32_t>{};
}

TEST(TokenizerTinyTest, MergesByHighestScoreThenLeftmost) {
  const Tokenizer tok = make(tiny_vocabulary());
  // " abc": candidates " a"(0.5) ab(1) bc(2) -> bc; then a+bc = abc(3); " "+abc absent.
  EXPECT_THAT(enc(tok, "abc"), ElementsAre(1, 7, 14));
  // " aaa": three equal "aa" candidates -> the leftmost merges first.
  EXPECT_THAT(enc(tok, "aaa"), ElementsAre(1, 7, 15, 8));
  // " ab": ab(1) beats " a"(0.5); a duplicated text resolves to its lowest id (11).
  EXPECT_THAT(enc(tok, "ab", false), ElementsAre(7, 11));
  // " a": the only merge.
  EXPECT_THAT(enc(tok, "a", false), ElementsAre(13));
  // Scores far below -1e10 still merge.
  EXPECT_THAT(enc(tok, "cc", false), ElementsAre(7, 18));
}

TEST(TokenizerTinyTest, EmptyTextHasNoDummyPrefix) {
  const Tokenizer tok = make(tiny_vocabulary());
  EXPECT_THAT(enc(tok, ""), ElementsAre(1));
  EXPECT_TRUE(enc(tok, "", false).empty());
  auto with_eos = tok.encode("", true, true);
  ASSERT_TRUE(with_eos.has_value());
  EXPECT_THAT(*with_eos, ElementsAre(1, 2));
}

TEST(TokenizerTinyTest, ByteFallbackAndUnknown) {
  const Tokenizer tok = make(tiny_vocabulary());
  // The euro sign is not a token: its three bytes fall back to byte tokens, which
  // never merge (even though "\xE2\x82" is a normal token with a high score).
  EXPECT_THAT(enc(tok, "\xE2\x82\xAC!"), ElementsAre(1, 7, 4, 5, 6, 3));
  // 'é' is a code point token; 'ñ' is not and has no byte tokens -> unk per byte.
  EXPECT_THAT(enc(tok, "\xC3\xA9\xC3\xB1", false), ElementsAre(7, 19, 0, 0));
  // An invalid byte is its own piece; a truncated sequence goes one byte at a time.
  EXPECT_THAT(enc(tok, "\xFF" "a", false), ElementsAre(7, 0, 8));
  EXPECT_THAT(enc(tok, "\xE2\x82" "a", false), ElementsAre(7, 4, 5, 8));
  // A lone "\xE2\x82" is still two invalid pieces, not the token "\xE2\x82".
  EXPECT_THAT(enc(tok, "\xE2\x82", false), ElementsAre(7, 4, 5));
  ASSERT_TRUE(tok.byte_token(0x21).has_value());
  EXPECT_EQ(*tok.byte_token(0x21), 3u);
  EXPECT_FALSE(tok.byte_token(0x41).has_value());
  EXPECT_EQ(tok.find("abc"), std::optional<uint32_t>(14));
  EXPECT_EQ(tok.find("ab"), std::optional<uint32_t>(11));
  EXPECT_FALSE(tok.find("<s>").has_value());     // special tokens are not text
  EXPECT_FALSE(tok.find("<0x21>").has_value());  // nor are byte tokens
}

TEST(TokenizerTinyTest, SpecialTokensAreNeverMatchedFromText) {
  Vocabulary v;
  v.tokens = {"<unk>", "a", "b", " "};
  v.scores = {0, 0, 0, 0};
  v.bos_id = 1;
  v.eos_id = 2;
  v.unk_id = 0;
  const Tokenizer tok = make(std::move(v));
  EXPECT_THAT(enc(tok, "ab", false), ElementsAre(3, 0, 0));
}

TEST(TokenizerTinyTest, DecodeStripsOneSpaceAfterBosAndDropsBosEos) {
  const Tokenizer tok = make(tiny_vocabulary());
  auto piece = [&](uint32_t prev, uint32_t id) {
    auto r = tok.decode_piece(prev, id);
    EXPECT_TRUE(r.has_value());
    return r ? *r : std::string("<error>");
  };
  EXPECT_EQ(piece(kNoToken, 13), " a");
  EXPECT_EQ(piece(1, 13), "a");
  EXPECT_EQ(piece(8, 13), " a");
  EXPECT_EQ(piece(kNoToken, 1), "");
  EXPECT_EQ(piece(kNoToken, 2), "");
  EXPECT_EQ(piece(kNoToken, 0), "");  // unknown: rendered only with special (llama.cpp)
  EXPECT_EQ(*tok.decode_piece(kNoToken, 0, true), "<unk>");
  EXPECT_EQ(piece(kNoToken, 3), "!");
  EXPECT_EQ(piece(kNoToken, 4), "\xE2");
  auto text = tok.decode(std::vector<uint32_t>{1, 7, 4, 5, 6, 3, 2});
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "\xE2\x82\xAC!");
  for (const std::string s : {"abc", "aaa", "\xE2\x82\xAC!", " a  b", "\xC3\xA9"}) {
    auto round = tok.decode(enc(tok, s));
    ASSERT_TRUE(round.has_value());
    EXPECT_EQ(*round, s);
  }
  // Without BOS the dummy prefix stays.
  auto no_bos = tok.decode(enc(tok, "abc", false));
  ASSERT_TRUE(no_bos.has_value());
  EXPECT_EQ(*no_bos, " abc");
}

TEST(TokenizerTinyTest, DecodeRejectsOutOfRangeIds) {
  const Tokenizer tok = make(tiny_vocabulary());
  auto r = tok.decode_piece(kNoToken, 20);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().fields().at("token_id"), "20");
  auto d = tok.decode(std::vector<uint32_t>{1, 8, kNoToken});
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code(), ErrorCode::kInvalidArgument);
  // `previous` may be anything.
  EXPECT_TRUE(tok.decode_piece(123456, 8).has_value());
}

TEST(TokenizerTinyTest, EncodeRejectsTextsOverTheLimit) {
  const Tokenizer tok = make(tiny_vocabulary());
  const std::string huge(Tokenizer::kMaxEncodeBytes + 1, 'a');
  auto r = tok.encode(huge);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(r.error().message(), HasSubstr("exceeds the encode limit"));
}

TEST(TokenizerTinyTest, RejectsBadVocabularies) {
  const auto expect_bad = [](Vocabulary v, const std::string& field) {
    auto r = Tokenizer::create(std::move(v));
    ASSERT_FALSE(r.has_value()) << field;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidModelConfig) << field;
    EXPECT_EQ(r.error().fields().at("field"), field) << r.error().to_string();
  };
  expect_bad(Vocabulary{}, "tokens");
  {
    Vocabulary v = tiny_vocabulary();
    v.scores.pop_back();
    expect_bad(v, "scores");
  }
  {
    Vocabulary v = tiny_vocabulary();
    v.tokens[8].clear();
    expect_bad(v, "tokens");
  }
  for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    Vocabulary v = tiny_vocabulary();
    v.scores[9] = bad;
    expect_bad(v, "scores");
    auto r = Tokenizer::create(v);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().fields().at("token_id"), "9");
  }
  {
    Vocabulary v = tiny_vocabulary();
    v.bos_id = 20;
    expect_bad(v, "bos_id");
  }
  {
    Vocabulary v = tiny_vocabulary();
    v.eos_id = 1000;
    expect_bad(v, "eos_id");
  }
  {
    Vocabulary v = tiny_vocabulary();
    v.unk_id = kNoToken;
    expect_bad(v, "unk_id");
  }
  {
    Vocabulary v;
    v.tokens.assign(Vocabulary::kMaxTokens + 1, "t");
    v.scores.assign(Vocabulary::kMaxTokens + 1, 0.0f);
    expect_bad(std::move(v), "tokens");
  }
  {
    Vocabulary v;
    v.tokens.assign(Vocabulary::kMaxTokens, "t");
    v.scores.assign(Vocabulary::kMaxTokens, 0.0f);
    EXPECT_TRUE(Tokenizer::create(std::move(v)).has_value());
  }
}

TEST(TokenizerTinyTest, FromGgufTokensMapsTheSpaceMarkBack) {
  const Vocabulary v = Vocabulary::from_gguf_tokens(
      {"<unk>", "<s>", "</s>", "\xE2\x96\x81" "a", "\xE2\x96\x81\xE2\x96\x81", "x\xE2\x96\x81y",
       "\xE2\x96", "\xE2\x96\x82"},
      {0, 0, 0, 1, 2, 3, 4, 5}, 1, 2, 0);
  EXPECT_THAT(v.tokens, ElementsAre("<unk>", "<s>", "</s>", " a", "  ", "x y", "\xE2\x96",
                                    "\xE2\x96\x82"));
  EXPECT_THAT(v.scores, ElementsAre(0, 0, 0, 1, 2, 3, 4, 5));
  EXPECT_EQ(v.bos_id, 1u);
  EXPECT_EQ(v.eos_id, 2u);
  EXPECT_EQ(v.unk_id, 0u);
}

TEST(TokenizerTinyTest, AgreesWithTheReferenceOnRandomStrings) {
  const Vocabulary v = tiny_vocabulary();
  const Tokenizer tok = make(v);
  const ReferenceEncoder ref(v);
  std::mt19937_64 gen(7);
  const std::vector<std::string> alphabet = {"a", "b", "c", " ", "!", "\xE2\x82\xAC",
                                             "\xC3\xA9", "\xE2\x82", "\xFF"};
  for (int i = 0; i < 300; ++i) {
    std::string s;
    const size_t n = gen() % 30;
    for (size_t k = 0; k < n; ++k) s += alphabet[gen() % alphabet.size()];
    EXPECT_EQ(enc(tok, s), ref.encode(s, true)) << "text: " << s;
  }
}

// ---- the real stories260K tokenizer ---------------------------------------------

class Tok512Test : public ::testing::Test {
 protected:
  void SetUp() override {
    vocab_ = read_tok512();
    if (!vocab_) GTEST_SKIP() << "missing or malformed " << kTok512Path;
  }
  std::optional<Vocabulary> vocab_;
};

TEST_F(Tok512Test, KnownEncodings) {
  const Tokenizer tok = make(*vocab_);
  const ReferenceEncoder ref(*vocab_);
  const std::vector<uint32_t> once = enc(tok, "Once upon a time");
  const std::vector<uint32_t> hello = enc(tok, "Hello, world!");
  EXPECT_EQ(once, ref.encode("Once upon a time", true));
  EXPECT_EQ(hello, ref.encode("Hello, world!", true));
  // Frozen: also computed by an independent Python brute force over tok512.bin.
  // " Once" " upon" " a" " time" / " He" "ll" "o" "," " w" "or" "ld" "!".
  EXPECT_THAT(once, ElementsAre(1, 403, 407, 261, 378));
  EXPECT_THAT(hello, ElementsAre(1, 346, 306, 414, 432, 263, 304, 341, 443));
  auto text = tok.decode(once);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "Once upon a time");
}

TEST_F(Tok512Test, ByteTokensAreFoundByName) {
  const Tokenizer tok = make(*vocab_);
  for (int b = 0; b < 256; ++b) {
    ASSERT_EQ(tok.byte_token(static_cast<uint8_t>(b)), std::optional<uint32_t>(3 + b));
  }
  // An emoji is not in the vocabulary: four byte tokens, reassembled on decode.
  const auto ids = enc(tok, "\xF0\x9F\x98\x80");
  EXPECT_THAT(ids, ElementsAre(1, 410, 3 + 0xF0, 3 + 0x9F, 3 + 0x98, 3 + 0x80));
  std::string streamed;
  uint32_t prev = kNoToken;
  for (uint32_t id : ids) {
    auto piece = tok.decode_piece(prev, id);
    ASSERT_TRUE(piece.has_value());
    streamed += *piece;
    prev = id;
  }
  EXPECT_EQ(streamed, "\xF0\x9F\x98\x80");
}

TEST_F(Tok512Test, FastEncoderMatchesReferenceAndRoundTrips) {
  const Tokenizer tok = make(*vocab_);
  const ReferenceEncoder ref(*vocab_);
  const auto corpus = random_corpus(*vocab_);
  ASSERT_GE(corpus.size(), 400u);
  size_t valid = 0;
  for (const std::string& s : corpus) {
    const auto ids = enc(tok, s);
    ASSERT_EQ(ids, ref.encode(s, true)) << "text: " << s;
    EXPECT_EQ(enc(tok, s, false), std::vector<uint32_t>(ids.begin() + 1, ids.end()));
    // Streaming decode equals whole decode.
    auto whole = tok.decode(ids);
    ASSERT_TRUE(whole.has_value());
    std::string streamed;
    uint32_t prev = kNoToken;
    for (uint32_t id : ids) {
      streamed += *tok.decode_piece(prev, id);
      prev = id;
    }
    EXPECT_EQ(streamed, *whole);
    if (valid_utf8(s)) {
      ++valid;
      EXPECT_EQ(*whole, s);
    }
    // All 256 byte tokens exist, so even invalid UTF-8 comes back byte for byte.
    EXPECT_EQ(*whole, s);
  }
  EXPECT_GE(valid, 150u);
}

TEST_F(Tok512Test, LongInputsAreFastAndRoundTrip) {
  const Tokenizer tok = make(*vocab_);
  std::string text;
  std::mt19937_64 gen(99);
  while (text.size() < (size_t{1} << 20)) {
    text += vocab_->tokens[259 + gen() % 253];
    if (gen() % 7 == 0) text += "\xF0\x9F\x98\x80";
  }
  const auto start = std::chrono::steady_clock::now();
  const auto ids = enc(tok, text);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(std::chrono::duration_cast<std::chrono::seconds>(elapsed).count(), 20);
  auto back = tok.decode(ids);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, text);
  // A run of one repeated character (worst case for naive rescans).
  const std::string run(200000, 'a');
  auto run_back = tok.decode(enc(tok, run));
  ASSERT_TRUE(run_back.has_value());
  EXPECT_EQ(*run_back, run);
}

TEST_F(Tok512Test, GgufSpellingNormalizesToTheSameVocabulary) {
  // Rebuild the GGUF spelling from tok512 (' ' -> U+2581) and map it back.
  std::vector<std::string> spelled;
  for (const std::string& t : vocab_->tokens) spelled.push_back(gguf_spelling(t));
  const Vocabulary back = Vocabulary::from_gguf_tokens(spelled, vocab_->scores);
  EXPECT_EQ(back.tokens, vocab_->tokens);
  EXPECT_EQ(back.scores, vocab_->scores);
}

TEST_F(Tok512Test, RealGgufVocabularyEncodesIdentically) {
  const auto gguf = read_gguf_vocab();
  if (!gguf) GTEST_SKIP() << "missing or malformed " << kGgufPath;
  ASSERT_EQ(gguf->tokens.size(), 512u);
  ASSERT_EQ(gguf->scores.size(), 512u);
  EXPECT_EQ(gguf->bos, 1u);
  EXPECT_EQ(gguf->eos, 2u);
  EXPECT_EQ(gguf->unk, 0u);
  const Vocabulary v =
      Vocabulary::from_gguf_tokens(gguf->tokens, gguf->scores, gguf->bos, gguf->eos, gguf->unk);
  for (size_t id = 0; id < 512; ++id) {
    EXPECT_EQ(std::bit_cast<uint32_t>(v.scores[id]), std::bit_cast<uint32_t>(vocab_->scores[id]))
        << id;
    if (id == 1 || id == 2) continue;  // "<s>"/"</s>" vs "\n<s>\n"/"\n</s>\n"
    EXPECT_EQ(v.tokens[id], vocab_->tokens[id]) << id;
  }
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.tokens[2], "</s>");
  const Tokenizer from_gguf = make(v);
  const Tokenizer from_bin = make(*vocab_);
  for (const std::string& s : random_corpus(*vocab_)) {
    EXPECT_EQ(enc(from_gguf, s), enc(from_bin, s)) << "text: " << s;
    auto a = from_gguf.decode(enc(from_gguf, s));
    auto b = from_bin.decode(enc(from_bin, s));
    ASSERT_TRUE(a.has_value() && b.has_value());
    EXPECT_EQ(*a, *b);
  }
}

}  // namespace tokenizer_test
}  // namespace ferrite
