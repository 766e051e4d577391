#include "ferrite/families/hf_tokenizer.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ferrite/core/json_reader.h"
#include "ferrite/families/gguf_vocabulary.h"

namespace ferrite {
namespace hf_tokenizer_detail {

using nlohmann::json;

constexpr const char* kByteLevelRegex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct Reader {
  std::string source;

  Error bad(std::string_view path, std::string what) const {
    return make_error(ErrorCode::kInvalidModelConfig, "{}: `{}` {}", source, path, what)
        .with_field("path", std::string(path));
  }
};

// Escapes a literal for PCRE2.
std::string quote_literal(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

Result<void> read_pre_tokenizer(const Reader& r, const json& node, const std::string& path,
                                Vocabulary& v, bool& byte_level) {
  if (!node.is_object() || !node.contains("type") || !node["type"].is_string()) {
    return r.bad(path, "must be an object with a string `type`");
  }
  const std::string type = node["type"].get<std::string>();
  if (type == "Sequence") {
    const json* list = node.contains("pretokenizers") ? &node["pretokenizers"] : nullptr;
    if (list == nullptr || !list->is_array()) return r.bad(path, "needs a `pretokenizers` array");
    for (size_t i = 0; i < list->size(); ++i) {
      FERRITE_RETURN_IF_ERROR(read_pre_tokenizer(r, (*list)[i],
                                                 fmt::format("{}.pretokenizers[{}]", path, i), v,
                                                 byte_level));
    }
    return {};
  }
  if (type == "ByteLevel") {
    if (node.contains("add_prefix_space") && node["add_prefix_space"] == true) {
      return r.bad(path, "has add_prefix_space true, which Ferrite does not support");
    }
    byte_level = true;
    if (!node.contains("use_regex") || node["use_regex"] == true) {
      v.pre_patterns.emplace_back(kByteLevelRegex);
    }
    return {};
  }
  if (type == "Split") {
    if (node.contains("invert") && node["invert"] != false) {
      return r.bad(path, "has invert true, which Ferrite does not support");
    }
    if (!node.contains("behavior") || node["behavior"] != "Isolated") {
      return r.bad(path, "must have behavior \"Isolated\" (the only one Ferrite supports)");
    }
    const json* pattern = node.contains("pattern") ? &node["pattern"] : nullptr;
    if (pattern != nullptr && pattern->is_object() && pattern->contains("Regex") &&
        (*pattern)["Regex"].is_string()) {
      v.pre_patterns.push_back((*pattern)["Regex"].get<std::string>());
    } else if (pattern != nullptr && pattern->is_object() && pattern->contains("String") &&
               (*pattern)["String"].is_string()) {
      v.pre_patterns.push_back(quote_literal((*pattern)["String"].get<std::string>()));
    } else {
      return r.bad(path + ".pattern", "must be {\"Regex\": string} or {\"String\": string}");
    }
    return {};
  }
  if (type == "Digits") {
    const bool individual = node.contains("individual_digits") && node["individual_digits"] == true;
    v.pre_patterns.emplace_back(individual ? R"(\p{N})" : R"(\p{N}+)");
    return {};
  }
  return r.bad(path, fmt::format("has type \"{}\"; Ferrite supports ByteLevel, Split, Digits "
                                 "and Sequence",
                                 type));
}

// The text of a tokenizer_config.json special-token entry.
std::optional<std::string> token_text(const json& config, const char* key) {
  if (!config.is_object() || !config.contains(key)) return std::nullopt;
  const json& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return std::nullopt;
}

}  // namespace hf_tokenizer_detail

Result<Vocabulary> parse_hf_tokenizer(std::string_view tokenizer_json,
                                      std::string_view config_json, std::string_view source) {
  using namespace hf_tokenizer_detail;
  const Reader r{std::string(source)};
  auto parsed = parse_bounded_json(tokenizer_json);
  if (!parsed) {
    return make_error(ErrorCode::kInvalidModelConfig, "{}: {}", source, parsed.error().message());
  }
  const json& doc = *parsed;
  if (!doc.is_object()) return r.bad("$", "must be a JSON object");
  if (!doc.contains("model") || !doc["model"].is_object()) return r.bad("$.model", "is missing");
  const json& model = doc["model"];
  if (!model.contains("type") || model["type"] != "BPE") {
    return r.bad("$.model.type", "must be \"BPE\" (the only model Ferrite reads)");
  }
  for (const char* key : {"unk_token", "continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && !model[key].is_null()) {
      return r.bad(fmt::format("$.model.{}", key), "is set; Ferrite supports only null here");
    }
  }
  if (model.contains("byte_fallback") && model["byte_fallback"] == true) {
    return r.bad("$.model.byte_fallback", "is true; Ferrite supports only byte-level BPE");
  }
  if (doc.contains("normalizer") && !doc["normalizer"].is_null()) {
    return r.bad("$.normalizer", "is set; Ferrite supports only null here");
  }

  Vocabulary v;
  v.kind = VocabularyKind::kByteLevelBpe;
  v.add_bos = false;
  v.add_space_prefix = false;
  v.bos_id = v.eos_id = v.unk_id = kNoToken;
  v.ignore_merges = model.contains("ignore_merges") && model["ignore_merges"] == true;

  // Tokens by id: the model's vocab, then added_tokens.
  std::map<uint32_t, std::pair<std::string, TokenType>> by_id;
  const auto add = [&](const std::string& path, uint64_t id, std::string text,
                       TokenType type) -> Result<void> {
    if (id >= Vocabulary::kMaxTokens) {
      return r.bad(path, fmt::format("is id {}, over the limit of {} tokens", id,
                                     Vocabulary::kMaxTokens));
    }
    by_id[static_cast<uint32_t>(id)] = {std::move(text), type};
    return {};
  };
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    return r.bad("$.model.vocab", "must be an object of text: id");
  }
  for (const auto& [text, id] : model["vocab"].items()) {
    if (!id.is_number_unsigned()) {
      return r.bad(fmt::format("$.model.vocab[\"{}\"]", text), "must be an unsigned id");
    }
    FERRITE_RETURN_IF_ERROR(add(fmt::format("$.model.vocab[\"{}\"]", text), id.get<uint64_t>(),
                                text, TokenType::kNormal));
  }
  if (doc.contains("added_tokens") && !doc["added_tokens"].is_null()) {
    const json& added = doc["added_tokens"];
    if (!added.is_array()) return r.bad("$.added_tokens", "must be an array");
    for (size_t i = 0; i < added.size(); ++i) {
      const std::string path = fmt::format("$.added_tokens[{}]", i);
      const json& t = added[i];
      if (!t.is_object() || !t.contains("id") || !t["id"].is_number_unsigned() ||
          !t.contains("content") || !t["content"].is_string()) {
        return r.bad(path, "needs an unsigned `id` and a string `content`");
      }
      const bool special = t.contains("special") && t["special"] == true;
      FERRITE_RETURN_IF_ERROR(add(path, t["id"].get<uint64_t>(), t["content"].get<std::string>(),
                                  special ? TokenType::kControl : TokenType::kUserDefined));
    }
  }
  if (by_id.empty()) return r.bad("$.model.vocab", "is empty");
  const size_t n = static_cast<size_t>(by_id.rbegin()->first) + 1;
  v.tokens.resize(n);
  v.token_types.assign(n, TokenType::kUnused);
  for (size_t id = 0; id < n; ++id) v.tokens[id] = fmt::format("<unused-{}>", id);
  for (auto& [id, entry] : by_id) {
    v.tokens[id] = std::move(entry.first);
    v.token_types[id] = entry.second;
  }

