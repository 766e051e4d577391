#include "ferrite/runtime/tokenizer.h"

#include <algorithm>

#include <cmath>
#include <limits>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "runtime/tokenizer_bpe.h"

namespace ferrite {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// The byte value of a token named "<0xNN>" (two uppercase hex digits), or -1.
int byte_token_value(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = text[i];
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return -1;
    }
    value = value * 16 + digit;
  }
  return value;
}

// Length of the well-formed UTF-8 sequence starting at text[i] (Unicode table
// 3-7), or 1 if the byte there does not start one.
size_t utf8_piece_length(std::string_view text, size_t i) {
  const auto at = [&](size_t k) -> unsigned {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0x100u;
  };
  const auto in = [](unsigned b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
  const unsigned b0 = at(0);
  if (b0 < 0x80) return 1;
  if (in(b0, 0xC2, 0xDF)) return in(at(1), 0x80, 0xBF) ? 2 : 1;
  if (in(b0, 0xE0, 0xEF)) {
    const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    return in(at(1), lo, hi) && in(at(2), 0x80, 0xBF) ? 3 : 1;
  }
  if (in(b0, 0xF0, 0xF4)) {
    const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return in(at(1), lo, hi) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 1;
  }
  return 1;
}

// One piece of the text being encoded: a node of a doubly linked list.
struct Piece {
  uint32_t token;
  uint32_t prev;
  uint32_t next;
  bool mergeable;  // a normal token (not byte fallback / unk)
};

// A candidate merge of pieces `left` and `right` (adjacent when pushed).
struct Candidate {
  float score;
  uint32_t left;
  uint32_t right;
  uint32_t left_token;
  uint32_t right_token;
  uint32_t merged;
};

// Heap order: highest score first, then the leftmost pair.
struct CandidateLess {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.score != b.score) return a.score < b.score;
    return a.left > b.left;
  }
};

}  // namespace


Vocabulary Vocabulary::from_gguf_tokens(std::vector<std::string> tokens, std::vector<float> scores,
                                        uint32_t bos_id, uint32_t eos_id, uint32_t unk_id) {
  static constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581
  for (std::string& token : tokens) {
    if (token.find(kSpaceMark) == std::string::npos) continue;
    std::string out;
    out.reserve(token.size());
    size_t i = 0;
    while (i < token.size()) {
      if (token.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
        out.push_back(' ');
        i += kSpaceMark.size();
      } else {
        out.push_back(token[i++]);
      }
    }
    token = std::move(out);
  }
  Vocabulary vocab;
  vocab.tokens = std::move(tokens);
  vocab.scores = std::move(scores);
  vocab.bos_id = bos_id;
  vocab.eos_id = eos_id;
  vocab.unk_id = unk_id;
  return vocab;
}


