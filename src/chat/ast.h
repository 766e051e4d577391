// chat/ast.h — the syntax tree of a parsed Jinja template.
//
// Contract: expressions and statements as the parser (chat/parser.h) builds
// them; every node carries the line and column of its first token so that
// evaluation errors can name them. Nodes are owned by unique_ptr; a parsed
// template is immutable.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ferrite/chat/value.h"

namespace ferrite::chat {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Position {
  int line = 1;
  int column = 1;
};

struct Expr {
  enum class Kind {
    kLiteral,    // value
    kName,       // name
    kList,       // items (tuple when is_tuple)
    kDict,       // items as key, value pairs (even: key, odd: value)
    kAttribute,  // operand.name
    kSubscript,  // operand[items[0]]
    kSlice,      // operand[items[0]:items[1]:items[2]] (null Expr for absent parts)
    kCall,       // operand(items..., named...)
    kFilter,     // items[0] | name(items[1..], named...)
    kTest,       // items[0] is [not] name(items[1..])
    kUnary,      // op operand: "not", "-", "+"
    kBinary,     // items[0] op items[1]
    kCompare,    // items[0] (ops[i] items[i+1])...
    kCondition,  // items[0] if items[1] else items[2] (items[2] may be null)
  };
  Kind kind;
  Position where;
  Value value;
  std::string name;  // name, attribute, filter, test or operator
  bool negated = false;
  bool is_tuple = false;
  ExprPtr operand;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> named;
  std::vector<std::string> ops;
};

struct Stmt {
  enum class Kind {
    kText,      // text
    kOutput,    // expr
    kIf,        // conditions[i] → bodies[i]; a trailing body without condition is else
    kFor,       // targets in expr [if condition] body [else else_body]
    kSet,       // targets (or attribute target.name) = expr
    kSetBlock,  // name = rendered body, through filters (filter_chain)
    kMacro,     // name(params = defaults) body
    kCallBlock, // expr (a call) with caller(params) body
    kFilterBlock,  // body through filter_chain
    kBreak,
    kContinue,
    kGeneration,  // body, rendered as is
  };
  Kind kind;
  Position where;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  Body body;
  Body else_body;
  std::vector<std::string> targets;
  std::string attribute;  // kSet: `set ns.attribute = ...`
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> params;  // default may be null
  ExprPtr filter_chain;  // kSetBlock/kFilterBlock: filters applied to a Name "__body__"
};

}  // namespace ferrite::chat
