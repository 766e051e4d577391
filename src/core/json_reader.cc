#include "ferrite/core/json_reader.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <limits>
#include <optional>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "ferrite/core/streamed_json.h"
#include "ferrite/core/text.h"
#include "streamed_json_builder.h"
#include "strict_json_fast_path.h"

namespace ferrite {
namespace {

using nlohmann::json;

bool is_plain_key(std::string_view key) {
  if (key.empty()) return false;
  const auto first = static_cast<unsigned char>(key.front());
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_')) {
    return false;
  }
  return std::all_of(key.begin(), key.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_';
  });
}

// Quoted, escaped and (beyond 64 bytes) shortened rendering of a key.
std::string quoted_key(std::string_view key) {
  std::string out = "\"";
  for (size_t i = 0; i < key.size() && i < 64; ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c >= 0x20 && c < 0x7f && c != '`') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (key.size() > 64) out += "...";
  out.push_back('"');
  return out;
}

// Thrown from the SAX handler to abort parsing; caught in parse_json_text.
struct StrictJsonViolation {
  std::string path;
  std::string message;
};

}  // namespace

namespace {

// A forward iterator over the text that records how far the parser has read
// (nlohmann's SAX events carry no positions). After start_object/start_array
// the parser has read exactly through the opening bracket, after
// end_object/end_array exactly through the closing one: spans of streamed
// container elements come from these two positions
// (StreamedJsonTest.SpansParseToTheDocumentsElements holds them equal).
class TrackedIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedIterator(const char* at, const char** read_to) : at_(at), read_to_(read_to) {}
  reference operator*() const { return *at_; }
  TrackedIterator& operator++() {
    ++at_;
    *read_to_ = at_;
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedIterator& other) const { return at_ == other.at_; }
  bool operator!=(const TrackedIterator& other) const { return at_ != other.at_; }

 private:
  const char* at_;
  const char** read_to_;
};

// nlohmann's SAX events in, the document out (or, with `build` false, only
// the checks), enforcing the limits as each event arrives: the depth cap,
// duplicate keys, the parsed-size estimate and, unless floats are kept, no
// floating-point numbers. One pass over the text: no second walk over the
// document, no parser callback copying every value. Arrays matching a
// streamed pattern (streamed_json.h) keep their elements' spans instead of
// their elements; those elements are checked without being built.
class StrictSaxHandler {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  StrictSaxHandler(bool build, bool keep_floats, size_t memory_budget)
      : build_(build), keep_floats_(keep_floats), memory_budget_(memory_budget) {}

  // Streams the arrays matching `patterns`; spans are recorded into `builder`
  // (null: check only) relative to `text`, whose read position is *read_to.
  void stream(std::span<const JsonArrayPattern> patterns, StreamedJsonBuilder* builder,
              std::string_view text, const char* const* read_to) {
    patterns_ = patterns;
    builder_ = builder;
    text_ = text;
    read_to_ = read_to;
  }

  // The document being built (only when building, which needs a builder).
  json& document() { return builder_->document(); }

  bool null() { return scalar(json(nullptr), 48); }
  bool boolean(bool value) { return scalar(json(value), 48); }
  bool number_integer(number_integer_t value) { return scalar(json(value), 48); }
  bool number_unsigned(number_unsigned_t value) { return scalar(json(value), 48); }
  bool number_float(number_float_t value, const string_t& /*text*/) {
    if (!keep_floats_) {
      enter_element();
      throw StrictJsonViolation{element_path(),
                                "is a floating-point number; Ferrite accepts only integers "
                                "in u64/i64 range (write rationals as strings such as "
                                "\"1/100000\")"};
    }
    return scalar(json(value), 48);
  }
  bool string(string_t& value) {
    const size_t cost = 48 + value.size();
    return scalar(json(std::move(value)), cost);
  }
  bool binary(binary_t& /*value*/) { return false; }  // JSON text has none

