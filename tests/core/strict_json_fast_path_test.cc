// The fast strict-JSON path against nlohmann's full reader: whatever the fast
// path accepts, the full reader accepts with the same document, the same
// streamed spans and the same owned scalar texts; it accepts Ferrite's plain
// shape whole; and it stays undecided on everything it does not decide.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/streamed_json_builder.h"
#include "core/strict_json_fast_path.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/core/streamed_json.h"

namespace ferrite {
namespace strict_json_fast_path_test {

// Writes random JSON text: objects, arrays, strings with every short escape,
// integers up to the extremes, literals, irregular whitespace. `clean` keeps
// keys unique per object (so the text violates nothing).
class RandomJson {
 public:
  RandomJson(uint32_t seed, bool clean) : rng_(seed), clean_(clean) {}

  std::string document() {
    std::string out;
    space(out);
    value(out, 0);
    space(out);
    return out;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void space(std::string& out) {
    static const char* const kSpaces[] = {"", "", "", " ", "\n", "\t", "\r\n  "};
    out += kSpaces[pick(7)];
  }

  void value(std::string& out, int depth) {
    const size_t kind = depth >= 5 ? 2 + pick(4) : pick(6);
    switch (kind) {
      case 0: object(out, depth); break;
      case 1: array(out, depth); break;
      case 2: string(out); break;
      case 3: integer(out); break;
      case 4: out += (pick(2) == 0 ? "true" : "false"); break;
      default: out += (pick(3) == 0 ? "null" : "17"); break;
    }
  }

  void object(std::string& out, int depth) {
    static const char* const kKeys[] = {"rows", "a", "nodes", "b", "x_1", "", "id", "c"};
    out += '{';
    const size_t members = pick(5);
    std::vector<std::string> used;
    for (size_t i = 0; i < members; ++i) {
      std::string key = kKeys[pick(8)];
      if (clean_) {
        bool seen = false;
        for (const auto& u : used) seen = seen || u == key;
        if (seen) key += "_" + std::to_string(i);
        used.push_back(key);
      }
      if (i > 0) out += ',';
      space(out);
      out += '"' + key + '"';
      space(out);
      out += ':';
      space(out);
      // "rows" and "a" lead to the streamed patterns' arrays more often.
      if ((key == "rows" || key == "a") && pick(2) == 0) {
        array(out, depth + 1);
      } else {
        value(out, depth + 1);
      }
      space(out);
    }
    out += '}';
  }

  void array(std::string& out, int depth) {
    out += '[';
    const size_t elements = pick(6);
    for (size_t i = 0; i < elements; ++i) {
      if (i > 0) out += ',';
      space(out);
      value(out, depth + 1);
      space(out);
    }
    out += ']';
  }

  void string(std::string& out) {
    static const char* const kPieces[] = {"a",   "Z",   "0",   " ",   "-",   "value.x", "\\\"",
                                          "\\\\", "\\/", "\\n", "\\t", "\\b",    "\\f",   "\\r",
                                          "~",   "\x7f"};
    out += '"';
    const size_t pieces = pick(6);
    for (size_t i = 0; i < pieces; ++i) out += kPieces[pick(16)];
    out += '"';
  }

  void integer(std::string& out) {
    static const char* const kExtremes[] = {"0",
                                            "-0",
                                            "18446744073709551615",
                                            "-9223372036854775808",
                                            "9223372036854775807",
                                            "-1",
                                            "4294967296"};
    if (pick(3) == 0) {
      out += kExtremes[pick(7)];
    } else {
      out += std::to_string(static_cast<int64_t>(rng_() % 2000000) - 1000000);
    }
  }

  std::mt19937 rng_;
  bool clean_;
};

const std::vector<JsonArrayPattern>& patterns() {
  static const std::vector<JsonArrayPattern> kPatterns{{{"rows"}}, {{"a", "[]", "rows"}},
                                                       {{"[]", "nodes"}}};
  return kPatterns;
}

// The document with its streamed arrays in place, as canonical text.
std::string written(const StreamedJson& streamed) {
  CanonicalText text;
  auto status = encode_canonical(text, streamed.document(), "$", streamed);
  EXPECT_TRUE(status.has_value());
  return text.release();
}

struct Verdict {
  bool fast_accepted = false;
  bool full_accepted = false;
};

// Both readers on `text`, with and without streamed arrays, building and
// checking; every fast acceptance must be the full reader's, same results.
Verdict compare(const std::string& text) {
  Verdict verdict;
  for (std::span<const JsonArrayPattern> streamed :
       {std::span<const JsonArrayPattern>(), std::span<const JsonArrayPattern>(patterns())}) {
    StreamedJson full;
    StreamedJsonBuilder full_builder(full);
    const bool full_ok = read_strict_json_with_nlohmann(text, streamed, &full_builder).has_value();
    StreamedJson fast;
    StreamedJsonBuilder fast_builder(fast);
    const bool fast_ok =
        read_strict_json_fast(text, json_memory_budget(text.size()), streamed, &fast_builder);
    const bool fast_checked =
        read_strict_json_fast(text, json_memory_budget(text.size()), streamed, nullptr);
    const bool full_checked = read_strict_json_with_nlohmann(text, streamed, nullptr).has_value();
    EXPECT_EQ(fast_ok, fast_checked) << text;
    EXPECT_EQ(full_ok, full_checked) << text;
    if (fast_ok) {
      EXPECT_TRUE(full_ok) << "accepted only by the fast path: " << text;
      if (full_ok) {
        EXPECT_EQ(fast.document(), full.document()) << text;
        EXPECT_EQ(fast.document().dump(), full.document().dump()) << text;
        EXPECT_EQ(fast.streamed_elements(), full.streamed_elements()) << text;
        EXPECT_EQ(written(fast), written(full)) << text;
      }
    }
    verdict.fast_accepted = fast_ok;
    verdict.full_accepted = full_ok;
  }
  return verdict;
}

TEST(StrictJsonFastPathTest, AcceptsCleanTextsWholeWithTheFullReadersDocuments) {
  for (uint32_t seed = 1; seed <= 1500; ++seed) {
    const std::string text = RandomJson(seed, /*clean=*/true).document();
    const Verdict verdict = compare(text);
    EXPECT_TRUE(verdict.full_accepted) << text;
    EXPECT_TRUE(verdict.fast_accepted) << "left undecided: " << text;
  }
}

TEST(StrictJsonFastPathTest, NeverAcceptsWhatTheFullReaderRejectsUnderMutation) {
  static const char kInserted[] = "{}[],:\"\\-0123456789.eE tfnu\x01\x80/";
  size_t rejected = 0;
  for (uint32_t seed = 1; seed <= 1500; ++seed) {
    std::mt19937 rng(seed * 7919u);
    std::string text = RandomJson(seed, /*clean=*/seed % 2 == 0).document();
    for (int mutation = 0; mutation < 4; ++mutation) {
      std::string mutated = text;
      if (!mutated.empty()) {
        const size_t at = rng() % mutated.size();
        switch (rng() % 3) {
          case 0: mutated.erase(at, 1); break;
          case 1: mutated.insert(at, 1, kInserted[rng() % (sizeof(kInserted) - 1)]); break;
          default: mutated[at] = kInserted[rng() % (sizeof(kInserted) - 1)]; break;
        }
      }
      const Verdict verdict = compare(mutated);
      if (!verdict.full_accepted) ++rejected;
      if (!verdict.full_accepted) EXPECT_FALSE(verdict.fast_accepted) << mutated;
    }
  }
  EXPECT_GT(rejected, 1000u);  // the mutations did break texts
}

TEST(StrictJsonFastPathTest, DecidesIntegersExactlyAndLeavesTheRestUndecided) {
  struct Case {
    const char* text;
    bool fast;
  };
  const Case cases[] = {
      {"0", true},
      {"-0", true},
      {"18446744073709551615", true},
      {"-9223372036854775808", true},
      {"18446744073709551616", false},  // a float to nlohmann: rejected with a message
      {"-9223372036854775809", false},
      {"1.0", false},
      {"1e3", false},
      {"01", false},
      {"-", false},
      {"\"\\u0041\"", false},
      {"\"caf\xc3\xa9\"", false},
      {"\xef\xbb\xbf{}", false},
      {"{\"a\\n\":1}", false},  // a key with an escape
      {"{\"a\":1,\"a\":2}", false},
      {"[1,2,]", false},
      {"{} x", false},
      {"", false},
      {"\"tab\there\"", false},
      {"[true,false,null,\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const Verdict verdict = compare(c.text);
    EXPECT_EQ(verdict.fast_accepted, c.fast);
  }
}

TEST(StrictJsonFastPathTest, FindsDuplicateKeysInElementsItDoesNotBuild) {
  // A streamed element is checked, not built: its keys are tracked apart,
  // in a list and past 16 keys in a set.
  for (size_t keys : {size_t{3}, size_t{16}, size_t{17}, size_t{40}}) {
    std::string element = "{";
    for (size_t k = 0; k < keys; ++k) element += "\"k" + std::to_string(k) + "\":" + std::to_string(k) + ",";
    std::string unique = element;
    unique.back() = '}';
    std::string duplicated = element + "\"k" + std::to_string(keys / 2) + "\":0}";
    EXPECT_TRUE(compare("{\"rows\":[" + unique + "," + unique + "]}").fast_accepted);
    const Verdict verdict = compare("{\"rows\":[" + unique + "," + duplicated + "]}");
    EXPECT_FALSE(verdict.full_accepted);
    EXPECT_FALSE(verdict.fast_accepted);
  }
}

TEST(StrictJsonFastPathTest, KeepsTheDepthCap) {
  auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(compare(nested(kMaxJsonDepth)).fast_accepted);
  const Verdict deeper = compare(nested(kMaxJsonDepth + 1));
  EXPECT_FALSE(deeper.full_accepted);
  EXPECT_FALSE(deeper.fast_accepted);
}

TEST(StrictJsonFastPathTest, ChargesTheBudgetAsTheFullReaderDoes) {
  // 40,000 short strings cost 48 B + length each in the estimate: the fast
  // path, given a budget one byte short of the charge, leaves the text
  // undecided; given exactly the charge, accepts it.
  std::string text = "[";
  for (int i = 0; i < 40000; ++i) text += i == 0 ? "\"ab\"" : ",\"ab\"";
  text += "]";
  const size_t charge = 64 + 40000 * (48 + 2);
  EXPECT_TRUE(read_strict_json_fast(text, charge, {}, nullptr));
  EXPECT_FALSE(read_strict_json_fast(text, charge - 1, {}, nullptr));
  // A streamed element's own charge is refunded to 16 B once it closes.
  std::string rows = "{\"rows\":[";
  for (int i = 0; i < 100; ++i) rows += i == 0 ? "[1,2]" : ",[1,2]";
  rows += "]}";
  // The peak: every earlier row refunded, the last one open (64 + 2 × 48).
  const size_t streamed_charge = 64 + (192 + 2 * 4) + 64 + 99 * 16 + (64 + 2 * 48);
  const JsonArrayPattern rows_pattern{{"rows"}};
  EXPECT_TRUE(read_strict_json_fast(rows, streamed_charge, {&rows_pattern, 1}, nullptr));
  EXPECT_FALSE(read_strict_json_fast(rows, streamed_charge - 1, {&rows_pattern, 1}, nullptr));
}

}  // namespace strict_json_fast_path_test
}  // namespace ferrite
