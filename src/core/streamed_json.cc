#include "ferrite/core/streamed_json.h"

#include <algorithm>
#include <utility>

namespace ferrite {

const std::vector<std::string_view>* StreamedJson::elements_at(std::string_view path) const {
  auto at = arrays_.find(path);
  return at == arrays_.end() ? nullptr : &at->second;
}

size_t StreamedJson::streamed_elements() const {
  size_t count = 0;
  for (const auto& [path, elements] : arrays_) count += elements.size();
  return count;
}

namespace {

const std::vector<std::string_view>* streamed_elements_of(const JsonCursor& array,
                                                          const StreamedJson* streamed) {
  if (streamed == nullptr) return nullptr;
  return streamed->elements_at(array.path());
}

// One streamed element as a document. The whole text already passed every
// rule, so an error here means the span is wrong: it is reported, not assumed.
Result<nlohmann::json> parse_element(std::string_view text, std::string_view path) {
  auto element = parse_strict_json(text);
  if (!element) {
    return json_error_at(path, "could not be read again from the text: {}",
                         element.error().message());
  }
  return element;
}

}  // namespace

Result<void> visit_element(const JsonCursor& array, const StreamedJson* streamed, size_t index,
                           const std::function<Result<void>(const JsonCursor&)>& visit) {
  if (!array.is_array()) return array.type_error("an array");
  const std::string path = json_index_path(array.path(), index);
  if (const auto* elements = streamed_elements_of(array, streamed)) {
    if (index >= elements->size()) {
      return make_error(ErrorCode::kSerialization, "`{}` has {} elements, not {}", array.path(),
                        elements->size(), index + 1);
    }
    FERRITE_ASSIGN_OR_RETURN(nlohmann::json element, parse_element((*elements)[index], path));
    return visit(JsonCursor(element, path));
  }
  const nlohmann::json& value = array.json();
  if (index >= value.size()) {
    return make_error(ErrorCode::kSerialization, "`{}` has {} elements, not {}", array.path(),
                      value.size(), index + 1);
  }
  return visit(JsonCursor(value[index], path));
}

Result<void> for_each_element(const JsonCursor& array, const StreamedJson* streamed,
                              const std::function<Result<void>(const JsonCursor&)>& visit) {
  FERRITE_ASSIGN_OR_RETURN(size_t count, element_count(array, streamed));
  for (size_t i = 0; i < count; ++i) {
    FERRITE_RETURN_IF_ERROR(visit_element(array, streamed, i, visit));
  }
  return {};
}

Result<size_t> element_count(const JsonCursor& array, const StreamedJson* streamed) {
  if (!array.is_array()) return array.type_error("an array");
  if (const auto* elements = streamed_elements_of(array, streamed)) return elements->size();
  return array.json().size();
}

Result<void> encode_canonical(CanonicalEncoder& out, const nlohmann::json& value,
                              std::string_view path, const StreamedJson& streamed,
                              std::string_view omitted) {
  if (value.is_object()) {
    out.begin_object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (!omitted.empty() && it.key() == omitted) continue;
      out.key_text(it.key());
      FERRITE_RETURN_IF_ERROR(
          encode_canonical(out, it.value(), json_child_path(path, it.key()), streamed));
    }
    out.end_object();
    return {};
  }
  if (value.is_array()) {
    if (const auto* elements = streamed.elements_at(path)) {
      out.begin_array();
      for (size_t i = 0; i < elements->size(); ++i) {
        FERRITE_ASSIGN_OR_RETURN(nlohmann::json element,
                                 parse_element((*elements)[i], json_index_path(path, i)));
        out.json(element);
      }
      out.end_array();
      return {};
    }
    out.begin_array();
    for (size_t i = 0; i < value.size(); ++i) {
      FERRITE_RETURN_IF_ERROR(
          encode_canonical(out, value[i], json_index_path(path, i), streamed));
    }
    out.end_array();
    return {};
  }
  out.json(value);
  return {};
}

std::string canonical_json_path_at(std::string_view text, uint64_t offset, char other) {
  struct Level {
    bool is_object;
    std::string key;
    size_t index = 0;
    bool reading_key = false;
  };
  std::vector<Level> levels;
  bool in_string = false;
  bool escaped = false;
  std::string token;
  const size_t end = std::min<uint64_t>(offset, text.size());
  for (size_t i = 0; i < end; ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (!levels.empty() && levels.back().reading_key) {
          levels.back().key = token;
          levels.back().reading_key = false;
        }
        continue;
      }
      token.push_back(c);
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        token.clear();
        break;
      case '{':
        levels.push_back(Level{true, {}, 0, true});
        break;
      case '[':
        levels.push_back(Level{false, {}, 0, false});
        break;
      case '}':
      case ']':
        if (!levels.empty()) levels.pop_back();
        break;
      case ',':
        if (!levels.empty()) {
          if (levels.back().is_object) {
            levels.back().reading_key = true;
          } else {
            ++levels.back().index;
          }
        }
        break;
      default:
        break;
    }
  }
  const bool length_differs =
      !in_string && !levels.empty() && !levels.back().is_object &&
      (other == ',' || (offset < text.size() && text[offset] == ','));
  if (length_differs) ++levels.back().index;
  std::string path = "$";
  for (const Level& level : levels) {
    if (level.is_object) {
      if (level.key.empty()) break;
      path = json_child_path(path, level.key);
    } else {
      path = json_index_path(path, level.index);
    }
  }
  return path;
}

}  // namespace ferrite
