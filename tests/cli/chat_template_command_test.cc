// `ferrite chat-template`: the template from a .jinja file, a GGUF file and a
// Hugging Face directory; bos/eos defaults; exit codes and messages.
#include "cli/chat_template_command.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "ferrite/models/gguf_writer.h"
#include "support/cli_invoke.h"

namespace ferrite {
namespace chat_template_command_test {

namespace fs = std::filesystem;
using cli::ChatTemplateArgs;
using cli::run_chat_template;
using cli::test_support::invoke;
using cli::test_support::write_file;

class ChatTemplateCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ferrite-chat-template-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    messages_ = (dir_ / "messages.json").string();
    write_file(messages_, R"([{"role": "system", "content": "Be brief."},
                               {"role": "user", "content": "Hi {{ you }} \u00e9"}])");
  }
  void TearDown() override { fs::remove_all(dir_); }

  ChatTemplateArgs args(const fs::path& source) {
    ChatTemplateArgs a;
    a.source_path = source.string();
    a.messages_path = messages_;
    a.date = "2026-01-15";
    return a;
  }

  fs::path dir_;
  std::string messages_;
};

const char* kTemplate =
    "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}\n{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% endif %}{{ strftime_now('%Y-%m-%d') }}";

TEST_F(ChatTemplateCommandTest, RendersAJinjaFileExactly) {
  write_file(dir_ / "t.jinja", kTemplate);
  auto a = args(dir_ / "t.jinja");
  a.add_generation_prompt = true;
  a.bos_token = "<B>";
  auto outcome = invoke(run_chat_template, a);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "<B>[system]Be brief.\n[user]Hi {{ you }} \xc3\xa9\n[assistant]2026-01-15");
  EXPECT_EQ(outcome.err, "");
}

TEST_F(ChatTemplateCommandTest, ReadsTheTemplateAndTokensOfAGguf) {
  GgufFileSpec spec;
  spec.metadata.push_back({"general.architecture", GgufValue{std::string("llama")}});
  spec.metadata.push_back({"tokenizer.ggml.tokens",
                           GgufValue{GgufArray{std::vector<std::string>{"<unk>", "<|begin|>", "<|end|>"}}}});
  spec.metadata.push_back({"tokenizer.ggml.bos_token_id", GgufValue{uint32_t{1}}});
  spec.metadata.push_back({"tokenizer.ggml.eos_token_id", GgufValue{uint32_t{2}}});
  spec.metadata.push_back({"tokenizer.chat_template", GgufValue{std::string(kTemplate)}});
  auto bytes = serialize_gguf(spec);
  ASSERT_TRUE(bytes) << bytes.error().message();
  write_file(dir_ / "m.gguf", std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
  auto outcome = invoke(run_chat_template, args(dir_ / "m.gguf"));
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "<|begin|>[system]Be brief.<|end|>\n[user]Hi {{ you }} \xc3\xa9<|end|>\n2026-01-15");
}

TEST_F(ChatTemplateCommandTest, ReadsAHuggingFaceDirectory) {
  fs::create_directories(dir_ / "hf");
  write_file(dir_ / "hf" / "tokenizer_config.json", R"({
    "bos_token": {"content": "<s>", "lstrip": false},
    "eos_token": "</s>",
    "chat_template": [{"name": "tool_use", "template": "TOOLS"},
                      {"name": "default", "template": "{{ bos_token }}{{ messages | length }}{{ eos_token }}"}]})");
  auto outcome = invoke(run_chat_template, args(dir_ / "hf"));
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, "<s>2</s>");
}

TEST_F(ChatTemplateCommandTest, RendersTheQwen2TemplateOfASharedGguf) {
  const fs::path gguf = fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "tokenizers" / "ggml-vocab-qwen2.gguf";
  ASSERT_TRUE(fs::exists(gguf)) << gguf;
  auto a = args(gguf);
  a.add_generation_prompt = true;
  auto outcome = invoke(run_chat_template, a);
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_EQ(outcome.out.rfind("<|im_start|>system\nBe brief.<|im_end|>\n", 0), 0u) << outcome.out;
  EXPECT_NE(outcome.out.find("<|im_start|>user\nHi {{ you }} \xc3\xa9<|im_end|>\n"), std::string::npos) << outcome.out;
  const std::string tail = "<|im_start|>assistant\n";
  ASSERT_GE(outcome.out.size(), tail.size());
  EXPECT_EQ(outcome.out.substr(outcome.out.size() - tail.size()), tail) << outcome.out;
}

TEST_F(ChatTemplateCommandTest, ARaisingTemplateExitsOneWithItsMessage) {
  write_file(dir_ / "raise.jinja", "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}");
  auto outcome = invoke(run_chat_template, args(dir_ / "raise.jinja"));
  EXPECT_EQ(outcome.code, 1);
  EXPECT_EQ(outcome.out, "");
  EXPECT_NE(outcome.err.find("System role not supported"), std::string::npos) << outcome.err;
}

TEST_F(ChatTemplateCommandTest, BadInputsExitTwo) {
  write_file(dir_ / "t.jinja", kTemplate);
  auto bad_date = args(dir_ / "t.jinja");
  bad_date.date = "2026-02-30";
  EXPECT_EQ(invoke(run_chat_template, bad_date).code, 2);
  auto no_messages = args(dir_ / "t.jinja");
  no_messages.messages_path = (dir_ / "missing.json").string();
  EXPECT_EQ(invoke(run_chat_template, no_messages).code, 2);
  write_file(dir_ / "object.json", R"({"role": "user"})");
  auto not_a_list = args(dir_ / "t.jinja");
  not_a_list.messages_path = (dir_ / "object.json").string();
  auto outcome = invoke(run_chat_template, not_a_list);
  EXPECT_EQ(outcome.code, 2);
  EXPECT_NE(outcome.err.find("array of messages"), std::string::npos) << outcome.err;
  EXPECT_EQ(invoke(run_chat_template, args(dir_ / "nothing-here")).code, 2);
}

}  // namespace chat_template_command_test
}  // namespace ferrite
