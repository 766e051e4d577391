// ferrite/runtime/tokenizer.h — the tokenizer of a model: SentencePiece-style
// merge-by-score (GGUF `tokenizer.ggml.model = "llama"`, llama2.c
// `tokenizer.bin`) or byte-level BPE (GGUF `"gpt2"`, Hugging Face
// `tokenizer.json` BPE), behind one interface. docs/tokenizers.md has the rules.
//
// Contract:
//  * A `Tokenizer` is built once from a `Vocabulary`. `Tokenizer::create`
//    validates it and fails with kInvalidModelConfig naming the field: 1..
//    1,048,576 tokens, every token non-empty, scores (if given, and always for
//    SentencePiece) one finite value per token, `token_types` empty or one per
//    token, special ids in range (or kNoToken where a kind allows "none"), at
//    most kMaxMerges merges, each naming two texts; a byte-level BPE vocabulary
//    needs a known pre-tokenizer name (`pre_tokenizer_names()`) or explicit
//    `pre_patterns`. Duplicate texts are allowed; lookups find the lowest id.
//  * Token types (GGUF `tokenizer.ggml.token_type` numbering). Without
//    `token_types` (llama2.c files): bos/eos are control, unk is unknown,
//    "<0xNN>" names are byte tokens, all others normal.
//  * encode(text, add_bos, add_eos): the llama2.c entry point kept for
//    existing callers = tokenize(text, false, false) with BOS/EOS added as
//    asked (it ignores the vocabulary's add_bos/add_eos).
//  * tokenize(text, add_special, parse_special) follows llama.cpp's
//    `llama_tokenize`: the text is first cut at the texts of user-defined
//    tokens (always) and of control/unknown tokens (only when parse_special),
//    longest token text first, leftmost occurrence; every other fragment is
//    encoded by the vocabulary's kind:
//      SentencePiece: ' ' is prepended to a fragment at the start or after a
//      special token when add_space_prefix; the fragment is split into UTF-8
//      code points (a byte that does not start a well-formed code point is a
//      piece on its own); a code point whose text is a token starts as that
//      token, else each of its bytes as its "<0xNN>" token (or unk), and those
//      never merge; the adjacent pair whose joined text is a normal or
//      user-defined token with the highest score merges first (ties:
//      leftmost) until none does.
//      Byte-level BPE: the fragment is split by the pre-tokenizer's regular
//      expressions (PCRE2, UTF + UCP; each expression splits every piece left
//      by the previous one; text between matches stays a piece of its own);
//      each piece's bytes start as single bytes and the adjacent pair with the
//      lowest merge rank merges first (ties: leftmost) until none does; a
//      result that is no token is emitted byte by byte (bytes without a token
//      are dropped, as llama.cpp does). With `ignore_merges` (llama-bpe) a
//      piece that is itself a token is emitted whole.
//    With add_special, BOS is prepended when `add_bos` and EOS appended when
//    `add_eos`. Texts over kMaxEncodeBytes fail (kInvalidArgument). Cost is
//    O(n log n) in the text length for both kinds.
//  * token_to_piece(token, special) follows llama.cpp's token_to_piece:
//    control and unknown tokens give "" unless `special`; user-defined tokens
//    give their text; byte tokens their byte; normal tokens their text
//    (byte-level BPE: mapped back through the GPT-2 byte table, byte-exact).
//  * decode_piece(previous, token, special): token_to_piece, then, for a
//    SentencePiece vocabulary with add_space_prefix, one leading ' ' is dropped
//    when `previous` is the BOS id (the llama2.c stream convention that undoes
//    the space prefix). decode(ids) concatenates, the first with previous =
//    kNoToken. Unused tokens give "".
//  * is_end_of_generation(id): id is in the vocabulary's end-of-generation set
//    (eos, eot, eom and the texts llama.cpp treats as such; see
//    docs/tokenizers.md); always includes eos when it exists.
//  * Round trip: for valid UTF-8 `s` without special-token text,
//    decode(tokenize(s, false, false)) == s for byte-level BPE, and
//    == " " + s (space-prefixed) for SentencePiece.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::create(std::move(vocab)));
//   FERRITE_ASSIGN_OR_RETURN(std::vector<uint32_t> ids,
//                            tok.tokenize("Once upon a time", /*add_special=*/true,
//                                         /*parse_special=*/false));
//   for (uint32_t id : ids) {
//     FERRITE_ASSIGN_OR_RETURN(std::string piece, tok.token_to_piece(id, false));
//     std::fwrite(piece.data(), 1, piece.size(), stdout);
//   }
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite {

// "No previous token" for decode_piece; "no such token" for optional ids.
inline constexpr uint32_t kNoToken = 0xFFFFFFFFu;

enum class VocabularyKind : uint8_t {
  kSentencePiece,  // GGUF "llama", llama2.c
  kByteLevelBpe,   // GGUF "gpt2", Hugging Face BPE with ByteLevel
};

// GGUF `tokenizer.ggml.token_type` values.
enum class TokenType : uint8_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

struct Vocabulary {
  std::vector<std::string> tokens;  // raw text of each token, by id (see kind)
  std::vector<float> scores;        // merge score of each token (SentencePiece); may be empty for BPE
  uint32_t bos_id = 1;
  uint32_t eos_id = 2;
  uint32_t unk_id = 0;

  VocabularyKind kind = VocabularyKind::kSentencePiece;
  // Byte-level BPE: the pre-tokenizer name (GGUF `tokenizer.ggml.pre`), or
  // explicit regular expressions (Hugging Face Split pre-tokenizers), applied
  // in order; `pre_patterns` wins when non-empty.
  std::string pre;
  std::vector<std::string> pre_patterns;
  bool ignore_merges = false;  // set from `pre` by create() for llama3-style names
  // One per token, or empty (derived, see the contract).
  std::vector<TokenType> token_types;
  // Byte-level BPE merges, rank = index: the two texts, in the token spelling.
  std::vector<std::pair<std::string, std::string>> merges;
  // What tokenize(add_special = true) adds; llama.cpp's defaults per kind.
  bool add_bos = true;
  bool add_eos = false;
  bool add_space_prefix = true;  // SentencePiece only
  // Other special ids (kNoToken = none).
  uint32_t pad_id = kNoToken;
  uint32_t sep_id = kNoToken;
  uint32_t eot_id = kNoToken;
  uint32_t eom_id = kNoToken;
  // Ids that end generation; create() always adds eos/eot/eom.
  std::set<uint32_t> end_of_generation;

  // Largest vocabulary accepted by Tokenizer::create.
  static constexpr size_t kMaxTokens = size_t{1} << 20;
  // Most merges accepted by Tokenizer::create.
  static constexpr size_t kMaxMerges = size_t{1} << 22;
  // Longest token text accepted (bytes).
  static constexpr size_t kMaxTokenBytes = size_t{1} << 16;

  // Builds a vocabulary from GGUF `tokenizer.ggml.tokens`/`scores`: every
  // U+2581 (bytes E2 96 81) in a token becomes ' '. No validation here.
  static Vocabulary from_gguf_tokens(std::vector<std::string> tokens, std::vector<float> scores,
                                     uint32_t bos_id = 1, uint32_t eos_id = 2,
                                     uint32_t unk_id = 0);
};

// The byte-level BPE pre-tokenizer names `create` knows (sorted).
std::vector<std::string> pre_tokenizer_names();

class Tokenizer {
 public:
  // Longest text `encode` accepts, in bytes (16 MiB).
  static constexpr size_t kMaxEncodeBytes = size_t{1} << 24;

  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // Validates the vocabulary (kInvalidModelConfig) and builds the lookups.
  static Result<Tokenizer> create(Vocabulary vocab);

  // llama.cpp's llama_tokenize (see the contract).
  Result<std::vector<uint32_t>> tokenize(std::string_view text, bool add_special,
                                         bool parse_special) const;

  // llama2.c entry point: tokenize(text, false, false) with BOS/EOS as asked.
  Result<std::vector<uint32_t>> encode(std::string_view text, bool add_bos = true,
                                       bool add_eos = false) const;

  // The bytes of one token (llama.cpp token_to_piece).
  Result<std::string> token_to_piece(uint32_t token, bool special = false) const;

  // The bytes of `token` following `previous` (see the contract).
  Result<std::string> decode_piece(uint32_t previous, uint32_t token, bool special = false) const;

  // Concatenation of decode_piece over `ids`, the first with previous = kNoToken.
  Result<std::string> decode(std::span<const uint32_t> ids, bool special = false) const;

  bool is_end_of_generation(uint32_t id) const;

  size_t vocab_size() const { return vocab_.tokens.size(); }
  VocabularyKind kind() const { return vocab_.kind; }
  uint32_t bos_id() const { return vocab_.bos_id; }
  uint32_t eos_id() const { return vocab_.eos_id; }
  uint32_t unk_id() const { return vocab_.unk_id; }
  const Vocabulary& vocabulary() const { return vocab_; }
  TokenType token_type(uint32_t id) const { return types_[id]; }

  // The normal token whose text is exactly `text` (lowest id), if any.
  std::optional<uint32_t> find(std::string_view text) const;
  // The byte token for `byte`, if the vocabulary has one.
  std::optional<uint32_t> byte_token(uint8_t byte) const;

  struct Bpe;  // byte-level BPE state (tokenizer_bpe.cc)

 private:
  Tokenizer();

  struct PieceHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  using TextMap = std::unordered_map<std::string, uint32_t, PieceHash, std::equal_to<>>;

  Result<void> encode_spm(std::string_view text, std::vector<uint32_t>& out) const;
  Result<void> encode_bpe(std::string_view text, std::vector<uint32_t>& out) const;

  Vocabulary vocab_;
  std::vector<TokenType> types_;  // by id, always filled
  // Normal and user-defined tokens by text (lowest id for duplicates); for
  // byte-level BPE the text is the raw bytes (mapped back).
  TextMap by_text_;
  std::array<uint32_t, 256> byte_tokens_{};  // kNoToken where absent
  std::vector<int16_t> byte_of_token_;       // by id: the byte a byte token stands for, or -1
  size_t max_token_bytes_ = 0;               // longest normal token text
  // Tokens matched in the text before encoding: (id), longest text first.
  std::vector<uint32_t> special_order_;
  std::unique_ptr<Bpe> bpe_;
};

}  // namespace ferrite
