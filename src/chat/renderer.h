// chat/renderer.h — evaluates a parsed template (internal to src/chat).
//
// Contract: one Renderer renders one template once. Scopes follow Jinja2:
// the template's top level is one frame; every loop iteration gets a fresh
// frame over the enclosing one (a `set` inside a loop is not seen after it,
// nor by the next iteration); a macro call gets a frame over the frame it was
// defined in. Builtin filters, tests, methods and globals live in
// builtins.cc. Errors carry the line and column of the expression or
// statement being evaluated (template_error).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "chat/ast.h"
#include "chat/lexer.h"
#include "ferrite/chat/template.h"

namespace ferrite::chat {

struct ParsedTemplate {
  Body body;
};

struct Frame {
  std::shared_ptr<Frame> parent;
  std::unordered_map<std::string, Value> vars;
};

// HTML escaping as markupsafe.escape: & < > " ' .
std::string html_escape(std::string_view text);

// The n-th argument, given by position or by name; nullopt when absent.
std::optional<Value> argument(const CallArgs& args, size_t index, std::string_view name);

class Renderer {
 public:
  Renderer(const TemplateLimits& limits, const std::map<std::string, Value>& variables);

  Result<std::string> render(const Body& body);

  // Errors at the position being evaluated.
  Error fail(std::string message) const;
  Error undefined_error(const Value& undefined) const;
  const TemplateLimits& limits() const { return limits_; }
  Result<bool> check_items(size_t count) const;
  Result<bool> check_bytes(size_t bytes) const;
  Result<bool> step();

  Result<Value> call(const Value& callee, const CallArgs& args);
  Result<Value> filter(const std::string& name, const Value& value, const CallArgs& args);
  Result<bool> test(const std::string& name, const Value& value, const CallArgs& args);
  // Python attribute access (methods of str, dict, list; namespace
  // attributes); nullopt when the object has no such attribute.
  Result<std::optional<Value>> python_attribute(const Value& object, const std::string& name);
  Result<Value> get_attribute(const Value& object, const std::string& name);
  Result<Value> get_item(const Value& object, const Value& key);
  // Elements of an iterable (list/tuple items, dict keys, string code
  // points, nothing for undefined).
  Result<ValueList> iterate(const Value& value);
  Result<Value> binary(const std::string& op, const Value& a, const Value& b);
  Result<bool> compare(const std::string& op, const Value& a, const Value& b);
  Result<bool> contains(const Value& container, const Value& item);
  Result<int> order(const Value& a, const Value& b);  // -1, 0, 1; TypeError when unorderable

  // range, namespace, dict (builtins.cc).
  void install_builtin_globals();

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Result<Flow> exec_body(const Body& body, std::string& out);
  Result<Flow> exec(const Stmt& stmt, std::string& out);
  Result<Flow> exec_for(const Stmt& stmt, std::string& out);
  Result<bool> exec_macro_definition(const Stmt& stmt);
  Result<Value> call_macro(const Stmt& macro, const std::shared_ptr<Frame>& closure,
                           const CallArgs& args, std::optional<Value> caller);
  Result<bool> append(std::string& out, std::string_view text);
  Result<bool> assign(const std::string& name, Value value);

  Result<Value> eval(const Expr& expr);
  Result<Value> eval_inner(const Expr& expr);
  Result<CallArgs> eval_args(const Expr& expr, size_t first_positional);
  Result<Value> lookup(const std::string& name);
  Result<Value> slice(const Value& object, const Expr& expr);

  TemplateLimits limits_;
  std::map<std::string, Value> globals_;
  std::shared_ptr<Frame> frame_;
  std::vector<std::shared_ptr<Frame>> closures_;  // frames macros close over (weakly)
  std::shared_ptr<Frame> root_;
  Position where_;
  uint64_t steps_ = 0;
  int call_depth_ = 0;
};

}  // namespace ferrite::chat
