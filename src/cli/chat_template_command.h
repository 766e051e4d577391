// cli/chat_template_command.h — `ferrite chat-template (MODEL | FILE.jinja)
// --messages MESSAGES.json [--add-generation-prompt] [--bos-token T]
// [--eos-token T] [--date YYYY-MM-DD]`.
//
// Contract: renders a chat template (ferrite/chat/chat_template.h) and writes
// the text to `out` byte for byte, nothing added. The template comes from
//   * a GGUF file: `tokenizer.chat_template`; bos/eos text default to the
//     entries of `tokenizer.ggml.tokens` at `tokenizer.ggml.bos_token_id` /
//     `eos_token_id` (empty when absent);
//   * a Hugging Face directory (or its tokenizer_config.json): `chat_template`
//     (a string, or the list entry named "default"), else the directory's
//     `chat_template.jinja`; `bos_token`/`eos_token` as strings or
//     {"content": ...} objects;
//   * any other file: the template text itself (bos/eos empty).
// MESSAGES.json is an array of messages, or an object with "messages" whose
// other keys become template variables (tools, documents, enable_thinking...).
// `--date` fixes what strftime_now formats (default: today, local time).
// Exit codes (cli.h): 0 rendered; 1 the template failed (its own
// raise_exception message, or a syntax/evaluation error with line and column,
// on `err`); 2 unreadable or malformed inputs.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "ferrite/core/status.h"

namespace ferrite::cli {

// A model's chat template and the bos/eos texts it is rendered with, from a
// GGUF file, a Hugging Face directory (or its tokenizer_config.json) or a
// template file (see the contract above). `ferrite run --chat` uses it too.
struct ChatTemplateSource {
  std::string text;
  std::string bos_token;
  std::string eos_token;
};
Result<ChatTemplateSource> load_chat_template(const std::string& path);

// Today's local date as YYYY-MM-DD (what strftime_now sees by default).
std::string today_date();

struct ChatTemplateArgs {
  std::string source_path;
  std::string messages_path;
  bool add_generation_prompt = false;
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<std::string> date;
};

int run_chat_template(const ChatTemplateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace ferrite::cli
