// ferrite/core/json_reader.h — strict JSON parsing and path-aware reading.
//
// Contract: `parse_strict_json` is the only way Ferrite turns interchange text
// into JSON. It rejects, as ErrorCode::kSerialization:
//   * text longer than kMaxJsonTextBytes (64 MiB);
//   * syntax errors (the message names the byte offset, line and column and
//     the innermost container open at that point);
//   * duplicate object keys (names the object's path and the key);
//   * nesting deeper than kMaxJsonDepth (64) containers;
//   * documents whose parsed form would need more than kMaxJsonMemoryBytes
//     (128 MiB; less for text over 64 MiB, see json_memory_budget),
//     estimated while parsing — before the memory is used — at
//     48 B per value (an element of a growing vector), 64 B per container,
//     48 B + length per string and
//     192 B + twice the length per object key (the DOM node and the
//     duplicate-key set). Text within 64 MiB can otherwise expand ~30x
//     (a 60 MiB array of zeros needs ~2 GiB);
//   * floating-point numbers anywhere (Ferrite never hashes floats; rationals
//     are written as strings). Integers beyond u64/i64 parse as floats, so
//     they are rejected here too.
// One pass: a SAX handler builds the document while it applies every rule
// (duplicate keys are caught by the object it is filling; it keeps a stack of
// the open containers for the depth cap and the paths in errors), so the
// first violation in text order is the one reported.
//
// `JsonCursor` walks a parsed value and remembers its JSON path
// (`$.program.blocks[0].nodes[2].inputs[1]`; keys that are not plain
// identifiers are written `$.config["a.b"]`). Every accessor reports, as
// kSerialization with the path in the message and in the field "path":
//   unknown fields      "unknown field `$.program.blocks[0].nodez`"
//   missing fields      "missing required field `$.program.blocks[0].id`"
//   wrong types         "`$.weights[1].tensor.dimensions[0]` must be an unsigned integer, found string"
//   out-of-range values "`$.x.axis` must be an unsigned integer at most 4294967295, found 4294967296"
//   invalid identities  "`$.program.inputs[0]` is not a valid program value id: <identity error>"
// Nothing here throws; nlohmann exceptions are caught at this boundary.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(nlohmann::json doc, parse_strict_json(text));
//   JsonCursor root(doc);
//   FERRITE_ASSIGN_OR_RETURN(ObjectReader object, root.object({"id", "dimensions"}));
//   FERRITE_ASSIGN_OR_RETURN(NodeId id, object.required_identity<NodeId>("id"));
//   FERRITE_ASSIGN_OR_RETURN(JsonCursor dims, object.required("dimensions"));
//   FERRITE_ASSIGN_OR_RETURN(std::vector<uint64_t> extents, dims.u64_array());
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"

