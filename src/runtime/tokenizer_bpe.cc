// Byte-level BPE: the GPT-2 byte table, the PCRE2 pre-tokenizers, merges by rank.
#include "runtime/tokenizer_bpe.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <queue>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <fmt/format.h>

namespace ferrite {
namespace {

constexpr uint32_t kNoIndex = std::numeric_limits<uint32_t>::max();

// PCRE2 limits per match: bound the time one match may take.
constexpr uint32_t kMatchLimit = 10'000'000;
constexpr uint32_t kDepthLimit = 100'000;

// GPT-2 table: printable Latin-1 bytes stand for themselves, the other 68
// bytes for U+0100 upwards in byte order.
bool byte_is_printable(unsigned b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct ByteTable {
  std::array<uint32_t, 256> code_point{};  // byte -> code point
  std::map<uint32_t, unsigned char> byte;  // code point -> byte
  ByteTable() {
    uint32_t extra = 0;
    for (unsigned b = 0; b < 256; ++b) {
      code_point[b] = byte_is_printable(b) ? b : 256 + extra++;
      byte[code_point[b]] = static_cast<unsigned char>(b);
    }
  }
};

const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Decodes one UTF-8 code point at text[i] (1..4 bytes); length 0 if malformed.
uint32_t next_code_point(std::string_view text, size_t i, size_t& length) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  size_t n = b0 < 0x80 ? 1 : (b0 >> 5) == 6 ? 2 : (b0 >> 4) == 14 ? 3 : (b0 >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > text.size()) {
    length = 0;
    return 0;
  }
  uint32_t cp = n == 1 ? b0 : n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) {
      length = 0;
      return 0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  length = n;
  return cp;
}

// The expressions of the pre-tokenizers (llama.cpp's names and splits; the
// regular expressions are those the models' tokenizer.json files state).
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct NamedSpec {
  const char* name;
  int group;
};

// Group ids: 0 llama3 (ignore merges), 1 llama3 regex with merges, 2 qwen2,
// 3 gpt-2, 4 starcoder, 5 falcon, 6 default, 7 deepseek-coder.
constexpr NamedSpec kNames[] = {
    {"llama3", 0},        {"llama-v3", 0},     {"llama-bpe", 0},    {"falcon3", 0},
    {"falcon-h1", 0},     {"pixtral", 0},      {"midm-2.0", 0},     {"lfm2", 0},
    {"dbrx", 1},          {"smaug-bpe", 1},    {"qwen2", 2},        {"deepseek-r1-qwen", 2},
    {"stablelm2", 2},     {"megrez", 2},       {"hunyuan", 2},      {"gpt-2", 3},
    {"phi-2", 3},         {"jina-es", 3},      {"jina-de", 3},      {"jina-v2-es", 3},
    {"jina-v2-de", 3},    {"jina-v1-en", 3},   {"jina-v2-code", 3}, {"roberta-bpe", 3},
    {"gigachat", 3},      {"mpt", 3},          {"olmo", 3},         {"jais", 3},
    {"exaone4", 3},       {"starcoder", 4},    {"refact", 4},       {"command-r", 4},
    {"smollm", 4},        {"codeshell", 4},    {"exaone", 4},       {"minerva-7b", 4},
    {"falcon", 5},        {"default", 6},      {"deepseek-coder", 7},
};

}  // namespace

std::string gpt2_byte_to_text(unsigned char byte) {
  std::string out;
  append_utf8(byte_table().code_point[byte], out);
  return out;
}

bool gpt2_text_to_bytes(std::string_view text, std::string& out) {
  const ByteTable& table = byte_table();
  bool all = true;
  for (size_t i = 0; i < text.size();) {
    size_t length = 0;
    const uint32_t cp = next_code_point(text, i, length);
    if (length == 0) {
      out.push_back(text[i]);
      all = false;
      ++i;
      continue;
    }
    const auto it = table.byte.find(cp);
    if (it == table.byte.end()) {
      out.append(text.substr(i, length));
      all = false;
    } else {
      out.push_back(static_cast<char>(it->second));
    }
    i += length;
  }
  return all;
}

std::optional<PreTokenizerSpec> pre_tokenizer_spec(std::string_view name) {
  const auto it = std::find_if(std::begin(kNames), std::end(kNames),
                               [&](const NamedSpec& s) { return name == s.name; });
  if (it == std::end(kNames)) return std::nullopt;
  PreTokenizerSpec spec;
  switch (it->group) {
    case 0: spec.patterns = {kLlama3}; spec.ignore_merges = true; break;
    case 1: spec.patterns = {kLlama3}; break;
    case 2: spec.patterns = {kQwen2}; break;
    case 3: spec.patterns = {kGpt2}; break;
    case 4: spec.patterns = {R"(\p{N})", kGpt2}; break;
    case 5: spec.patterns = {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}; break;
    case 6:
      spec.patterns = {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
      break;
    default:
      spec.patterns = {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)",
                       R"([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)", R"(\p{N})"};
      break;
  }
  return spec;
}

std::vector<std::string> pre_tokenizer_names() {
  std::vector<std::string> names;
  for (const NamedSpec& s : kNames) names.emplace_back(s.name);
  std::sort(names.begin(), names.end());
  return names;
}

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

Result<PreTokenizer> PreTokenizer::compile(const std::vector<std::string>& patterns) {
  PreTokenizer pre;
  for (const std::string& pattern : patterns) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error,
                                     &offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof message);
      return make_error(ErrorCode::kInvalidModelConfig,
                        "pre-tokenizer regular expression `{}` is invalid at offset {}: {}",
                        pattern, offset, reinterpret_cast<const char*>(message))
          .with_field("field", "pre");
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional: the interpreter works too
    auto compiled = std::make_unique<Compiled>();
    compiled->code = code;
    pre.compiled_.push_back(std::move(compiled));
  }
  return pre;
}