  bool start_object(size_t /*elements*/) { return open(true); }
  bool start_array(size_t /*elements*/) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& key) {
    charge(192 + 2 * key.size());
    Frame& top = frames_.back();
    if (top.container != nullptr) {
      auto& members = top.container->template get_ref<json::object_t&>();
      auto [at, inserted] = members.try_emplace(std::move(key));
      if (!inserted) duplicate(at->first);
      top.key = &at->first;
      top.slot = &at->second;
    } else {
      auto [at, inserted] = top.keys.insert(std::move(key));
      if (!inserted) duplicate(*at);
      top.key = &*at;
    }
    return true;
  }

  bool parse_error(size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) {
    error_position_ = position;
    error_message_ = error.what();
    return false;
  }

  const std::optional<size_t>& error_position() const { return error_position_; }
  const std::string& error_message() const { return error_message_; }

  // Path of the innermost open container (for syntax errors), or "$".
  std::string container_path() const {
    std::string path = "$";
    for (size_t i = 0; i + 1 < frames_.size(); ++i) path = component(path, frames_[i]);
    return path;
  }

 private:
  struct Frame {
    bool is_object = false;
    json* container = nullptr;    // the open object or array, when built
    json* slot = nullptr;         // built objects: the member the next value fills
    const std::string* key = nullptr;  // the current member's key (objects)
    size_t next_index = 0;        // elements started so far (arrays)
    std::set<std::string> keys;   // objects not built: the keys seen
    std::vector<std::string_view>* spans = nullptr;  // a streamed array (check only: &unused)
    bool element = false;         // a container that is an element of a streamed array
    bool inside_stream = false;   // an element of a streamed array or inside one
    size_t element_begin = 0;     // its first byte in the text
    size_t charged_before = 0;    // the estimate before it opened
  };

  static std::string component(const std::string& parent, const Frame& frame) {
    if (frame.is_object) return json_child_path(parent, frame.key ? *frame.key : "");
    return json_index_path(parent, frame.next_index == 0 ? 0 : frame.next_index - 1);
  }

  // Path of the element being started (the new container's own path).
  std::string element_path() const {
    std::string path = "$";
    for (const Frame& frame : frames_) path = component(path, frame);
    return path;
  }

  [[noreturn]] void duplicate(const std::string& key) const {
    throw StrictJsonViolation{container_path(),
                              fmt::format("has duplicate key {}", quoted_key(key))};
  }

  // Adds the estimated cost of one parsed element; aborts past the budget.
  void charge(size_t bytes) {
    estimated_bytes_ += bytes;
    if (estimated_bytes_ > memory_budget_) {
      throw StrictJsonViolation{
          container_path(),
          fmt::format("makes the JSON document need more than the limit of {} MiB in memory "
                      "(estimated while parsing)",
                      memory_budget_ >> 20)};
    }
  }

  void enter_element() {
    if (frames_.empty()) return;
    Frame& top = frames_.back();
    if (!top.is_object) ++top.next_index;
  }

  // Whether the next value is built into the document.
  bool building() const {
    if (frames_.empty()) return build_;
    const Frame& top = frames_.back();
    return top.container != nullptr && top.spans == nullptr;
  }

  bool in_streamed_array() const { return !frames_.empty() && frames_.back().spans != nullptr; }

  // Where the next value goes (when building): the root, the current
  // member, or a new element of the open array.
  json* place() {
    if (frames_.empty()) return &document();
    Frame& top = frames_.back();
    if (top.is_object) return top.slot;
    auto& elements = top.container->template get_ref<json::array_t&>();
    elements.emplace_back();
    return &elements.back();
  }

  size_t read_offset() const {
    return read_to_ == nullptr ? 0 : static_cast<size_t>(*read_to_ - text_.data());
  }

  // Whether the array being opened (a child of the open frames) is streamed.
  bool matches_pattern() const {
    for (const JsonArrayPattern& pattern : patterns_) {
      if (pattern.components.size() != frames_.size()) continue;
      bool match = true;
      for (size_t i = 0; i < frames_.size() && match; ++i) {
        const Frame& frame = frames_[i];
        const std::string& want = pattern.components[i];
        match = want == "[]" ? !frame.is_object
                             : frame.is_object && frame.key != nullptr && *frame.key == want;
      }
      if (match) return true;
    }
    return false;
  }

  bool scalar(json value, size_t cost) {
    charge(cost);
    enter_element();
    if (building()) {
      *place() = std::move(value);
    } else if (in_streamed_array() && builder_ != nullptr) {
      // A scalar element keeps its own text (the cost charged covers it).
      frames_.back().spans->push_back(builder_->own(value.dump()));
    }
    return true;
  }

  bool open(bool is_object) {
    charge(64);
    enter_element();
    if (frames_.size() + 1 > kMaxJsonDepth) {
      throw StrictJsonViolation{
          element_path(),
          fmt::format("nests deeper than the limit of {} containers", kMaxJsonDepth)};
    }
    Frame frame;
    frame.is_object = is_object;
    if (in_streamed_array()) {
      frame.element = true;
      frame.element_begin = read_offset() - 1;  // read through the opening bracket
      frame.charged_before = estimated_bytes_ - 64;
    }
    frame.inside_stream =
        !frames_.empty() && (frames_.back().inside_stream || frames_.back().spans != nullptr);
    const bool streams =
        !is_object && !patterns_.empty() && !frame.inside_stream && matches_pattern();
    if (building()) {
      // An open container's address is stable: its parent does not change
      // until it is closed.
      json* target = place();
      *target = is_object ? json::object() : json::array();
      frame.container = target;
    }
    if (streams) {
      frame.spans = builder_ != nullptr ? &builder_->array(element_path()) : &unused_spans_;
    }
    frames_.push_back(std::move(frame));
    return true;
  }

  bool close() {
    if (frames_.empty()) return true;
    Frame& top = frames_.back();
    if (top.element) {
      const size_t end = read_offset();  // read through the closing bracket
      const bool closed = end > top.element_begin && end <= text_.size() &&
                          (text_[end - 1] == '}' || text_[end - 1] == ']');
      if (!closed) {
        throw StrictJsonViolation{container_path(),
                                  "could not be delimited in the text (internal error)"};
      }
      // The element was checked, not built: only its span stays.
      const std::string_view span = text_.substr(top.element_begin, end - top.element_begin);
      estimated_bytes_ = top.charged_before;
      frames_.pop_back();
      charge(kStreamedElementCost);
      if (builder_ != nullptr) frames_.back().spans->push_back(span);
      return true;
    }
    frames_.pop_back();
    return true;
  }

  bool build_;
  bool keep_floats_;
  size_t memory_budget_;
  std::vector<Frame> frames_;
  size_t estimated_bytes_ = 0;
  std::optional<size_t> error_position_;
  std::string error_message_;
  std::span<const JsonArrayPattern> patterns_;
  StreamedJsonBuilder* builder_ = nullptr;
  std::string_view text_;
  const char* const* read_to_ = nullptr;
  std::vector<std::string_view> unused_spans_;
};