namespace ferrite {

inline constexpr size_t kMaxJsonTextBytes = size_t{64} << 20;  // 64 MiB
inline constexpr size_t kMaxJsonDepth = 64;
inline constexpr size_t kMaxJsonMemoryBytes = size_t{128} << 20;  // estimated parsed size

// The parsed-size budget for `text_bytes` of text: kMaxJsonMemoryBytes, less
// whatever the text is over kMaxJsonTextBytes (readers with a larger text cap,
// plan files, pay for their text out of it: text and parsed form together stay
// within 192 MiB).
size_t json_memory_budget(size_t text_bytes);

// Strict parse (see contract above).
Result<nlohmann::json> parse_strict_json(std::string_view text);
// The same with another size limit (plan files: kMaxPlanFileBytes).
Result<nlohmann::json> parse_strict_json(std::string_view text, size_t max_bytes);

// For foreign JSON that may hold floats (a Hugging Face `config.json`): the
// size, depth, parsed-size and duplicate-key rules of parse_strict_json, but
// floating-point numbers are kept.
Result<nlohmann::json> parse_bounded_json(std::string_view text,
                                          size_t max_bytes = kMaxJsonTextBytes);

// Every rule of parse_strict_json, without building the document (memory:
// the open containers and their keys): for text Ferrite wrote that a reader
// must accept, such as a plan file before it is written.
Result<void> check_strict_json_text(std::string_view text, size_t max_bytes);

// Applies the value rules of parse_strict_json to a document built in memory
// (duplicate keys cannot occur there): rejects the first floating-point number
// (depth-first, keys in order) and nesting deeper than kMaxJsonDepth, naming
// the path. Iterative, so any depth is safe. `path` is the path of `value`.
Result<void> check_strict_json_value(const nlohmann::json& value, std::string_view path = "$");

// Reads a whole file as text. kIo errors name the path; files larger than
// kMaxJsonTextBytes are rejected before they are read.
Result<std::string> read_text_file(const std::filesystem::path& path);
Result<std::string> read_text_file(const std::filesystem::path& path, size_t max_bytes);

// "null", "boolean", "string", "array", "object", "unsigned integer",
// "negative integer", "float".
std::string_view json_value_kind(const nlohmann::json& value);

// The path of `parent`'s member `key`: `$.a.key` or `$.a["odd key"]`.
std::string json_child_path(std::string_view parent, std::string_view key);
// The path of `parent`'s element `index`: `$.a[3]`.
std::string json_index_path(std::string_view parent, size_t index);

// A kSerialization error whose message is "`path` message" and whose field
// "path" is `path`. The message is a fmt format checked at compile time with
// its arguments, or, without arguments, a text taken as it is.
Error json_error_at(std::string_view path, std::string_view message,
                    SourceLocation location = SourceLocation::current());
template <class First, class... Rest>
Error json_error_at(
    std::string_view path,
    FormatWithLocation<std::type_identity_t<First>, std::type_identity_t<Rest>...> format,
    First&& first, Rest&&... rest) {
  return json_error_at(
      path, fmt::format(format.format(), std::forward<First>(first), std::forward<Rest>(rest)...),
      format.location());
}

// Keeps `status`'s code (a semantic rejection, not a malformed file) and
// prefixes its message with the path: "`path`: message"; adds field "path".
Error with_json_path(Status status, std::string_view path);

class ObjectReader;

class JsonCursor {
 public:
  explicit JsonCursor(const nlohmann::json& value, std::string path = "$")
      : value_(&value), path_(std::move(path)) {}

  const nlohmann::json& json() const { return *value_; }
  const std::string& path() const { return path_; }
  bool is_null() const { return value_->is_null(); }
  bool is_string() const { return value_->is_string(); }
  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_integer() const { return value_->is_number_integer(); }

  // kSerialization "`path` <message>" (a format and its arguments, as for
  // json_error_at).
  Error error(std::string_view message, SourceLocation location = SourceLocation::current()) const {
    return json_error_at(path_, message, location);
  }
  template <class First, class... Rest>
  Error error(FormatWithLocation<std::type_identity_t<First>, std::type_identity_t<Rest>...> format,
              First&& first, Rest&&... rest) const {
    return json_error_at(
        path_,
        fmt::format(format.format(), std::forward<First>(first), std::forward<Rest>(rest)...),
        format.location());
  }
  // kSerialization "`path` must be <expected>, found <kind>".
  Error type_error(std::string_view expected,
                   SourceLocation location = SourceLocation::current()) const;
  // Wraps an inner status (e.g. a wire-name parse error) as kSerialization:
  // "`path` <what>: <inner message>".
  Error wrap_error(std::string_view what, const Status& inner,
                   SourceLocation location = SourceLocation::current()) const;
  // The string here read by `parse` (a text → Result<T> function such as
  // parse_tensor_access); its error is wrapped as "is not a valid <what>".
  template <class Parse>
  auto parsed_string(Parse&& parse, std::string_view what) const
      -> decltype(parse(std::string_view{})) {
    FERRITE_ASSIGN_OR_RETURN(std::string text, string());
    auto value = parse(text);
    if (!value) return wrap_error(fmt::format("is not a valid {}", what), value.error());
    return value;
  }