namespace {

Error vocab_error(std::string_view field, std::string message) {
  return make_error(ErrorCode::kInvalidModelConfig, "tokenizer vocabulary field `{}` is invalid: {}",
                    field, message)
      .with_field("field", std::string(field));
}

bool is_matched_special(TokenType type) {
  return type == TokenType::kControl || type == TokenType::kUserDefined ||
         type == TokenType::kUnknown;
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

Result<Tokenizer> Tokenizer::create(Vocabulary vocab) {
  const size_t n = vocab.tokens.size();
  const bool bpe = vocab.kind == VocabularyKind::kByteLevelBpe;
  if (n == 0) return vocab_error("tokens", "the vocabulary is empty");
  if (n > Vocabulary::kMaxTokens) {
    return vocab_error("tokens",
                       fmt::format("{} tokens exceed the limit of {}", n, Vocabulary::kMaxTokens));
  }
  if (vocab.scores.size() != n && !(bpe && vocab.scores.empty())) {
    return vocab_error("scores", fmt::format("{} scores for {} tokens", vocab.scores.size(), n));
  }
  if (!vocab.token_types.empty() && vocab.token_types.size() != n) {
    return vocab_error("token_type",
                       fmt::format("{} token types for {} tokens", vocab.token_types.size(), n));
  }
  if (vocab.merges.size() > Vocabulary::kMaxMerges) {
    return vocab_error("merges", fmt::format("{} merges exceed the limit of {}",
                                             vocab.merges.size(), Vocabulary::kMaxMerges));
  }
  // bos/eos/unk: required in range for SentencePiece (llama2.c files), may be
  // kNoToken ("none") for byte-level BPE; the others are always optional.
  const std::pair<const char*, uint32_t> specials[] = {
      {"bos_id", vocab.bos_id}, {"eos_id", vocab.eos_id}, {"unk_id", vocab.unk_id},
      {"pad_id", vocab.pad_id}, {"sep_id", vocab.sep_id}, {"eot_id", vocab.eot_id},
      {"eom_id", vocab.eom_id}};
  for (size_t k = 0; k < std::size(specials); ++k) {
    const auto& [name, id] = specials[k];
    const bool optional = bpe || k >= 3;
    if (id == kNoToken && optional) continue;
    if (id >= n) {
      return vocab_error(name, fmt::format("id {} is out of range for {} tokens", id, n));
    }
  }
  for (const uint32_t id : vocab.end_of_generation) {
    if (id >= n) {
      return vocab_error("end_of_generation",
                         fmt::format("id {} is out of range for {} tokens", id, n));
    }
  }
  for (size_t id = 0; id < n; ++id) {
    if (vocab.tokens[id].empty()) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer vocabulary token {} is invalid: its text is empty", id)
          .with_field("field", "tokens")
          .with_field("token_id", id);
    }
    if (vocab.tokens[id].size() > Vocabulary::kMaxTokenBytes) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer vocabulary token {} is invalid: its text of {} bytes exceeds "
                        "the limit of {}",
                        id, vocab.tokens[id].size(), Vocabulary::kMaxTokenBytes)
          .with_field("field", "tokens")
          .with_field("token_id", id);
    }
    if (!vocab.scores.empty() && !std::isfinite(vocab.scores[id])) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer vocabulary token {} is invalid: score {} is not finite", id,
                        vocab.scores[id])
          .with_field("field", "scores")
          .with_field("token_id", id);
    }
    if (!vocab.token_types.empty() && static_cast<unsigned>(vocab.token_types[id]) > 6) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer vocabulary token {} is invalid: token type {} is not 0..6", id,
                        static_cast<unsigned>(vocab.token_types[id]))
          .with_field("field", "token_type")
          .with_field("token_id", id);
    }
  }

  Tokenizer tok;
  tok.vocab_ = std::move(vocab);
  Vocabulary& v = tok.vocab_;
  tok.byte_tokens_.fill(kNone);
  tok.byte_of_token_.assign(n, -1);
  tok.types_.resize(n, TokenType::kNormal);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<uint32_t>(i);
    if (!v.token_types.empty()) {
      tok.types_[i] = v.token_types[i];
      if (tok.types_[i] == TokenType::kUndefined) tok.types_[i] = TokenType::kNormal;
    } else if (id == v.bos_id || id == v.eos_id) {
      tok.types_[i] = TokenType::kControl;
    } else if (id == v.unk_id) {
      tok.types_[i] = TokenType::kUnknown;
    } else if (byte_token_value(v.tokens[i]) >= 0) {
      tok.types_[i] = TokenType::kByte;
    }
  }
  for (const uint32_t id : {v.eos_id, v.eot_id, v.eom_id}) {
    if (id != kNoToken) v.end_of_generation.insert(id);
  }

  tok.by_text_.reserve(n);
  if (bpe) {
    FERRITE_ASSIGN_OR_RETURN(tok.bpe_, build_bpe(v, tok.types_));
  }
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<uint32_t>(i);
    const TokenType type = tok.types_[i];
    if (type == TokenType::kByte) {
      const int byte = byte_token_value(v.tokens[i]);
      if (byte >= 0) {
        if (tok.byte_tokens_[static_cast<size_t>(byte)] == kNone) {
          tok.byte_tokens_[static_cast<size_t>(byte)] = id;
        }
        tok.byte_of_token_[i] = static_cast<int16_t>(byte);
      }
      continue;
    }
    if (type == TokenType::kControl || type == TokenType::kUnknown) continue;
    if (bpe && type == TokenType::kUserDefined) continue;  // matched before encoding only
    const std::string& text = bpe ? tok.bpe_->raw[i] : v.tokens[i];
    if (bpe && !tok.bpe_->decodable[i]) continue;
    tok.by_text_.try_emplace(text, id);  // keeps the lowest id for duplicates
    if (text.size() > tok.max_token_bytes_) tok.max_token_bytes_ = text.size();
  }
  if (bpe) {
    // Byte fallback: the token whose (raw) text is the single byte.
    for (int b = 0; b < 256; ++b) {
      if (tok.byte_tokens_[static_cast<size_t>(b)] != kNone) continue;
      const auto it = tok.by_text_.find(std::string(1, static_cast<char>(b)));
      if (it != tok.by_text_.end()) tok.byte_tokens_[static_cast<size_t>(b)] = it->second;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (is_matched_special(tok.types_[i])) tok.special_order_.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(tok.special_order_.begin(), tok.special_order_.end(),
                   [&v](uint32_t a, uint32_t b) { return v.tokens[a].size() > v.tokens[b].size(); });
  return tok;
}

std::optional<uint32_t> Tokenizer::find(std::string_view text) const {
  const auto it = by_text_.find(text);
  if (it == by_text_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint32_t> Tokenizer::byte_token(uint8_t byte) const {
  const uint32_t id = byte_tokens_[byte];
  if (id == kNone) return std::nullopt;
  return id;
}

bool Tokenizer::is_end_of_generation(uint32_t id) const {
  return vocab_.end_of_generation.count(id) != 0;
}

Result<std::vector<uint32_t>> Tokenizer::encode(std::string_view text, bool add_bos,
                                                bool add_eos) const {
  FERRITE_ASSIGN_OR_RETURN(std::vector<uint32_t> body, tokenize(text, false, false));
  std::vector<uint32_t> ids;
  ids.reserve(body.size() + 2);
  if (add_bos && vocab_.bos_id != kNoToken) ids.push_back(vocab_.bos_id);
  ids.insert(ids.end(), body.begin(), body.end());
  if (add_eos && vocab_.eos_id != kNoToken) ids.push_back(vocab_.eos_id);
  return ids;
}

Result<std::vector<uint32_t>> Tokenizer::tokenize(std::string_view text, bool add_special,
                                                  bool parse_special) const {
  if (text.size() > kMaxEncodeBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "text of {} bytes exceeds the encode limit of {} bytes", text.size(),
                      kMaxEncodeBytes)
        .with_field("bytes", std::to_string(text.size()));
  }
  // Fragments: raw text (token == kNone) or a matched special token.
  struct Fragment {
    uint32_t token;
    size_t offset;
    size_t length;
  };
  std::vector<Fragment> fragments;
  if (!text.empty()) fragments.push_back(Fragment{kNone, 0, text.size()});
  std::vector<Fragment> next;
  for (const uint32_t special : special_order_) {
    const TokenType type = types_[special];
    if (!parse_special && type != TokenType::kUserDefined) continue;
    const std::string_view needle = vocab_.tokens[special];
    bool any = false;
    for (const Fragment& f : fragments) {
      if (f.token == kNone && text.substr(f.offset, f.length).find(needle) != std::string_view::npos) {
        any = true;
        break;
      }
    }
    if (!any) continue;
    next.clear();
    for (const Fragment& f : fragments) {
      if (f.token != kNone) {
        next.push_back(f);
        continue;
      }
      const std::string_view raw = text.substr(f.offset, f.length);
      size_t start = 0;
      while (start < raw.size()) {
        const size_t hit = raw.find(needle, start);
        if (hit == std::string_view::npos) break;
        if (hit > start) next.push_back(Fragment{kNone, f.offset + start, hit - start});
        next.push_back(Fragment{special, 0, 0});
        start = hit + needle.size();
      }
      if (start < raw.size()) next.push_back(Fragment{kNone, f.offset + start, raw.size() - start});
    }
    fragments.swap(next);
  }

  std::vector<uint32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  if (add_special && vocab_.add_bos && vocab_.bos_id != kNoToken) ids.push_back(vocab_.bos_id);
  const bool spm = vocab_.kind == VocabularyKind::kSentencePiece;
  bool previous_special = true;  // SentencePiece: prefix a space at the start
  std::string prefixed;
  for (const Fragment& f : fragments) {
    if (f.token != kNone) {
      ids.push_back(f.token);
      previous_special = true;
      continue;
    }
    const std::string_view raw = text.substr(f.offset, f.length);
    if (spm) {
      if (vocab_.add_space_prefix && previous_special) {
        prefixed.assign(1, ' ');
        prefixed.append(raw);
        FERRITE_RETURN_IF_ERROR(encode_spm(prefixed, ids));
      } else {
        FERRITE_RETURN_IF_ERROR(encode_spm(raw, ids));
      }
    } else {
      FERRITE_RETURN_IF_ERROR(encode_bpe(raw, ids));
    }
    previous_special = false;
  }
  if (add_special && vocab_.add_eos && vocab_.eos_id != kNoToken) ids.push_back(vocab_.eos_id);
  return ids;
}

Result<void> Tokenizer::encode_spm(std::string_view input, std::vector<uint32_t>& ids) const {
  // 1. Initial pieces: code points that are tokens, else byte fallback.
  std::vector<Piece> pieces;
  pieces.reserve(input.size());
  const auto append = [&pieces](uint32_t token, bool mergeable) {
    const auto index = static_cast<uint32_t>(pieces.size());
    pieces.push_back(Piece{token, index == 0 ? kNone : index - 1, kNone, mergeable});
    if (index > 0) pieces[index - 1].next = index;
  };
  for (size_t i = 0; i < input.size();) {
    const size_t len = utf8_piece_length(input, i);
    const std::string_view unit = input.substr(i, len);
    if (const auto it = by_text_.find(unit); it != by_text_.end()) {
      append(it->second, true);
    } else {
      for (const char c : unit) {
        const uint32_t id = byte_tokens_[static_cast<unsigned char>(c)];
        if (id != kNone) {
          append(id, false);
        } else if (vocab_.unk_id != kNoToken) {
          append(vocab_.unk_id, false);
        }
      }
    }
    i += len;
  }

  // 2. Merge the best adjacent pair until none applies.
  std::priority_queue<Candidate, std::vector<Candidate>, CandidateLess> heap;
  std::string pair;
  pair.reserve(max_token_bytes_);
  const auto consider = [&](uint32_t left) {
    if (left == kNone) return;
    const Piece& a = pieces[left];
    if (!a.mergeable || a.next == kNone) return;
    const Piece& b = pieces[a.next];
    if (!b.mergeable) return;
    const std::string& ta = vocab_.tokens[a.token];
    const std::string& tb = vocab_.tokens[b.token];
    if (ta.size() + tb.size() > max_token_bytes_) return;
    pair.assign(ta);
    pair.append(tb);
    const auto it = by_text_.find(pair);
    if (it == by_text_.end()) return;
    heap.push(Candidate{vocab_.scores[it->second], left, a.next, a.token, b.token, it->second});
  };
  for (uint32_t i = 0; i < pieces.size(); ++i) consider(i);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    Piece& a = pieces[top.left];
    // Stale if the pair is no longer adjacent or either side has changed since
    // (a piece's text only grows, so its token can never return to an old id).
    if (a.next != top.right || a.token != top.left_token) continue;
    Piece& b = pieces[top.right];
    if (b.token != top.right_token) continue;
    a.token = top.merged;
    a.next = b.next;
    if (b.next != kNone) pieces[b.next].prev = top.left;
    b.prev = kNone;
    b.next = kNone;
    b.mergeable = false;
    consider(a.prev);
    consider(top.left);
  }

  // 3. Read the list out.
  for (uint32_t i = pieces.empty() ? kNone : 0; i != kNone; i = pieces[i].next) {
    ids.push_back(pieces[i].token);
  }
  return {};
}

Result<std::string> Tokenizer::token_to_piece(uint32_t token, bool special) const {
  if (token >= vocab_.tokens.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "token id {} is out of range for a vocabulary of {}", token,
                      vocab_.tokens.size())
        .with_field("token_id", std::to_string(token));
  }
  const TokenType type = types_[token];
  switch (type) {
    case TokenType::kControl:
    case TokenType::kUnknown:
      return special ? vocab_.tokens[token] : std::string();
    case TokenType::kUserDefined:
      return vocab_.tokens[token];
    case TokenType::kByte:
      if (const int16_t byte = byte_of_token_[token]; byte >= 0) {
        return std::string(1, static_cast<char>(static_cast<unsigned char>(byte)));
      }
      return vocab_.tokens[token];
    case TokenType::kUnused:
      return std::string();
    default:
      break;
  }
  if (bpe_) return bpe_->raw[token];
  return vocab_.tokens[token];
}

Result<std::string> Tokenizer::decode_piece(uint32_t previous, uint32_t token, bool special) const {
  FERRITE_ASSIGN_OR_RETURN(std::string piece, token_to_piece(token, special));
  if (vocab_.kind == VocabularyKind::kSentencePiece && vocab_.add_space_prefix &&
      previous == vocab_.bos_id && !piece.empty() && piece.front() == ' ') {
    piece.erase(0, 1);
  }
  return piece;
}

Result<std::string> Tokenizer::decode(std::span<const uint32_t> ids, bool special) const {
  std::string out;
  uint32_t previous = kNoToken;
  for (const uint32_t id : ids) {
    FERRITE_ASSIGN_OR_RETURN(std::string piece, decode_piece(previous, id, special));
    out += piece;
    previous = id;
  }
  return out;
}

}  // namespace ferrite
