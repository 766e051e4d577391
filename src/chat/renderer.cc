// Statement execution and expression evaluation.
#include "chat/renderer.h"

#include <cmath>

#include <fmt/format.h>

#include "chat/parser.h"

namespace ferrite::chat {

std::optional<Value> argument(const CallArgs& args, size_t index, std::string_view name) {
  if (index < args.positional.size()) return args.positional[index];
  for (const auto& [n, v] : args.named) {
    if (n == name) return v;
  }
  return std::nullopt;
}

Renderer::Renderer(const TemplateLimits& limits, const std::map<std::string, Value>& variables)
    : limits_(limits) {
  install_builtin_globals();
  for (const auto& [name, value] : variables) globals_[name] = value;
  root_ = std::make_shared<Frame>();
  frame_ = root_;
}

Error Renderer::fail(std::string message) const {
  return template_error(where_.line, where_.column, std::move(message));
}

Error Renderer::undefined_error(const Value& undefined) const {
  return fail(undefined.undefined_hint().empty() ? "value is undefined" : undefined.undefined_hint());
}

Result<bool> Renderer::check_items(size_t count) const {
  if (count > limits_.max_items) {
    return fail(fmt::format("a list or dict of {} items exceeds the limit of {}", count, limits_.max_items));
  }
  return true;
}

Result<bool> Renderer::check_bytes(size_t bytes) const {
  if (bytes > limits_.max_output_bytes) {
    return fail(fmt::format("a string of {} bytes exceeds the limit of {}", bytes, limits_.max_output_bytes));
  }
  return true;
}

Result<bool> Renderer::step() {
  if (++steps_ > limits_.max_steps) {
    return fail(fmt::format("more than {} steps (statements, loop iterations, calls)", limits_.max_steps));
  }
  return true;
}

Result<std::string> Renderer::render(const Body& body) {
  std::string out;
  FERRITE_ASSIGN_OR_RETURN(Flow flow, exec_body(body, out));
  (void)flow;
  return out;
}

Result<bool> Renderer::append(std::string& out, std::string_view text) {
  if (out.size() + text.size() > limits_.max_output_bytes) {
    return fail(fmt::format("output exceeds the limit of {} bytes", limits_.max_output_bytes));
  }
  out.append(text);
  return true;
}

Result<Renderer::Flow> Renderer::exec_body(const Body& body, std::string& out) {
  for (const auto& stmt : body) {
    FERRITE_ASSIGN_OR_RETURN(Flow flow, exec(*stmt, out));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Result<bool> Renderer::assign(const std::string& name, Value value) {
  frame_->vars[name] = std::move(value);
  return true;
}

Result<Renderer::Flow> Renderer::exec(const Stmt& stmt, std::string& out) {
  where_ = stmt.where;
  FERRITE_RETURN_IF_ERROR(step());
  switch (stmt.kind) {
    case Stmt::Kind::kText:
      FERRITE_RETURN_IF_ERROR(append(out, stmt.text));
      return Flow::kNormal;
    case Stmt::Kind::kOutput: {
      FERRITE_ASSIGN_OR_RETURN(Value v, eval(*stmt.expr));
      FERRITE_RETURN_IF_ERROR(append(out, v.to_output()));
      return Flow::kNormal;
    }
    case Stmt::Kind::kIf: {
      for (size_t i = 0; i < stmt.bodies.size(); ++i) {
        bool take = true;
        if (i < stmt.conditions.size()) {
          FERRITE_ASSIGN_OR_RETURN(Value c, eval(*stmt.conditions[i]));
          take = c.truthy();
        }
        if (take) return exec_body(stmt.bodies[i], out);
      }
      return Flow::kNormal;
    }
    case Stmt::Kind::kFor:
      return exec_for(stmt, out);
    case Stmt::Kind::kSet: {
      FERRITE_ASSIGN_OR_RETURN(Value v, eval(*stmt.expr));
      where_ = stmt.where;
      if (!stmt.attribute.empty()) {
        FERRITE_ASSIGN_OR_RETURN(Value target, lookup(stmt.targets[0]));
        if (!target.is_namespace()) {
          return fail("can't assign attribute on non-namespace object");
        }
        if (v.holds(target)) {  // value.h, Value::holds: no reference cycles
          return fail("can't assign a value that holds the namespace to one of its attributes");
        }
        target.namespace_attributes().set(Value(stmt.attribute), std::move(v));
        return Flow::kNormal;
      }
      if (stmt.targets.size() == 1) {
        FERRITE_RETURN_IF_ERROR(assign(stmt.targets[0], std::move(v)));
        return Flow::kNormal;
      }
      FERRITE_ASSIGN_OR_RETURN(ValueList parts, iterate(v));
      if (parts.size() != stmt.targets.size()) {
        return fail(fmt::format("{} values to unpack (expected {})",
                                parts.size() > stmt.targets.size() ? "too many" : "not enough",
                                stmt.targets.size()));
      }
      for (size_t i = 0; i < parts.size(); ++i) FERRITE_RETURN_IF_ERROR(assign(stmt.targets[i], parts[i]));
      return Flow::kNormal;
    }
    case Stmt::Kind::kSetBlock:
    case Stmt::Kind::kFilterBlock: {
      std::string captured;
      FERRITE_ASSIGN_OR_RETURN(Flow flow, exec_body(stmt.body, captured));
      (void)flow;
      Value value(std::move(captured));
      if (stmt.filter_chain) {
        auto saved = frame_;
        frame_ = std::make_shared<Frame>();
        frame_->parent = saved;
        frame_->vars["__body__"] = value;
        auto filtered = eval(*stmt.filter_chain);
        frame_ = saved;
        if (!filtered) return make_error(std::move(filtered).error());
        value = std::move(*filtered);
      }
      if (stmt.kind == Stmt::Kind::kSetBlock) {
        FERRITE_RETURN_IF_ERROR(assign(stmt.name, std::move(value)));
      } else {
        FERRITE_RETURN_IF_ERROR(append(out, value.to_output()));
      }
      return Flow::kNormal;
    }
    case Stmt::Kind::kMacro:
      FERRITE_RETURN_IF_ERROR(exec_macro_definition(stmt));
      return Flow::kNormal;
    case Stmt::Kind::kCallBlock: {
      const Expr& call = *stmt.expr;
      FERRITE_ASSIGN_OR_RETURN(Value callee, eval(*call.operand));
      FERRITE_ASSIGN_OR_RETURN(CallArgs args, eval_args(call, 0));
      auto closure = frame_;
      const Stmt* block = &stmt;
      Value caller = Value::callable("caller", [this, block, closure](const CallArgs& a) -> Result<Value> {
        return call_macro(*block, closure, a, std::nullopt);
      });
      args.named.emplace_back("caller", caller);
      where_ = stmt.where;
      FERRITE_ASSIGN_OR_RETURN(Value result, this->call(callee, args));
      FERRITE_RETURN_IF_ERROR(append(out, result.to_output()));
      return Flow::kNormal;
    }
    case Stmt::Kind::kBreak:
      return Flow::kBreak;
    case Stmt::Kind::kContinue:
      return Flow::kContinue;
    case Stmt::Kind::kGeneration:
      return exec_body(stmt.body, out);
  }
  return Flow::kNormal;
}

Result<Renderer::Flow> Renderer::exec_for(const Stmt& stmt, std::string& out) {
  FERRITE_ASSIGN_OR_RETURN(Value iterable, eval(*stmt.expr));
  where_ = stmt.where;
  FERRITE_ASSIGN_OR_RETURN(ValueList all, iterate(iterable));
  auto outer = frame_;
  auto bind = [&](const Value& item) -> Result<bool> {
    if (stmt.targets.size() == 1) {
      frame_->vars[stmt.targets[0]] = item;
      return true;
    }
    FERRITE_ASSIGN_OR_RETURN(ValueList parts, iterate(item));
    if (parts.size() != stmt.targets.size()) {
      return fail(fmt::format("{} values to unpack (expected {})",
                              parts.size() > stmt.targets.size() ? "too many" : "not enough",
                              stmt.targets.size()));
    }
    for (size_t i = 0; i < parts.size(); ++i) frame_->vars[stmt.targets[i]] = parts[i];
    return true;
  };
  ValueList items;
  if (stmt.condition) {
    for (const Value& item : all) {
      FERRITE_RETURN_IF_ERROR(step());
      frame_ = std::make_shared<Frame>();
      frame_->parent = outer;
      auto bound = bind(item);
      if (!bound) {
        frame_ = outer;
        return make_error(std::move(bound).error());
      }
      auto keep = eval(*stmt.condition);
      frame_ = outer;
      if (!keep) return make_error(std::move(keep).error());
      if (keep->truthy()) items.push_back(item);
    }
  } else {
    items = std::move(all);
  }
  if (items.empty()) {
    if (!stmt.else_body.empty()) return exec_body(stmt.else_body, out);
    return Flow::kNormal;
  }
  const int64_t length = static_cast<int64_t>(items.size());
  auto shared_items = std::make_shared<const ValueList>(items);
  for (int64_t i = 0; i < length; ++i) {
    where_ = stmt.where;
    FERRITE_RETURN_IF_ERROR(step());
    frame_ = std::make_shared<Frame>();
    frame_->parent = outer;
    Dict loop;
    loop.set(Value("index"), Value(i + 1));
    loop.set(Value("index0"), Value(i));
    loop.set(Value("revindex"), Value(length - i));
    loop.set(Value("revindex0"), Value(length - i - 1));
    loop.set(Value("first"), Value(i == 0));
    loop.set(Value("last"), Value(i == length - 1));
    loop.set(Value("length"), Value(length));
    loop.set(Value("depth"), Value(1));
    loop.set(Value("depth0"), Value(0));
    loop.set(Value("previtem"),
             i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item"));
    loop.set(Value("nextitem"),
             i + 1 < length ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item"));
    loop.set(Value("cycle"), Value::callable("cycle", [i](const CallArgs& a) -> Result<Value> {
               if (a.positional.empty()) {
                 return make_error(ErrorCode::kInvalidArgument, "no items for cycling given");
               }
               return a.positional[static_cast<size_t>(i) % a.positional.size()];
             }));
    frame_->vars["loop"] = Value::dict(std::move(loop));
    auto bound = bind(items[static_cast<size_t>(i)]);
    if (!bound) {
      frame_ = outer;
      return make_error(std::move(bound).error());
    }
    auto flow = exec_body(stmt.body, out);
    frame_ = outer;
    if (!flow) return make_error(std::move(flow).error());
    if (*flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Result<bool> Renderer::exec_macro_definition(const Stmt& stmt) {
  // The macro's value is stored in the very frame it closes over: holding that
  // frame strongly would make a cycle (frame -> macro -> frame) that is never
  // freed. The renderer owns every closure frame until it is destroyed; the
  // macro refers to its frame weakly.
  closures_.push_back(frame_);
  std::weak_ptr<Frame> weak_closure = frame_;
  const Stmt* macro = &stmt;
  Value callable = Value::callable(stmt.name, [this, macro, weak_closure](const CallArgs& args) -> Result<Value> {
    std::shared_ptr<Frame> closure = weak_closure.lock();
    if (!closure) return fail(fmt::format("macro '{}' was called after its template finished", macro->name));
    std::optional<Value> caller;
    CallArgs rest;
    rest.positional = args.positional;
    for (const auto& [n, v] : args.named) {
      if (n == "caller") {
        caller = v;
      } else {
        rest.named.emplace_back(n, v);
      }
    }
    return call_macro(*macro, closure, rest, caller);
  });
  return assign(stmt.name, std::move(callable));
}

Result<Value> Renderer::call_macro(const Stmt& macro, const std::shared_ptr<Frame>& closure,
                                   const CallArgs& args, std::optional<Value> caller) {
  if (call_depth_ >= limits_.max_call_depth) {
    return fail(fmt::format("macro calls nested deeper than {} levels", limits_.max_call_depth));
  }
  if (args.positional.size() > macro.params.size()) {
    return fail(fmt::format("macro '{}' takes not more than {} argument(s)", macro.name, macro.params.size()));
  }
  for (const auto& [n, v] : args.named) {
    bool known = false;
    for (const auto& p : macro.params) known = known || p.first == n;
    if (!known) return fail(fmt::format("macro '{}' takes no keyword argument '{}'", macro.name, n));
  }
  auto saved = frame_;
  Position saved_where = where_;
  frame_ = std::make_shared<Frame>();
  frame_->parent = closure;
  ++call_depth_;
  auto finish = [&] {
    frame_ = saved;
    where_ = saved_where;
    --call_depth_;
  };
  for (size_t i = 0; i < macro.params.size(); ++i) {
    const auto& [name, def] = macro.params[i];
    std::optional<Value> given = argument(args, i, name);
    if (!given) {
      if (def) {
        auto v = eval(*def);
        if (!v) {
          finish();
          return make_error(std::move(v).error());
        }
        given = std::move(*v);
      } else {
        given = Value::undefined(fmt::format("parameter '{}' was not provided", name));
      }
    }
    frame_->vars[name] = *given;
  }
  if (caller) frame_->vars["caller"] = *caller;
  std::string out;
  auto flow = exec_body(macro.body, out);
  finish();
  if (!flow) return make_error(std::move(flow).error());
  return Value(std::move(out));
}

Result<Value> Renderer::call(const Value& callee, const CallArgs& args) {
  if (callee.is_undefined()) return undefined_error(callee);
  if (!callee.is_callable()) return fail(fmt::format("'{}' object is not callable", callee.python_type_name()));
  FERRITE_RETURN_IF_ERROR(step());
  Position saved = where_;
  auto result = callee.callable_object().call(args);
  where_ = saved;
  if (!result) {
    Status status = std::move(result).error();
    if (status.fields().count("template_message") == 0) {
      // A builtin's own error: give it the call's position.
      return fail(status.message());
    }
    return make_error(std::move(status));
  }
  return std::move(*result);
}

Result<Value> Renderer::lookup(const std::string& name) {
  for (Frame* f = frame_.get(); f; f = f->parent.get()) {
    auto it = f->vars.find(name);
    if (it != f->vars.end()) return it->second;
  }
  auto g = globals_.find(name);
  if (g != globals_.end()) return g->second;
  return Value::undefined(fmt::format("'{}' is undefined", name));
}

Result<CallArgs> Renderer::eval_args(const Expr& expr, size_t first_positional) {
  CallArgs args;
  for (size_t i = first_positional; i < expr.items.size(); ++i) {
    FERRITE_ASSIGN_OR_RETURN(Value v, eval(*expr.items[i]));
    args.positional.push_back(std::move(v));
  }
  for (const auto& [name, e] : expr.named) {
    FERRITE_ASSIGN_OR_RETURN(Value v, eval(*e));
    args.named.emplace_back(name, std::move(v));
  }
  return args;
}

Result<Value> Renderer::eval(const Expr& expr) {
  Position saved = where_;
  where_ = expr.where;
  auto result = eval_inner(expr);
  if (result) where_ = saved;
  return result;
}

Result<Value> Renderer::eval_inner(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kLiteral:
      return expr.value;
    case Expr::Kind::kName:
      return lookup(expr.name);
    case Expr::Kind::kList: {
      ValueList items;
      for (const auto& e : expr.items) {
        FERRITE_ASSIGN_OR_RETURN(Value v, eval(*e));
        items.push_back(std::move(v));
      }
      return Value::list(std::move(items), expr.is_tuple);
    }
    case Expr::Kind::kDict: {
      Dict d;
      for (size_t i = 0; i + 1 < expr.items.size(); i += 2) {
        FERRITE_ASSIGN_OR_RETURN(Value k, eval(*expr.items[i]));
        FERRITE_ASSIGN_OR_RETURN(Value v, eval(*expr.items[i + 1]));
        d.set(std::move(k), std::move(v));
      }
      return Value::dict(std::move(d));
    }
    case Expr::Kind::kAttribute: {
      FERRITE_ASSIGN_OR_RETURN(Value object, eval(*expr.operand));
      where_ = expr.where;
      return get_attribute(object, expr.name);
    }
    case Expr::Kind::kSubscript: {
      FERRITE_ASSIGN_OR_RETURN(Value object, eval(*expr.operand));
      FERRITE_ASSIGN_OR_RETURN(Value key, eval(*expr.items[0]));
      where_ = expr.where;
      return get_item(object, key);
    }
    case Expr::Kind::kSlice: {
      FERRITE_ASSIGN_OR_RETURN(Value object, eval(*expr.operand));
      return slice(object, expr);
    }
    case Expr::Kind::kCall: {
      FERRITE_ASSIGN_OR_RETURN(Value callee, eval(*expr.operand));
      FERRITE_ASSIGN_OR_RETURN(CallArgs args, eval_args(expr, 0));
      where_ = expr.where;
      return call(callee, args);
    }
    case Expr::Kind::kFilter: {
      FERRITE_ASSIGN_OR_RETURN(Value value, eval(*expr.items[0]));
      FERRITE_ASSIGN_OR_RETURN(CallArgs args, eval_args(expr, 1));
      where_ = expr.where;
      FERRITE_RETURN_IF_ERROR(step());
      return filter(expr.name, value, args);
    }
    case Expr::Kind::kTest: {
      FERRITE_ASSIGN_OR_RETURN(Value value, eval(*expr.items[0]));
      FERRITE_ASSIGN_OR_RETURN(CallArgs args, eval_args(expr, 1));
      where_ = expr.where;
      FERRITE_ASSIGN_OR_RETURN(bool r, test(expr.name, value, args));
      return Value(expr.negated ? !r : r);
    }
    case Expr::Kind::kUnary: {
      FERRITE_ASSIGN_OR_RETURN(Value v, eval(*expr.operand));
      where_ = expr.where;
      if (expr.name == "not") return Value(!v.truthy());
      if (v.is_undefined()) return undefined_error(v);
      if (!v.is_number()) {
        return fail(fmt::format("bad operand type for unary {}: '{}'", expr.name, v.python_type_name()));
      }
      if (expr.name == "+") return v.is_float() ? v : Value(v.integer());
      if (v.is_float()) return Value(-v.number());
      if (v.integer() == INT64_MIN) return fail("integer overflow");
      return Value(-v.integer());
    }
    case Expr::Kind::kBinary: {
      FERRITE_ASSIGN_OR_RETURN(Value a, eval(*expr.items[0]));
      if (expr.name == "and") {
        if (!a.truthy()) return a;
        return eval(*expr.items[1]);
      }
      if (expr.name == "or") {
        if (a.truthy()) return a;
        return eval(*expr.items[1]);
      }
      FERRITE_ASSIGN_OR_RETURN(Value b, eval(*expr.items[1]));
      where_ = expr.where;
      return binary(expr.name, a, b);
    }
    case Expr::Kind::kCompare: {
      FERRITE_ASSIGN_OR_RETURN(Value left, eval(*expr.items[0]));
      for (size_t i = 0; i < expr.ops.size(); ++i) {
        FERRITE_ASSIGN_OR_RETURN(Value right, eval(*expr.items[i + 1]));
        where_ = expr.where;
        FERRITE_ASSIGN_OR_RETURN(bool r, compare(expr.ops[i], left, right));
        if (!r) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case Expr::Kind::kCondition: {
      FERRITE_ASSIGN_OR_RETURN(Value c, eval(*expr.items[1]));
      if (c.truthy()) return eval(*expr.items[0]);
      if (expr.items[2]) return eval(*expr.items[2]);
      return Value::undefined("the inline if-expression evaluated to false and no else section was defined.");
    }
  }
  return fail("unknown expression");
}

Result<Value> Renderer::slice(const Value& object, const Expr& expr) {
  std::optional<int64_t> bounds[3];
  for (int i = 0; i < 3; ++i) {
    if (!expr.items[static_cast<size_t>(i)]) continue;
    FERRITE_ASSIGN_OR_RETURN(Value v, eval(*expr.items[static_cast<size_t>(i)]));
    if (v.is_none()) continue;
    if (!v.is_int() && !v.is_bool()) {
      return fail("slice indices must be integers or None or have an __index__ method");
    }
    bounds[i] = v.integer();
  }
  where_ = expr.where;
  int64_t step = bounds[2].value_or(1);
  if (step == 0) return fail("slice step cannot be zero");
  std::vector<std::string_view> chars;
  int64_t n = 0;
  if (object.is_string()) {
    chars = utf8_split(object.string());
    n = static_cast<int64_t>(chars.size());
  } else if (object.is_list() && !object.is_iterator()) {
    n = static_cast<int64_t>(object.list_items().size());
  } else if (object.is_undefined()) {
    return undefined_error(object);
  } else {
    return fail(fmt::format("'{}' object is not subscriptable", object.python_type_name()));
  }
  auto clamp = [&](std::optional<int64_t> b, int64_t def_pos, int64_t def_neg) -> int64_t {
    if (!b) return step > 0 ? def_pos : def_neg;
    int64_t v = *b;
    if (v < 0) v += n;
    if (step > 0) return std::clamp<int64_t>(v, 0, n);
    return std::clamp<int64_t>(v, -1, n - 1);
  };
  int64_t start = clamp(bounds[0], 0, n - 1);
  int64_t stop = clamp(bounds[1], n, -1);
  std::vector<int64_t> picks;
  if (step > 0) {
    for (int64_t i = start; i < stop; i += step) picks.push_back(i);
  } else {
    for (int64_t i = start; i > stop; i += step) picks.push_back(i);
  }
  if (object.is_string()) {
    std::string out;
    for (int64_t i : picks) out += chars[static_cast<size_t>(i)];
    return Value(std::move(out));
  }
  ValueList out;
  for (int64_t i : picks) out.push_back(object.list_items()[static_cast<size_t>(i)]);
  return Value::list(std::move(out), object.is_tuple());
}

Result<Value> Renderer::get_attribute(const Value& object, const std::string& name) {
  if (object.is_undefined()) return undefined_error(object);
  FERRITE_ASSIGN_OR_RETURN(std::optional<Value> attr, python_attribute(object, name));
  if (attr) return *attr;
  if (object.is_dict()) {
    if (const Value* v = object.dict_entries().find(Value(name))) return *v;
  }
  return Value::undefined(fmt::format("'{}' has no attribute '{}'", object.type_repr(), name));
}

Result<Value> Renderer::get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) return undefined_error(object);
  if (object.is_dict()) {
    if (const Value* v = object.dict_entries().find(key)) return *v;
  } else if (object.is_iterator()) {
    return Value::undefined(fmt::format("'{}' object is not subscriptable", object.python_type_name()));
  } else if (object.is_list() && (key.is_int() || key.is_bool())) {
    int64_t n = static_cast<int64_t>(object.list_items().size());
    int64_t i = key.integer();
    if (i < 0) i += n;
    if (i >= 0 && i < n) return object.list_items()[static_cast<size_t>(i)];
    return Value::undefined(fmt::format("{} has no element {}", object.type_repr(), key.integer()));
  } else if (object.is_string() && (key.is_int() || key.is_bool())) {
    auto chars = utf8_split(object.string());
    int64_t n = static_cast<int64_t>(chars.size());
    int64_t i = key.integer();
    if (i < 0) i += n;
    if (i >= 0 && i < n) return Value(std::string(chars[static_cast<size_t>(i)]));
    return Value::undefined(fmt::format("{} has no element {}", object.type_repr(), key.integer()));
  }
  if (key.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::optional<Value> attr, python_attribute(object, key.string()));
    if (attr) return *attr;
    return Value::undefined(fmt::format("'{}' has no attribute '{}'", object.type_repr(), key.string()));
  }
  return Value::undefined(fmt::format("{} has no element {}", object.type_repr(), key.repr()));
}

Result<ValueList> Renderer::iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      return ValueList{};
    case Value::Kind::kList:
      return value.list_items();
    case Value::Kind::kDict: {
      ValueList keys;
      for (const auto& [k, v] : value.dict_entries().entries()) keys.push_back(k);
      return keys;
    }
    case Value::Kind::kString: {
      ValueList chars;
      for (auto c : utf8_split(value.string())) chars.emplace_back(std::string(c));
      return chars;
    }
    default:
      return fail(fmt::format("'{}' object is not iterable", value.python_type_name()));
  }
}

namespace {
std::string operand_types(const std::string& op, const Value& a, const Value& b) {
  return fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, a.python_type_name(),
                     b.python_type_name());
}
}  // namespace

Result<Value> Renderer::binary(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string s = a.to_output() + b.to_output();
    FERRITE_RETURN_IF_ERROR(check_bytes(s.size()));
    return Value(std::move(s));
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  if (a.is_number() && b.is_number()) {
    bool as_float = a.is_float() || b.is_float() || op == "/";
    if (op == "**" && !as_float && b.integer() < 0) as_float = true;
    if (as_float) {
      double x = a.number(), y = b.number();
      if (op == "+") return Value(x + y);
      if (op == "-") return Value(x - y);
      if (op == "*") return Value(x * y);
      if (op == "/" || op == "//" || op == "%") {
        if (y == 0) return fail(op == "/" ? "division by zero" : "float modulo");
        if (op == "/") return Value(x / y);
        if (op == "//") return Value(std::floor(x / y));
        double m = std::fmod(x, y);
        if (m != 0 && ((m < 0) != (y < 0))) m += y;
        return Value(m);
      }
      if (op == "**") return Value(std::pow(x, y));
    } else {
      int64_t x = a.integer(), y = b.integer(), r = 0;
      if (op == "+" && !__builtin_add_overflow(x, y, &r)) return Value(r);
      if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return Value(r);
      if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return Value(r);
      if (op == "//" || op == "%") {
        if (y == 0) return fail("integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) return fail("integer overflow");
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {
          q -= 1;
          m += y;
        }
        return Value(op == "//" ? q : m);
      }
      if (op == "**") {
        int64_t result = 1;
        for (int64_t i = 0; i < y; ++i) {
          if (__builtin_mul_overflow(result, x, &result)) return fail("integer overflow");
          if (result == 0 || result == 1) break;
        }
        return Value(result);
      }
      return fail("integer overflow");
    }
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      if (a.is_markup() || b.is_markup()) {
        // markupsafe: the plain operand is escaped, the result is Markup.
        std::string left = a.is_markup() ? a.string() : html_escape(a.string());
        std::string right = b.is_markup() ? b.string() : html_escape(b.string());
        FERRITE_RETURN_IF_ERROR(check_bytes(left.size() + right.size()));
        return Value::markup(left + right);
      }
      FERRITE_RETURN_IF_ERROR(check_bytes(a.string().size() + b.string().size()));
      return Value(a.string() + b.string());
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple() && !a.is_iterator() &&
        !b.is_iterator()) {
      FERRITE_RETURN_IF_ERROR(check_items(a.list_items().size() + b.list_items().size()));
      ValueList items = a.list_items();
      items.insert(items.end(), b.list_items().begin(), b.list_items().end());
      return Value::list(std::move(items), a.is_tuple());
    }
    if (a.is_string()) {
      return fail(fmt::format("can only concatenate str (not \"{}\") to str", b.python_type_name()));
    }
    if (a.is_list()) {
      return fail(fmt::format("can only concatenate {} (not \"{}\") to {}", a.python_type_name(),
                              b.python_type_name(), a.python_type_name()));
    }
  }
  if (op == "*") {
    const Value* seq = (a.is_string() || a.is_list()) ? &a : (b.is_string() || b.is_list()) ? &b : nullptr;
    const Value* count = seq == &a ? &b : &a;
    if (seq && !seq->is_iterator() && (count->is_int() || count->is_bool())) {
      int64_t n = std::max<int64_t>(0, count->integer());
      if (seq->is_string()) {
        if (seq->string().size() > 0 && static_cast<uint64_t>(n) > limits_.max_output_bytes / seq->string().size()) {
          return fail(fmt::format("a string of more than {} bytes", limits_.max_output_bytes));
        }
        std::string out;
        for (int64_t i = 0; i < n; ++i) out += seq->string();
        return Value(std::move(out));
      }
      size_t size = seq->list_items().size();
      if (size > 0 && static_cast<uint64_t>(n) > limits_.max_items / size) {
        return fail(fmt::format("a list of more than {} items", limits_.max_items));
      }
      ValueList out;
      for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq->list_items().begin(), seq->list_items().end());
      return Value::list(std::move(out), seq->is_tuple());
    }
  }
  return fail(operand_types(op, a, b));
}

Result<int> Renderer::order(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) {
      double x = a.number(), y = b.number();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    int64_t x = a.integer(), y = b.integer();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    int c = a.string().compare(b.string());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_list() && b.is_list()) {
    const auto& x = a.list_items();
    const auto& y = b.list_items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (x[i].equals(y[i])) continue;
      return order(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  return fail(fmt::format("'<' not supported between instances of '{}' and '{}'", a.python_type_name(),
                          b.python_type_name()));
}

Result<bool> Renderer::contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) {
      if (item.is_undefined()) return undefined_error(item);
      return fail(fmt::format("'in <string>' requires string as left operand, not {}", item.python_type_name()));
    }
    return container.string().find(item.string()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const auto& v : container.list_items()) {
      if (v.equals(item)) return true;
    }
    return false;
  }
  if (container.is_dict()) return container.dict_entries().find(item) != nullptr;
  if (container.is_undefined()) return false;
  return fail(fmt::format("argument of type '{}' is not iterable", container.python_type_name()));
}

