#include "ferrite/runtime/tokenizer.h"

#include <cmath>
#include <limits>
#include <queue>
#include <utility>

#include <fmt/format.h>

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

Result<Tokenizer> Tokenizer::create(Vocabulary vocab) {
  const size_t n = vocab.tokens.size();
  if (n == 0) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "tokenizer vocabulary field `tokens` is invalid: the vocabulary is empty")
        .with_field("field", "tokens");
  }
  if (n > Vocabulary::kMaxTokens) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "tokenizer vocabulary field `tokens` is invalid: {} tokens exceed the limit "
                      "of {}",
                      n, Vocabulary::kMaxTokens)
        .with_field("field", "tokens");
  }
  if (vocab.scores.size() != n) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "tokenizer vocabulary field `scores` is invalid: {} scores for {} tokens",
                      vocab.scores.size(), n)
        .with_field("field", "scores");
  }
  const std::pair<const char*, uint32_t> specials[] = {
      {"bos_id", vocab.bos_id}, {"eos_id", vocab.eos_id}, {"unk_id", vocab.unk_id}};
  for (const auto& [name, id] : specials) {
    if (id >= n) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer vocabulary field `{}` is invalid: id {} is out of range for {} "
                        "tokens",
                        name, id, n)
          .with_field("field", name);
    }
  }
  for (size_t id = 0; id < n; ++id) {
    if (vocab.tokens[id].empty()) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer vocabulary token {} is invalid: its text is empty", id)
          .with_field("field", "tokens")
          .with_field("token_id", id);
    }
    if (!std::isfinite(vocab.scores[id])) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer vocabulary token {} is invalid: score {} is not finite", id,
                        vocab.scores[id])
          .with_field("field", "scores")
          .with_field("token_id", id);
    }
  }

  Tokenizer tok;
  tok.vocab_ = std::move(vocab);
  const Vocabulary& v = tok.vocab_;
  tok.byte_tokens_.fill(kNone);
  tok.byte_of_token_.assign(n, -1);
  tok.by_text_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<uint32_t>(i);
    if (id == v.bos_id || id == v.eos_id || id == v.unk_id) continue;
    const std::string& text = v.tokens[i];
    if (const int byte = byte_token_value(text); byte >= 0) {
      if (tok.byte_tokens_[static_cast<size_t>(byte)] == kNone) {
        tok.byte_tokens_[static_cast<size_t>(byte)] = id;
      }
      tok.byte_of_token_[i] = static_cast<int16_t>(byte);
      continue;
    }
    tok.by_text_.try_emplace(text, id);  // keeps the lowest id for duplicates
    if (text.size() > tok.max_token_bytes_) tok.max_token_bytes_ = text.size();
  }
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

Result<std::vector<uint32_t>> Tokenizer::encode(std::string_view text, bool add_bos,
                                                bool add_eos) const {
  if (text.size() > kMaxEncodeBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "text of {} bytes exceeds the encode limit of {} bytes", text.size(),
                      kMaxEncodeBytes)
        .with_field("bytes", std::to_string(text.size()));
  }
  std::string prefixed;
  if (!text.empty()) {
    prefixed.reserve(text.size() + 1);
    prefixed.push_back(' ');
    prefixed.append(text);
  }
  const std::string_view input = prefixed;

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
        append(id == kNone ? vocab_.unk_id : id, false);
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
  std::vector<uint32_t> ids;
  ids.reserve(pieces.size() + 2);
  if (add_bos) ids.push_back(vocab_.bos_id);
  for (uint32_t i = pieces.empty() ? kNone : 0; i != kNone; i = pieces[i].next) {
    ids.push_back(pieces[i].token);
  }
  if (add_eos) ids.push_back(vocab_.eos_id);
  return ids;
}

Result<std::string> Tokenizer::decode_piece(uint32_t previous, uint32_t token) const {
  if (token >= vocab_.tokens.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "token id {} is out of range for a vocabulary of {}", token,
                      vocab_.tokens.size())
        .with_field("token_id", std::to_string(token));
  }
  std::string piece;
  if (token == vocab_.bos_id || token == vocab_.eos_id) {
    return piece;
  }
  if (const int16_t byte = byte_of_token_[token]; byte >= 0) {
    piece.push_back(static_cast<char>(static_cast<unsigned char>(byte)));
  } else {
    piece = vocab_.tokens[token];
  }
  if (previous == vocab_.bos_id && !piece.empty() && piece.front() == ' ') piece.erase(0, 1);
  return piece;
}

Result<std::string> Tokenizer::decode(std::span<const uint32_t> ids) const {
  std::string out;
  uint32_t previous = kNoToken;
  for (const uint32_t id : ids) {
    FERRITE_ASSIGN_OR_RETURN(std::string piece, decode_piece(previous, id));
    out += piece;
    previous = id;
  }
  return out;
}

}  // namespace ferrite
