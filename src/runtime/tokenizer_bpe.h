// runtime/tokenizer_bpe.h — byte-level BPE internals of the Tokenizer
// (private to the runtime stage).
//
// Contract:
//  * `gpt2_byte_to_text(b)` is the GPT-2 spelling of byte b (one code point,
//    UTF-8); `gpt2_text_to_bytes` maps a token spelling back, returning false
//    when a code point is not in the table (the text is then copied as is).
//  * `PreTokenizer` holds compiled PCRE2 expressions (UTF + UCP, invalid UTF-8
//    never matches); `split` applies them in order, each to every piece left
//    by the previous one, keeping the text between matches as pieces of their
//    own. PCRE2 match and depth limits bound the time; a hit limit is an error.
//  * `build_bpe` checks the pre-tokenizer and merges and fills a `Tokenizer::Bpe`.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferrite/runtime/tokenizer.h"

namespace ferrite {

std::string gpt2_byte_to_text(unsigned char byte);
bool gpt2_text_to_bytes(std::string_view text, std::string& out);

class PreTokenizer {
 public:
  // One compiled expression per pattern; kInvalidModelConfig naming a
  // pattern PCRE2 rejects.
  static Result<PreTokenizer> compile(const std::vector<std::string>& patterns);
  PreTokenizer() = default;  // no expressions: the text is one piece
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  // Appends the pieces of `text` as (offset, length) into `text`.
  Result<void> split(std::string_view text, std::vector<std::pair<size_t, size_t>>& pieces) const;

 private:
  struct Compiled;
  std::vector<std::unique_ptr<Compiled>> compiled_;
};

// The expressions (and ignore_merges) a pre-tokenizer name stands for.
struct PreTokenizerSpec {
  std::vector<std::string> patterns;
  bool ignore_merges = false;
};
std::optional<PreTokenizerSpec> pre_tokenizer_spec(std::string_view name);

struct Tokenizer::Bpe {
  PreTokenizer pre;
  std::vector<std::string> raw;   // by id: normal tokens' bytes (spelling mapped back)
  std::vector<bool> decodable;    // by id: the whole spelling was in the byte table
  // Merge rank by key (4-byte left length, left bytes, right bytes).
  std::unordered_map<std::string, uint32_t, std::hash<std::string>, std::equal_to<>> ranks;
};

Result<std::unique_ptr<Tokenizer::Bpe>> build_bpe(Vocabulary& vocab,
                                                  const std::vector<TokenType>& types);

// The key of the merge (left, right) in Bpe::ranks, written into `key`.
void bpe_merge_key(std::string_view left, std::string_view right, std::string& key);

}  // namespace ferrite
