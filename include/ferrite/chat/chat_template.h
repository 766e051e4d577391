// ferrite/chat/chat_template.h — rendering a model's chat template.
//
// Contract: `render_chat_template` renders a chat template (GGUF
// `tokenizer.chat_template`, or `chat_template` of a Hugging Face
// tokenizer_config.json) over a conversation the way Hugging Face
// transformers' apply_chat_template(tokenize=False) does: the variables are
// `messages`, `tools` (none), `documents` (none), `add_generation_prompt`,
// `bos_token`, `eos_token`, plus any `extra` variables; the globals
// `raise_exception(message)` (rendering fails with exactly that message, in
// the error's "template_message" field) and `strftime_now(format)` (formats
// `date`, a fixed YYYY-MM-DD, at 00:00:00, C locale). Message content is data:
// it is never evaluated as template text. The output is returned byte for
// byte (no trimming). Errors: kInvalidArgument, "chat template line L, column
// C: ..." for template problems; a malformed date or messages value names it.
//
// `select_chat_template` picks the template from a tokenizer_config.json
// `chat_template` value: a string, or a list of {"name", "template"} objects
// of which the one named "default" is used (transformers' rule; an error when
// there is none).
//
// Example:
//   ChatRenderOptions options;
//   options.add_generation_prompt = true;
//   options.bos_token = "<|begin_of_text|>";
//   options.date = "2026-01-15";
//   auto messages = nlohmann::ordered_json::parse(R"([{"role":"user","content":"Hi"}])");
//   FERRITE_ASSIGN_OR_RETURN(std::string prompt, render_chat_template(source, messages, options));
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ferrite/chat/template.h"
#include "ferrite/chat/value.h"
#include "ferrite/core/status.h"

namespace ferrite::chat {

struct ChatRenderOptions {
  bool add_generation_prompt = false;
  std::string bos_token;
  std::string eos_token;
  std::string date = "1970-01-01";  // what strftime_now formats, YYYY-MM-DD
  std::map<std::string, Value> extra;  // more variables (tools, documents, enable_thinking, ...)
  TemplateLimits limits;
};

// `messages` must be a JSON array of message objects.
Result<std::string> render_chat_template(std::string_view template_source,
                                         const nlohmann::ordered_json& messages,
                                         const ChatRenderOptions& options);

// The form `run --chat` calls: messages as JSON text.
Result<std::string> render(std::string_view template_source, std::string_view messages_json,
                           bool add_generation_prompt, std::string_view bos_token,
                           std::string_view eos_token, std::string_view date);

Result<std::string> select_chat_template(const nlohmann::ordered_json& chat_template);

// strftime of `date` (YYYY-MM-DD, midnight) in the C locale.
Result<std::string> format_date(std::string_view date, std::string_view format);

}  // namespace ferrite::chat