std::pair<size_t, size_t> line_and_column(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, offset - line_start + 1};
}

// nlohmann messages look like "[json.exception.parse_error.101] parse error at
// line 1, column 3: syntax error while parsing value - ..."; keep the detail.
std::string parse_error_detail(std::string_view what) {
  const auto colon = what.find(": ");
  if (colon != std::string_view::npos) return std::string(what.substr(colon + 2));
  return std::string(what);
}

std::string join_keys(const std::vector<std::string_view>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("`{}`", keys[i]);
  }
  return out;
}

}  // namespace

// Both are on the hot path of every reader (every field read makes its
// cursor's path), hence appends into one reservation instead of fmt.
std::string json_child_path(std::string_view parent, std::string_view key) {
  std::string out;
  if (is_plain_key(key)) {
    out.reserve(parent.size() + 1 + key.size());
    out.append(parent).push_back('.');
    out.append(key);
    return out;
  }
  const std::string quoted = quoted_key(key);
  out.reserve(parent.size() + 2 + quoted.size());
  out.append(parent).push_back('[');
  out.append(quoted).push_back(']');
  return out;
}

std::string json_index_path(std::string_view parent, size_t index) {
  char digits[24];
  const auto end = fmt::format_to(digits, "{}", index);
  std::string out;
  out.reserve(parent.size() + 2 + static_cast<size_t>(end - digits));
  out.append(parent).push_back('[');
  out.append(digits, end).push_back(']');
  return out;
}

Error json_error_at(std::string_view path, std::string_view message, SourceLocation location) {
  std::string text = fmt::format("`{}` {}", path, message);
  return make_error(ErrorCode::kSerialization, std::move(text), location).with_field("path", path);
}

Error with_json_path(Status status, std::string_view path) {
  status.annotate("`{}`", path);
  if (!status.fields().contains("path")) status.with_field("path", std::string(path));
  return make_error(std::move(status));
}

