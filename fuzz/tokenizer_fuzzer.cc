// fuzz/tokenizer_fuzzer.cc — feeds arbitrary bytes to Tokenizer::encode and
// arbitrary token ids to Tokenizer::decode_piece (ferrite/runtime/tokenizer.h).
// The vocabulary is built once from the llama2.c tokenizer
// FERRITE_SHARED_DIR/models/tok512.bin (512 tokens; the path is baked in at
// compile time); if that file cannot be read, from a small built-in
// vocabulary (unk, <s>, </s>, the 256 byte tokens, a few words).
// Input: byte 0 holds flags (bit 0 add_bos, bit 1 add_eos); the rest is the
// text to encode, and, read as little-endian u16 pairs, also the ids to
// decode (id = value mod (vocab size + 16), so some are out of range).
// Errors are ignored. The documented round trip decode(encode(s, bos)) == s
// for valid UTF-8 s is checked when the vocabulary has every byte token;
// a difference aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "ferrite/models/llama2c_reader.h"
#include "ferrite/runtime/tokenizer.h"
#include "fuzz_support.h"

namespace {

ferrite::Vocabulary builtin_vocabulary() {
  ferrite::Vocabulary vocabulary;
  vocabulary.tokens = {"<unk>", "<s>", "</s>"};
  for (int byte = 0; byte < 256; ++byte) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    vocabulary.tokens.emplace_back(name);
  }
  for (const char* word : {" ", "e", "t", " t", "he", " the", "on", "ce", " a", "\xc3\xa9"}) {
    vocabulary.tokens.emplace_back(word);
  }
  vocabulary.scores.assign(vocabulary.tokens.size(), 0.0f);
  for (size_t i = 3 + 256; i < vocabulary.scores.size(); ++i) {
    vocabulary.scores[i] = -static_cast<float>(i);
  }
  return vocabulary;
}

ferrite::Vocabulary load_vocabulary() {
  auto file = ferrite::read_llama2c_tokenizer(FERRITE_SHARED_DIR "/models/tok512.bin", 512);
  if (!file) {
    std::fprintf(stderr, "tokenizer_fuzzer: %s; using the built-in vocabulary\n",
                 file.error().to_string().c_str());
    return builtin_vocabulary();
  }
  ferrite::Vocabulary vocabulary;
  vocabulary.tokens = std::move(file->tokens);
  vocabulary.scores = std::move(file->scores);
  return vocabulary;
}

const ferrite::Tokenizer& tokenizer() {
  return ferrite_fuzz::setup_once("tokenizer_fuzzer",
                                  [] { return ferrite::Tokenizer::create(load_vocabulary()); });
}

bool has_every_byte_token(const ferrite::Tokenizer& tok) {
  for (int byte = 0; byte < 256; ++byte) {
    if (!tok.byte_token(static_cast<uint8_t>(byte))) return false;
  }
  return true;
}

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool is_valid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    uint32_t code = 0;
    if (lead < 0x80) { ++i; continue; }
    if (lead >= 0xC2 && lead <= 0xDF) { length = 2; code = lead & 0x1Fu; }
    else if (lead >= 0xE0 && lead <= 0xEF) { length = 3; code = lead & 0x0Fu; }
    else if (lead >= 0xF0 && lead <= 0xF4) { length = 4; code = lead & 0x07u; }
    else return false;
    if (i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0u) != 0x80u) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000) || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tokenizer();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ferrite::Tokenizer& tok = tokenizer();
  static const bool round_trips = has_every_byte_token(tok);
  const bool add_bos = (data[0] & 1) != 0;
  const bool add_eos = (data[0] & 2) != 0;
  const auto text = ferrite_fuzz::as_text(data + 1, size - 1);

  if (auto ids = tok.encode(text, add_bos, add_eos)) {
    auto decoded = tok.decode(*ids);
    if (!decoded) std::abort();  // encode only produces ids in range
    if (round_trips && add_bos && is_valid_utf8(text) && *decoded != text) std::abort();
  }

  const uint32_t modulus = static_cast<uint32_t>(tok.vocab_size()) + 16;
  uint32_t previous = ferrite::kNoToken;
  for (size_t i = 1; i + 1 < size; i += 2) {
    const uint32_t id = (uint32_t{data[i]} | (uint32_t{data[i + 1]} << 8)) % modulus;
    (void)tok.decode_piece(previous, id);
    previous = id;
  }
  return 0;
}
