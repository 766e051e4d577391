// Value: Python object semantics for the chat template engine.
#include "ferrite/chat/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include <fmt/format.h>

namespace ferrite::chat {

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : entries_) {
    if (k.equals(key)) return &v;
  }
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (auto& [k, v] : entries_) {
    if (k.equals(key)) {
      v = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

Value Value::list(ValueList items, bool tuple) {
  Value v(Data(std::make_shared<const ValueList>(std::move(items))));
  v.tuple_ = tuple;
  return v;
}
Value Value::iterator(ValueList items, std::string type_name) {
  Value v = list(std::move(items));
  v.iterator_type_ = std::move(type_name);
  return v;
}
Value Value::markup(std::string text) {
  Value v(std::move(text));
  v.markup_ = true;
  return v;
}
Value Value::dict(Dict dict) { return Value(Data(std::make_shared<const Dict>(std::move(dict)))); }
Value Value::name_space(Dict attributes) {
  return Value(Data(std::make_shared<Dict>(std::move(attributes))));
}
Value Value::callable(std::string name, std::function<Result<Value>(const CallArgs&)> call) {
  return Value(Data(std::make_shared<const Callable>(Callable{std::move(name), std::move(call)})));
}

Value Value::from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      uint64_t u = json.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value(json.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      ValueList items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(from_json(item));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      for (const auto& [key, item] : json.items()) d.set(Value(key), from_json(item));
      return dict(std::move(d));
    }
    default:
      return none();
  }
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return boolean();
    case Kind::kInt:
      return integer() != 0;
    case Kind::kFloat:
      return number() != 0.0;
    case Kind::kString:
      return !string().empty();
    case Kind::kList:
      return is_iterator() || !list_items().empty();
    case Kind::kDict:
      return dict_entries().size() != 0;
    case Kind::kNamespace:
    case Kind::kCallable:
      return true;
  }
  return false;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string text(buffer, result.ptr);
  // text: [-]d[.ddd]e(+|-)XX
  bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  size_t e = text.find('e');
  std::string mantissa = text.substr(0, e);
  int exponent = std::stoi(text.substr(e + 1));
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      size_t int_len = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= int_len) {
        out = digits + std::string(int_len - digits.size(), '0') + ".0";
      } else {
        out = digits.substr(0, int_len) + "." + digits.substr(int_len);
      }
    } else {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  return negative ? "-" + out : out;
}

namespace {

std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

}  // namespace

std::string Value::repr() const {
  switch (kind()) {
    case Kind::kString:
      return repr_string(string());
    case Kind::kUndefined:
      return "Undefined";
    default:
      break;
  }
  if (is_iterator()) return fmt::format("<{} object>", iterator_type_);
  if (is_list()) {
    std::string out = tuple_ ? "(" : "[";
    const auto& items = list_items();
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += ", ";
      out += items[i].repr();
    }
    if (tuple_ && items.size() == 1) out += ",";
    out += tuple_ ? ")" : "]";
    return out;
  }
  if (is_dict() || is_namespace()) {
    const Dict& d = is_dict() ? dict_entries() : namespace_attributes();
    std::string out = is_namespace() ? "<Namespace {" : "{";
    bool first = true;
    for (const auto& [k, v] : d.entries()) {
      if (!first) out += ", ";
      first = false;
      out += k.repr() + ": " + v.repr();
    }
    out += is_namespace() ? "}>" : "}";
    return out;
  }
  return to_output();
}

std::string Value::to_output() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return boolean() ? "True" : "False";
    case Kind::kInt:
      return std::to_string(integer());
    case Kind::kFloat:
      return python_float_repr(number());
    case Kind::kString:
      return string();
    case Kind::kCallable:
      return fmt::format("<function {}>", callable_object().name);
    default:
      return repr();
  }
}

std::string Value::python_type_name() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return is_iterator() ? iterator_type_ : tuple_ ? "tuple" : "list";
    case Kind::kDict:
      return "dict";
    case Kind::kNamespace:
      return "Namespace";
    case Kind::kCallable:
      return "function";
  }
  return "object";
}

std::string Value::type_repr() const {
  if (is_none()) return "None";
  return python_type_name() + " object";
}

bool Value::equals(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (is_float() || other.is_float()) return number() == other.number();
    return integer() == other.integer();
  }
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return string() == other.string();
    case Kind::kList: {
      if (is_iterator() || other.is_iterator()) return same_as(other);
      if (tuple_ != other.tuple_) return false;
      const auto& a = list_items();
      const auto& b = other.list_items();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].equals(b[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      const Dict& a = dict_entries();
      const Dict& b = other.dict_entries();
      if (a.size() != b.size()) return false;
      for (const auto& [k, v] : a.entries()) {
        const Value* w = b.find(k);
        if (!w || !w->equals(v)) return false;
      }
      return true;
    }
    default:
      return same_as(other);
  }
}

bool Value::same_as(const Value& other) const {
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::kList:
      return &list_items() == &other.list_items();
    case Kind::kDict:
      return &dict_entries() == &other.dict_entries();
    case Kind::kNamespace:
      return &namespace_attributes() == &other.namespace_attributes();
    case Kind::kCallable:
      return &callable_object() == &other.callable_object();
    default:
      return equals(other);
  }
}

namespace {
size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xe) return 3;
  if ((lead >> 3) == 0x1e) return 4;
  return 1;
}
}  // namespace

std::vector<std::string_view> utf8_split(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t n = utf8_sequence_length(static_cast<unsigned char>(text[i]));
    if (i + n > text.size()) n = 1;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) {
        n = 1;
        break;
      }
    }
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

size_t utf8_length(std::string_view text) {
  size_t count = 0;
  for (unsigned char c : text) {
    if ((c & 0xc0) != 0x80) ++count;
  }
  return count;
}

namespace {

// The address of a container's shared storage; null for scalars.
const void* container_address(const Value& v) {
  if (v.is_list()) return &v.list_items();
  if (v.is_dict()) return &v.dict_entries();
  if (v.is_namespace()) return &v.namespace_attributes();
  return nullptr;
}

}  // namespace

bool Value::holds(const Value& container) const {
  const void* target = container_address(container);
  if (target == nullptr) return false;
  std::vector<const Value*> pending{this};
  std::set<const void*> seen;
  while (!pending.empty()) {
    const Value* v = pending.back();
    pending.pop_back();
    const void* address = container_address(*v);
    if (address == nullptr || !seen.insert(address).second) continue;
    if (address == target) return true;
    if (v->is_list()) {
      for (const Value& item : v->list_items()) pending.push_back(&item);
      continue;
    }
    const Dict& entries = v->is_dict() ? v->dict_entries() : v->namespace_attributes();
    for (const auto& [key, item] : entries.entries()) {
      pending.push_back(&key);
      pending.push_back(&item);
    }
  }
  return false;
}

}  // namespace ferrite::chat
