// fuzz/streamed_json_fuzzer.cc — differential: parse_strict_json_streamed
// (ferrite/core/streamed_json.h) against parse_strict_json on the same text.
// Both must accept or refuse alike (with the same message, unless the whole
// document alone ran over the parsed-size cap); when both accept, the
// streamed document's canonical encoding must equal the whole document's,
// every streamed element must parse on its own, and check_strict_json_streamed
// must agree. And the fast path (core/strict_json_fast_path.h) against the
// full reader alone: whatever the fast path accepts, nlohmann's reader must
// accept with the same document and spans. Any disagreement traps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/streamed_json_builder.h"
#include "core/strict_json_fast_path.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/core/streamed_json.h"
#include "fuzz_support.h"

namespace {

const std::vector<ferrite::JsonArrayPattern>& patterns() {
  static const std::vector<ferrite::JsonArrayPattern> all{
      {{"payload", "nodes"}}, {{"a"}}, {{"[]"}}, {{"a", "[]", "b"}}, {{"payload", "memory", "x"}}};
  return all;
}

// The fast path never accepts what the full reader refuses, and builds what
// it builds.
void check_fast_path(std::string_view text) {
  if (text.size() > ferrite::kMaxJsonTextBytes) return;
  ferrite::StreamedJson fast;
  ferrite::StreamedJsonBuilder fast_builder(fast);
  if (!ferrite::read_strict_json_fast(text, ferrite::json_memory_budget(text.size()), patterns(),
                                      &fast_builder)) {
    return;
  }
  ferrite::StreamedJson full;
  ferrite::StreamedJsonBuilder full_builder(full);
  if (!ferrite::read_strict_json_with_nlohmann(text, patterns(), &full_builder)) __builtin_trap();
  if (fast.document() != full.document()) __builtin_trap();
  if (fast.streamed_elements() != full.streamed_elements()) __builtin_trap();
  ferrite::CanonicalText a, b;
  if (!ferrite::encode_canonical(a, fast.document(), "$", fast)) __builtin_trap();
  if (!ferrite::encode_canonical(b, full.document(), "$", full)) __builtin_trap();
  if (a.text() != b.text()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto text = ferrite_fuzz::as_text(data, size);
  check_fast_path(text);
  auto whole = ferrite::parse_strict_json(text);
  auto streamed = ferrite::parse_strict_json_streamed(text, ferrite::kMaxJsonTextBytes, patterns());
  auto checked = ferrite::check_strict_json_streamed(text, ferrite::kMaxJsonTextBytes, patterns());
  if (static_cast<bool>(streamed) != static_cast<bool>(checked)) __builtin_trap();
  if (!streamed) {
    if (whole) __builtin_trap();  // streaming never refuses what the whole parse reads
    if (streamed.error().message() != whole.error().message()) __builtin_trap();
    if (checked.error().message() != streamed.error().message()) __builtin_trap();
    return 0;
  }
  if (!whole) {
    // Only the parsed-size cap may refuse the whole tree of a streamable text.
    if (whole.error().message().find("in memory") == std::string::npos) __builtin_trap();
    return 0;
  }
  ferrite::CanonicalText encoded;
  if (!ferrite::encode_canonical(encoded, streamed->document(), "$", *streamed)) __builtin_trap();
  if (encoded.text() != ferrite::canonical_json(*whole)) __builtin_trap();
  return 0;
}
