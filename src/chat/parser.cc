// Recursive-descent parser for the Jinja subset chat templates use.
#include "chat/parser.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

namespace ferrite::chat {
namespace {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, int max_depth) : tokens_(tokens), max_depth_(max_depth) {}

  Result<Body> parse_all() {
    std::string found;
    FERRITE_ASSIGN_OR_RETURN(Body body, parse_body({}, found));
    return body;
  }

 private:
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  bool at_op(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kOperator && peek(ahead).text == op;
  }
  bool at_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kName && peek(ahead).text == name;
  }
  Error fail(const Token& t, std::string message) const {
    return template_error(t.line, t.column, std::move(message));
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case TokenKind::kEnd: return "end of template";
      case TokenKind::kBlockEnd: return "end of statement block";
      case TokenKind::kVariableEnd: return "end of print statement";
      case TokenKind::kText: return "template text";
      case TokenKind::kString: return "string";
      default: return "'" + t.text + "'";
    }
  }
  Result<bool> expect_op(std::string_view op) {
    if (!at_op(op)) return fail(peek(), fmt::format("expected '{}', got {}", op, describe(peek())));
    next();
    return true;
  }
  Result<std::string> expect_name() {
    if (peek().kind != TokenKind::kName) {
      return fail(peek(), fmt::format("expected a name, got {}", describe(peek())));
    }
    return next().text;
  }
  Result<bool> expect_block_end() {
    if (peek().kind != TokenKind::kBlockEnd) {
      return fail(peek(), fmt::format("expected end of statement block, got {}", describe(peek())));
    }
    next();
    return true;
  }
  Result<bool> enter(const Token& t) {
    if (++depth_ > max_depth_) {
      return fail(t, fmt::format("template nesting deeper than {} levels", max_depth_));
    }
    return true;
  }
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  };

  static ExprPtr node(Expr::Kind kind, const Token& t) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->where = {t.line, t.column};
    return e;
  }
  static StmtPtr stmt(Stmt::Kind kind, const Token& t) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->where = {t.line, t.column};
    return s;
  }

  // Parses statements until a block tag whose name is in `ends` (consumed up
  // to and including the name; `found` names it) or the end of the template.
  Result<Body> parse_body(const std::vector<std::string>& ends, std::string& found) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.kind == TokenKind::kEnd) {
        if (!ends.empty()) {
          return fail(t, fmt::format("unexpected end of template; expected '{}'", ends.front()));
        }
        return body;
      }
      if (t.kind == TokenKind::kText) {
        auto s = stmt(Stmt::Kind::kText, t);
        s->text = t.text;
        next();
        body.push_back(std::move(s));
        continue;
      }
      if (t.kind == TokenKind::kVariableBegin) {
        next();
        auto s = stmt(Stmt::Kind::kOutput, t);
        FERRITE_ASSIGN_OR_RETURN(s->expr, parse_tuple());
        if (peek().kind != TokenKind::kVariableEnd) {
          return fail(peek(), fmt::format("expected end of print statement, got {}", describe(peek())));
        }
        next();
        body.push_back(std::move(s));
        continue;
      }
      if (t.kind != TokenKind::kBlockBegin) return fail(t, fmt::format("unexpected {}", describe(t)));
      const Token& name = peek(1);
      if (name.kind != TokenKind::kName) return fail(name, "expected a statement name");
      if (std::find(ends.begin(), ends.end(), name.text) != ends.end()) {
        next();
        next();
        found = name.text;
        return body;
      }
      static const char* kClosers[] = {"endif", "elif", "else", "endfor", "endset", "endmacro",
                                       "endcall", "endfilter", "endgeneration", "endraw"};
      if (std::find(std::begin(kClosers), std::end(kClosers), name.text) != std::end(kClosers)) {
        std::string wanted;
        for (size_t i = 0; i < ends.size(); ++i) {
          wanted += (i == 0 ? "" : i + 1 == ends.size() ? " or " : ", ") + ("'" + ends[i] + "'");
        }
        return fail(name, ends.empty() ? fmt::format("Encountered unknown tag '{}'.", name.text)
                                       : fmt::format("Encountered unknown tag '{}'; expected {}.",
                                                     name.text, wanted));
      }
      FERRITE_ASSIGN_OR_RETURN(bool entered, enter(name));
      (void)entered;
      Leave leave{depth_};
      next();
      FERRITE_ASSIGN_OR_RETURN(StmtPtr s, parse_statement());
      if (s) body.push_back(std::move(s));
    }
  }

  Result<StmtPtr> parse_statement() {
    const Token& t = next();
    const std::string& k = t.text;
    if (k == "if") return parse_if(t);
    if (k == "for") return parse_for(t);
    if (k == "set") return parse_set(t);
    if (k == "macro") return parse_macro(t);
    if (k == "call") return parse_call_block(t);
    if (k == "filter") return parse_filter_block(t);
    if (k == "break" || k == "continue") {
      if (loop_depth_ == 0) return fail(t, fmt::format("'{}' outside of a loop", k));
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      return stmt(k == "break" ? Stmt::Kind::kBreak : Stmt::Kind::kContinue, t);
    }
    if (k == "generation") {
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      auto s = stmt(Stmt::Kind::kGeneration, t);
      std::string found;
      FERRITE_ASSIGN_OR_RETURN(s->body, parse_body({"endgeneration"}, found));
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      return s;
    }
    return fail(t, fmt::format("Encountered unknown tag '{}'.", k));
  }

  Result<StmtPtr> parse_if(const Token& t) {
    auto s = stmt(Stmt::Kind::kIf, t);
    FERRITE_ASSIGN_OR_RETURN(ExprPtr cond, parse_expression());
    s->conditions.push_back(std::move(cond));
    while (true) {
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      std::string found;
      FERRITE_ASSIGN_OR_RETURN(Body body, parse_body({"elif", "else", "endif"}, found));
      s->bodies.push_back(std::move(body));
      if (found == "elif") {
        FERRITE_ASSIGN_OR_RETURN(ExprPtr c, parse_expression());
        s->conditions.push_back(std::move(c));
        continue;
      }
      if (found == "else") {
        FERRITE_RETURN_IF_ERROR(expect_block_end());
        FERRITE_ASSIGN_OR_RETURN(Body else_body, parse_body({"endif"}, found));
        s->bodies.push_back(std::move(else_body));
      }
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      return s;
    }
  }

  Result<std::vector<std::string>> parse_targets() {
    std::vector<std::string> targets;
    bool parens = at_op("(");
    if (parens) next();
    while (true) {
      FERRITE_ASSIGN_OR_RETURN(std::string name, expect_name());
      targets.push_back(name);
      if (!at_op(",")) break;
      next();
      if (peek().kind != TokenKind::kName) break;
    }
    if (parens) FERRITE_RETURN_IF_ERROR(expect_op(")"));
    return targets;
  }

  Result<StmtPtr> parse_for(const Token& t) {
    auto s = stmt(Stmt::Kind::kFor, t);
    FERRITE_ASSIGN_OR_RETURN(s->targets, parse_targets());
    if (!at_name("in")) return fail(peek(), fmt::format("expected 'in', got {}", describe(peek())));
    next();
    FERRITE_ASSIGN_OR_RETURN(s->expr, parse_tuple(/*with_condexpr=*/false));
    if (at_name("if")) {
      next();
      FERRITE_ASSIGN_OR_RETURN(s->condition, parse_expression());
    }
    if (at_name("recursive")) return fail(peek(), "recursive loops are not supported");
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    ++loop_depth_;
    std::string found;
    auto body = parse_body({"endfor", "else"}, found);
    --loop_depth_;
    if (!body) return make_error(std::move(body).error());
    s->body = std::move(*body);
    if (found == "else") {
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      int saved = loop_depth_;
      loop_depth_ = 0;
      auto else_body = parse_body({"endfor"}, found);
      loop_depth_ = saved;
      if (!else_body) return make_error(std::move(else_body).error());
      s->else_body = std::move(*else_body);
    }
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<ExprPtr> parse_filter_chain(const Token& t) {
    auto body = node(Expr::Kind::kName, t);
    body->name = "__body__";
    ExprPtr chain = std::move(body);
    while (at_op("|") || peek().kind == TokenKind::kName) {
      if (at_op("|")) next();
      FERRITE_ASSIGN_OR_RETURN(chain, parse_filter(std::move(chain)));
    }
    return chain;
  }

  Result<StmtPtr> parse_set(const Token& t) {
    FERRITE_ASSIGN_OR_RETURN(std::string first, expect_name());
    if (at_op(".")) {
      next();
      auto s = stmt(Stmt::Kind::kSet, t);
      s->targets.push_back(first);
      FERRITE_ASSIGN_OR_RETURN(s->attribute, expect_name());
      FERRITE_RETURN_IF_ERROR(expect_op("="));
      FERRITE_ASSIGN_OR_RETURN(s->expr, parse_tuple());
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      return s;
    }
    std::vector<std::string> targets{first};
    while (at_op(",")) {
      next();
      FERRITE_ASSIGN_OR_RETURN(std::string name, expect_name());
      targets.push_back(name);
    }
    if (at_op("=")) {
      next();
      auto s = stmt(Stmt::Kind::kSet, t);
      s->targets = std::move(targets);
      FERRITE_ASSIGN_OR_RETURN(s->expr, parse_tuple());
      FERRITE_RETURN_IF_ERROR(expect_block_end());
      return s;
    }
    if (targets.size() != 1) return fail(peek(), "expected '=' after the set targets");
    auto s = stmt(Stmt::Kind::kSetBlock, t);
    s->name = first;
    if (at_op("|")) {
      FERRITE_ASSIGN_OR_RETURN(s->filter_chain, parse_filter_chain(t));
    }
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    std::string found;
    FERRITE_ASSIGN_OR_RETURN(s->body, parse_body({"endset"}, found));
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<bool> parse_params(Stmt& s) {
    FERRITE_RETURN_IF_ERROR(expect_op("("));
    while (!at_op(")")) {
      if (!s.params.empty()) FERRITE_RETURN_IF_ERROR(expect_op(","));
      if (at_op(")")) break;
      FERRITE_ASSIGN_OR_RETURN(std::string name, expect_name());
      ExprPtr def;
      if (at_op("=")) {
        next();
        FERRITE_ASSIGN_OR_RETURN(def, parse_expression());
      }
      s.params.emplace_back(name, std::move(def));
    }
    next();
    return true;
  }

  Result<StmtPtr> parse_macro(const Token& t) {
    auto s = stmt(Stmt::Kind::kMacro, t);
    FERRITE_ASSIGN_OR_RETURN(s->name, expect_name());
    FERRITE_RETURN_IF_ERROR(parse_params(*s));
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    int saved = loop_depth_;
    loop_depth_ = 0;
    std::string found;
    auto body = parse_body({"endmacro"}, found);
    loop_depth_ = saved;
    if (!body) return make_error(std::move(body).error());
    s->body = std::move(*body);
    if (peek().kind == TokenKind::kName && peek().text == s->name) next();
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<StmtPtr> parse_call_block(const Token& t) {
    auto s = stmt(Stmt::Kind::kCallBlock, t);
    if (at_op("(")) FERRITE_RETURN_IF_ERROR(parse_params(*s));
    FERRITE_ASSIGN_OR_RETURN(s->expr, parse_expression());
    if (s->expr->kind != Expr::Kind::kCall) return fail(t, "expected a call after 'call'");
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    std::string found;
    FERRITE_ASSIGN_OR_RETURN(s->body, parse_body({"endcall"}, found));
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  Result<StmtPtr> parse_filter_block(const Token& t) {
    auto s = stmt(Stmt::Kind::kFilterBlock, t);
    FERRITE_ASSIGN_OR_RETURN(s->filter_chain, parse_filter_chain(t));
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    std::string found;
    FERRITE_ASSIGN_OR_RETURN(s->body, parse_body({"endfilter"}, found));
    FERRITE_RETURN_IF_ERROR(expect_block_end());
    return s;
  }

  // ---- expressions ----

  Result<ExprPtr> parse_tuple(bool with_condexpr = true) {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr first, with_condexpr ? parse_expression() : parse_or());
    if (!at_op(",")) return first;
    auto tuple = node(Expr::Kind::kList, t);
    tuple->is_tuple = true;
    tuple->items.push_back(std::move(first));
    while (at_op(",")) {
      next();
      if (peek().kind == TokenKind::kBlockEnd || peek().kind == TokenKind::kVariableEnd ||
          at_name("if")) {
        break;
      }
      FERRITE_ASSIGN_OR_RETURN(ExprPtr item, with_condexpr ? parse_expression() : parse_or());
      tuple->items.push_back(std::move(item));
    }
    return tuple;
  }

  Result<ExprPtr> parse_expression() {
    const Token& t = peek();
    FERRITE_RETURN_IF_ERROR(enter(t));
    Leave leave{depth_};
    FERRITE_ASSIGN_OR_RETURN(ExprPtr value, parse_or());
    while (at_name("if")) {
      next();
      auto cond = node(Expr::Kind::kCondition, t);
      FERRITE_ASSIGN_OR_RETURN(ExprPtr test, parse_or());
      ExprPtr otherwise;
      if (at_name("else")) {
        next();
        FERRITE_ASSIGN_OR_RETURN(otherwise, parse_expression());
      }
      cond->items.push_back(std::move(value));
      cond->items.push_back(std::move(test));
      cond->items.push_back(std::move(otherwise));
      value = std::move(cond);
    }
    return value;
  }

  Result<ExprPtr> binary(const Token& t, std::string op, ExprPtr a, ExprPtr b) {
    auto e = node(Expr::Kind::kBinary, t);
    e->name = std::move(op);
    e->items.push_back(std::move(a));
    e->items.push_back(std::move(b));
    return e;
  }

  Result<ExprPtr> parse_or() {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
    while (at_name("or")) {
      next();
      FERRITE_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
      FERRITE_ASSIGN_OR_RETURN(left, binary(t, "or", std::move(left), std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> parse_and() {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
    while (at_name("and")) {
      next();
      FERRITE_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
      FERRITE_ASSIGN_OR_RETURN(left, binary(t, "and", std::move(left), std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> parse_not() {
    if (at_name("not")) {
      const Token& t = next();
      FERRITE_RETURN_IF_ERROR(enter(t));
      Leave leave{depth_};
      auto e = node(Expr::Kind::kUnary, t);
      e->name = "not";
      FERRITE_ASSIGN_OR_RETURN(e->operand, parse_not());
      return e;
    }
    return parse_compare();
  }

  Result<ExprPtr> parse_compare() {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr first, parse_math1());
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (peek().kind == TokenKind::kOperator &&
          (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
           peek().text == "<=" || peek().text == ">" || peek().text == ">=")) {
        op = next().text;
      } else if (at_name("in")) {
        next();
        op = "in";
      } else if (at_name("not") && at_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        break;
      }
      if (!cmp) {
        cmp = node(Expr::Kind::kCompare, t);
        cmp->items.push_back(std::move(first));
      }
      FERRITE_ASSIGN_OR_RETURN(ExprPtr right, parse_math1());
      cmp->ops.push_back(op);
      cmp->items.push_back(std::move(right));
    }
    return cmp ? std::move(cmp) : std::move(first);
  }

  Result<ExprPtr> parse_math1() {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
    while (at_op("+") || at_op("-")) {
      std::string op = next().text;
      FERRITE_ASSIGN_OR_RETURN(ExprPtr right, parse_concat());
      FERRITE_ASSIGN_OR_RETURN(left, binary(t, op, std::move(left), std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> parse_concat() {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr left, parse_math2());
    while (at_op("~")) {
      next();
      FERRITE_ASSIGN_OR_RETURN(ExprPtr right, parse_math2());
      FERRITE_ASSIGN_OR_RETURN(left, binary(t, "~", std::move(left), std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> parse_math2() {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr left, parse_pow());
    while (at_op("*") || at_op("/") || at_op("//") || at_op("%")) {
      std::string op = next().text;
      FERRITE_ASSIGN_OR_RETURN(ExprPtr right, parse_pow());
      FERRITE_ASSIGN_OR_RETURN(left, binary(t, op, std::move(left), std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> parse_pow() {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(ExprPtr left, parse_unary(true));
    while (at_op("**")) {
      next();
      FERRITE_ASSIGN_OR_RETURN(ExprPtr right, parse_unary(true));
      FERRITE_ASSIGN_OR_RETURN(left, binary(t, "**", std::move(left), std::move(right)));
    }
    return left;
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
    const Token& t = peek();
    FERRITE_RETURN_IF_ERROR(enter(t));
    Leave leave{depth_};
    ExprPtr e;
    if (at_op("-") || at_op("+")) {
      next();
      e = node(Expr::Kind::kUnary, t);
      e->name = t.text;
      FERRITE_ASSIGN_OR_RETURN(e->operand, parse_unary(false));
    } else {
      FERRITE_ASSIGN_OR_RETURN(e, parse_primary());
    }
    FERRITE_ASSIGN_OR_RETURN(e, parse_postfix(std::move(e)));
    if (with_filter) {
      FERRITE_ASSIGN_OR_RETURN(e, parse_filter_expr(std::move(e)));
    }
    return e;
  }

  Result<ExprPtr> parse_primary() {
    const Token& t = next();
    switch (t.kind) {
      case TokenKind::kName: {
        if (t.text == "true" || t.text == "True" || t.text == "false" || t.text == "False") {
          auto e = node(Expr::Kind::kLiteral, t);
          e->value = Value(t.text == "true" || t.text == "True");
          return e;
        }
        if (t.text == "none" || t.text == "None") {
          auto e = node(Expr::Kind::kLiteral, t);
          e->value = Value::none();
          return e;
        }
        auto e = node(Expr::Kind::kName, t);
        e->name = t.text;
        return e;
      }
      case TokenKind::kString: {
        std::string text = t.text;
        while (peek().kind == TokenKind::kString) text += next().text;
        auto e = node(Expr::Kind::kLiteral, t);
        e->value = Value(std::move(text));
        return e;
      }
      case TokenKind::kInteger: {
        errno = 0;
        char* end = nullptr;
        long long v = std::strtoll(t.text.c_str(), &end, 10);
        if (errno == ERANGE) return fail(t, fmt::format("integer {} is too large", t.text));
        auto e = node(Expr::Kind::kLiteral, t);
        e->value = Value(static_cast<int64_t>(v));
        return e;
      }
      case TokenKind::kFloat: {
        auto e = node(Expr::Kind::kLiteral, t);
        e->value = Value(std::strtod(t.text.c_str(), nullptr));
        return e;
      }
      case TokenKind::kOperator:
        if (t.text == "(") {
          if (at_op(")")) {
            next();
            auto e = node(Expr::Kind::kList, t);
            e->is_tuple = true;
            return e;
          }
          FERRITE_ASSIGN_OR_RETURN(ExprPtr inner, parse_expression());
          if (at_op(",")) {
            auto tuple = node(Expr::Kind::kList, t);
            tuple->is_tuple = true;
            tuple->items.push_back(std::move(inner));
            while (at_op(",")) {
              next();
              if (at_op(")")) break;
              FERRITE_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
              tuple->items.push_back(std::move(item));
            }
            inner = std::move(tuple);
          }
          FERRITE_RETURN_IF_ERROR(expect_op(")"));
          return inner;
        }
        if (t.text == "[") {
          auto e = node(Expr::Kind::kList, t);
          while (!at_op("]")) {
            if (!e->items.empty()) FERRITE_RETURN_IF_ERROR(expect_op(","));
            if (at_op("]")) break;
            FERRITE_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
            e->items.push_back(std::move(item));
          }
          next();
          return e;
        }
        if (t.text == "{") {
          auto e = node(Expr::Kind::kDict, t);
          while (!at_op("}")) {
            if (!e->items.empty()) FERRITE_RETURN_IF_ERROR(expect_op(","));
            if (at_op("}")) break;
            FERRITE_ASSIGN_OR_RETURN(ExprPtr key, parse_expression());
            FERRITE_RETURN_IF_ERROR(expect_op(":"));
            FERRITE_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
            e->items.push_back(std::move(key));
            e->items.push_back(std::move(value));
          }
          next();
          return e;
        }
        break;
      default:
        break;
    }
    return fail(t, fmt::format("unexpected {}", describe(t)));
  }

  Result<bool> parse_call_args(Expr& call) {
    FERRITE_RETURN_IF_ERROR(expect_op("("));
    bool first = true;
    while (!at_op(")")) {
      if (!first) FERRITE_RETURN_IF_ERROR(expect_op(","));
      first = false;
      if (at_op(")")) break;
      if (peek().kind == TokenKind::kName && at_op("=", 1)) {
        std::string name = next().text;
        next();
        FERRITE_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
        call.named.emplace_back(name, std::move(value));
        continue;
      }
      if (!call.named.empty()) return fail(peek(), "positional argument after keyword argument");
      FERRITE_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      call.items.push_back(std::move(value));
    }
    next();
    return true;
  }

  Result<ExprPtr> parse_postfix(ExprPtr e) {
    while (true) {
      const Token& t = peek();
      if (at_op(".")) {
        next();
        const Token& name = next();
        if (name.kind != TokenKind::kName && name.kind != TokenKind::kInteger) {
          return fail(name, fmt::format("expected an attribute name, got {}", describe(name)));
        }
        auto a = node(name.kind == TokenKind::kName ? Expr::Kind::kAttribute : Expr::Kind::kSubscript, t);
        if (name.kind == TokenKind::kName) {
          a->name = name.text;
        } else {
          auto index = node(Expr::Kind::kLiteral, name);
          index->value = Value(static_cast<int64_t>(std::strtoll(name.text.c_str(), nullptr, 10)));
          a->items.push_back(std::move(index));
        }
        a->operand = std::move(e);
        e = std::move(a);
      } else if (at_op("[")) {
        next();
        ExprPtr parts[3];
        bool slice = false;
        for (int i = 0; i < 3; ++i) {
          if (!at_op(":") && !at_op("]")) {
            FERRITE_ASSIGN_OR_RETURN(parts[i], parse_expression());
          }
          if (at_op(":") && i < 2) {
            next();
            slice = true;
            continue;
          }
          break;
        }
        FERRITE_RETURN_IF_ERROR(expect_op("]"));
        auto s = node(slice ? Expr::Kind::kSlice : Expr::Kind::kSubscript, t);
        s->operand = std::move(e);
        if (!slice && !parts[0]) return fail(t, "empty subscript");
        for (int i = 0; i < (slice ? 3 : 1); ++i) s->items.push_back(std::move(parts[i]));
        e = std::move(s);
      } else if (at_op("(")) {
        auto c = node(Expr::Kind::kCall, t);
        c->operand = std::move(e);
        FERRITE_RETURN_IF_ERROR(parse_call_args(*c));
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> parse_filter(ExprPtr operand) {
    const Token& t = peek();
    FERRITE_ASSIGN_OR_RETURN(std::string name, expect_name());
    while (at_op(".")) {
      next();
      FERRITE_ASSIGN_OR_RETURN(std::string part, expect_name());
      name += "." + part;
    }
    auto f = node(Expr::Kind::kFilter, t);
    f->name = name;
    f->items.push_back(std::move(operand));
    if (at_op("(")) {
      FERRITE_RETURN_IF_ERROR(parse_call_args(*f));
    }
    return f;
  }

  Result<ExprPtr> parse_filter_expr(ExprPtr e) {
    while (true) {
      if (at_op("|")) {
        next();
        FERRITE_ASSIGN_OR_RETURN(e, parse_filter(std::move(e)));
      } else if (at_name("is")) {
        const Token& t = next();
        auto test = node(Expr::Kind::kTest, t);
        if (at_name("not")) {
          next();
          test->negated = true;
        }
        FERRITE_ASSIGN_OR_RETURN(test->name, expect_name());
        while (at_op(".")) {
          next();
          FERRITE_ASSIGN_OR_RETURN(std::string part, expect_name());
          test->name += "." + part;
        }
        test->items.push_back(std::move(e));
        if (at_op("(")) {
          FERRITE_RETURN_IF_ERROR(parse_call_args(*test));
        } else {
          const Token& a = peek();
          bool starts_arg =
              a.kind == TokenKind::kString || a.kind == TokenKind::kInteger ||
              a.kind == TokenKind::kFloat || at_op("[") || at_op("{") ||
              (a.kind == TokenKind::kName && a.text != "else" && a.text != "or" &&
               a.text != "and" && a.text != "is" && a.text != "if" && a.text != "in" &&
               a.text != "not");
          if (starts_arg) {
            FERRITE_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
            FERRITE_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
            test->items.push_back(std::move(arg));
          }
        }
        e = std::move(test);
      } else {
        return e;
      }
    }
  }

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int max_depth_;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Result<Body> parse_template(const std::vector<Token>& tokens, int max_depth) {
  Parser parser(tokens, max_depth);
  return parser.parse_all();
}

}  // namespace ferrite::chat
