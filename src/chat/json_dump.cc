// json.dumps semantics for template values.
#include "chat/json_dump.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ferrite::chat {
namespace {

constexpr int kMaxJsonDepth = 512;

void append_escaped(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  auto parts = utf8_split(s);
  for (std::string_view part : parts) {
    unsigned char c = static_cast<unsigned char>(part[0]);
    if (part.size() == 1) {
      switch (c) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
      }
      if (c < 0x20 || (ensure_ascii && c >= 0x7f)) {
        out += fmt::format("\\u{:04x}", c);
      } else {
        out += static_cast<char>(c);
      }
      continue;
    }
    if (!ensure_ascii) {
      out += part;
      continue;
    }
    uint32_t cp = 0;
    if (part.size() == 2) cp = ((c & 0x1fu) << 6) | (static_cast<unsigned char>(part[1]) & 0x3fu);
    if (part.size() == 3) {
      cp = ((c & 0x0fu) << 12) | ((static_cast<unsigned char>(part[1]) & 0x3fu) << 6) |
           (static_cast<unsigned char>(part[2]) & 0x3fu);
    }
    if (part.size() == 4) {
      cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(part[1]) & 0x3fu) << 12) |
           ((static_cast<unsigned char>(part[2]) & 0x3fu) << 6) | (static_cast<unsigned char>(part[3]) & 0x3fu);
    }
    if (cp >= 0x10000) {
      uint32_t v = cp - 0x10000;
      out += fmt::format("\\u{:04x}\\u{:04x}", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
    } else {
      out += fmt::format("\\u{:04x}", cp);
    }
  }
  out += '"';
}

std::string float_json(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  return python_float_repr(d);
}

Result<std::string> key_text(const Value& key) {
  if (key.is_string()) return key.string();
  if (key.is_bool()) return std::string(key.boolean() ? "true" : "false");
  if (key.is_int()) return std::to_string(key.integer());
  if (key.is_float()) return float_json(key.number());
  if (key.is_none()) return std::string("null");
  return make_error(ErrorCode::kInvalidArgument, "keys must be str, int, float, bool or None, not {}",
                    key.python_type_name());
}

class Dumper {
 public:
  explicit Dumper(const JsonDumpOptions& o) : o_(o) {
    item_sep_ = o.item_separator.value_or(o.indent ? "," : ", ");
    key_sep_ = o.key_separator.value_or(": ");
  }

  Result<bool> dump(const Value& v, int level, std::string& out) {
    if (level > kMaxJsonDepth) return make_error(ErrorCode::kInvalidArgument, "tojson: nesting too deep");
    switch (v.kind()) {
      case Value::Kind::kNone: out += "null"; return true;
      case Value::Kind::kBool: out += v.boolean() ? "true" : "false"; return true;
      case Value::Kind::kInt: out += std::to_string(v.integer()); return true;
      case Value::Kind::kFloat: out += float_json(v.number()); return true;
      case Value::Kind::kString: append_escaped(out, v.string(), o_.ensure_ascii); return true;
      case Value::Kind::kList: {
        if (v.is_iterator()) {
          return make_error(ErrorCode::kInvalidArgument, "Object of type {} is not JSON serializable",
                            v.python_type_name());
        }
        const auto& items = v.list_items();
        if (items.empty()) {
          out += "[]";
          return true;
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep_;
          newline(level + 1, out);
          FERRITE_RETURN_IF_ERROR(dump(items[i], level + 1, out));
        }
        newline(level, out);
        out += ']';
        return true;
      }
      case Value::Kind::kDict: {
        std::vector<std::pair<std::string, const Value*>> entries;
        for (const auto& [k, item] : v.dict_entries().entries()) {
          FERRITE_ASSIGN_OR_RETURN(std::string key, key_text(k));
          entries.emplace_back(std::move(key), &item);
        }
        if (o_.sort_keys) {
          std::stable_sort(entries.begin(), entries.end(),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
        }
        if (entries.empty()) {
          out += "{}";
          return true;
        }
        out += '{';
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i) out += item_sep_;
          newline(level + 1, out);
          append_escaped(out, entries[i].first, o_.ensure_ascii);
          out += key_sep_;
          FERRITE_RETURN_IF_ERROR(dump(*entries[i].second, level + 1, out));
        }
        newline(level, out);
        out += '}';
        return true;
      }
      default:
        return make_error(ErrorCode::kInvalidArgument, "Object of type {} is not JSON serializable",
                          v.python_type_name());
    }
  }

 private:
  void newline(int level, std::string& out) const {
    if (!o_.indent) return;
    out += '\n';
    for (int i = 0; i < level; ++i) out += *o_.indent;
  }
  const JsonDumpOptions& o_;
  std::string item_sep_;
  std::string key_sep_;
};

}  // namespace

Result<std::string> dump_json(const Value& value, const JsonDumpOptions& options) {
  Dumper dumper(options);
  std::string out;
  FERRITE_RETURN_IF_ERROR(dumper.dump(value, 0, out));
  return out;
}

}  // namespace ferrite::chat