std::string_view json_value_kind(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::number_unsigned: return "unsigned integer";
    case json::value_t::number_integer:
      return value.get<int64_t>() < 0 ? "negative integer" : "unsigned integer";
    case json::value_t::number_float: return "float";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "discarded";
  }
  return "unknown";
}

namespace {

// The text through a StrictSaxHandler (building the document into
// `builder`'s StreamedJson, or only checking when `build` is false); the first
// violation, if any. Every byte is read by nlohmann's lexer.
Result<void> read_with_nlohmann(std::string_view text, bool build, bool keep_floats,
                                std::span<const JsonArrayPattern> streamed,
                                StreamedJsonBuilder* builder) {
  StrictSaxHandler handler(build, keep_floats, json_memory_budget(text.size()));
  const char* read_to = text.data();
  handler.stream(streamed, build ? builder : nullptr, text, &read_to);
  bool parsed = false;
  try {
    const char* begin = text.data();
    parsed = json::sax_parse(TrackedIterator(begin, &read_to),
                             TrackedIterator(begin + text.size(), &read_to), &handler,
                             json::input_format_t::json, /*strict=*/true,
                             /*ignore_comments=*/false);
  } catch (const StrictJsonViolation& violation) {
    return json_error_at(violation.path, violation.message);
  } catch (const std::exception& error) {
    return json_error_at(handler.container_path(), "could not be parsed: {}", error.what());
  }
  if (handler.error_position()) {
    // The position counts the characters read; the last one is the culprit.
    const size_t position = *handler.error_position();
    const size_t offset = position == 0 ? 0 : position - 1;
    const auto [line, column] = line_and_column(text, offset);
    const std::string path = handler.container_path();
    return make_error(ErrorCode::kSerialization,
                      "JSON syntax error at byte offset {} (line {}, column {}) inside `{}`: {}",
                      offset, line, column, path, parse_error_detail(handler.error_message()))
        .with_field("path", path)
        .with_field("offset", std::to_string(offset));
  }
  if (!parsed) return json_error_at(handler.container_path(), "could not be parsed");
  return {};
}

// The size cap, then the fast path (strict_json_fast_path.h): Ferrite's own
// files take it whole; whatever it leaves undecided (floats allowed,
// non-ASCII text, any violation) is read again from the start by
// nlohmann's reader, which words the error.
Result<void> parse_json_text(std::string_view text, size_t max_bytes, bool build, bool keep_floats,
                             std::span<const JsonArrayPattern> streamed,
                             StreamedJsonBuilder* builder) {
  if (text.size() > max_bytes) {
    return make_error(ErrorCode::kSerialization,
                      "`$` JSON text of {} bytes exceeds the limit of {} bytes", text.size(),
                      max_bytes)
        .with_field("path", "$");
  }
  if (!keep_floats) {
    StreamedJsonBuilder* fast_builder = build ? builder : nullptr;
    if (read_strict_json_fast(text, json_memory_budget(text.size()), streamed, fast_builder)) {
      return {};
    }
    if (fast_builder != nullptr) fast_builder->reset();
  }
  return read_with_nlohmann(text, build, keep_floats, streamed, builder);
}

Result<json> parse_document(std::string_view text, size_t max_bytes, bool keep_floats) {
  StreamedJson out;
  StreamedJsonBuilder builder(out);
  FERRITE_RETURN_IF_ERROR(parse_json_text(text, max_bytes, /*build=*/true, keep_floats, {},
                                          &builder));
  return std::move(builder.document());
}

}  // namespace

Result<void> read_strict_json_with_nlohmann(std::string_view text,
                                            std::span<const JsonArrayPattern> streamed,
                                            StreamedJsonBuilder* builder) {
  return read_with_nlohmann(text, builder != nullptr, /*keep_floats=*/false, streamed, builder);
}

size_t json_memory_budget(size_t text_bytes) {
  if (text_bytes <= kMaxJsonTextBytes) return kMaxJsonMemoryBytes;
  const size_t over = text_bytes - kMaxJsonTextBytes;
  return over >= kMaxJsonMemoryBytes ? 0 : kMaxJsonMemoryBytes - over;
}

