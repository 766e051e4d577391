#include "strict_json_fast_path.h"

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "ferrite/core/json_reader.h"
#include "streamed_json_builder.h"

namespace ferrite {
namespace {

using nlohmann::json;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The keys of an object that is not built (checked for duplicates): a short
// list searched in order, a hash set once the object is large.
class SeenKeys {
 public:
  // False when `key` was seen already.
  bool insert(std::string_view key) {
    if (set_.empty()) {
      for (std::string_view seen : list_) {
        if (seen == key) return false;
      }
      list_.push_back(key);
      if (list_.size() > kListed) set_.insert(list_.begin(), list_.end());
      return true;
    }
    return set_.insert(key).second;
  }

 private:
  static constexpr size_t kListed = 16;
  std::vector<std::string_view> list_;
  std::unordered_set<std::string_view> set_;
};

// Recursive descent over the text, mirroring StrictSaxHandler (json_reader.cc)
// event by event: the same charges in the same order, the same element
// indices and paths, the same document. Depth is bounded (kMaxJsonDepth), so
// the recursion is too. Every `return false` means undecided.
class FastStrictReader {
 public:
  FastStrictReader(std::string_view text, size_t budget, std::span<const JsonArrayPattern> patterns,
                   StreamedJsonBuilder* builder)
      : at_(text.data()),
        end_(text.data() + text.size()),
        budget_(budget),
        patterns_(patterns),
        builder_(builder) {}

  bool read() {
    skip_whitespace();
    if (!value(builder_ != nullptr ? &builder_->document() : nullptr, false, nullptr)) {
      return false;
    }
    skip_whitespace();
    return at_ == end_;
  }

 private:
  struct Frame {
    bool is_object = false;
    std::string_view key;   // objects: the current member's key
    size_t next_index = 0;  // arrays: elements started so far
  };

  bool charge(size_t bytes) {
    estimated_ += bytes;
    return estimated_ <= budget_;
  }

  void enter_element() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().next_index;
  }

  void skip_whitespace() {
    while (at_ != end_ && (*at_ == ' ' || *at_ == '\n' || *at_ == '\r' || *at_ == '\t')) ++at_;
  }

  // `out`: where the value is built (null: not built). `inside_stream`: the
  // value lies inside an element of a streamed array. `stream_spans`: the
  // value is itself an element of a streamed array (its spans).
  bool value(json* out, bool inside_stream, std::vector<std::string_view>* stream_spans) {
    if (at_ == end_) return false;
    switch (*at_) {
      case '{': return container(true, out, inside_stream, stream_spans);
      case '[': return container(false, out, inside_stream, stream_spans);
      case '"': {
        std::string_view raw;
        size_t decoded_size = 0;
        if (!scan_string(raw, decoded_size)) return false;
        if (!charge(48 + decoded_size)) return false;
        enter_element();
        if (out != nullptr || (stream_spans != nullptr && builder_ != nullptr)) {
          place(out, stream_spans, json(decode(raw, decoded_size)));
        }
        return true;
      }
      case 't': return literal("true", json(true), out, stream_spans);
      case 'f': return literal("false", json(false), out, stream_spans);
      case 'n': return literal("null", json(nullptr), out, stream_spans);
      default: return number(out, stream_spans);
    }
  }

  // A scalar goes into the document, or (a streamed array's element) keeps
  // its own text, as the handler keeps it.
  void place(json* out, std::vector<std::string_view>* stream_spans, json scalar) {
    if (out != nullptr) {
      *out = std::move(scalar);
    } else if (stream_spans != nullptr && builder_ != nullptr) {
      stream_spans->push_back(builder_->own(scalar.dump()));
    }
  }

  bool literal(std::string_view word, json scalar, json* out,
               std::vector<std::string_view>* stream_spans) {
    if (static_cast<size_t>(end_ - at_) < word.size() ||
        std::string_view(at_, word.size()) != word) {
      return false;
    }
    at_ += word.size();
    if (!charge(48)) return false;
    enter_element();
    place(out, stream_spans, std::move(scalar));
    return true;
  }

  // An integer: nlohmann reads one with a sign as i64 and one without as
  // u64; anything else (fraction, exponent, leading zero, overflow) is
  // undecided.
  bool number(json* out, std::vector<std::string_view>* stream_spans) {
    const bool negative = *at_ == '-';
    if (negative) ++at_;
    if (at_ == end_ || !is_digit(*at_)) return false;
    uint64_t magnitude = 0;
    if (*at_ == '0') {
      ++at_;
    } else {
      while (at_ != end_ && is_digit(*at_)) {
        if (__builtin_mul_overflow(magnitude, uint64_t{10}, &magnitude) ||
            __builtin_add_overflow(magnitude, static_cast<uint64_t>(*at_ - '0'), &magnitude)) {
          return false;
        }
        ++at_;
      }
    }
    if (at_ != end_ && (*at_ == '.' || *at_ == 'e' || *at_ == 'E' || is_digit(*at_))) return false;
    constexpr uint64_t kMostNegative = uint64_t{1} << 63;
    if (negative && magnitude > kMostNegative) return false;
    if (!charge(48)) return false;
    enter_element();
    if (negative) {
      const int64_t value = magnitude == kMostNegative ? std::numeric_limits<int64_t>::min()
                                                       : -static_cast<int64_t>(magnitude);
      place(out, stream_spans, json(static_cast<json::number_integer_t>(value)));
    } else {
      place(out, stream_spans, json(static_cast<json::number_unsigned_t>(magnitude)));
    }
    return true;
  }

