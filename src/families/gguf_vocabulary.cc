#include "ferrite/families/gguf_vocabulary.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace ferrite {
namespace {

// A token id stored as a GGUF integer; nullopt when the key is absent.
Result<std::optional<uint32_t>> token_id(const GgufModel& m, std::string_view key) {
  if (m.find(key) == nullptr) return std::optional<uint32_t>();
  FERRITE_ASSIGN_OR_RETURN(uint64_t value, m.get_unsigned(key));
  if (value > std::numeric_limits<uint32_t>::max()) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "{}: metadata `{}` is {}, above the largest token id {}", m.source, key,
                      value, std::numeric_limits<uint32_t>::max())
        .with_field("key", std::string(key));
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(value));
}

Result<bool> flag(const GgufModel& m, std::string_view key, bool fallback) {
  const GgufValue* value = m.find(key);
  if (value == nullptr) return fallback;
  const bool* b = value->as<bool>();
  if (b == nullptr) {
    return make_error(ErrorCode::kInvalidModelConfig, "{}: metadata `{}` must be a bool",
                      m.source, key)
        .with_field("key", std::string(key));
  }
  return *b;
}

Error too_short(const GgufModel& m, std::string_view key, size_t have, size_t tokens) {
  return make_error(ErrorCode::kInvalidModelConfig,
                    "{}: metadata `{}` has {} entries for {} tokens", m.source, key, have, tokens)
      .with_field("key", std::string(key));
}

// llama.cpp's end-of-generation texts (llama-vocab.cpp, special_eog_ids).
constexpr std::array<std::string_view, 22> kEndOfGenerationTexts = {
    "<|eot_id|>",  "<|im_end|>",        "<|end|>",         "<|return|>",
    "<|call|>",    "<|flush|>",         "<|calls|>",       "<end_of_turn>",
    "<|endoftext|>", "</s>",            "<|eom_id|>",      "<EOT>",
    "_<EOT>",      "[EOT]",             "[EOS]",           "<|end_of_text|>",
    "<end_of_utterance>", "<eos>",      "<turn|>",         "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~["};
constexpr std::array<std::string_view, 11> kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>",      "_<EOT>",     "[EOT]",   "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>"};
constexpr std::array<std::string_view, 5> kFimPadTexts = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>",
                                                          "<PAD>", "[PAD]"};
constexpr std::array<std::string_view, 5> kFimRepTexts = {"<|fim_repo|>", "<|repo_name|>",
                                                          "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::array<std::string_view, 1> kFimSepTexts = {"<|file_sep|>"};

template <size_t N>
bool one_of(std::string_view text, const std::array<std::string_view, N>& texts) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

}  // namespace

