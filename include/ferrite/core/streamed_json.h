// ferrite/core/streamed_json.h — JSON documents whose large arrays are read
// one element at a time.
//
// Contract: `parse_strict_json_streamed(text, max_bytes, streamed)` applies
// every rule of parse_strict_json (json_reader.h) to the whole text, in one
// pass, and reports the same first violation; but the elements of each array
// whose path matches one of `streamed` are not put in the document. There the
// document holds an empty array, and the result keeps where each element lies
// in `text`. `for_each_element` then parses those elements one at a time, each
// with its own path (`$.payload.nodes[41]`), so a reader of a 100,000-node
// program or plan holds the document's skeleton, the text and one element,
// never a document tree of every node (about 10× the text).
//
// Memory: a streamed element costs 16 B of the parsed-size estimate once it is
// closed (its own estimate is charged while it is read and then refunded), so
// kMaxJsonMemoryBytes bounds the skeleton and the element table together and
// a single element as before. Scalars directly inside a streamed array (which
// no Ferrite schema allows) are kept as their own text, charged as a string.
//
// HAZARD: the result refers into `text` (element spans): keep the text alive
// and unchanged for as long as the StreamedJson is used.
//
// Patterns are paths of keys, with "[]" standing for any array index:
// {"program", "blocks", "[]", "nodes"} streams every block's nodes. A pattern
// only matches an array; streamed arrays do not nest (an array inside a
// streamed element is never itself streamed).
//
// `encode_canonical` writes a value of the document with its streamed arrays
// in place, exactly as CanonicalEncoder::json would write the document
// parse_strict_json builds from the same text (hashes and comparisons of
// plan files; tests hold both equal).
//
// Example:
//   static const JsonArrayPattern kNodes{{"program", "blocks", "[]", "nodes"}};
//   FERRITE_ASSIGN_OR_RETURN(StreamedJson doc, parse_strict_json_streamed(text, kMaxJsonTextBytes,
//                                                                        {&kNodes, 1}));
//   JsonCursor nodes = ...;  // $.program.blocks[0].nodes, an empty array in doc.document()
//   FERRITE_RETURN_IF_ERROR(for_each_element(nodes, &doc, [&](const JsonCursor& node) {
//     return read_node(node);
//   }));
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/core/status.h"

namespace ferrite {

// A path of object keys and "[]" (any array index), from the root.
struct JsonArrayPattern {
  std::vector<std::string> components;
};

class StreamedJson {
 public:
  StreamedJson() = default;

  // The document without the elements of its streamed arrays.
  const nlohmann::json& document() const { return document_; }
  // The element texts of the streamed array at `path` (a JsonCursor path
  // such as "$.payload.nodes"), in order; null when no array there was
  // streamed.
  const std::vector<std::string_view>* elements_at(std::string_view path) const;
  // Streamed elements in all arrays.
  size_t streamed_elements() const;

 private:
  friend class StreamedJsonBuilder;
  nlohmann::json document_;
  std::map<std::string, std::vector<std::string_view>, std::less<>> arrays_;
  std::vector<std::unique_ptr<const std::string>> owned_;  // scalar elements' texts
};

// See the contract above. Errors are parse_strict_json's.
Result<StreamedJson> parse_strict_json_streamed(std::string_view text, size_t max_bytes,
                                                std::span<const JsonArrayPattern> streamed);

// check_strict_json_text with the same streamed arrays: whether
// parse_strict_json_streamed would accept `text` (a plan before it is written).
Result<void> check_strict_json_streamed(std::string_view text, size_t max_bytes,
                                        std::span<const JsonArrayPattern> streamed);

// Calls `visit` for each element of the array `array` (a cursor into
// `streamed->document()`, or into any document when `streamed` is null), in
// order: the document's own elements, or, for a streamed array, each element
// parsed on its own. Stops at the first error `visit` returns. Errors with
// kSerialization when `array` is not an array.
Result<void> for_each_element(const JsonCursor& array, const StreamedJson* streamed,
                              const std::function<Result<void>(const JsonCursor&)>& visit);

// The number of elements of `array` (streamed or not).
Result<size_t> element_count(const JsonCursor& array, const StreamedJson* streamed);

// for_each_element for element `index` alone (below element_count): safe to
// call for different indices of one array from several threads at once.
Result<void> visit_element(const JsonCursor& array, const StreamedJson* streamed, size_t index,
                           const std::function<Result<void>(const JsonCursor&)>& visit);

// Writes `value` (a value of streamed.document() at JSON path `path`)
// canonically, each streamed array with its elements; an object's member
// `omitted` (at this level only) is left out when not empty.
Result<void> encode_canonical(CanonicalEncoder& out, const nlohmann::json& value,
                              std::string_view path, const StreamedJson& streamed,
                              std::string_view omitted = {});

// The JSON path of the value that holds byte `offset` of canonical (compact)
// JSON `text`: the innermost member or element begun before it (a
// difference between two canonical texts, found by comparing their bytes,
// named for people). `other` is the byte the other text has at `offset`
// ('\0' if it ended): where the two differ in an array's length (one has ','
// where the other ends the array), the path is the element one side lacks.
//   canonical_json_path_at(R"({"a":[1,{"b":2}]})", 13, '3') == "$.a[1].b"
std::string canonical_json_path_at(std::string_view text, uint64_t offset, char other);

}  // namespace ferrite
