// chat/json_dump.h — json.dumps for template values (the `tojson` filter).
//
// Contract: writes `value` as Python's json.dumps does with the given
// options: separators ", " and ": " without indent, "," and ": " with one;
// `indent` nullopt for one line, else the text repeated per level (an int
// indent n is n spaces); non-ASCII kept unless ensure_ascii; key order kept
// unless sort_keys; floats as Python's repr, NaN/Infinity spelled as Python
// does. Undefined, namespaces and callables fail ("Object of type X is not
// JSON serializable"). Nesting deeper than 512 levels fails.
#pragma once

#include <optional>
#include <string>

#include "ferrite/chat/value.h"

namespace ferrite::chat {

struct JsonDumpOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;
  std::optional<std::string> item_separator;
  std::optional<std::string> key_separator;
  bool sort_keys = false;
};

Result<std::string> dump_json(const Value& value, const JsonDumpOptions& options);

}  // namespace ferrite::chat