  // A string token (at its opening quote): its raw bytes between the quotes
  // and the length once its escapes are decoded.
  bool scan_string(std::string_view& raw, size_t& decoded_size) {
    ++at_;
    const char* start = at_;
    size_t escapes = 0;
    while (true) {
      if (at_ == end_) return false;
      const auto c = static_cast<unsigned char>(*at_);
      if (c == '"') break;
      if (c < 0x20 || c >= 0x80) return false;
      if (c == '\\') {
        ++at_;
        if (at_ == end_) return false;
        switch (*at_) {
          case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
          default: return false;  // \u and invalid escapes
        }
        ++escapes;
      }
      ++at_;
    }
    raw = std::string_view(start, static_cast<size_t>(at_ - start));
    ++at_;
    decoded_size = raw.size() - escapes;
    return true;
  }

  static std::string decode(std::string_view raw, size_t decoded_size) {
    if (decoded_size == raw.size()) return std::string(raw);
    std::string out;
    out.reserve(decoded_size);
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '\\') {
        out.push_back(raw[i]);
        continue;
      }
      switch (raw[++i]) {
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        default: out.push_back(raw[i]); break;  // " \ /
      }
    }
    return out;
  }

  // Whether the array being opened (a child of the open frames) is streamed.
  bool matches_pattern() const {
    for (const JsonArrayPattern& pattern : patterns_) {
      if (pattern.components.size() != frames_.size()) continue;
      bool match = true;
      for (size_t i = 0; i < frames_.size() && match; ++i) {
        const Frame& frame = frames_[i];
        const std::string& want = pattern.components[i];
        match = want == "[]" ? !frame.is_object : frame.is_object && frame.key == want;
      }
      if (match) return true;
    }
    return false;
  }

  // Path of the container being opened, as the handler names it.
  std::string element_path() const {
    std::string path = "$";
    for (const Frame& frame : frames_) {
      path = frame.is_object
                 ? json_child_path(path, frame.key)
                 : json_index_path(path, frame.next_index == 0 ? 0 : frame.next_index - 1);
    }
    return path;
  }

  bool container(bool is_object, json* out, bool inside_stream,
                 std::vector<std::string_view>* stream_spans) {
    const char* open = at_;
    if (!charge(64)) return false;
    enter_element();
    if (frames_.size() + 1 > kMaxJsonDepth) return false;
    const bool element = stream_spans != nullptr;
    const size_t charged_before = estimated_ - 64;
    const bool inside = inside_stream || element;
    std::vector<std::string_view>* spans = nullptr;
    if (!is_object && !patterns_.empty() && !inside && matches_pattern()) {
      spans = builder_ != nullptr ? &builder_->array(element_path()) : &unused_spans_;
    }
    if (out != nullptr) *out = is_object ? json::object() : json::array();
    frames_.push_back(Frame{is_object, {}, 0});
    ++at_;
    if (!(is_object ? members(out, inside) : elements(out, inside, spans))) return false;
    frames_.pop_back();
    if (element) {
      // The element was checked, not built: only its span stays.
      estimated_ = charged_before;
      if (!charge(kStreamedElementCost)) return false;
      if (builder_ != nullptr) {
        stream_spans->push_back(std::string_view(open, static_cast<size_t>(at_ - open)));
      }
    }
    return true;
  }

  bool members(json* out, bool inside) {
    skip_whitespace();
    if (at_ != end_ && *at_ == '}') {
      ++at_;
      return true;
    }
    SeenKeys seen;
    while (true) {
      if (at_ == end_ || *at_ != '"') return false;
      std::string_view key;
      size_t decoded_size = 0;
      if (!scan_string(key, decoded_size) || decoded_size != key.size()) return false;
      if (!charge(192 + 2 * key.size())) return false;
      frames_.back().key = key;
      json* slot = nullptr;
      if (out != nullptr) {
        auto [at, inserted] = out->get_ref<json::object_t&>().try_emplace(std::string(key));
        if (!inserted) return false;
        slot = &at->second;
      } else if (!seen.insert(key)) {
        return false;
      }
      skip_whitespace();
      if (at_ == end_ || *at_ != ':') return false;
      ++at_;
      skip_whitespace();
      if (!value(slot, inside, nullptr)) return false;
      skip_whitespace();
      if (at_ == end_) return false;
      if (*at_ == '}') {
        ++at_;
        return true;
      }
      if (*at_ != ',') return false;
      ++at_;
      skip_whitespace();
    }
  }

  bool elements(json* out, bool inside, std::vector<std::string_view>* spans) {
    skip_whitespace();
    if (at_ != end_ && *at_ == ']') {
      ++at_;
      return true;
    }
    while (true) {
      json* slot = nullptr;
      if (out != nullptr && spans == nullptr) {
        auto& array = out->get_ref<json::array_t&>();
        array.emplace_back();
        slot = &array.back();
      }
      if (!value(slot, inside, spans)) return false;
      skip_whitespace();
      if (at_ == end_) return false;
      if (*at_ == ']') {
        ++at_;
        return true;
      }
      if (*at_ != ',') return false;
      ++at_;
      skip_whitespace();
    }
  }

  const char* at_;
  const char* end_;
  size_t budget_;
  size_t estimated_ = 0;
  std::span<const JsonArrayPattern> patterns_;
  StreamedJsonBuilder* builder_;
  std::vector<Frame> frames_;
  std::vector<std::string_view> unused_spans_;
};

}  // namespace

bool read_strict_json_fast(std::string_view text, size_t memory_budget,
                           std::span<const JsonArrayPattern> streamed,
                           StreamedJsonBuilder* builder) {
  FastStrictReader reader(text, memory_budget, streamed, builder);
  return reader.read();
}

}  // namespace ferrite