  // An object whose keys are all in `allowed` (else "unknown field `path.key`",
  // reported for the first unknown key in byte order).
  Result<ObjectReader> object(std::initializer_list<std::string_view> allowed) const;
  Result<ObjectReader> object(const std::vector<std::string_view>& allowed) const;
  // Any object, as (key, cursor) pairs in key order (for maps such as config
  // or attributes).
  Result<std::vector<std::pair<std::string, JsonCursor>>> entries() const;
  // An object with exactly one key, which must be one of `allowed`: returns
  // the key and the cursor of its value (for {"strided":[...]}-style variants).
  Result<std::pair<std::string, JsonCursor>> single_key(
      std::initializer_list<std::string_view> allowed) const;

  Result<std::vector<JsonCursor>> array() const;
  // An array of exactly `size` elements.
  Result<std::vector<JsonCursor>> array_of_size(size_t size) const;

  Result<bool> boolean() const;
  Result<std::string> string() const;
  // A string that is not empty.
  Result<std::string> non_empty_string() const;
  Result<uint64_t> u64() const;
  Result<uint32_t> u32() const;
  Result<uint16_t> u16() const;
  Result<uint8_t> u8() const;
  Result<int64_t> i64() const;
  // "MAJOR.MINOR" (decimal, no sign, no leading zeros, each <= 65535).
  Result<ContractVersion> version_text() const;

  Result<std::vector<uint64_t>> u64_array() const;
  Result<std::vector<uint32_t>> u32_array() const;
  Result<std::vector<int64_t>> i64_array() const;
  Result<std::vector<std::string>> string_array() const;

  template <class Id>
  Result<Id> identity() const {
    FERRITE_ASSIGN_OR_RETURN(std::string text, string());
    auto id = Id::create(std::move(text));
    if (!id) {
      return wrap_error(std::string("is not a valid ") + std::string(Id::kind()) + " id",
                        id.error());
    }
    return std::move(*id);
  }

  template <class Id>
  Result<std::vector<Id>> identity_array() const {
    FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, array());
    std::vector<Id> out;
    out.reserve(items.size());
    for (const JsonCursor& item : items) {
      FERRITE_ASSIGN_OR_RETURN(Id id, item.identity<Id>());
      out.push_back(std::move(id));
    }
    return out;
  }

 private:
  Result<uint64_t> bounded_unsigned(uint64_t maximum) const;

  const nlohmann::json* value_;
  std::string path_;
};

// A view of one JSON object whose keys were checked against an allow-list.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& object, std::string path)
      : object_(&object), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  bool has(std::string_view key) const;

  // The member `key`, or kSerialization "missing required field `path.key`".
  Result<JsonCursor> required(std::string_view key) const;
  // The member `key` when present (a JSON null counts as present).
  std::optional<JsonCursor> optional(std::string_view key) const;

  // Shorthands: required(key) then the typed accessor.
  Result<std::string> required_string(std::string_view key) const;
  Result<bool> required_bool(std::string_view key) const;
  Result<uint64_t> required_u64(std::string_view key) const;
  Result<uint32_t> required_u32(std::string_view key) const;
  Result<ContractVersion> required_version_text(std::string_view key) const;
  template <class Id>
  Result<Id> required_identity(std::string_view key) const {
    FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, required(key));
    return cursor.identity<Id>();
  }
  // The member `key` as an identity, or nullopt when it is JSON null. The key
  // itself is required (writers always emit it).
  template <class Id>
  Result<std::optional<Id>> required_nullable_identity(std::string_view key) const {
    FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, required(key));
    if (cursor.is_null()) return std::optional<Id>();
    FERRITE_ASSIGN_OR_RETURN(Id id, cursor.identity<Id>());
    return std::optional<Id>(std::move(id));
  }

 private:
  const nlohmann::json* object_;
  std::string path_;
};

}  // namespace ferrite
