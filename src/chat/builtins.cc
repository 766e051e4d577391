// Builtin filters, tests, Python methods and globals of the template engine.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "chat/json_dump.h"
#include "chat/python_text.h"
#include "chat/renderer.h"

namespace ferrite::chat {
namespace {

// Python's names of methods that change a list or dict: the immutable
// sandbox refuses them.
bool is_mutating_method(const Value& object, const std::string& name) {
  static const char* kList[] = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
                                "__setitem__", "__delitem__"};
  static const char* kDict[] = {"update", "pop", "popitem", "setdefault", "clear", "__setitem__",
                                "__delitem__"};
  if (object.is_list()) return std::find(std::begin(kList), std::end(kList), name) != std::end(kList);
  if (object.is_dict()) return std::find(std::begin(kDict), std::end(kDict), name) != std::end(kDict);
  return false;
}

std::optional<std::string> optional_string(const std::optional<Value>& v) {
  if (!v || v->is_none()) return std::nullopt;
  return v->to_output();
}

int64_t int_or(const std::optional<Value>& v, int64_t fallback) {
  if (!v || !v->is_number()) return fallback;
  return v->integer();
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

void Renderer::install_builtin_globals() {
  globals_["range"] = Value::callable("range", [this](const CallArgs& a) -> Result<Value> {
    std::vector<int64_t> n;
    for (const auto& v : a.positional) {
      if (!v.is_int() && !v.is_bool()) {
        return fail(fmt::format("'{}' object cannot be interpreted as an integer", v.python_type_name()));
      }
      n.push_back(v.integer());
    }
    if (n.empty() || n.size() > 3) return fail("range expected 1 to 3 arguments");
    int64_t start = n.size() == 1 ? 0 : n[0];
    int64_t stop = n.size() == 1 ? n[0] : n[1];
    int64_t step = n.size() == 3 ? n[2] : 1;
    if (step == 0) return fail("range() arg 3 must not be zero");
    // Jinja2's sandbox refuses ranges over MAX_RANGE (100000) items.
    long double count = step > 0 ? std::ceil((static_cast<long double>(stop) - start) / step)
                                 : std::ceil((static_cast<long double>(start) - stop) / -step);
    if (count > 100000) {
      return fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    }
    ValueList items;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.emplace_back(i);
    return Value::list(std::move(items));
  });
  globals_["namespace"] = Value::callable("namespace", [this](const CallArgs& a) -> Result<Value> {
    Dict attrs;
    for (const auto& v : a.positional) {
      if (!v.is_dict()) return fail("namespace() takes a dict or keyword arguments");
      for (const auto& [k, item] : v.dict_entries().entries()) attrs.set(k, item);
    }
    for (const auto& [k, v] : a.named) attrs.set(Value(k), v);
    return Value::name_space(std::move(attrs));
  });
  globals_["dict"] = Value::callable("dict", [this](const CallArgs& a) -> Result<Value> {
    Dict d;
    for (const auto& v : a.positional) {
      if (v.is_dict()) {
        for (const auto& [k, item] : v.dict_entries().entries()) d.set(k, item);
        continue;
      }
      FERRITE_ASSIGN_OR_RETURN(ValueList pairs, iterate(v));
      for (const auto& p : pairs) {
        FERRITE_ASSIGN_OR_RETURN(ValueList kv, iterate(p));
        if (kv.size() != 2) return fail("dictionary update sequence element has the wrong length");
        d.set(kv[0], kv[1]);
      }
    }
    for (const auto& [k, v] : a.named) d.set(Value(k), v);
    return Value::dict(std::move(d));
  });
}

Result<std::optional<Value>> Renderer::python_attribute(const Value& object, const std::string& name) {
  if (object.is_namespace()) {
    if (const Value* v = object.namespace_attributes().find(Value(name))) return std::optional<Value>(*v);
    return std::optional<Value>();
  }
  if (is_mutating_method(object, name)) {
    return std::optional<Value>(Value::undefined(fmt::format(
        "access to attribute '{}' of '{}' object is unsafe.", name, object.python_type_name())));
  }
  using Method = std::function<Result<Value>(const CallArgs&)>;
  auto bind = [&](Method m) { return std::optional<Value>(Value::callable(name, std::move(m))); };
  auto string_arg = [this](const std::optional<Value>& v, const char* what) -> Result<std::string> {
    if (!v || !v->is_string()) {
      return fail(fmt::format("{} must be str, not {}", what, v ? v->python_type_name() : "nothing"));
    }
    return v->string();
  };
  if (object.is_string()) {
    const std::string s = object.string();
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
      StripSide side = name == "strip" ? StripSide::kBoth : name == "lstrip" ? StripSide::kLeft : StripSide::kRight;
      return bind([s, side](const CallArgs& a) -> Result<Value> {
        auto chars = optional_string(argument(a, 0, "chars"));
        return Value(py_strip(s, chars ? std::optional<std::string_view>(*chars) : std::nullopt, side));
      });
    }
    if (name == "split" || name == "rsplit") {
      bool right = name == "rsplit";
      return bind([this, s, right](const CallArgs& a) -> Result<Value> {
        auto sep = optional_string(argument(a, 0, "sep"));
        if (sep && sep->empty()) return fail("empty separator");
        int64_t maxsplit = int_or(argument(a, 1, "maxsplit"), -1);
        auto sv = sep ? std::optional<std::string_view>(*sep) : std::nullopt;
        auto parts = right ? py_rsplit(s, sv, maxsplit) : py_split(s, sv, maxsplit);
        FERRITE_RETURN_IF_ERROR(check_items(parts.size()));
        ValueList items;
        for (auto& p : parts) items.emplace_back(std::move(p));
        return Value::list(std::move(items));
      });
    }
    if (name == "splitlines") {
      return bind([s](const CallArgs& a) -> Result<Value> {
        auto keep = argument(a, 0, "keepends");
        ValueList items;
        for (auto& p : py_splitlines(s, keep && keep->truthy())) items.emplace_back(std::move(p));
        return Value::list(std::move(items));
      });
    }
    if (name == "startswith" || name == "endswith") {
      bool start = name == "startswith";
      return bind([this, s, start](const CallArgs& a) -> Result<Value> {
        auto what = argument(a, 0, "prefix");
        ValueList options;
        if (what && what->is_list()) {
          options = what->list_items();
        } else if (what) {
          options.push_back(*what);
        }
        for (const auto& o : options) {
          if (!o.is_string()) {
            return fail(fmt::format("{} first arg must be str or a tuple of str, not {}",
                                    start ? "startswith" : "endswith", o.python_type_name()));
          }
          const std::string& p = o.string();
          bool hit = start ? s.compare(0, p.size(), p) == 0 && s.size() >= p.size()
                           : s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
          if (hit) return Value(true);
        }
        return Value(false);
      });
    }
    if (name == "upper") return bind([s](const CallArgs&) -> Result<Value> { return Value(py_upper(s)); });
    if (name == "lower") return bind([s](const CallArgs&) -> Result<Value> { return Value(py_lower(s)); });
    if (name == "title") return bind([s](const CallArgs&) -> Result<Value> { return Value(py_title(s)); });
    if (name == "capitalize") {
      return bind([s](const CallArgs&) -> Result<Value> { return Value(py_capitalize(s)); });
    }
    if (name == "replace") {
      return bind([this, s, string_arg](const CallArgs& a) -> Result<Value> {
        FERRITE_ASSIGN_OR_RETURN(std::string old, string_arg(argument(a, 0, "old"), "replace() argument 1"));
        FERRITE_ASSIGN_OR_RETURN(std::string rep, string_arg(argument(a, 1, "new"), "replace() argument 2"));
        std::string out = py_replace(s, old, rep, int_or(argument(a, 2, "count"), -1));
        FERRITE_RETURN_IF_ERROR(check_bytes(out.size()));
        return Value(std::move(out));
      });
    }
    if (name == "find" || name == "rfind" || name == "count" || name == "index" || name == "rindex") {
      return bind([this, s, name, string_arg](const CallArgs& a) -> Result<Value> {
        FERRITE_ASSIGN_OR_RETURN(std::string sub, string_arg(argument(a, 0, "sub"), "must be str"));
        if (name == "count") return Value(py_count(s, sub));
        int64_t at = py_find(s, sub, name == "rfind" || name == "rindex");
        if (at < 0 && (name == "index" || name == "rindex")) return fail("substring not found");
        return Value(at);
      });
    }
    if (name == "join") {
      return bind([this, s](const CallArgs& a) -> Result<Value> {
        auto it = argument(a, 0, "iterable");
        FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(it ? *it : Value()));
        std::string out;
        for (size_t i = 0; i < items.size(); ++i) {
          if (!items[i].is_string()) {
            return fail(fmt::format("sequence item {}: expected str instance, {} found", i,
                                    items[i].python_type_name()));
          }
          if (i) out += s;
          out += items[i].string();
          FERRITE_RETURN_IF_ERROR(check_bytes(out.size()));
        }
        return Value(std::move(out));
      });
    }
    if (name == "format") {
      return bind([this, s](const CallArgs& a) -> Result<Value> {
        std::string out;
        size_t auto_index = 0;
        for (size_t i = 0; i < s.size(); ++i) {
          char c = s[i];
          if (c == '{' && i + 1 < s.size() && s[i + 1] == '{') {
            out += '{';
            ++i;
          } else if (c == '}' && i + 1 < s.size() && s[i + 1] == '}') {
            out += '}';
            ++i;
          } else if (c == '{') {
            size_t close = s.find('}', i);
            if (close == std::string::npos) return fail("Single '{' encountered in format string");
            std::string field = s.substr(i + 1, close - i - 1);
            size_t colon = field.find(':');
            if (colon != std::string::npos) field = field.substr(0, colon);
            Value v;
            if (field.empty()) {
              if (auto_index >= a.positional.size()) return fail("Replacement index out of range");
              v = a.positional[auto_index++];
            } else if (std::all_of(field.begin(), field.end(), [](char d) { return d >= '0' && d <= '9'; })) {
              size_t k = std::strtoul(field.c_str(), nullptr, 10);
              if (k >= a.positional.size()) return fail("Replacement index out of range");
              v = a.positional[k];
            } else {
              auto named = argument(CallArgs{{}, a.named}, 0, field);
              if (!named) return fail(fmt::format("'{}'", field));
              v = *named;
            }
            out += v.to_output();
            i = close;
          } else {
            out += c;
          }
          FERRITE_RETURN_IF_ERROR(check_bytes(out.size()));
        }
        return Value(std::move(out));
      });
    }
    if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" ||
        name == "islower" || name == "isupper") {
      return bind([s, name](const CallArgs&) -> Result<Value> {
        if (s.empty()) return Value(false);
        bool any_cased = false, ok = true;
        for (auto cp : utf8_split(s)) {
          unsigned char c = static_cast<unsigned char>(cp[0]);
          bool ascii = cp.size() == 1;
          if (name == "isdigit") ok = ok && ascii && std::isdigit(c);
          if (name == "isalpha") ok = ok && ascii && std::isalpha(c);
          if (name == "isalnum") ok = ok && ascii && std::isalnum(c);
          if (name == "isspace") ok = ok && py_is_space(cp);
          if (name == "islower") {
            ok = ok && !(ascii && std::isupper(c));
            any_cased = any_cased || (ascii && std::islower(c));
          }
          if (name == "isupper") {
            ok = ok && !(ascii && std::islower(c));
            any_cased = any_cased || (ascii && std::isupper(c));
          }
        }
        if (name == "islower" || name == "isupper") ok = ok && any_cased;
        return Value(ok);
      });
    }
    return std::optional<Value>();
  }
  if (object.is_dict()) {
    Value self = object;
    if (name == "items" || name == "keys" || name == "values") {
      return bind([self, name](const CallArgs&) -> Result<Value> {
        ValueList items;
        for (const auto& [k, v] : self.dict_entries().entries()) {
          if (name == "items") items.push_back(Value::list({k, v}, true));
          if (name == "keys") items.push_back(k);
          if (name == "values") items.push_back(v);
        }
        return Value::list(std::move(items));
      });
    }
    if (name == "get") {
      return bind([self](const CallArgs& a) -> Result<Value> {
        auto key = argument(a, 0, "key");
        if (key) {
          if (const Value* v = self.dict_entries().find(*key)) return *v;
        }
        auto fallback = argument(a, 1, "default");
        return fallback ? *fallback : Value::none();
      });
    }
    if (name == "copy") return bind([self](const CallArgs&) -> Result<Value> { return self; });
    return std::optional<Value>();
  }
  if (object.is_list()) {
    Value self = object;
    if (name == "index" || name == "count") {
      return bind([this, self, name](const CallArgs& a) -> Result<Value> {
        auto item = argument(a, 0, "value");
        int64_t n = 0;
        const auto& items = self.list_items();
        for (size_t i = 0; i < items.size(); ++i) {
          if (item && items[i].equals(*item)) {
            if (name == "index") return Value(static_cast<int64_t>(i));
            ++n;
          }
        }
        if (name == "index") return fail(fmt::format("{} is not in list", item ? item->repr() : "value"));
        return Value(n);
      });
    }
    return std::optional<Value>();
  }
  return std::optional<Value>();
}

