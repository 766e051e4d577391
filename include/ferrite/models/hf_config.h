// ferrite/models/hf_config.h — a Hugging Face `config.json`, read format-only.
//
// Contract: `HfConfig::read(path)` reads `<dir>/config.json` (or the file
// itself) — at most kMaxJsonTextBytes, depth-bounded, with nlohmann::json
// (config.json holds floats) — and must find a JSON object. It knows no model
// family: a family room asks for the keys it maps, with its own defaults
// (families/<name>/). Each typed lookup treats a missing key and a JSON
// `null` alike (the fallback, or "is required"). Errors name the file and the
// key: malformed JSON, a non-object document, a missing required key or a
// value of the wrong JSON type is kSerialization; a value of the right type
// but out of range (zero, negative, non-finite) is kInvalidModelConfig, as is
// `invalid(key, ...)`, which a family uses for its own consistency rules.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(HfConfig config, HfConfig::read("path/to/model_dir"));
//   FERRITE_ASSIGN_OR_RETURN(uint64_t layers, config.positive_integer("num_hidden_layers"));
//   FERRITE_ASSIGN_OR_RETURN(double eps, config.positive_number("rms_norm_eps", 1e-6));
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/status.h"

namespace ferrite {

class HfConfig {
 public:
  // `path` is a model directory (reads path/config.json) or the file itself.
  static Result<HfConfig> read(const std::filesystem::path& path);
  // Parses config.json text; `source` names it in messages.
  static Result<HfConfig> parse(std::string_view text, std::string source);

  const std::string& source() const { return source_; }
  // The `architectures` entries that are strings, in order (empty if absent).
  std::vector<std::string> architectures() const;

  // A positive integer; `fallback` when absent (nullopt: required).
  Result<uint64_t> positive_integer(std::string_view key,
                                    std::optional<uint64_t> fallback = std::nullopt) const;
  // A finite positive number (integer or float); `fallback` when absent.
  Result<double> positive_number(std::string_view key, double fallback) const;
  Result<bool> boolean(std::string_view key, bool fallback) const;
  // Whether `key` is present and not null.
  bool has(std::string_view key) const { return member(key) != nullptr; }
  // A string; `fallback` when absent.
  Result<std::string> text(std::string_view key, std::string fallback) const;
  // An array of strings (e.g. `layer_types`); empty when absent.
  Result<std::vector<std::string>> text_array(std::string_view key) const;
  // A nested object (e.g. `rope_scaling`) as its own config whose messages
  // name `<key>.<inner key>`; nullopt when absent.
  Result<std::optional<HfConfig>> object(std::string_view key) const;

  // kInvalidModelConfig "<file>: `key` <message>" with fields file and key.
  Error invalid(std::string_view key, std::string message,
                SourceLocation location = SourceLocation::current()) const;

 private:
  HfConfig(nlohmann::json document, std::string source)
      : document_(std::move(document)), source_(std::move(source)) {}
  const nlohmann::json* member(std::string_view key) const;
  Error wrong_type(std::string_view key, std::string message,
                   SourceLocation location = SourceLocation::current()) const;

  nlohmann::json document_;
  std::string source_;
};

}  // namespace ferrite
