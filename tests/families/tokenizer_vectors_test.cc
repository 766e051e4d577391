// llama.cpp's tokenizer test vectors (/work/shared/tokenizers, SOURCES.md):
// every case of every vocabulary, as tests/test-tokenizer-0 checks them
// (add_special = false; parse_special false, and true gives the same ids),
// plus byte-exact detokenization of every case.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "ferrite/families/gguf_vocabulary.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite {
namespace tokenizer_vectors_test {

const std::string kDir = FERRITE_SOURCE_DIR "/../shared/tokenizers/";

std::optional<std::string> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Case {
  std::string text;
  std::vector<uint32_t> ids;
};

// Splits the .inp on "\n__ggml_vocab_test__\n" (every case ends with it) and
// reads one line of " id id ..." per case from the .out.
std::vector<Case> read_cases(const std::string& inp, const std::string& out) {
  static const std::string kSeparator = "\n__ggml_vocab_test__\n";
  std::vector<Case> cases;
  for (size_t start = 0; start < inp.size();) {
    const size_t end = inp.find(kSeparator, start);
    if (end == std::string::npos) break;
    cases.push_back(Case{inp.substr(start, end - start), {}});
    start = end + kSeparator.size();
  }
  std::istringstream lines(out);
  std::string line;
  for (Case& c : cases) {
    if (!std::getline(lines, line)) break;
    std::istringstream words(line);
    uint32_t id = 0;
    while (words >> id) c.ids.push_back(id);
  }
  return cases;
}

void check_vocabulary(const std::string& name) {
  const std::string path = kDir + "ggml-vocab-" + name + ".gguf";
  const auto inp = slurp(path + ".inp");
  const auto out = slurp(path + ".out");
  if (!inp || !out || !std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.has_value()) << file.error().to_string();
  auto vocab = read_gguf_vocabulary(file->model());
  ASSERT_TRUE(vocab.has_value()) << vocab.error().to_string();
  auto tok = Tokenizer::create(std::move(*vocab));
  ASSERT_TRUE(tok.has_value()) << tok.error().to_string();
  const std::vector<Case> cases = read_cases(*inp, *out);
  ASSERT_EQ(cases.size(), 46u) << "unexpected number of cases in " << path << ".inp";
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    for (const bool parse_special : {false, true}) {
      auto ids = tok->tokenize(c.text, false, parse_special);
      ASSERT_TRUE(ids.has_value()) << ids.error().to_string();
      ASSERT_EQ(*ids, c.ids) << name << " case " << i << " (parse_special " << parse_special
                             << ") text: \"" << c.text << "\"\n  expected: "
                             << fmt::format("{}", fmt::join(c.ids, " "))
                             << "\n  got:      " << fmt::format("{}", fmt::join(*ids, " "));
    }
    // Byte-exact detokenization (SentencePiece: the space prefix comes back).
    auto text = tok->decode(c.ids);
    ASSERT_TRUE(text.has_value()) << text.error().to_string();
    std::string expected = c.text;
    if (tok->kind() == VocabularyKind::kSentencePiece && !c.text.empty()) expected = " " + c.text;
    EXPECT_EQ(*text, expected) << name << " case " << i << " does not detokenize back";
  }
}

TEST(TokenizerVectorsTest, Gpt2) { check_vocabulary("gpt-2"); }
TEST(TokenizerVectorsTest, LlamaBpe) { check_vocabulary("llama-bpe"); }
TEST(TokenizerVectorsTest, LlamaSpm) { check_vocabulary("llama-spm"); }
TEST(TokenizerVectorsTest, Phi3) { check_vocabulary("phi-3"); }
TEST(TokenizerVectorsTest, Qwen2) { check_vocabulary("qwen2"); }
TEST(TokenizerVectorsTest, Starcoder) { check_vocabulary("starcoder"); }

// What the files declare: BOS/EOS flags and the end-of-generation sets.
TEST(TokenizerVectorsTest, VocabularyFlagsFollowLlamaCpp) {
  struct Expect {
    const char* name;
    VocabularyKind kind;
    bool add_bos;
  };
  for (const Expect& e : {Expect{"llama-bpe", VocabularyKind::kByteLevelBpe, true},
                          Expect{"qwen2", VocabularyKind::kByteLevelBpe, false},
                          Expect{"gpt-2", VocabularyKind::kByteLevelBpe, false},
                          Expect{"starcoder", VocabularyKind::kByteLevelBpe, false},
                          Expect{"llama-spm", VocabularyKind::kSentencePiece, true},
                          Expect{"phi-3", VocabularyKind::kSentencePiece, true}}) {
    const std::string path = kDir + "ggml-vocab-" + e.name + ".gguf";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file.has_value());
    auto vocab = read_gguf_vocabulary(file->model());
    ASSERT_TRUE(vocab.has_value()) << vocab.error().to_string();
    EXPECT_EQ(vocab->kind, e.kind) << e.name;
    EXPECT_EQ(vocab->add_bos, e.add_bos) << e.name;
    auto tok = Tokenizer::create(std::move(*vocab));
    ASSERT_TRUE(tok.has_value()) << tok.error().to_string();
    EXPECT_TRUE(tok->is_end_of_generation(tok->eos_id())) << e.name;
    auto with_bos = tok->tokenize("Hello", true, false);
    ASSERT_TRUE(with_bos.has_value());
    EXPECT_EQ(!with_bos->empty() && with_bos->front() == tok->bos_id(), e.add_bos) << e.name;
  }
}

TEST(TokenizerVectorsTest, LlamaBpeSpecialTokens) {
  const std::string path = kDir + "ggml-vocab-llama-bpe.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "missing " << path;
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.has_value());
  auto vocab = read_gguf_vocabulary(file->model());
  ASSERT_TRUE(vocab.has_value());
  auto tok = Tokenizer::create(std::move(*vocab));
  ASSERT_TRUE(tok.has_value());
  const std::string text = "<|begin_of_text|>Hi<|eot_id|>";
  auto special = tok->tokenize(text, false, true);
  auto plain = tok->tokenize(text, false, false);
  ASSERT_TRUE(special.has_value() && plain.has_value());
  ASSERT_EQ(special->size(), 3u);
  EXPECT_EQ(special->front(), 128000u);
  EXPECT_EQ(special->back(), 128009u);
  EXPECT_GT(plain->size(), 3u);  // the text of special tokens stays text
  EXPECT_TRUE(tok->is_end_of_generation(128009));  // <|eot_id|>
  EXPECT_TRUE(tok->is_end_of_generation(128001));  // <|end_of_text|>
  EXPECT_FALSE(tok->is_end_of_generation(128000));
  // Control tokens render only when asked.
  EXPECT_EQ(*tok->token_to_piece(128009, false), "");
  EXPECT_EQ(*tok->token_to_piece(128009, true), "<|eot_id|>");
  EXPECT_EQ(*tok->decode(*plain), text);
}

}  // namespace tokenizer_vectors_test
}  // namespace ferrite
