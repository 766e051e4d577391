#include "ferrite/models/hf_config.h"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "ferrite/core/json_reader.h"
#include "models/byte_reader.h"

namespace ferrite {

Result<HfConfig> HfConfig::read(const std::filesystem::path& path) {
  std::error_code ec;
  const std::filesystem::path file =
      std::filesystem::is_directory(path, ec) ? path / "config.json" : path;
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(file));
  return parse(text, file.string());
}

Result<HfConfig> HfConfig::parse(std::string_view text, std::string source) {
  using models_detail::format_error_at;
  if (text.size() > kMaxJsonTextBytes) {
    return format_error_at(ErrorCode::kSerialization, source, 0,
                           fmt::format("config of {} bytes exceeds the cap of {}", text.size(),
                                       kMaxJsonTextBytes));
  }
  auto parsed = parse_bounded_json(text);
  if (!parsed) {
    return format_error_at(ErrorCode::kSerialization, source, 0, parsed.error().message());
  }
  if (!parsed->is_object()) {
    return format_error_at(ErrorCode::kSerialization, source, 0,
                           fmt::format("config must be a JSON object, found {}",
                                       json_value_kind(*parsed)));
  }
  return HfConfig(std::move(*parsed), std::move(source));
}

std::vector<std::string> HfConfig::architectures() const {
  std::vector<std::string> out;
  const nlohmann::json* list = member("architectures");
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& entry : *list) {
    if (entry.is_string()) out.push_back(entry.get<std::string>());
  }
  return out;
}

const nlohmann::json* HfConfig::member(std::string_view key) const {
  auto it = document_.find(std::string(key));
  if (it == document_.end() || it->is_null()) return nullptr;
  return &*it;
}

Error HfConfig::wrong_type(std::string_view key, std::string message,
                           SourceLocation location) const {
  std::string text = fmt::format("{}: `{}` {}", source_, key, message);
  return make_error(ErrorCode::kSerialization, std::move(text), location)
      .with_field("file", source_)
      .with_field("key", key);
}

Error HfConfig::invalid(std::string_view key, std::string message, SourceLocation location) const {
  std::string text = fmt::format("{}: `{}` {}", source_, key, message);
  return make_error(ErrorCode::kInvalidModelConfig, std::move(text), location)
      .with_field("file", source_)
      .with_field("key", key);
}

Result<uint64_t> HfConfig::positive_integer(std::string_view key,
                                            std::optional<uint64_t> fallback) const {
  const nlohmann::json* value = member(key);
  if (value == nullptr) {
    if (fallback) return *fallback;
    return wrong_type(key, "is required");
  }
  if (value->is_number_unsigned()) {
    const auto number = value->get<uint64_t>();
    if (number == 0) return invalid(key, "must be positive, found 0");
    return number;
  }
  if (value->is_number_integer()) {
    return invalid(key, fmt::format("must be positive, found {}", value->get<int64_t>()));
  }
  return wrong_type(key, fmt::format("must be an integer, found {}", json_value_kind(*value)));
}

Result<double> HfConfig::positive_number(std::string_view key, double fallback) const {
  const nlohmann::json* value = member(key);
  if (value == nullptr) return fallback;
  if (!value->is_number()) {
    return wrong_type(key, fmt::format("must be a number, found {}", json_value_kind(*value)));
  }
  const double number = value->get<double>();
  if (!std::isfinite(number) || number <= 0) {
    return invalid(key, fmt::format("must be a finite positive number, found {}", number));
  }
  return number;
}

Result<bool> HfConfig::boolean(std::string_view key, bool fallback) const {
  const nlohmann::json* value = member(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) {
    return wrong_type(key, fmt::format("must be a boolean, found {}", json_value_kind(*value)));
  }
  return value->get<bool>();
}

Result<std::string> HfConfig::text(std::string_view key, std::string fallback) const {
  const nlohmann::json* value = member(key);
  if (value == nullptr) return fallback;
  if (!value->is_string()) {
    return wrong_type(key, fmt::format("must be a string, found {}", json_value_kind(*value)));
  }
  return value->get<std::string>();
}

Result<std::vector<std::string>> HfConfig::text_array(std::string_view key) const {
  const nlohmann::json* value = member(key);
  std::vector<std::string> out;
  if (value == nullptr) return out;
  if (!value->is_array()) {
    return wrong_type(key, fmt::format("must be an array, found {}", json_value_kind(*value)));
  }
  for (const auto& entry : *value) {
    if (!entry.is_string()) {
      return wrong_type(key, fmt::format("must hold strings, found {}", json_value_kind(entry)));
    }
    out.push_back(entry.get<std::string>());
  }
  return out;
}

Result<std::optional<HfConfig>> HfConfig::object(std::string_view key) const {
  const nlohmann::json* value = member(key);
  if (value == nullptr) return std::optional<HfConfig>();
  if (!value->is_object()) {
    return wrong_type(key, fmt::format("must be an object, found {}", json_value_kind(*value)));
  }
  return std::optional<HfConfig>(HfConfig(*value, fmt::format("{} (`{}`)", source_, key)));
}

}  // namespace ferrite