Result<void> PreTokenizer::split(std::string_view text,
                                 std::vector<std::pair<size_t, size_t>>& pieces) const {
  using Pieces = std::vector<std::pair<size_t, size_t>>;
  Pieces current{{0, text.size()}};
  Pieces next;
  struct Resources {
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    pcre2_match_data* data = nullptr;
    ~Resources() {
      pcre2_match_data_free(data);
      pcre2_jit_stack_free(stack);
      pcre2_match_context_free(context);
    }
  } r;
  if (r.context == nullptr) {
    return make_error(ErrorCode::kInvalidArgument, "cannot allocate a PCRE2 match context");
  }
  pcre2_set_match_limit(r.context, kMatchLimit);
  pcre2_set_depth_limit(r.context, kDepthLimit);
  if (r.stack != nullptr) pcre2_jit_stack_assign(r.context, nullptr, r.stack);
  for (const auto& compiled : compiled_) {
    pcre2_match_data_free(r.data);
    r.data = pcre2_match_data_create_from_pattern(compiled->code, nullptr);
    if (r.data == nullptr) {
      return make_error(ErrorCode::kInvalidArgument, "cannot allocate PCRE2 match data");
    }
    next.clear();
    for (const auto& [offset, length] : current) {
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + offset);
      size_t start = 0;
      size_t last = 0;  // end of the previous match
      while (start < length) {
        const int rc = pcre2_match(compiled->code, subject, length, start, 0, r.data, r.context);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
          PCRE2_UCHAR message[256];
          pcre2_get_error_message(rc, message, sizeof message);
          return make_error(ErrorCode::kInvalidArgument,
                            "pre-tokenizer match failed at byte {}: {}", offset + start,
                            reinterpret_cast<const char*>(message));
        }
        const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(r.data);
        const size_t begin = ovector[0];
        const size_t end = ovector[1];
        if (end <= begin) {  // an empty match: move on by one byte
          start = begin + 1;
          continue;
        }
        if (begin > last) next.emplace_back(offset + last, begin - last);
        next.emplace_back(offset + begin, end - begin);
        last = end;
        start = end;
      }
      if (last < length) next.emplace_back(offset + last, length - last);
    }
    current.swap(next);
  }
  pieces.insert(pieces.end(), current.begin(), current.end());
  return {};
}

void bpe_merge_key(std::string_view left, std::string_view right, std::string& key) {
  key.clear();
  const auto n = static_cast<uint32_t>(left.size());
  key.append(reinterpret_cast<const char*>(&n), sizeof n);
  key.append(left);
  key.append(right);
}

