// core/strict_json_fast_path.h (internal to ferrite_core) — strict JSON read
// without nlohmann's lexer, for the common shape of Ferrite's own files.
//
// Contract: `read_strict_json_fast(text, budget, streamed, builder)` either
// accepts `text` — and then parse_json_text's nlohmann reader would accept it
// too, with every rule of json_reader.h (depth, duplicate keys, the parsed-size
// estimate charged event by event, integers only) — and fills `builder`
// exactly as that reader would (the same document, the same streamed element
// spans and owned scalar texts); or it returns false: *undecided*, `builder`
// possibly half filled (the caller resets it and runs the full reader from the
// start, which finds and words the first violation). It never reports an
// error of its own, so every message stays the full reader's.
//
// It decides only what it can decide exactly and leaves the rest undecided:
// any byte >= 0x80 (UTF-8 validation, byte order marks), `\u` escapes, keys
// with escapes, fractions and exponents (floats, rejected by the full reader
// with a message), integers out of u64/i64 range, any syntax error and any
// violation. Plan, program, catalog and policy files written by Ferrite are
// plain ASCII and take the fast path whole.
//
// `builder` null: check only (nothing is built or kept).
// Why: nlohmann's SAX reader with the strict handler reads about 130 MB/s
// here (a key set per object even when nothing is built); this reads a plan
// or program file about 5× faster (docs/performance.md, step 12).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "ferrite/core/status.h"
#include "ferrite/core/streamed_json.h"

namespace ferrite {

class StreamedJsonBuilder;

// The estimated cost of a streamed element once it is closed (its span).
inline constexpr size_t kStreamedElementCost = 16;

bool read_strict_json_fast(std::string_view text, size_t memory_budget,
                           std::span<const JsonArrayPattern> streamed,
                           StreamedJsonBuilder* builder);

// The full reader alone (json_reader.cc; the text cap is the caller's): what
// parse_strict_json_streamed does when the fast path is undecided, and the
// reference the fast path is tested against (every byte through nlohmann's
// lexer, the budget json_memory_budget(text.size())).
Result<void> read_strict_json_with_nlohmann(std::string_view text,
                                            std::span<const JsonArrayPattern> streamed,
                                            StreamedJsonBuilder* builder);

}  // namespace ferrite