namespace {

// Attribute path for map/selectattr/sort/...: "a.b", "0".
Result<Value> attribute_path(Renderer& r, const Value& item, const std::string& path) {
  Value current = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (current.is_undefined()) return current;
    FERRITE_ASSIGN_OR_RETURN(current, r.get_item(current, numeric ? Value(static_cast<int64_t>(std::strtoll(part.c_str(), nullptr, 10))) : Value(part)));
    if (dot == std::string::npos) return current;
    start = dot + 1;
  }
}

}  // namespace

Result<Value> Renderer::filter(const std::string& name, const Value& value, const CallArgs& args) {
  auto arg = [&](size_t i, std::string_view n) { return argument(args, i, n); };
  auto as_text = [&](const Value& v) { return v.to_output(); };
  if (name == "tojson") {
    JsonDumpOptions o;
    auto ensure = arg(0, "ensure_ascii");
    o.ensure_ascii = ensure && ensure->truthy();
    auto indent = arg(1, "indent");
    if (indent && !indent->is_none()) {
      if (indent->is_string()) {
        o.indent = indent->string();
      } else if (indent->is_int()) {
        o.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(indent->integer(), 0, 64)), ' ');
      } else {
        return fail("tojson: indent must be an int or a string");
      }
    }
    auto separators = arg(2, "separators");
    if (separators && separators->is_list() && separators->list_items().size() == 2) {
      o.item_separator = separators->list_items()[0].to_output();
      o.key_separator = separators->list_items()[1].to_output();
    }
    auto sort = arg(3, "sort_keys");
    o.sort_keys = sort && sort->truthy();
    auto text = dump_json(value, o);
    if (!text) return fail(text.error().message());
    FERRITE_RETURN_IF_ERROR(check_bytes(text->size()));
    return Value(std::move(*text));
  }
  if (name == "trim") {
    auto chars = optional_string(arg(0, "chars"));
    return Value(py_strip(as_text(value), chars ? std::optional<std::string_view>(*chars) : std::nullopt,
                          StripSide::kBoth));
  }
  if (name == "upper") return Value(py_upper(as_text(value)));
  if (name == "lower") return Value(py_lower(as_text(value)));
  if (name == "capitalize") return Value(py_capitalize(as_text(value)));
  if (name == "title") {
    // Jinja2: words start after whitespace and -([{< ; each is capitalized.
    std::string s = as_text(value), out;
    bool start = true;
    for (char c : s) {
      unsigned char u = static_cast<unsigned char>(c);
      out += static_cast<char>(start ? std::toupper(u) : std::tolower(u));
      start = std::isspace(u) || c == '-' || c == '(' || c == '[' || c == '{' || c == '<';
    }
    return Value(std::move(out));
  }
  if (name == "string") return Value(as_text(value));
  if (name == "safe") return Value::markup(as_text(value));
  if (name == "escape" || name == "e") {
    return value.is_markup() ? value : Value::markup(html_escape(as_text(value)));
  }
  if (name == "forceescape") return Value::markup(html_escape(as_text(value)));
  if (name == "length" || name == "count") {
    if (value.is_string()) return Value(static_cast<int64_t>(utf8_length(value.string())));
    if (value.is_list() && !value.is_iterator()) return Value(static_cast<int64_t>(value.list_items().size()));
    if (value.is_dict()) return Value(static_cast<int64_t>(value.dict_entries().size()));
    if (value.is_undefined()) return Value(0);
    return fail(fmt::format("object of type '{}' has no len()", value.python_type_name()));
  }
  if (name == "default" || name == "d") {
    auto fallback = arg(0, "default_value");
    auto boolean = arg(1, "boolean");
    bool use = value.is_undefined() || (boolean && boolean->truthy() && !value.truthy());
    if (use) return fallback ? *fallback : Value("");
    return value;
  }
  if (name == "join") {
    auto sep = arg(0, "d");
    auto attribute = arg(1, "attribute");
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    std::string out;
    std::string separator = sep ? as_text(*sep) : "";
    for (size_t i = 0; i < items.size(); ++i) {
      Value item = items[i];
      if (attribute && !attribute->is_none()) {
        FERRITE_ASSIGN_OR_RETURN(item, attribute_path(*this, item, as_text(*attribute)));
      }
      if (i) out += separator;
      out += as_text(item);
      FERRITE_RETURN_IF_ERROR(check_bytes(out.size()));
    }
    return Value(std::move(out));
  }
  if (name == "replace") {
    auto old = arg(0, "old");
    auto rep = arg(1, "new");
    if (!old || !rep) return fail("replace() needs the old and new text");
    std::string out = py_replace(as_text(value), as_text(*old), as_text(*rep), int_or(arg(2, "count"), -1));
    FERRITE_RETURN_IF_ERROR(check_bytes(out.size()));
    return Value(std::move(out));
  }
  if (name == "first" || name == "last") {
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    // Jinja2's last() reverses its argument, which an iterator cannot do.
    if (name == "last" && value.is_iterator()) {
      return fail(fmt::format("'{}' object is not reversible", value.python_type_name()));
    }
    if (items.empty()) {
      return Value::undefined(fmt::format("No {} item, sequence was empty.", name));
    }
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") {
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    return Value::list(std::move(items));
  }
  if (name == "items") {
    if (value.is_undefined()) return Value::list({});
    if (!value.is_dict()) return fail(fmt::format("can only get item pairs from a mapping."));
    ValueList items;
    for (const auto& [k, v] : value.dict_entries().entries()) items.push_back(Value::list({k, v}, true));
    return Value::iterator(std::move(items), "generator");
  }
  if (name == "int") {
    int64_t fallback = int_or(arg(0, "default"), 0);
    int64_t base = int_or(arg(1, "base"), 10);
    if (value.is_int() || value.is_bool()) return Value(value.integer());
    if (value.is_float()) {
      if (!std::isfinite(value.number()) || std::fabs(value.number()) > 9.2e18) return Value(fallback);
      return Value(static_cast<int64_t>(value.number()));
    }
    if (value.is_string()) {
      std::string s = py_strip(value.string(), std::nullopt, StripSide::kBoth);
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(s.c_str(), &end, static_cast<int>(base));
      if (!s.empty() && end && *end == '\0' && errno == 0) return Value(static_cast<int64_t>(v));
      double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end && *end == '\0' && std::isfinite(d) && std::fabs(d) < 9.2e18) {
        return Value(static_cast<int64_t>(d));
      }
    }
    return Value(fallback);
  }
  if (name == "float") {
    auto fallback = arg(0, "default");
    if (value.is_number()) return Value(value.number());
    if (value.is_string()) {
      std::string s = py_strip(value.string(), std::nullopt, StripSide::kBoth);
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (!s.empty() && end && *end == '\0') return Value(d);
    }
    return fallback ? Value(fallback->number()) : Value(0.0);
  }
  if (name == "abs") {
    if (value.is_float()) return Value(std::fabs(value.number()));
    if (value.is_number()) {
      if (value.integer() == INT64_MIN) return fail("integer overflow");
      return Value(static_cast<int64_t>(std::llabs(value.integer())));
    }
    return fail(fmt::format("bad operand type for abs(): '{}'", value.python_type_name()));
  }
  if (name == "round") {
    int64_t precision = int_or(arg(0, "precision"), 0);
    std::string method = optional_string(arg(1, "method")).value_or("common");
    if (!value.is_number()) return fail("round: value must be a number");
    double scale = std::pow(10.0, static_cast<double>(precision));
    double x = value.number() * scale;
    double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
    return Value(r / scale);
  }
  if (name == "reverse") {
    if (value.is_string()) {
      auto cps = utf8_split(value.string());
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
      return Value(std::move(out));
    }
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    std::reverse(items.begin(), items.end());
    // reversed() of a list is an iterator; of an iterator, a list.
    if (value.is_list() && !value.is_iterator()) return Value::iterator(std::move(items), "list_reverseiterator");
    return Value::list(std::move(items));
  }
  if (name == "sort" || name == "unique" || name == "min" || name == "max") {
    bool reverse = name == "sort" && arg(0, "reverse") && arg(0, "reverse")->truthy();
    auto case_arg = name == "sort" ? arg(1, "case_sensitive") : arg(0, "case_sensitive");
    bool case_sensitive = case_arg && case_arg->truthy();
    auto attribute = name == "sort" ? arg(2, "attribute") : arg(1, "attribute");
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    std::vector<std::pair<Value, Value>> keyed;
    for (const auto& item : items) {
      Value key = item;
      if (attribute && !attribute->is_none()) {
        FERRITE_ASSIGN_OR_RETURN(key, attribute_path(*this, item, as_text(*attribute)));
      }
      if (!case_sensitive && key.is_string()) key = Value(py_lower(key.string()));
      keyed.emplace_back(key, item);
    }
    if (name == "unique") {
      ValueList out;
      std::vector<Value> seen;
      for (const auto& [k, item] : keyed) {
        bool dup = false;
        for (const auto& s : seen) dup = dup || s.equals(k);
        if (!dup) {
          seen.push_back(k);
          out.push_back(item);
        }
      }
      return Value::iterator(std::move(out), "generator");
    }
    std::optional<Status> problem;
    auto less = [&](const std::pair<Value, Value>& a, const std::pair<Value, Value>& b) {
      auto c = order(a.first, b.first);
      if (!c) {
        if (!problem) problem = c.error();
        return false;
      }
      return *c < 0;
    };
    if (name == "min" || name == "max") {
      if (keyed.empty()) return Value::undefined(fmt::format("No aggregated item, sequence was empty."));
      size_t best = 0;
      for (size_t i = 1; i < keyed.size(); ++i) {
        if (name == "min" ? less(keyed[i], keyed[best]) : less(keyed[best], keyed[i])) best = i;
      }
      if (problem) return make_error(std::move(*problem));
      return keyed[best].second;
    }
    if (reverse) {
      std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) { return less(b, a); });
    } else {
      std::stable_sort(keyed.begin(), keyed.end(), less);
    }
    if (problem) return make_error(std::move(*problem));
    ValueList out;
    for (auto& [k, item] : keyed) out.push_back(item);
    return Value::list(std::move(out));
  }
  if (name == "dictsort") {
    if (!value.is_dict()) return fail("dictsort: value must be a mapping");
    bool case_sensitive = arg(0, "case_sensitive") && arg(0, "case_sensitive")->truthy();
    std::string by = optional_string(arg(1, "by")).value_or("key");
    bool reverse = arg(2, "reverse") && arg(2, "reverse")->truthy();
    std::vector<std::pair<Value, Value>> keyed;
    for (const auto& [k, v] : value.dict_entries().entries()) {
      Value key = by == "value" ? v : k;
      if (!case_sensitive && key.is_string()) key = Value(py_lower(key.string()));
      keyed.emplace_back(key, Value::list({k, v}, true));
    }
    std::optional<Status> problem;
    auto less = [&](const std::pair<Value, Value>& a, const std::pair<Value, Value>& b) {
      auto c = order(a.first, b.first);
      if (!c) {
        if (!problem) problem = c.error();
        return false;
      }
      return reverse ? *c > 0 : *c < 0;
    };
    std::stable_sort(keyed.begin(), keyed.end(), less);
    if (problem) return make_error(std::move(*problem));
    ValueList out;
    for (auto& [k, item] : keyed) out.push_back(item);
    return Value::list(std::move(out));
  }
  if (name == "sum") {
    auto attribute = arg(0, "attribute");
    auto start = arg(1, "start");
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    Value total = start ? *start : Value(0);
    for (const auto& item : items) {
      Value v = item;
      if (attribute && !attribute->is_none()) {
        FERRITE_ASSIGN_OR_RETURN(v, attribute_path(*this, item, as_text(*attribute)));
      }
      FERRITE_ASSIGN_OR_RETURN(total, binary("+", total, v));
    }
    return total;
  }
  if (name == "map") {
    // Jinja2 maps and selects over `value` only when it is truthy.
    if (!value.truthy()) return Value::iterator({}, "generator");
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    ValueList out;
    if (args.positional.empty()) {
      auto attribute = arg(99, "attribute");
      if (!attribute) return fail("map: needs a filter name or attribute=");
      auto fallback = arg(99, "default");
      for (const auto& item : items) {
        FERRITE_ASSIGN_OR_RETURN(Value v, attribute_path(*this, item, as_text(*attribute)));
        if (v.is_undefined() && fallback) v = *fallback;
        out.push_back(std::move(v));
      }
    } else {
      std::string filter_name = as_text(args.positional[0]);
      CallArgs rest;
      rest.positional.assign(args.positional.begin() + 1, args.positional.end());
      rest.named = args.named;
      for (const auto& item : items) {
        FERRITE_RETURN_IF_ERROR(step());
        FERRITE_ASSIGN_OR_RETURN(Value v, filter(filter_name, item, rest));
        out.push_back(std::move(v));
      }
    }
    return Value::iterator(std::move(out), "generator");
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    bool by_attribute = name == "selectattr" || name == "rejectattr";
    bool keep_when = name == "select" || name == "selectattr";
    if (!value.truthy()) return Value::iterator({}, "generator");
    FERRITE_ASSIGN_OR_RETURN(ValueList items, iterate(value));
    size_t next = 0;
    std::string attribute;
    if (by_attribute) {
      if (args.positional.empty()) return fail(fmt::format("{}: needs an attribute", name));
      attribute = as_text(args.positional[0]);
      next = 1;
    }
    std::optional<std::string> test_name;
    if (next < args.positional.size()) test_name = as_text(args.positional[next++]);
    CallArgs rest;
    rest.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(std::min(next, args.positional.size())),
                           args.positional.end());
    rest.named = args.named;
    ValueList out;
    for (const auto& item : items) {
      FERRITE_RETURN_IF_ERROR(step());
      Value subject = item;
      if (by_attribute) {
        FERRITE_ASSIGN_OR_RETURN(subject, attribute_path(*this, item, attribute));
      }
      bool ok = subject.truthy();
      if (test_name) {
        FERRITE_ASSIGN_OR_RETURN(ok, test(*test_name, subject, rest));
      }
      if (ok == keep_when) out.push_back(item);
    }
    return Value::iterator(std::move(out), "generator");
  }
  if (name == "indent") {
    auto width = arg(0, "width");
    bool first = arg(1, "first") && arg(1, "first")->truthy();
    bool blank = arg(2, "blank") && arg(2, "blank")->truthy();
    std::string indention = !width ? "    " : width->is_string() ? width->string()
                                                                   : std::string(static_cast<size_t>(std::clamp<int64_t>(width->integer(), 0, 1024)), ' ');
    std::string s = as_text(value) + "\n";
    auto lines = py_splitlines(s, false);
    std::string out;
    if (blank) {
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i) out += "\n" + indention;
        out += lines[i];
      }
    } else {
      out = lines.empty() ? "" : lines[0];
      for (size_t i = 1; i < lines.size(); ++i) {
        out += "\n";
        if (!lines[i].empty()) out += indention;
        out += lines[i];
      }
    }
    if (first) out = indention + out;
    FERRITE_RETURN_IF_ERROR(check_bytes(out.size()));
    return Value(std::move(out));
  }
  if (name == "center") {
    int64_t width = int_or(arg(0, "width"), 80);
    std::string s = as_text(value);
    int64_t len = static_cast<int64_t>(utf8_length(s));
    if (width <= len) return Value(s);
    FERRITE_RETURN_IF_ERROR(check_bytes(static_cast<size_t>(width)));
    int64_t pad = width - len;
    int64_t left = pad / 2 + (pad & width & 1);
    return Value(std::string(static_cast<size_t>(left), ' ') + s + std::string(static_cast<size_t>(pad - left), ' '));
  }
  if (name == "attr") {
    auto attribute = arg(0, "name");
    if (!attribute) return fail("attr: needs a name");
    return get_attribute(value, as_text(*attribute));
  }
  if (name == "wordcount") {
    return Value(static_cast<int64_t>(py_split(as_text(value), std::nullopt, -1).size()));
  }
  return fail(fmt::format("No filter named '{}'.", name));
}