Result<json> parse_strict_json(std::string_view text) {
  return parse_strict_json(text, kMaxJsonTextBytes);
}

Result<json> parse_strict_json(std::string_view text, size_t max_bytes) {
  return parse_document(text, max_bytes, /*keep_floats=*/false);
}

Result<void> check_strict_json_text(std::string_view text, size_t max_bytes) {
  return parse_json_text(text, max_bytes, /*build=*/false, /*keep_floats=*/false, {}, nullptr);
}

Result<json> parse_bounded_json(std::string_view text, size_t max_bytes) {
  return parse_document(text, max_bytes, /*keep_floats=*/true);
}

Result<StreamedJson> parse_strict_json_streamed(std::string_view text, size_t max_bytes,
                                                std::span<const JsonArrayPattern> streamed) {
  StreamedJson out;
  StreamedJsonBuilder builder(out);
  FERRITE_RETURN_IF_ERROR(parse_json_text(text, max_bytes, /*build=*/true, /*keep_floats=*/false,
                                          streamed, &builder));
  return out;
}

Result<void> check_strict_json_streamed(std::string_view text, size_t max_bytes,
                                        std::span<const JsonArrayPattern> streamed) {
  return parse_json_text(text, max_bytes, /*build=*/false, /*keep_floats=*/false, streamed,
                         nullptr);
}

Result<void> check_strict_json_value(const json& value, std::string_view path) {
  struct Item {
    const json* value;
    std::string path;
    size_t depth;  // containers enclosing `value`, counting itself when it is one
  };
  std::vector<Item> stack;
  stack.push_back(Item{&value, std::string(path), value.is_structured() ? size_t{1} : size_t{0}});
  while (!stack.empty()) {
    Item item = std::move(stack.back());
    stack.pop_back();
    const json& current = *item.value;
    if (current.is_number_float()) {
      return json_error_at(item.path,
                           "is a floating-point number; Ferrite accepts only integers "
                           "in u64/i64 range (write rationals as strings such as \"1/100000\")");
    }
    if (!current.is_structured()) continue;
    if (item.depth > kMaxJsonDepth) {
      return json_error_at(item.path, "nests deeper than the limit of {} containers",
                           kMaxJsonDepth);
    }
    // Push children in reverse so they are visited in document order.
    if (current.is_object()) {
      std::vector<Item> children;
      children.reserve(current.size());
      for (auto it = current.begin(); it != current.end(); ++it) {
        children.push_back(Item{&it.value(), json_child_path(item.path, it.key()),
                                item.depth + (it.value().is_structured() ? 1 : 0)});
      }
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(std::move(*it));
    } else {
      for (size_t i = current.size(); i-- > 0;) {
        stack.push_back(Item{&current[i], json_index_path(item.path, i),
                             item.depth + (current[i].is_structured() ? 1 : 0)});
      }
    }
  }
  return {};
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
  return read_text_file(path, kMaxJsonTextBytes);
}

Result<std::string> read_text_file(const std::filesystem::path& path, size_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return make_error(ErrorCode::kIo, "cannot read `{}`: file does not exist", path.string())
        .with_field("file", path.string());
  }
  if (!std::filesystem::is_regular_file(status)) {
    return make_error(ErrorCode::kIo, "cannot read `{}`: not a regular file", path.string())
        .with_field("file", path.string());
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    return make_error(ErrorCode::kIo, "cannot read `{}`: {}", path.string(), ec.message())
        .with_field("file", path.string());
  }
  if (size > max_bytes) {
    return make_error(ErrorCode::kIo, "cannot read `{}`: {} bytes exceeds the limit of {} bytes",
                      path.string(), size, max_bytes)
        .with_field("file", path.string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorCode::kIo, "cannot open `{}`", path.string())
        .with_field("file", path.string());
  }
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (static_cast<size_t>(in.gcount()) != text.size() || in.bad()) {
    return make_error(ErrorCode::kIo, "cannot read `{}`: short read", path.string())
        .with_field("file", path.string());
  }
  // A file that grew since it was measured is rejected rather than truncated.
  if (in.peek() != std::char_traits<char>::eof()) {
    return make_error(ErrorCode::kIo, "cannot read `{}`: file changed while being read",
                      path.string())
        .with_field("file", path.string());
  }
  return text;
}

// ---- JsonCursor ------------------------------------------------------------

