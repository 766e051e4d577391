// `ferrite run --chat`: the prompt is the model's chat template rendered over
// the system and user messages, tokenized with special tokens recognised and
// one BOS; a model without a template is refused.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/chat_template_command.h"
#include "cli/commands.h"
#include "cli/run_command.h"
#include "ferrite/chat/chat_template.h"
#include "ferrite/families/gguf_vocabulary.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/runtime/tokenizer.h"
#include "support/cli_invoke.h"
#include "support/synthetic_llama.h"

namespace ferrite::cli {
namespace run_chat_test {

using ::testing::HasSubstr;
using test_support::invoke;

namespace fs = std::filesystem;
const fs::path kShared = fs::path(FERRITE_SOURCE_DIR) / ".." / "shared";
const fs::path kLlama3Vocab = kShared / "tokenizers" / "ggml-vocab-llama-bpe.gguf";
const fs::path kLlama3Template = kShared / "templates" / "meta-llama-Llama-3.1-8B-Instruct.jinja";

constexpr uint32_t kBeginOfText = 128000, kStartHeader = 128006, kEndHeader = 128007,
                   kEndOfTurn = 128009;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<uint32_t> ids_after(const std::string& out, const std::string& label) {
  std::vector<uint32_t> ids;
  const size_t at = out.find(label);
  if (at == std::string::npos) return ids;
  std::istringstream line(out.substr(at + label.size(), out.find('\n', at) - at - label.size()));
  for (uint32_t id; line >> id;) ids.push_back(id);
  return ids;
}

class RunChatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kLlama3Vocab) || !fs::exists(kLlama3Template)) {
      GTEST_SKIP() << "needs ../shared/tokenizers and ../shared/templates";
    }
    model_ = fs::temp_directory_path() / fmt::format("ferrite-run-chat-{}.gguf", ::getpid());
    const std::string chat_template = read_all(kLlama3Template);
    // A small Llama with Llama 3's real vocabulary and chat template.
    const ferrite::testing::SyntheticLlamaShape shape{64, 1, 4, 2, 128, 256, kGgmlTypeQ8_0, 7};
    auto written = ferrite::testing::write_synthetic_llama(
        model_, kLlama3Vocab, shape, [&](GgufFileSpec& file) {
          file.metadata.emplace_back("tokenizer.chat_template", GgufValue{chat_template});
        });
    ASSERT_TRUE(written) << written.error().message();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove(model_, ec);
  }

  RunArgs chat_args() const {
    RunArgs args;
    args.model_path = model_.string();
    args.chat = true;
    args.system = "Answer in one word.";
    args.prompt = "Name a colour {{ not_a_variable }}";
    args.steps = 3;
    args.ignore_eos = true;
    args.print_ids = true;
    args.settings.threads = 1;
    return args;
  }

  fs::path model_;
};

TEST_F(RunChatTest, PromptIsTheRenderedTemplateWithOneBos) {
  const RunArgs args = chat_args();
  auto outcome = invoke(run_run, args);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  const std::vector<uint32_t> prompt = ids_after(outcome.out, "prompt ids: ");
  ASSERT_GE(prompt.size(), 8u) << outcome.out;

  // What the template gives, rendered and tokenized independently here.
  auto source = load_chat_template(model_.string());
  ASSERT_TRUE(source) << source.error().message();
  EXPECT_EQ(source->bos_token, "<|begin_of_text|>");
  chat::ChatRenderOptions options;
  options.add_generation_prompt = true;
  options.bos_token = source->bos_token;
  options.eos_token = source->eos_token;
  options.date = today_date();
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(
      R"([{"role":"system","content":"Answer in one word."},
          {"role":"user","content":"Name a colour {{ not_a_variable }}"}])");
  auto text = chat::render_chat_template(source->text, messages, options);
  ASSERT_TRUE(text) << text.error().message();
  ASSERT_TRUE(text->starts_with("<|begin_of_text|><|start_header_id|>system<|end_header_id|>"));
  EXPECT_THAT(*text, HasSubstr("Name a colour {{ not_a_variable }}<|eot_id|>"));
  ASSERT_TRUE(text->ends_with("<|start_header_id|>assistant<|end_header_id|>\n\n"));

  auto file = GgufFile::open(model_);
  ASSERT_TRUE(file);
  auto vocab = read_gguf_vocabulary(file->model());
  ASSERT_TRUE(vocab);
  auto tokenizer = Tokenizer::create(std::move(*vocab));
  ASSERT_TRUE(tokenizer);
  auto expected = tokenizer->tokenize(*text, /*add_special=*/false, /*parse_special=*/true);
  ASSERT_TRUE(expected);
  EXPECT_EQ(prompt, *expected);

  // One BOS (the template's; the vocabulary's add_bos does not add a second),
  // the headers as single special tokens, the user's turn closed by eot.
  EXPECT_EQ(prompt[0], kBeginOfText);
  EXPECT_NE(prompt[1], kBeginOfText);
  EXPECT_EQ(prompt[1], kStartHeader);
  EXPECT_EQ(std::count(prompt.begin(), prompt.end(), kEndOfTurn), 2);
  EXPECT_EQ(prompt.back() == kEndHeader || prompt[prompt.size() - 2] == kEndHeader, true);
  // Only the reply is printed, not the rendered prompt.
  EXPECT_THAT(outcome.out, ::testing::Not(HasSubstr("Name a colour")));
  EXPECT_EQ(ids_after(outcome.out, "token ids: ").size(), 3u) << outcome.out;
}

TEST_F(RunChatTest, WithoutSystemMessage) {
  RunArgs args = chat_args();
  args.system.reset();
  auto outcome = invoke(run_run, args);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  const std::vector<uint32_t> prompt = ids_after(outcome.out, "prompt ids: ");
  ASSERT_GE(prompt.size(), 4u);
  EXPECT_EQ(prompt[0], kBeginOfText);
  EXPECT_EQ(prompt[1], kStartHeader);  // Llama 3.1's template always writes a system turn
}

TEST(RunChatRefusalTest, ModelWithoutChatTemplate) {
  const fs::path stories = kShared / "models" / "stories260K.gguf";
  if (!fs::exists(stories)) GTEST_SKIP() << "missing " << stories;
  RunArgs args;
  args.model_path = stories.string();
  args.chat = true;
  args.prompt = "Hi";
  args.steps = 2;
  auto outcome = invoke(run_run, args);
  EXPECT_NE(outcome.code, 0);
  EXPECT_THAT(outcome.err, HasSubstr("no chat template"));
}

}  // namespace run_chat_test
}  // namespace ferrite::cli