Result<bool> Renderer::test(const std::string& name, const Value& value, const CallArgs& args) {
  auto other = argument(args, 0, "other");
  auto need_other = [&]() -> Result<Value> {
    if (!other) return fail(fmt::format("test '{}' needs an argument", name));
    return *other;
  };
  if (name == "defined") return !value.is_undefined();
  if (name == "undefined") return value.is_undefined();
  if (name == "none") return value.is_none();
  if (name == "string") return value.is_string();
  if (name == "number") return value.is_number();
  if (name == "integer") return value.is_int();
  if (name == "float") return value.is_float();
  if (name == "boolean") return value.is_bool();
  if (name == "true") return value.is_bool() && value.boolean();
  if (name == "false") return value.is_bool() && !value.boolean();
  if (name == "mapping") return value.is_dict();
  if (name == "sequence") return value.is_string() || (value.is_list() && !value.is_iterator()) || value.is_dict();
  if (name == "iterable") return value.is_string() || value.is_list() || value.is_dict() || value.is_undefined();
  if (name == "callable") return value.is_callable();
  if (name == "escaped") return false;
  if (name == "lower") return value.is_string() && py_lower(value.string()) == value.string();
  if (name == "upper") return value.is_string() && py_upper(value.string()) == value.string();
  if (name == "odd" || name == "even") {
    if (!value.is_int() && !value.is_bool()) return fail(fmt::format("test '{}' needs an integer", name));
    int64_t r = value.integer() % 2;
    return name == "odd" ? r != 0 : r == 0;
  }
  if (name == "divisibleby") {
    FERRITE_ASSIGN_OR_RETURN(Value d, need_other());
    if (!d.is_number() || !value.is_number()) return fail("divisibleby needs numbers");
    if (d.number() == 0) return fail("integer division or modulo by zero");
    if (value.is_float() || d.is_float()) return std::fmod(value.number(), d.number()) == 0;
    return value.integer() % d.integer() == 0;
  }
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") {
    FERRITE_ASSIGN_OR_RETURN(Value o, need_other());
    return name == "sameas" ? value.same_as(o) : value.equals(o);
  }
  if (name == "ne" || name == "!=") {
    FERRITE_ASSIGN_OR_RETURN(Value o, need_other());
    return !value.equals(o);
  }
  if (name == "lt" || name == "le" || name == "gt" || name == "ge" || name == "lessthan" || name == "greaterthan") {
    FERRITE_ASSIGN_OR_RETURN(Value o, need_other());
    std::string op = name == "lt" || name == "lessthan" ? "<" : name == "le" ? "<=" : name == "gt" || name == "greaterthan" ? ">" : ">=";
    return compare(op, value, o);
  }
  if (name == "in") {
    FERRITE_ASSIGN_OR_RETURN(Value o, need_other());
    return contains(o, value);
  }
  if (name == "filter" || name == "test") {
    if (!value.is_string()) return false;
    static const char* kFilters[] = {"tojson", "trim", "upper", "lower", "capitalize", "title", "string", "safe",
                                     "escape", "e", "forceescape", "length", "count", "default", "d", "join",
                                     "replace", "first", "last", "list", "items", "int", "float", "abs", "round",
                                     "reverse", "sort", "unique", "min", "max", "dictsort", "sum", "map", "select",
                                     "reject", "selectattr", "rejectattr", "indent", "center", "attr", "wordcount"};
    static const char* kTests[] = {"defined", "undefined", "none", "string", "number", "integer", "float",
                                   "boolean", "true", "false", "mapping", "sequence", "iterable", "callable",
                                   "escaped", "lower", "upper", "odd", "even", "divisibleby", "equalto", "eq",
                                   "sameas", "ne", "lt", "le", "gt", "ge", "in", "filter", "test"};
    const std::string& s = value.string();
    if (name == "filter") return std::find(std::begin(kFilters), std::end(kFilters), s) != std::end(kFilters);
    return std::find(std::begin(kTests), std::end(kTests), s) != std::end(kTests);
  }
  return fail(fmt::format("No test named '{}'.", name));
}

}  // namespace ferrite::chat