Result<std::unique_ptr<Tokenizer::Bpe>> build_bpe(Vocabulary& vocab,
                                                  const std::vector<TokenType>& types) {
  auto bpe = std::make_unique<Tokenizer::Bpe>();
  std::vector<std::string> patterns = vocab.pre_patterns;
  if (patterns.empty()) {
    const std::string name = vocab.pre.empty() ? "default" : vocab.pre;
    const auto spec = pre_tokenizer_spec(name);
    if (!spec) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer pre-tokenizer `{}` is not supported (known: {})", vocab.pre,
                        fmt::join(pre_tokenizer_names(), ", "))
          .with_field("field", "pre");
    }
    patterns = spec->patterns;
    vocab.ignore_merges = vocab.ignore_merges || spec->ignore_merges;
  }
  FERRITE_ASSIGN_OR_RETURN(bpe->pre, PreTokenizer::compile(patterns));
  const size_t n = vocab.tokens.size();
  bpe->raw.resize(n);
  bpe->decodable.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    const TokenType type = types[i];
    if (type == TokenType::kControl || type == TokenType::kUnknown ||
        type == TokenType::kUserDefined) {
      bpe->raw[i] = vocab.tokens[i];
      continue;
    }
    bpe->decodable[i] = gpt2_text_to_bytes(vocab.tokens[i], bpe->raw[i]);
  }
  bpe->ranks.reserve(vocab.merges.size());
  std::string left, right, key;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const auto& [a, b] = vocab.merges[rank];
    if (a.empty() || b.empty()) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tokenizer merge {} is invalid: it needs two non-empty texts", rank)
          .with_field("field", "merges");
    }
    left.clear();
    right.clear();
    gpt2_text_to_bytes(a, left);
    gpt2_text_to_bytes(b, right);
    bpe_merge_key(left, right, key);
    bpe->ranks.try_emplace(key, static_cast<uint32_t>(rank));  // the first rank wins
  }
  return bpe;
}

Result<void> Tokenizer::encode_bpe(std::string_view text, std::vector<uint32_t>& ids) const {
  std::vector<std::pair<size_t, size_t>> words;
  FERRITE_RETURN_IF_ERROR(bpe_->pre.split(text, words));
  struct Symbol {
    uint32_t start;
    uint32_t length;  // 0: merged away
    uint32_t prev;
    uint32_t next;
  };
  struct Bigram {
    uint32_t rank;
    uint32_t left;
    uint32_t right;
    uint32_t size;  // left + right length when pushed
  };
  struct BigramAfter {
    bool operator()(const Bigram& a, const Bigram& b) const {
      if (a.rank != b.rank) return a.rank > b.rank;
      return a.left > b.left;
    }
  };
  std::vector<Symbol> symbols;
  std::string key;
  for (const auto& [offset, length] : words) {
    const std::string_view word = text.substr(offset, length);
    if (vocab_.ignore_merges) {
      if (const auto it = by_text_.find(word); it != by_text_.end()) {
        ids.push_back(it->second);
        continue;
      }
    }
    symbols.clear();
    for (uint32_t i = 0; i < word.size(); ++i) {
      symbols.push_back(Symbol{i, 1, i == 0 ? kNoIndex : i - 1,
                               i + 1 == word.size() ? kNoIndex : i + 1});
    }
    std::priority_queue<Bigram, std::vector<Bigram>, BigramAfter> heap;
    const auto consider = [&](uint32_t left) {
      if (left == kNoIndex) return;
      const Symbol& a = symbols[left];
      if (a.next == kNoIndex) return;
      const Symbol& b = symbols[a.next];
      bpe_merge_key(word.substr(a.start, a.length), word.substr(b.start, b.length), key);
      const auto it = bpe_->ranks.find(key);
      if (it == bpe_->ranks.end()) return;
      heap.push(Bigram{it->second, left, a.next, a.length + b.length});
    };
    for (uint32_t i = 0; i + 1 < symbols.size(); ++i) consider(i);
    while (!heap.empty()) {
      const Bigram top = heap.top();
      heap.pop();
      Symbol& a = symbols[top.left];
      Symbol& b = symbols[top.right];
      // Stale unless both sides are alive, adjacent and of the pushed sizes
      // (a symbol's text is fixed by its start and length).
      if (a.length == 0 || b.length == 0 || a.next != top.right ||
          a.length + b.length != top.size) {
        continue;
      }
      a.length += b.length;
      b.length = 0;
      a.next = b.next;
      if (b.next != kNoIndex) symbols[b.next].prev = top.left;
      consider(a.prev);
      consider(top.left);
    }
    for (uint32_t i = symbols.empty() ? kNoIndex : 0; i != kNoIndex; i = symbols[i].next) {
      const std::string_view piece = word.substr(symbols[i].start, symbols[i].length);
      if (const auto it = by_text_.find(piece); it != by_text_.end()) {
        ids.push_back(it->second);
        continue;
      }
      for (const char c : piece) {
        const uint32_t id = byte_tokens_[static_cast<unsigned char>(c)];
        if (id != kNoIndex) ids.push_back(id);
      }
    }
  }
  return {};
}

}  // namespace ferrite
