// chat/parser.h — builds the syntax tree of a Jinja template from its tokens.
//
// Contract: accepts the statements the chat templates use (if/elif/else,
// for with `if` filter, tuple targets and else, set (expression, namespace
// attribute, block with filters), macro with defaults, call blocks with
// caller parameters, filter blocks, break/continue (loopcontrols) and
// `generation`) and Jinja2's expression grammar with its precedence:
// ternary, or, and, not, comparisons (chained; in, not in), + -, ~, * / // %,
// **, unary - +, then postfix attribute/subscript/slice/call, filters and
// `is` tests. Nesting deeper than `max_depth` (statements plus expressions)
// is an error, so hostile templates cannot exhaust the stack. Errors read
// "chat template line L, column C: ..." (template_error).
#pragma once

#include <vector>

#include "chat/ast.h"
#include "chat/lexer.h"

namespace ferrite::chat {

Result<Body> parse_template(const std::vector<Token>& tokens, int max_depth);

}  // namespace ferrite::chat
