// fuzz/bpe_tokenizer_fuzzer.cc — feeds arbitrary bytes to the byte-level BPE
// path of Tokenizer::tokenize and arbitrary ids to token_to_piece
// (ferrite/runtime/tokenizer.h). The vocabulary is read once from llama.cpp's
// FERRITE_SHARED_DIR/tokenizers/ggml-vocab-gpt-2.gguf (the path is baked in
// at compile time) through read_gguf_vocabulary; if that file cannot be read,
// from a built-in vocabulary (the 256 byte tokens in GPT-2 spelling, a few
// merges, one control token).
// Input: byte 0 holds flags (bit 0 add_special, bit 1 parse_special); the
// rest is the text, and, read as little-endian u16 pairs, also the ids to
// render (id = value mod (vocab size + 16), so some are out of range).
// Checked promise: with parse_special off, decode(tokenize(s)) == s for ANY
// bytes s (byte-level BPE covers every byte); a difference aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "ferrite/families/gguf_vocabulary.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/runtime/tokenizer.h"
#include "fuzz_support.h"

namespace {

std::string spell(unsigned byte) {
  uint32_t extra = 256, cp = 0;
  for (unsigned v = 0; v <= byte; ++v) {
    const bool kept = (v >= '!' && v <= '~') || (v >= 0xA1 && v <= 0xAC) || v >= 0xAE;
    cp = kept ? v : extra++;
  }
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

ferrite::Vocabulary builtin_vocabulary() {
  ferrite::Vocabulary v;
  v.kind = ferrite::VocabularyKind::kByteLevelBpe;
  v.pre = "llama-bpe";
  for (unsigned b = 0; b < 256; ++b) v.tokens.push_back(spell(b));
  for (const auto& [a, b] : {std::pair<std::string, std::string>{"t", "h"}, {"th", "e"},
                             {spell(' '), "the"}, {"a", "n"}, {"an", "d"}}) {
    v.merges.emplace_back(a, b);
    v.tokens.push_back(a + b);
  }
  v.tokens.push_back("<|endoftext|>");
  v.token_types.assign(v.tokens.size(), ferrite::TokenType::kNormal);
  v.token_types.back() = ferrite::TokenType::kControl;
  v.bos_id = v.eos_id = static_cast<uint32_t>(v.tokens.size() - 1);
  v.unk_id = ferrite::kNoToken;
  return v;
}

ferrite::Vocabulary load_vocabulary() {
  auto file = ferrite::GgufFile::open(FERRITE_SHARED_DIR "/tokenizers/ggml-vocab-gpt-2.gguf");
  if (file) {
    if (auto vocab = ferrite::read_gguf_vocabulary(file->model())) return std::move(*vocab);
  }
  std::fprintf(stderr, "bpe_tokenizer_fuzzer: ggml-vocab-gpt-2.gguf unreadable; using the "
                       "built-in vocabulary\n");
  return builtin_vocabulary();
}

const ferrite::Tokenizer& tokenizer() {
  return ferrite_fuzz::setup_once("bpe_tokenizer_fuzzer",
                                  [] { return ferrite::Tokenizer::create(load_vocabulary()); });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ferrite::Tokenizer& tok = tokenizer();
  const bool add_special = (data[0] & 1) != 0;
  const bool parse_special = (data[0] & 2) != 0;
  const auto text = ferrite_fuzz::as_text(data + 1, size - 1);

  if (auto ids = tok.tokenize(text, add_special, parse_special)) {
    auto decoded = tok.decode(*ids);
    if (!decoded) std::abort();  // tokenize only produces ids in range
    if (!add_special && !parse_special && *decoded != text) std::abort();
  }

  const uint32_t modulus = static_cast<uint32_t>(tok.vocab_size()) + 16;
  for (size_t i = 1; i + 1 < size; i += 2) {
    const uint32_t id = (uint32_t{data[i]} | (uint32_t{data[i + 1]} << 8)) % modulus;
    (void)tok.token_to_piece(id, (id & 1) != 0);
  }
  return 0;
}
