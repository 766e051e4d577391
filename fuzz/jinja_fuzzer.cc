// fuzz/jinja_fuzzer.cc — feeds arbitrary bytes as a chat template to the
// Jinja engine (ferrite/chat/chat_template.h) and renders it over a fixed
// conversation (system, user, assistant, user; add_generation_prompt on,
// bos/eos set, a fixed date). Limits are lowered (100,000 steps, 1 MiB of
// output, 10,000 items, depth 64) so a hostile input fails fast instead of
// timing out; parse and render errors are expected and ignored. Any crash,
// sanitizer report, leak or timeout is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "ferrite/chat/chat_template.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::ordered_json messages = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Hi {{ there }}"},
    {"role": "assistant", "content": "Hello!", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
    {"role": "user", "content": "héllo 😀"}
  ])");
  ferrite::chat::ChatRenderOptions options;
  options.add_generation_prompt = true;
  options.bos_token = "<s>";
  options.eos_token = "</s>";
  options.date = "2026-01-15";
  options.limits.max_steps = 100000;
  options.limits.max_output_bytes = 1 << 20;
  options.limits.max_items = 10000;
  options.limits.max_depth = 64;
  options.limits.max_call_depth = 32;
  std::string source(reinterpret_cast<const char*>(data), size);
  auto rendered = ferrite::chat::render_chat_template(source, messages, options);
  (void)rendered;
  return 0;
}