Result<Vocabulary> read_gguf_vocabulary(const GgufModel& m) {
  std::string model = "llama";
  if (m.find("tokenizer.ggml.model") != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(model, m.get_string("tokenizer.ggml.model"));
  }
  const bool bpe = model == "gpt2";
  if (model != "llama" && !bpe) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "{}: tokenizer model `{}` is not supported (Ferrite reads \"llama\" = "
                      "SentencePiece and \"gpt2\" = byte-level BPE)",
                      m.source, model)
        .with_field("key", "tokenizer.ggml.model");
  }
  FERRITE_ASSIGN_OR_RETURN(const auto* tokens, m.get_array<std::string>("tokenizer.ggml.tokens"));
  const size_t n = tokens->size();
  if (n > Vocabulary::kMaxTokens) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "{}: metadata `tokenizer.ggml.tokens` has {} tokens, over the limit of {}",
                      m.source, n, Vocabulary::kMaxTokens)
        .with_field("key", "tokenizer.ggml.tokens");
  }
  std::vector<float> scores;
  if (const GgufValue* value = m.find("tokenizer.ggml.scores")) {
    const GgufArray* array = value->as<GgufArray>();
    const auto* f = array != nullptr ? array->as<float>() : nullptr;
    const auto* i = array != nullptr ? array->as<int32_t>() : nullptr;
    if (f == nullptr && i == nullptr) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "{}: metadata `tokenizer.ggml.scores` must be an f32 or i32 array",
                        m.source)
          .with_field("key", "tokenizer.ggml.scores");
    }
    const size_t have = f != nullptr ? f->size() : i->size();
    if (have < n) return too_short(m, "tokenizer.ggml.scores", have, n);
    scores.resize(n);
    for (size_t k = 0; k < n; ++k) scores[k] = f != nullptr ? (*f)[k] : static_cast<float>((*i)[k]);
  } else if (!bpe) {
    scores.assign(n, 0.0f);
  }
  Vocabulary v;
  if (bpe) {
    v.tokens = *tokens;
    v.scores = std::move(scores);
  } else {
    v = Vocabulary::from_gguf_tokens(*tokens, std::move(scores));
  }
  v.kind = bpe ? VocabularyKind::kByteLevelBpe : VocabularyKind::kSentencePiece;
  if (m.find("tokenizer.ggml.token_type") != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(const auto* types,
                             m.get_array<int32_t>("tokenizer.ggml.token_type"));
    if (types->size() < n) return too_short(m, "tokenizer.ggml.token_type", types->size(), n);
    v.token_types.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const int32_t t = (*types)[k];
      v.token_types[k] = t >= 0 && t <= 6 ? static_cast<TokenType>(t) : TokenType::kUndefined;
    }
  }
  if (m.find("tokenizer.ggml.pre") != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(v.pre, m.get_string("tokenizer.ggml.pre"));
  }
  if (bpe) {
    FERRITE_ASSIGN_OR_RETURN(const auto* merges,
                             m.get_array<std::string>("tokenizer.ggml.merges"));
    if (merges->size() > Vocabulary::kMaxMerges) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "{}: metadata `tokenizer.ggml.merges` has {} merges, over the limit of {}",
                        m.source, merges->size(), Vocabulary::kMaxMerges)
          .with_field("key", "tokenizer.ggml.merges");
    }
    v.merges.reserve(merges->size());
    for (size_t k = 0; k < merges->size(); ++k) {
      const std::string& merge = (*merges)[k];
      const size_t space = merge.size() > 1 ? merge.find(' ', 1) : std::string::npos;
      if (space == std::string::npos || space + 1 >= merge.size()) {
        return make_error(ErrorCode::kInvalidModelConfig,
                          "{}: metadata `tokenizer.ggml.merges` entry {} is not two texts "
                          "separated by a space",
                          m.source, k)
            .with_field("key", "tokenizer.ggml.merges");
      }
      v.merges.emplace_back(merge.substr(0, space), merge.substr(space + 1));
    }
  }

  // Flags over llama.cpp's defaults.
  bool default_bos = !bpe;
  if (bpe) {
    for (std::string_view name : {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1",
                                  "pixtral", "midm-2.0", "lfm2", "tekken", "chameleon"}) {
      if (v.pre == name) default_bos = true;
    }
  }
  FERRITE_ASSIGN_OR_RETURN(v.add_bos, flag(m, "tokenizer.ggml.add_bos_token", default_bos));
  FERRITE_ASSIGN_OR_RETURN(v.add_eos, flag(m, "tokenizer.ggml.add_eos_token", false));
  FERRITE_ASSIGN_OR_RETURN(v.add_space_prefix,
                           flag(m, "tokenizer.ggml.add_space_prefix", !bpe));

  // Special ids.
  struct Special {
    std::string_view key;
    uint32_t* id;
    uint32_t fallback;
  };
  uint32_t fim_pad = kNoToken, fim_rep = kNoToken, fim_sep = kNoToken;
  const Special specials[] = {
      {"tokenizer.ggml.bos_token_id", &v.bos_id, bpe ? kNoToken : 1u},
      {"tokenizer.ggml.eos_token_id", &v.eos_id, bpe ? kNoToken : 2u},
      {"tokenizer.ggml.unknown_token_id", &v.unk_id, bpe ? kNoToken : 0u},
      {"tokenizer.ggml.seperator_token_id", &v.sep_id, kNoToken},
      {"tokenizer.ggml.padding_token_id", &v.pad_id, kNoToken},
      {"tokenizer.ggml.eot_token_id", &v.eot_id, kNoToken},
      {"tokenizer.ggml.eom_token_id", &v.eom_id, kNoToken},
      {"tokenizer.ggml.fim_pad_token_id", &fim_pad, kNoToken},
      {"tokenizer.ggml.fim_rep_token_id", &fim_rep, kNoToken},
      {"tokenizer.ggml.fim_sep_token_id", &fim_sep, kNoToken},
  };
  for (size_t k = 0; k < std::size(specials); ++k) {
    const Special& s = specials[k];
    if (k >= 3) {
      // Optional ids: a negative or out-of-range value means "none" (llama.cpp
      // warns and ignores it; converters write 0xFFFFFFFF or -1 for "unset").
      auto id = token_id(m, s.key);
      *s.id = id && id->has_value() && **id < n ? **id : s.fallback;
      continue;
    }
    FERRITE_ASSIGN_OR_RETURN(std::optional<uint32_t> id, token_id(m, s.key));
    *s.id = id.value_or(s.fallback);
  }

  // End of generation, as llama.cpp derives it from the token texts.
  const auto make_control = [&v](size_t id) {
    if (v.token_types.empty()) return;  // derived types: nothing to override
    if (v.token_types[id] != TokenType::kControl) v.token_types[id] = TokenType::kControl;
  };
  for (size_t id = 0; id < n; ++id) {
    const std::string& text = (*tokens)[id];
    const auto u = static_cast<uint32_t>(id);
    if (v.eot_id == kNoToken && one_of(text, kEotTexts)) {
      v.eot_id = u;
      make_control(id);
    }
    if (v.eom_id == kNoToken && text == "<|eom_id|>") {
      v.eom_id = u;
      make_control(id);
    }
    if (fim_pad == kNoToken && one_of(text, kFimPadTexts)) fim_pad = u;
    if (fim_rep == kNoToken && one_of(text, kFimRepTexts)) fim_rep = u;
    if (fim_sep == kNoToken && one_of(text, kFimSepTexts)) fim_sep = u;
    if (one_of(text, kEndOfGenerationTexts)) {
      v.end_of_generation.insert(u);
      make_control(id);
    }
  }
  for (const uint32_t id : {fim_pad, fim_rep, fim_sep}) {
    if (id != kNoToken && id < n) v.end_of_generation.insert(id);
  }
  // llama.cpp: with "<|return|>" and "<|call|>" (or "<|calls|>" and
  // "<|flush|>"), "<|end|>" does not end generation.
  bool has_return = false, has_call = false, has_flush = false;
  uint32_t end_id = kNoToken;
  for (const uint32_t id : v.end_of_generation) {
    const std::string& text = (*tokens)[id];
    has_return = has_return || text == "<|return|>";
    has_call = has_call || text == "<|call|>" || text == "<|calls|>";
    has_flush = has_flush || text == "<|flush|>";
    if (text == "<|end|>") end_id = id;
  }
  if (end_id != kNoToken && ((has_return && has_call) || (has_call && has_flush))) {
    v.end_of_generation.erase(end_id);
  }
  return v;
}

}  // namespace ferrite

namespace ferrite {

bool is_end_of_generation_text(std::string_view text) {
  return one_of(text, kEndOfGenerationTexts);
}

}  // namespace ferrite