Error JsonCursor::type_error(std::string_view expected, SourceLocation location) const {
  return error(fmt::format("must be {}, found {}", expected, json_value_kind(*value_)), location);
}

Error JsonCursor::wrap_error(std::string_view what, const Status& inner,
                             SourceLocation location) const {
  return error(fmt::format("{}: {}", what, inner.message()), location);
}

Result<ObjectReader> JsonCursor::object(std::initializer_list<std::string_view> allowed) const {
  return object(std::vector<std::string_view>(allowed));
}

Result<ObjectReader> JsonCursor::object(const std::vector<std::string_view>& allowed) const {
  if (!value_->is_object()) return type_error("an object");
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
      const std::string child = json_child_path(path_, it.key());
      return make_error(ErrorCode::kSerialization, "unknown field `{}` (expected {})", child,
                        allowed.empty() ? std::string("no fields") : join_keys(allowed))
          .with_field("path", child);
    }
  }
  return ObjectReader(*value_, path_);
}

Result<std::vector<std::pair<std::string, JsonCursor>>> JsonCursor::entries() const {
  if (!value_->is_object()) return type_error("an object");
  std::vector<std::pair<std::string, JsonCursor>> out;
  out.reserve(value_->size());
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    out.emplace_back(it.key(), JsonCursor(it.value(), json_child_path(path_, it.key())));
  }
  return out;
}

Result<std::pair<std::string, JsonCursor>> JsonCursor::single_key(
    std::initializer_list<std::string_view> allowed) const {
  const std::vector<std::string_view> keys(allowed);
  if (!value_->is_object()) {
    return type_error(fmt::format("an object with one of the keys {}", join_keys(keys)));
  }
  FERRITE_ASSIGN_OR_RETURN(ObjectReader reader, object(keys));
  (void)reader;
  if (value_->size() != 1) {
    return error("must have exactly one of the keys {}, found {} keys", join_keys(keys),
                 value_->size());
  }
  auto it = value_->begin();
  return std::pair<std::string, JsonCursor>(it.key(),
                                            JsonCursor(it.value(), json_child_path(path_, it.key())));
}

Result<std::vector<JsonCursor>> JsonCursor::array() const {
  if (!value_->is_array()) return type_error("an array");
  std::vector<JsonCursor> out;
  out.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i) {
    out.emplace_back((*value_)[i], json_index_path(path_, i));
  }
  return out;
}

Result<std::vector<JsonCursor>> JsonCursor::array_of_size(size_t size) const {
  if (!value_->is_array()) return type_error(fmt::format("an array of {}", size));
  if (value_->size() != size) {
    return error("must have exactly {} elements, found {}", size, value_->size());
  }
  return array();
}

Result<bool> JsonCursor::boolean() const {
  if (!value_->is_boolean()) return type_error("a boolean");
  return value_->get<bool>();
}

Result<std::string> JsonCursor::string() const {
  if (!value_->is_string()) return type_error("a string");
  return value_->get<std::string>();
}

Result<std::string> JsonCursor::non_empty_string() const {
  if (!value_->is_string()) return type_error("a non-empty string");
  const auto& text = value_->get_ref<const std::string&>();
  if (text.empty()) return error("must not be empty");
  return text;
}

Result<uint64_t> JsonCursor::bounded_unsigned(uint64_t maximum) const {
  const std::string expected =
      maximum == std::numeric_limits<uint64_t>::max()
          ? std::string("an unsigned integer")
          : fmt::format("an unsigned integer at most {}", maximum);
  uint64_t value = 0;
  if (value_->is_number_unsigned()) {
    value = value_->get<uint64_t>();
  } else if (value_->is_number_integer()) {
    const auto signed_value = value_->get<int64_t>();
    if (signed_value < 0) {
      return error("must be {}, found negative integer {}", expected, signed_value);
    }
    value = static_cast<uint64_t>(signed_value);
  } else {
    return type_error(expected);
  }
  if (value > maximum) return error("must be {}, found {}", expected, value);
  return value;
}

Result<uint64_t> JsonCursor::u64() const {
  return bounded_unsigned(std::numeric_limits<uint64_t>::max());
}

Result<uint32_t> JsonCursor::u32() const {
  FERRITE_ASSIGN_OR_RETURN(uint64_t value, bounded_unsigned(std::numeric_limits<uint32_t>::max()));
  return static_cast<uint32_t>(value);
}

