// ferrite/families/hf_tokenizer.h — a Hugging Face `tokenizer.json` (plus
// `tokenizer_config.json`) as a byte-level BPE Vocabulary.
//
// Contract: `parse_hf_tokenizer(tokenizer_json, config_json, source)` reads
// the text of both files (config may be empty = absent) through the bounded
// JSON reader (64 MiB text, 128 MiB parsed, depth 64). Supported:
//   * `model.type` "BPE" with `vocab` (text → id), `merges` as "a b" strings
//     or [a, b] pairs, `ignore_merges`; `byte_fallback` true, `unk_token`,
//     `continuing_subword_prefix` and `end_of_word_suffix` are refused;
//   * `added_tokens` [{id, content, special}]: special → control token, else
//     user-defined (matched in the text before encoding); ids may extend the
//     vocabulary; ids missing from both become unused "<unused-ID>" tokens;
//   * `normalizer` null; `pre_tokenizer` ByteLevel (use_regex → the GPT-2
//     expression; add_prefix_space must be false), Split {pattern: {Regex |
//     String}, behavior "Isolated", invert false}, Digits, or a Sequence of
//     these. A Split/Digits without a ByteLevel is refused (Ferrite's BPE is
//     byte-level);
//   * tokenizer_config.json: `add_bos_token`, `add_eos_token` (bool, default
//     false), `bos_token`, `eos_token`, `unk_token`, `pad_token` (a string or
//     {"content": ...}), looked up by text.
// Anything else is kInvalidModelConfig naming the JSON path and the file.
// Limits: ids below Vocabulary::kMaxTokens, merges ≤ Vocabulary::kMaxMerges.
// The end-of-generation set is eos plus llama.cpp's end-of-generation texts.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(Vocabulary vocab, read_hf_tokenizer("models/qwen2-0.5b"));
#pragma once

#include <filesystem>
#include <string_view>

#include "ferrite/core/status.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite {

Result<Vocabulary> parse_hf_tokenizer(std::string_view tokenizer_json, std::string_view config_json,
                                      std::string_view source);

// Reads DIR/tokenizer.json and, when present, DIR/tokenizer_config.json.
Result<Vocabulary> read_hf_tokenizer(const std::filesystem::path& dir);

}  // namespace ferrite