  // Merges.
  if (!model.contains("merges") || !model["merges"].is_array()) {
    return r.bad("$.model.merges", "must be an array");
  }
  const json& merges = model["merges"];
  if (merges.size() > Vocabulary::kMaxMerges) {
    return r.bad("$.model.merges", fmt::format("has {} merges, over the limit of {}",
                                               merges.size(), Vocabulary::kMaxMerges));
  }
  v.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 >= s.size()) {
        return r.bad(fmt::format("$.model.merges[{}]", i), "must be \"left right\"");
      }
      v.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      v.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      return r.bad(fmt::format("$.model.merges[{}]", i),
                   "must be a \"left right\" string or a [left, right] pair");
    }
  }

  // Pre-tokenizer: must end up byte-level.
  bool byte_level = false;
  if (doc.contains("pre_tokenizer") && !doc["pre_tokenizer"].is_null()) {
    FERRITE_RETURN_IF_ERROR(read_pre_tokenizer(r, doc["pre_tokenizer"], "$.pre_tokenizer", v,
                                               byte_level));
  }
  if (!byte_level) {
    return r.bad("$.pre_tokenizer", "has no ByteLevel step; Ferrite reads byte-level BPE only");
  }
  if (v.pre_patterns.empty()) v.pre_patterns.emplace_back(".+");  // ByteLevel without regex
  v.pre = "tokenizer.json";

  // tokenizer_config.json.
  if (!config_json.empty()) {
    auto config = parse_bounded_json(config_json);
    if (!config) {
      return make_error(ErrorCode::kInvalidModelConfig, "{} (tokenizer_config.json): {}", source,
                        config.error().message());
    }
    const json& c = *config;
    if (!c.is_object()) return r.bad("tokenizer_config.json $", "must be a JSON object");
    for (const auto& [key, target] :
         {std::pair<const char*, bool*>{"add_bos_token", &v.add_bos}, {"add_eos_token", &v.add_eos}}) {
      if (!c.contains(key) || c[key].is_null()) continue;
      if (!c[key].is_boolean()) {
        return r.bad(fmt::format("tokenizer_config.json $.{}", key), "must be a bool");
      }
      *target = c[key].get<bool>();
    }
    const auto find_id = [&v](const std::string& text) -> uint32_t {
      for (size_t id = 0; id < v.tokens.size(); ++id) {
        if (v.tokens[id] == text) return static_cast<uint32_t>(id);
      }
      return kNoToken;
    };
    for (const auto& [key, target] : {std::pair<const char*, uint32_t*>{"bos_token", &v.bos_id},
                                      {"eos_token", &v.eos_id},
                                      {"unk_token", &v.unk_id},
                                      {"pad_token", &v.pad_id}}) {
      if (const auto text = token_text(c, key)) {
        const uint32_t id = find_id(*text);
        if (id == kNoToken) {
          return r.bad(fmt::format("tokenizer_config.json $.{}", key),
                       fmt::format("names \"{}\", which is no token", *text));
        }
        *target = id;
      }
    }
  }
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    if (is_end_of_generation_text(v.tokens[id])) {
      v.end_of_generation.insert(static_cast<uint32_t>(id));
    }
  }
  return v;
}

Result<Vocabulary> read_hf_tokenizer(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / "tokenizer.json";
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(file));
  std::string config;
  std::error_code ec;
  const std::filesystem::path config_file = dir / "tokenizer_config.json";
  if (std::filesystem::exists(config_file, ec)) {
    FERRITE_ASSIGN_OR_RETURN(config, read_text_file(config_file));
  }
  return parse_hf_tokenizer(text, config, file.string());
}

}  // namespace ferrite
