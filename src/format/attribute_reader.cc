#include "ferrite/format/attribute_reader.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ferrite {

Result<CanonicalRational> read_rational(const JsonCursor& cursor) {
  if (!cursor.is_string()) {
    return cursor.type_error("a rational written as a string (e.g. \"1/100000\")");
  }
  return cursor.parsed_string(CanonicalRational::parse_decimal, "rational");
}

Result<SemanticValue> read_semantic_value(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(
      auto entry, cursor.single_key({"bool", "integer", "unsigned", "rational", "text", "integers"}));
  const auto& [kind, body] = entry;
  if (kind == "bool") {
    FERRITE_ASSIGN_OR_RETURN(bool value, body.boolean());
    return SemanticBool{value};
  }
  if (kind == "integer") {
    FERRITE_ASSIGN_OR_RETURN(int64_t value, body.i64());
    return SemanticInteger{value};
  }
  if (kind == "unsigned") {
    FERRITE_ASSIGN_OR_RETURN(uint64_t value, body.u64());
    return SemanticUnsigned{value};
  }
  if (kind == "rational") {
    FERRITE_ASSIGN_OR_RETURN(CanonicalRational value, read_rational(body));
    return SemanticRational{value};
  }
  if (kind == "text") {
    FERRITE_ASSIGN_OR_RETURN(std::string value, body.string());
    return SemanticText{std::move(value)};
  }
  FERRITE_ASSIGN_OR_RETURN(std::vector<int64_t> values, body.i64_array());
  return SemanticIntegers{std::move(values)};
}

Result<std::map<AttributeId, SemanticValue>> read_attribute_values(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(auto entries, cursor.entries());
  std::map<AttributeId, SemanticValue> out;
  for (const auto& [key, value_cursor] : entries) {
    auto id = AttributeId::create(key);
    if (!id) {
      return value_cursor.wrap_error("is not a valid operation attribute id", id.error());
    }
    FERRITE_ASSIGN_OR_RETURN(SemanticValue value, read_semantic_value(value_cursor));
    out.emplace(std::move(*id), std::move(value));
  }
  return out;
}

Result<SemanticValueKind> read_semantic_value_kind(const JsonCursor& cursor) {
  return cursor.parsed_string(parse_semantic_value_kind, "value kind");
}

namespace {

template <class T, class Read>
Result<std::pair<T, T>> read_pair(const JsonCursor& cursor, Read&& read) {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, cursor.array_of_size(2));
  FERRITE_ASSIGN_OR_RETURN(T first, read(items[0]));
  FERRITE_ASSIGN_OR_RETURN(T second, read(items[1]));
  return std::pair<T, T>(std::move(first), std::move(second));
}

}  // namespace

Result<AttributeConstraint> read_attribute_constraint(const JsonCursor& cursor) {
  if (cursor.is_string()) {
    FERRITE_ASSIGN_OR_RETURN(std::string name, cursor.string());
    if (name == "none") return NoAttributeConstraint{};
    return cursor.error("must be \"none\" or a constraint object, found string `{}`", name);
  }
  if (!cursor.is_object()) return cursor.type_error("\"none\" or a constraint object");
  FERRITE_ASSIGN_OR_RETURN(auto entry,
                           cursor.single_key({"bool_equals", "integer_range", "unsigned_range",
                                              "rational_range", "text_choices",
                                              "integer_list_length"}));
  const auto& [kind, body] = entry;
  if (kind == "bool_equals") {
    FERRITE_ASSIGN_OR_RETURN(bool value, body.boolean());
    return BoolEqualsConstraint{value};
  }
  if (kind == "integer_range") {
    FERRITE_ASSIGN_OR_RETURN(auto range,
                             read_pair<int64_t>(body, [](const JsonCursor& c) { return c.i64(); }));
    return IntegerRangeConstraint{range.first, range.second};
  }
  if (kind == "unsigned_range") {
    FERRITE_ASSIGN_OR_RETURN(auto range,
                             read_pair<uint64_t>(body, [](const JsonCursor& c) { return c.u64(); }));
    return UnsignedRangeConstraint{range.first, range.second};
  }
  if (kind == "rational_range") {
    FERRITE_ASSIGN_OR_RETURN(auto range, read_pair<CanonicalRational>(body, read_rational));
    return RationalRangeConstraint{range.first, range.second};
  }
  if (kind == "text_choices") {
    FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, body.array());
    std::set<std::string> choices;
    for (const JsonCursor& item : items) {
      FERRITE_ASSIGN_OR_RETURN(std::string choice, item.string());
      if (!choices.insert(choice).second) {
        return item.error("repeats an earlier text choice");
      }
    }
    return TextChoicesConstraint{std::move(choices)};
  }
  FERRITE_ASSIGN_OR_RETURN(auto length,
                           read_pair<uint64_t>(body, [](const JsonCursor& c) { return c.u64(); }));
  return IntegerListLengthConstraint{length.first, length.second};
}

Result<AttributeSpec> read_attribute_spec(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"kind", "required", "constraint"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor kind_cursor, object.required("kind"));
  FERRITE_ASSIGN_OR_RETURN(SemanticValueKind kind, read_semantic_value_kind(kind_cursor));
  FERRITE_ASSIGN_OR_RETURN(bool required, object.required_bool("required"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor constraint_cursor, object.required("constraint"));
  FERRITE_ASSIGN_OR_RETURN(AttributeConstraint constraint,
                           read_attribute_constraint(constraint_cursor));
  return AttributeSpec{kind, required, std::move(constraint)};
}

Result<AttributeSchema> read_attribute_schema(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(auto entries, cursor.entries());
  std::map<AttributeId, AttributeSpec> specs;
  for (const auto& [key, spec_cursor] : entries) {
    auto id = AttributeId::create(key);
    if (!id) {
      return spec_cursor.wrap_error("is not a valid operation attribute id", id.error());
    }
    FERRITE_ASSIGN_OR_RETURN(AttributeSpec spec, read_attribute_spec(spec_cursor));
    specs.emplace(std::move(*id), std::move(spec));
  }
  auto schema = AttributeSchema::create(std::move(specs));
  if (!schema) return with_json_path(std::move(schema).error(), cursor.path());
  return std::move(*schema);
}

}  // namespace ferrite