Result<uint16_t> JsonCursor::u16() const {
  FERRITE_ASSIGN_OR_RETURN(uint64_t value, bounded_unsigned(std::numeric_limits<uint16_t>::max()));
  return static_cast<uint16_t>(value);
}

Result<uint8_t> JsonCursor::u8() const {
  FERRITE_ASSIGN_OR_RETURN(uint64_t value, bounded_unsigned(std::numeric_limits<uint8_t>::max()));
  return static_cast<uint8_t>(value);
}

Result<int64_t> JsonCursor::i64() const {
  if (value_->is_number_unsigned()) {
    const auto value = value_->get<uint64_t>();
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return error("must be a signed 64-bit integer, found {} (out of range)", value);
    }
    return static_cast<int64_t>(value);
  }
  if (value_->is_number_integer()) return value_->get<int64_t>();
  return type_error("an integer");
}

Result<ContractVersion> JsonCursor::version_text() const {
  if (!value_->is_string()) return type_error("a version string \"MAJOR.MINOR\"");
  const auto& text = value_->get_ref<const std::string&>();
  auto parse_part = [](std::string_view part) -> std::optional<uint16_t> {
    auto value = parse_decimal_u64(part);
    if (!value || *value > std::numeric_limits<uint16_t>::max()) return std::nullopt;
    return static_cast<uint16_t>(*value);
  };

  const auto dot = text.find('.');
  std::optional<uint16_t> major;
  std::optional<uint16_t> minor;
  if (dot != std::string::npos) {
    major = parse_part(std::string_view(text).substr(0, dot));
    minor = parse_part(std::string_view(text).substr(dot + 1));
  }
  if (!major || !minor) {
    return error(
        "must be a version \"MAJOR.MINOR\" (decimal, no leading zeros, each at most 65535), "
        "found {}",
        quoted_key(text));
  }
  return ContractVersion{*major, *minor};
}

Result<std::vector<uint64_t>> JsonCursor::u64_array() const {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, array());
  std::vector<uint64_t> out;
  out.reserve(items.size());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t value, item.u64());
    out.push_back(value);
  }
  return out;
}

Result<std::vector<uint32_t>> JsonCursor::u32_array() const {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, array());
  std::vector<uint32_t> out;
  out.reserve(items.size());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(uint32_t value, item.u32());
    out.push_back(value);
  }
  return out;
}

Result<std::vector<int64_t>> JsonCursor::i64_array() const {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, array());
  std::vector<int64_t> out;
  out.reserve(items.size());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(int64_t value, item.i64());
    out.push_back(value);
  }
  return out;
}

Result<std::vector<std::string>> JsonCursor::string_array() const {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, array());
  std::vector<std::string> out;
  out.reserve(items.size());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(std::string value, item.string());
    out.push_back(std::move(value));
  }
  return out;
}

// ---- ObjectReader ------------------------------------------------------------

bool ObjectReader::has(std::string_view key) const { return object_->contains(key); }

Result<JsonCursor> ObjectReader::required(std::string_view key) const {
  auto it = object_->find(key);
  const std::string child = json_child_path(path_, key);
  if (it == object_->end()) {
    return make_error(ErrorCode::kSerialization, "missing required field `{}`", child)
        .with_field("path", child);
  }
  return JsonCursor(*it, child);
}

std::optional<JsonCursor> ObjectReader::optional(std::string_view key) const {
  auto it = object_->find(key);
  if (it == object_->end()) return std::nullopt;
  return JsonCursor(*it, json_child_path(path_, key));
}

Result<std::string> ObjectReader::required_string(std::string_view key) const {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, required(key));
  return cursor.string();
}

Result<bool> ObjectReader::required_bool(std::string_view key) const {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, required(key));
  return cursor.boolean();
}

Result<uint64_t> ObjectReader::required_u64(std::string_view key) const {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, required(key));
  return cursor.u64();
}

Result<uint32_t> ObjectReader::required_u32(std::string_view key) const {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, required(key));
  return cursor.u32();
}

Result<ContractVersion> ObjectReader::required_version_text(std::string_view key) const {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, required(key));
  return cursor.version_text();
}

}  // namespace ferrite
