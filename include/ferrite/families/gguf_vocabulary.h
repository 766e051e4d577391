// ferrite/families/gguf_vocabulary.h — the tokenizer vocabulary a GGUF file
// declares (`tokenizer.ggml.*`), read from its metadata alone.
//
// Contract: `read_gguf_vocabulary(model)` works on any parsed GGUF, with or
// without tensors (llama.cpp's vocabulary-only `ggml-vocab-*.gguf` files):
//   * `tokenizer.ggml.model`: "llama" (SentencePiece; also when the key is
//     absent, as older llama2.c conversions write none) or "gpt2" (byte-level
//     BPE); any other value is kInvalidModelConfig naming it;
//   * `tokens` (string array, required); `scores` (f32 or i32 array, at least
//     one per token; optional: SentencePiece then scores 0, BPE none);
//     `token_type` (i32 array, at least one per token; values outside 0..6
//     read as undefined = normal, as llama.cpp does); `merges` ("a b" strings,
//     required for BPE, each with a space after its first byte); `pre`;
//   * `add_bos_token`, `add_eos_token`, `add_space_prefix` (bool) over
//     llama.cpp's defaults (SentencePiece: BOS yes, EOS no, space prefix yes;
//     BPE: BOS only for the llama3 pre-tokenizer names, no space prefix);
//   * special ids `bos/eos/unknown/seperator/padding/eot/eom_token_id`
//     (SentencePiece defaults bos 1, eos 2, unk 0; BPE defaults none); for
//     bos/eos/unk ids above u32 are kInvalidModelConfig and the range is
//     checked by Tokenizer::create; the other ids read as "none" when
//     negative or out of range (converters write 0xFFFFFFFF or -1);
//   * the end-of-generation set as llama.cpp builds it: eos, eot, eom,
//     fim pad/repo/sep (`tokenizer.ggml.fim_{pad,rep,sep}_token_id` or their
//     usual texts), and every token whose text is one of llama.cpp's
//     end-of-generation texts ("<|eot_id|>", "<|im_end|>", "<|endoftext|>",
//     "<end_of_turn>", "<|end|>", "</s>", ...); eot/eom are found by text when
//     no key names them. Tokens found by text are made control tokens.
// Type errors name the key. Sizes are bounded by the GGUF reader's limits and
// Vocabulary::kMaxTokens / kMaxMerges.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open("ggml-vocab-llama-bpe.gguf"));
//   FERRITE_ASSIGN_OR_RETURN(Vocabulary vocab, read_gguf_vocabulary(file.model()));
//   FERRITE_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::create(std::move(vocab)));
#pragma once

#include "ferrite/core/status.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite {

Result<Vocabulary> read_gguf_vocabulary(const GgufModel& model);

}  // namespace ferrite

namespace ferrite {

// Whether llama.cpp treats a token with this text as end-of-generation.
bool is_end_of_generation_text(std::string_view text);

}  // namespace ferrite
