// `ferrite tokenize` on vocabulary-only GGUFs, a full model GGUF and a
// Hugging Face directory.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "ferrite/families/gguf_vocabulary.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/runtime/tokenizer.h"
#include "support/cli_invoke.h"

namespace ferrite::cli {
namespace tokenize_command_test {

using ::testing::HasSubstr;
using test_support::invoke;
using test_support::write_file;

const std::string kBpe = FERRITE_SOURCE_DIR "/../shared/tokenizers/ggml-vocab-llama-bpe.gguf";
const std::string kStories = FERRITE_SOURCE_DIR "/../shared/models/stories260K.gguf";

// The ids the library gives, for comparison with the command's output.
std::string library_ids(const std::string& path, const std::string& text, bool add_special,
                        bool parse_special) {
  auto file = GgufFile::open(path);
  if (!file) return "<open failed>";
  auto vocab = read_gguf_vocabulary(file->model());
  if (!vocab) return "<vocab failed>";
  auto tok = Tokenizer::create(std::move(*vocab));
  if (!tok) return "<create failed>";
  auto ids = tok->tokenize(text, add_special, parse_special);
  if (!ids) return "<tokenize failed>";
  return fmt::format("{}\n", fmt::join(*ids, " "));
}

TEST(TokenizeCommandTest, VocabularyOnlyGguf) {
  if (!std::filesystem::exists(kBpe)) GTEST_SKIP() << "missing " << kBpe;
  const std::string text = "Hello world<|eot_id|>";
  TokenizeArgs args{.model_path = kBpe, .text = text};
  auto plain = invoke(run_tokenize, args);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.out, library_ids(kBpe, text, true, false));
  EXPECT_TRUE(plain.out.starts_with("128000 ")) << plain.out;  // llama-bpe adds BOS
  args.special = true;
  auto special = invoke(run_tokenize, args);
  ASSERT_EQ(special.code, 0);
  EXPECT_EQ(special.out, library_ids(kBpe, text, true, true));
  EXPECT_TRUE(special.out.ends_with(" 128009\n")) << special.out;
  args.no_bos = true;
  auto bare = invoke(run_tokenize, args);
  EXPECT_EQ(bare.out, library_ids(kBpe, text, false, true));
  args.json = true;
  auto json = invoke(run_tokenize, args);
  ASSERT_EQ(json.code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_TRUE(doc.is_array());
  std::string joined;
  for (const auto& entry : doc) joined += entry["piece"].get<std::string>();
  EXPECT_EQ(joined, text);
  EXPECT_EQ(doc.back()["id"], 128009);
}

TEST(TokenizeCommandTest, FileInputAndFullModel) {
  if (!std::filesystem::exists(kStories)) GTEST_SKIP() << "missing " << kStories;
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("ferrite-tokenize-{}.txt", ::getpid());
  write_file(path, "Once upon a time");
  auto outcome = invoke(run_tokenize, TokenizeArgs{.model_path = kStories, .file = path.string()});
  std::filesystem::remove(path);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, library_ids(kStories, "Once upon a time", true, false));
  EXPECT_TRUE(outcome.out.starts_with("1 ")) << outcome.out;
}

TEST(TokenizeCommandTest, InvalidBytesInJsonPiecesAreEscaped) {
  if (!std::filesystem::exists(kBpe)) GTEST_SKIP() << "missing " << kBpe;
  // A lone continuation byte becomes its own byte token.
  auto outcome = invoke(run_tokenize, TokenizeArgs{.model_path = kBpe,
                                                   .text = std::string("a\x80"),
                                                   .no_bos = true,
                                                   .json = true});
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  const auto doc = nlohmann::json::parse(outcome.out);
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[1]["piece"], "\\x80");
  EXPECT_EQ(doc[1]["bytes"], "80");
}

TEST(TokenizeCommandTest, ErrorsNameTheFile) {
  auto missing = invoke(run_tokenize, TokenizeArgs{.model_path = "/nonexistent/x.gguf",
                                                   .text = std::string("hi")});
  EXPECT_EQ(missing.code, kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/x.gguf"));
  auto wrong = invoke(run_tokenize, TokenizeArgs{.model_path = "model.bin", .text = std::string("hi")});
  EXPECT_NE(wrong.code, 0);
  EXPECT_THAT(wrong.err, HasSubstr("model.bin"));
  const auto dir = std::filesystem::temp_directory_path() /
                   fmt::format("ferrite-tokenize-dir-{}", ::getpid());
  std::filesystem::create_directories(dir);
  auto empty_dir = invoke(run_tokenize, TokenizeArgs{.model_path = dir.string(),
                                                     .text = std::string("hi")});
  write_file(dir / "tokenizer.json", "{\"model\": {\"type\": \"Unigram\"}}");
  auto unigram = invoke(run_tokenize, TokenizeArgs{.model_path = dir.string(),
                                                   .text = std::string("hi")});
  std::filesystem::remove_all(dir);
  EXPECT_NE(empty_dir.code, 0);
  EXPECT_THAT(empty_dir.err, HasSubstr("tokenizer.json"));
  EXPECT_NE(unigram.code, 0);
  EXPECT_THAT(unigram.err, HasSubstr("tokenizer.json"));
  EXPECT_THAT(unigram.err, HasSubstr("$.model.type"));
}

}  // namespace tokenize_command_test
}  // namespace ferrite::cli
