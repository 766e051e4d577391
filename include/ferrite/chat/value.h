// ferrite/chat/value.h — the values a chat template computes with.
//
// Contract: `Value` models the Python objects a Jinja2 chat template sees:
// undefined (Jinja2's default Undefined: prints empty, is falsy, iterates as
// empty, fails on attribute access, arithmetic or calls), none, bool, int
// (64-bit; overflow is an error), float, string (UTF-8 bytes; lengths, indexes
// and slices count code points as Python does), list, tuple, ordered dict
// (insertion order kept), namespace (the one mutable object, Jinja2's
// `namespace()`), and callable (macros, globals, bound methods). Lists and
// dicts are immutable once built (the immutable sandbox). Values are cheap to
// copy: containers are shared.
//
// `to_output` is Python's str() (what `{{ x }}` prints); `repr` is Python's
// repr(); `from_json` converts nlohmann::ordered_json (key order kept).
//
// Example:
//   Value messages = Value::from_json(nlohmann::ordered_json::parse(R"([{"role":"user"}])"));
//   messages.list()[0].dict().find(Value("role"))->to_output();  // "user"
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/status.h"

namespace ferrite::chat {

class Value;
class Dict;
struct CallArgs;
struct Callable;
using ValueList = std::vector<Value>;

struct Undefined {
  // Jinja2's message when the undefined is used: "'x' is undefined" or
  // "'dict object' has no attribute 'x'".
  std::string hint;
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kNamespace, kCallable };

  Value() : data_(Undefined{}) {}
  static Value undefined(std::string hint) { return Value(Data(Undefined{std::move(hint)})); }
  static Value none() { return Value(Data(nullptr)); }
  explicit Value(bool b) : data_(b) {}
  explicit Value(int64_t i) : data_(i) {}
  explicit Value(int i) : data_(int64_t{i}) {}
  explicit Value(double d) : data_(d) {}
  explicit Value(std::string s) : data_(std::move(s)) {}
  explicit Value(std::string_view s) : data_(std::string(s)) {}
  explicit Value(const char* s) : data_(std::string(s)) {}
  static Value list(ValueList items, bool tuple = false);
  // A one-pass iterator Jinja2 filters return (map, select, ..., reverse):
  // iterable like a list, but always truthy, without len(), not
  // subscriptable, not JSON serializable; `type_name` is Python's
  // ("generator", "list_reverseiterator").
  static Value iterator(ValueList items, std::string type_name);
  // A string marked safe (markupsafe.Markup, from `safe`/`escape`): `+` with
  // a plain string escapes the plain one, as Markup does.
  static Value markup(std::string text);
  static Value dict(Dict dict);
  static Value name_space(Dict attributes);
  static Value callable(std::string name, std::function<Result<Value>(const CallArgs&)> call);

  static Value from_json(const nlohmann::ordered_json& json);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_tuple() const { return is_list() && tuple_; }
  bool is_iterator() const { return is_list() && !iterator_type_.empty(); }
  bool is_markup() const { return is_string() && markup_; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_namespace() const { return kind() == Kind::kNamespace; }
  bool is_callable() const { return kind() == Kind::kCallable; }

  bool boolean() const { return std::get<bool>(data_); }
  int64_t integer() const { return is_bool() ? (boolean() ? 1 : 0) : std::get<int64_t>(data_); }
  double number() const { return is_float() ? std::get<double>(data_) : static_cast<double>(integer()); }
  const std::string& string() const { return std::get<std::string>(data_); }
  const ValueList& list_items() const { return *std::get<std::shared_ptr<const ValueList>>(data_); }
  const Dict& dict_entries() const { return *std::get<std::shared_ptr<const Dict>>(data_); }
  Dict& namespace_attributes() const { return *std::get<std::shared_ptr<Dict>>(data_); }
  const Callable& callable_object() const { return *std::get<std::shared_ptr<const Callable>>(data_); }
  const std::string& undefined_hint() const { return std::get<Undefined>(data_).hint; }

  // Python truthiness.
  bool truthy() const;
  // Python str(): what `{{ value }}` prints.
  std::string to_output() const;
  // Python repr().
  std::string repr() const;
  // Jinja2's object_type_repr: "dict object", "None", "str object", ...
  std::string type_repr() const;
  // Python's type name: "dict", "NoneType", "str", ...
  std::string python_type_name() const;
  // Python ==.
  bool equals(const Value& other) const;
  // Identity (`is sameas`): same container, or equal scalars of one kind.
  bool same_as(const Value& other) const;
  // Whether `container` (a list, dict or namespace) is this value or lies
  // anywhere inside it (lists, dict keys and values, namespace attributes;
  // walked without recursion, each container once). Namespaces are the one
  // mutable container: storing a value that holds the namespace in one of
  // its attributes would make a reference cycle, which shared ownership
  // never frees, so the renderer refuses it.
  bool holds(const Value& container) const;

 private:
  using Data = std::variant<Undefined, std::nullptr_t, bool, int64_t, double, std::string,
                            std::shared_ptr<const ValueList>, std::shared_ptr<const Dict>,
                            std::shared_ptr<Dict>, std::shared_ptr<const Callable>>;
  explicit Value(Data data) : data_(std::move(data)) {}
  Data data_;
  bool tuple_ = false;
  bool markup_ = false;
  std::string iterator_type_;
};

// Insertion-ordered mapping; keys compare with Python equality (1 == 1.0 ==
// True). Lookups are linear: template dicts are small, and the render limits
// bound how many entries a template can build.
class Dict {
 public:
  const Value* find(const Value& key) const;
  void set(Value key, Value value);  // replaces in place, or appends
  const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  std::vector<std::pair<Value, Value>> entries_;
};

// Arguments of a call: positional, then keyword (in call order).
struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> named;
};

struct Callable {
  std::string name;
  std::function<Result<Value>(const CallArgs&)> call;
};

// Number of code points of UTF-8 text (invalid bytes count one each).
size_t utf8_length(std::string_view text);
// The code points of UTF-8 text, each as its own UTF-8 string.
std::vector<std::string_view> utf8_split(std::string_view text);
// Python's float repr: shortest round trip, "1.0", "1e+16", "inf", "nan".
std::string python_float_repr(double value);

}  // namespace ferrite::chat
