// ferrite/runtime/tokenizer.h — SentencePiece-style BPE tokenizer (merge by score).
//
// Contract:
//  * A `Tokenizer` is built once from a `Vocabulary` (token texts as raw bytes,
//    one finite score per token, bos/eos/unk ids). `Tokenizer::create` validates
//    it and fails with kInvalidModelConfig: tokens and scores of equal length,
//    1..1,048,576 tokens, every token non-empty, every score finite, bos/eos/unk
//    in range. Duplicate texts are allowed; text lookups then find the lowest id.
//  * Byte tokens are the entries named exactly "<0x00>".."<0xFF>" (two uppercase
//    hex digits), found by name wherever they sit; the lowest id wins for a
//    duplicated name. Any of them may be absent: a byte without its token falls
//    back to `unk_id`.
//  * Vocabularies from llama2.c `tokenizer.bin` files use a literal ' '. GGUF
//    `tokenizer.ggml.tokens` (llama.cpp converter) use U+2581 "▁" instead;
//    `Vocabulary::from_gguf_tokens` maps every U+2581 back to ' ' so both
//    sources encode identically. "<s>"/"</s>" stay as they are: special tokens
//    are never matched from text, so their spelling does not matter.
//  * encode(text): optional BOS; if the text is non-empty a ' ' is prepended
//    (the "dummy prefix"); the text is split into UTF-8 code points (a byte that
//    does not start a well-formed code point — bad lead, truncated sequence,
//    overlong, surrogate, > U+10FFFF — is one piece on its own). A code point
//    whose text is a (normal) token becomes that token, otherwise each of its
//    bytes becomes its byte token (or unk). Then, repeatedly, the adjacent pair
//    whose concatenated text is a normal token with the highest score is merged
//    (ties: the leftmost pair) until no pair merges. Byte-fallback and unk pieces
//    never merge. "Normal" tokens are all but bos/eos/unk and the byte tokens.
//    Cost O(n log n) in the text length (binary heap with lazy invalidation over
//    a linked list of pieces); texts over `kMaxEncodeBytes` are rejected
//    (kInvalidArgument) so memory stays bounded.
//  * decode_piece(previous, token): the bytes of one token. Byte tokens give
//    their raw byte; bos/eos give ""; every other token its text (unk gives its
//    own text). If `previous == bos_id` a leading ' ' of the result is dropped
//    (llama2.c convention; this undoes the dummy prefix). Bytes are returned
//    as-is: a multi-byte character split over byte tokens is whole again once
//    the pieces are concatenated. Token ids out of range fail (kInvalidArgument);
//    `previous` may be anything (use kNoToken for "start of stream").
//  * Round trip: for valid UTF-8 `s`, decode(encode(s, true)) == s.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::create(std::move(vocab)));
//   FERRITE_ASSIGN_OR_RETURN(std::vector<uint32_t> ids, tok.encode("Once upon a time"));
//   uint32_t prev = kNoToken;
//   for (uint32_t id : ids) {
//     FERRITE_ASSIGN_OR_RETURN(std::string piece, tok.decode_piece(prev, id));
//     std::fwrite(piece.data(), 1, piece.size(), stdout);
//     prev = id;
//   }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite {

// "No previous token" for decode_piece.
inline constexpr uint32_t kNoToken = 0xFFFFFFFFu;

struct Vocabulary {
  std::vector<std::string> tokens;  // raw bytes of each token's text, by id
  std::vector<float> scores;        // merge score of each token, by id
  uint32_t bos_id = 1;
  uint32_t eos_id = 2;
  uint32_t unk_id = 0;

  // Largest vocabulary accepted by Tokenizer::create.
  static constexpr size_t kMaxTokens = size_t{1} << 20;

  // Builds a vocabulary from GGUF `tokenizer.ggml.tokens`/`scores`: every
  // U+2581 (bytes E2 96 81) in a token becomes ' '. No validation here.
  static Vocabulary from_gguf_tokens(std::vector<std::string> tokens, std::vector<float> scores,
                                     uint32_t bos_id = 1, uint32_t eos_id = 2,
                                     uint32_t unk_id = 0);
};

class Tokenizer {
 public:
  // Longest text `encode` accepts, in bytes (16 MiB).
  static constexpr size_t kMaxEncodeBytes = size_t{1} << 24;

  // Validates the vocabulary (kInvalidModelConfig) and builds the lookups.
  static Result<Tokenizer> create(Vocabulary vocab);

  // Encodes `text` (arbitrary bytes) as described in the contract above.
  Result<std::vector<uint32_t>> encode(std::string_view text, bool add_bos = true,
                                       bool add_eos = false) const;

  // The bytes of `token` following `previous` (see the contract).
  Result<std::string> decode_piece(uint32_t previous, uint32_t token) const;

  // Concatenation of decode_piece over `ids`, the first with previous = kNoToken.
  Result<std::string> decode(std::span<const uint32_t> ids) const;

  size_t vocab_size() const { return vocab_.tokens.size(); }
  uint32_t bos_id() const { return vocab_.bos_id; }
  uint32_t eos_id() const { return vocab_.eos_id; }
  uint32_t unk_id() const { return vocab_.unk_id; }
  const Vocabulary& vocabulary() const { return vocab_; }

  // The normal token whose text is exactly `text` (lowest id), if any.
  std::optional<uint32_t> find(std::string_view text) const;
  // The byte token "<0xNN>" for `byte`, if the vocabulary has one.
  std::optional<uint32_t> byte_token(uint8_t byte) const;

 private:
  Tokenizer() = default;

  struct PieceHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };

  Vocabulary vocab_;
  // Normal tokens by text (lowest id for duplicates).
  std::unordered_map<std::string, uint32_t, PieceHash, std::equal_to<>> by_text_;
  std::array<uint32_t, 256> byte_tokens_{};  // kNoToken where absent
  std::vector<int16_t> byte_of_token_;       // by id: the byte a byte token stands for, or -1
  size_t max_token_bytes_ = 0;               // longest normal token text
};

}  // namespace ferrite
