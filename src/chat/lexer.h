// chat/lexer.h — splits a Jinja template into text and tag tokens.
//
// Contract: applies Jinja2's source handling as Hugging Face transformers
// configures it: newlines normalized to "\n", one trailing newline dropped
// (keep_trailing_newline off), `trim_blocks` (the first newline after a block
// or comment tag is removed), `lstrip_blocks` (spaces and tabs before a block
// or comment tag at the start of a line are removed; `{%+` disables it), and
// the `-` whitespace control on either side of any tag. `{% raw %}` bodies are
// text. Inside tags it yields names, strings (Python escapes), integers,
// floats and operators; a tag ends only where brackets balance. Every token
// carries its line and column (1-based). Errors name the line and column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite::chat {

enum class TokenKind {
  kText,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string text;  // text data, name, decoded string, operator, or number spelling
  int line = 1;
  int column = 1;
};

struct LexLimits {
  size_t max_source_bytes = size_t{1} << 20;
  size_t max_tokens = size_t{1} << 20;
};

Result<std::vector<Token>> tokenize(std::string_view source, const LexLimits& limits = {});

// "line 3, column 7: message", the form every template error takes.
Error template_error(int line, int column, std::string message);

}  // namespace ferrite::chat
