// ferrite/chat/template.h — a Jinja template engine for chat templates.
//
// Contract: `Template::parse` reads a Jinja template the way Hugging Face
// transformers compiles chat templates with Jinja2 (trim_blocks, lstrip_blocks,
// the loopcontrols extension, the `generation` block tag); `render` evaluates
// it over named variables with Jinja2's default Undefined and the immutable
// sandbox (lists and dicts cannot be changed; `list.append` and friends are
// refused as Jinja2's ImmutableSandboxedEnvironment refuses them). Values in
// the variables are data: a `{{` inside a message is printed as it is, never
// evaluated. docs/chat-templates.md lists the statements, filters, tests and
// methods supported.
//
// Limits (TemplateLimits; every one is an error when exceeded, naming the
// template line and column where it applies):
//   max_source_bytes  1 MiB of template text
//   max_depth         256 nested statements/expressions when parsing
//   max_call_depth    64 nested macro calls when rendering (recursion)
//   max_steps         10,000,000 statements executed, loop iterations and calls
//   max_output_bytes  64 MiB of output, and of any one string built
//   max_items         1,000,000 items in a list or dict built by the template
//                     (range, +, *, filters)
//
// Errors are kInvalidArgument; the message reads "chat template line L,
// column C: <what>" and the fields "template_message", "line" and "column"
// carry the parts (a template's `raise_exception(msg)` fails with
// template_message == msg).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(Template t, Template::parse("{{ greeting }}, {{ name | upper }}!"));
//   std::map<std::string, Value> vars{{"greeting", Value("Hello")}, {"name", Value("ada")}};
//   FERRITE_ASSIGN_OR_RETURN(std::string text, t.render(vars));  // "Hello, ADA!"
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ferrite/chat/value.h"
#include "ferrite/core/status.h"

namespace ferrite::chat {

struct TemplateLimits {
  size_t max_source_bytes = size_t{1} << 20;
  int max_depth = 256;
  int max_call_depth = 64;
  uint64_t max_steps = 10'000'000;
  size_t max_output_bytes = size_t{64} << 20;
  size_t max_items = 1'000'000;
};

struct ParsedTemplate;  // the syntax tree (src/chat/ast.h)

class Template {
 public:
  static Result<Template> parse(std::string_view source, const TemplateLimits& limits = {});

  // Renders with `variables` as the template's globals (besides the builtin
  // globals range, namespace, dict, which a variable of the same name hides).
  Result<std::string> render(const std::map<std::string, Value>& variables) const;

 private:
  std::shared_ptr<const ParsedTemplate> parsed_;
  TemplateLimits limits_;
};

}  // namespace ferrite::chat