Result<bool> Renderer::compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return a.equals(b);
  if (op == "!=") return !a.equals(b);
  if (op == "in") return contains(b, a);
  if (op == "not in") {
    FERRITE_ASSIGN_OR_RETURN(bool r, contains(b, a));
    return !r;
  }
  if (!(a.is_number() && b.is_number()) && !(a.is_string() && b.is_string()) &&
      !(a.is_list() && b.is_list())) {
    if (a.is_undefined()) return undefined_error(a);
    if (b.is_undefined()) return undefined_error(b);
    return fail(fmt::format("'{}' not supported between instances of '{}' and '{}'", op,
                            a.python_type_name(), b.python_type_name()));
  }
  FERRITE_ASSIGN_OR_RETURN(int c, order(a, b));
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  return c >= 0;
}

Result<Template> Template::parse(std::string_view source, const TemplateLimits& limits) {
  LexLimits lex_limits;
  lex_limits.max_source_bytes = limits.max_source_bytes;
  FERRITE_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source, lex_limits));
  FERRITE_ASSIGN_OR_RETURN(Body body, parse_template(tokens, limits.max_depth));
  auto parsed = std::make_shared<ParsedTemplate>();
  parsed->body = std::move(body);
  Template t;
  t.parsed_ = std::move(parsed);
  t.limits_ = limits;
  return t;
}

Result<std::string> Template::render(const std::map<std::string, Value>& variables) const {
  Renderer renderer(limits_, variables);
  return renderer.render(parsed_->body);
}

}  // namespace ferrite::chat
