#include "ferrite/core/canonical_encoder.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"
#include "ferrite/core/identity.h"

namespace ferrite {
namespace canonical_encoder_test {

using nlohmann::json;

// The reference: the canonical form as it was first defined, nlohmann's dump.
std::string reference_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string streamed_text(const json& value) {
  CanonicalText out;
  out.json(value);
  return out.text();
}

// Strings that exercise every escaping rule: each single byte, quotes and
// backslashes, control characters, DEL, valid multi-byte UTF-8 and invalid
// UTF-8 (lone continuation bytes, truncated and overlong sequences).
std::vector<std::string> tricky_strings() {
  std::vector<std::string> out{"",
                               "plain",
                               "quote\"inside",
                               "back\\slash",
                               "\b\f\n\r\t",
                               std::string("nul\0byte", 8),
                               "\x01\x1f\x7f",
                               "caf\xc3\xa9",
                               "\xe2\x82\xac euro",
                               "\xf0\x9f\x98\x80 emoji",
                               "\x80 lone continuation",
                               "\xc3 truncated",
                               "\xe2\x82 truncated three",
                               "\xc0\xaf overlong",
                               "\xed\xa0\x80 surrogate",
                               "\xff\xfe",
                               "mixed \"\\\n\xc3\xa9\x01 end"};
  for (int c = 0; c < 256; ++c) out.push_back(std::string(1, static_cast<char>(c)));
  return out;
}

json random_document(std::mt19937_64& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 0 ? 9 : 6);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 12);
  auto random_string = [&] {
    std::string s;
    const int n = length(rng);
    for (int i = 0; i < n; ++i) {
      // Mostly printable ASCII, sometimes anything.
      const int b = byte(rng);
      s.push_back(static_cast<char>(b < 200 ? 0x20 + b % 95 : b));
    }
    return s;
  };
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return byte(rng) % 2 == 0;
    case 2:
      return static_cast<uint64_t>(rng());
    case 3:
      return static_cast<int64_t>(rng());
    case 4:
      return static_cast<uint64_t>(byte(rng));
    case 5:
      return -static_cast<int64_t>(byte(rng));
    case 6:
      return random_string();
    case 7:
    case 8: {
      json object = json::object();
      const int n = length(rng);
      for (int i = 0; i < n; ++i) object[random_string()] = random_document(rng, depth - 1);
      return object;
    }
    default: {
      json array = json::array();
      const int n = length(rng);
      for (int i = 0; i < n; ++i) array.push_back(random_document(rng, depth - 1));
      return array;
    }
  }
}

TEST(CanonicalEncoderTest, StringsAreEscapedExactlyAsTheReference) {
  for (const std::string& s : tricky_strings()) {
    EXPECT_EQ(streamed_text(json(s)), reference_text(json(s))) << json(s).dump(-1, ' ', true,
                                                                  json::error_handler_t::replace);
    // As an object key too.
    const json object{{s, 1}};
    EXPECT_EQ(streamed_text(object), reference_text(object));
  }
}

// The clean-prefix scan reads sixteen bytes at a time (eight below sixteen),
// and the last block overlapping the one before it: every byte value at every
// position of every length up to three blocks is found, in a string and in a
// key after another member (the comma and colon are written with the key).
TEST(CanonicalEncoderTest, EveryByteAtEveryPositionIsEscapedAsTheReference) {
  for (size_t length = 1; length <= 40; ++length) {
    for (int byte = 0; byte < 256; ++byte) {
      for (size_t position = 0; position < length; ++position) {
        std::string s(length, 'a');
        s[position] = static_cast<char>(byte);
        ASSERT_EQ(streamed_text(json(s)), reference_text(json(s)))
            << "byte " << byte << " at " << position << " of " << length;
        if (byte == '"' || byte == '\\' || byte == '\n' || byte == 0x01 || byte == 0x7f ||
            byte == 0xc3 || byte == 0xff) {
          const json object{{"", 0}, {s, 1}};
          ASSERT_EQ(streamed_text(object), reference_text(object))
              << "key: byte " << byte << " at " << position << " of " << length;
        }
      }
    }
  }
}

// A default string_view has a null data pointer: as a key, a string or an
// empty canonical value it writes what an empty std::string would (and, under
// UBSan, never hands memcpy the null pointer).
TEST(CanonicalEncoderTest, EmptyViewsWithoutDataAreEmptyStrings) {
  CanonicalText out;
  out.begin_object();
  out.key_text(std::string_view());
  out.string(std::string_view());
  out.key("x");
  out.begin_array();
  out.canonical_value(std::string_view());
  out.end_array();
  out.end_object();
  EXPECT_EQ(out.text(), R"({"":"","x":[]})");
}

TEST(CanonicalEncoderTest, NumbersAndLiteralsMatchTheReference) {
  const json values[] = {0,
                         1,
                         -1,
                         std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max(),
                         std::numeric_limits<uint64_t>::max(),
                         uint64_t{1} << 63,
                         true,
                         false,
                         nullptr,
                         json::array(),
                         json::object(),
                         1.5,
                         -0.25};
  for (const json& v : values) EXPECT_EQ(streamed_text(v), reference_text(v)) << reference_text(v);
}

TEST(CanonicalEncoderTest, RandomDocumentsMatchTheReferenceTextAndDigest) {
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 400; ++i) {
    const json document = random_document(rng, 4);
    const std::string reference = reference_text(document);
    ASSERT_EQ(streamed_text(document), reference);
    EXPECT_EQ(canonical_json(document), reference);
    EXPECT_EQ(canonical_fingerprint(document), sha256_hex(reference));
    CanonicalSha256 hash;
    hash.json(document);
    EXPECT_EQ(hash.size(), reference.size());
    EXPECT_EQ(hash.hex(), sha256_hex(reference));
  }
}

TEST(CanonicalEncoderTest, LargeDocumentsCrossTheFlushBoundary) {
  json big = json::array();
  for (int i = 0; i < 5000; ++i) big.push_back(json{{"index", i}, {"name", "value \"" + std::to_string(i)}});
  const std::string reference = reference_text(big);
  ASSERT_GT(reference.size(), 8192u * 4);
  CanonicalSha256 hash;
  hash.json(big);
  EXPECT_EQ(hash.size(), reference.size());
  EXPECT_EQ(hash.hex(), sha256_hex(reference));
  // The same object hashes the next document from scratch.
  hash.json(json{{"a", 1}});
  EXPECT_EQ(hash.hex(), sha256_hex(R"({"a":1})"));
}

// One object hashes many documents: each digest starts from scratch,
// whether the one before was finished (hex) or abandoned midway (reset,
// after bytes already reached the digest), and a fresh object agrees.
TEST(CanonicalEncoderTest, EachDigestStartsFromScratchFinishedOrAbandoned) {
  const std::string big(3 * 8192 + 17, 'x');  // past the flush size: hashed before hex()
  CanonicalSha256 hash;
  for (int round = 0; round < 3; ++round) {
    hash.update("abc");
    EXPECT_EQ(hash.hex(), sha256_hex("abc"));
    hash.string(big);
    hash.update(big);
    hash.reset();  // abandoned with bytes in the digest
    hash.update("abc");
    EXPECT_EQ(hash.hex(), sha256_hex("abc"));
    EXPECT_EQ(hash.hex(), sha256_hex(""));
    hash.json(json{{"a", round}});
    EXPECT_EQ(hash.hex(), sha256_hex(R"({"a":)" + std::to_string(round) + "}"));
  }
  CanonicalSha256 fresh;
  EXPECT_EQ(fresh.hex(), sha256_hex(""));
}

// append_hex writes hex()'s 64 digits after what the buffer holds, and
// resets the digest as hex() does.
TEST(CanonicalEncoderTest, AppendHexAppendsTheDigestAndResets) {
  CanonicalSha256 hash;
  std::string out = "resource/x/sha256/";
  hash.update("material");
  hash.append_hex(out);
  EXPECT_EQ(out, "resource/x/sha256/" + sha256_hex("material"));
  hash.update("other");
  std::string again = out;
  hash.append_hex(again);
  EXPECT_EQ(again, out + sha256_hex("other"));
  hash.json(json{{"a", 1}});
  EXPECT_EQ(hash.hex(), sha256_hex(R"({"a":1})"));
}

// A reserved text grows within its reservation in steps (never moving) and
// past it by doubling; either way it writes the reference's bytes.
TEST(CanonicalEncoderTest, ReservedTextsWriteTheSameBytesWithinAndPastTheReservation) {
  json big = json::array();
  for (int i = 0; i < 5000; ++i) big.push_back(json{{"index", i}, {"name", "value " + std::to_string(i)}});
  const std::string reference = reference_text(big);
  ASSERT_GT(reference.size(), size_t{128} * 1024);  // several reserved steps
  CanonicalText within;
  within.reserve(4 * reference.size());
  within.json(big);
  const std::string kept = within.release();
  EXPECT_EQ(kept, reference);
  EXPECT_GE(kept.capacity(), 4 * reference.size());  // the reserved buffer, not a new one
  CanonicalText past;
  past.reserve(1024);
  past.json(big);
  EXPECT_EQ(past.text(), reference);
}

TEST(CanonicalEncoderTest, HandWrittenCallsEqualTheDocumentTheyDescribe) {
  const json document{{"a", json::array({1, "x", nullptr, json::object()})},
                      {"b", json{{"c", -3}, {"d", true}}},
                      {"e", json::array()}};
  CanonicalText out;
  out.begin_object();
  out.key("a");
  out.begin_array();
  out.unsigned_integer(1);
  out.string("x");
  out.null();
  out.begin_object();
  out.end_object();
  out.end_array();
  out.key("b");
  out.begin_object();
  out.key("c");
  out.integer(-3);
  out.key("d");
  out.boolean(true);
  out.end_object();
  out.key("e");
  out.begin_array();
  out.end_array();
  out.end_object();
  EXPECT_EQ(out.text(), reference_text(document));
}

// Literal keys (written without an escape scan) give the bytes and the
// digest run-time keys give: the first member and the later ones (commas),
// nested objects, an empty key, and enough members to cross the hashing
// encoder's flush boundary.
TEST(CanonicalEncoderTest, LiteralKeysWriteWhatRunTimeKeysWrite) {
  auto describe = [](CanonicalEncoder& out, bool literal) {
    auto key = [&](LiteralKey name) {
      if (literal) {
        out.key(name);
      } else {
        out.key_text(std::string(name.text()));
      }
    };
    out.begin_object();
    key("");
    out.begin_object();
    key("inner");
    out.unsigned_integer(1);
    key("later");
    out.begin_array();
    out.end_array();
    out.end_object();
    for (int i = 0; i < 2000; ++i) {
      key("member:with/portable.bytes_and-more");
      out.integer(-i);
    }
    key("zz ~ last");
    out.string("x");
    out.end_object();
  };
  CanonicalText literal_text, run_time_text;
  describe(literal_text, true);
  describe(run_time_text, false);
  EXPECT_EQ(literal_text.text(), run_time_text.text());
  EXPECT_EQ(literal_text.text().substr(0, 31), R"({"":{"inner":1,"later":[]},"mem)");
  CanonicalSha256 literal_hash, run_time_hash;
  describe(literal_hash, true);
  describe(run_time_hash, false);
  const std::string digest = literal_hash.hex();
  EXPECT_EQ(digest, run_time_hash.hex());
  EXPECT_EQ(digest, sha256_hex(run_time_text.text()));
}

// Identities are written without an escape scan: the bytes are those of
// their text as a string, a moved-from (empty) identity included.
TEST(CanonicalEncoderTest, IdentitiesWriteWhatTheirTextWrites) {
  const std::vector<ResourceId> ids{ResourceId::literal("resource/weights/arena/f32:0"),
                                    ResourceId::literal("a"),
                                    ResourceId::literal("Z.y_x-w:v/u0123456789")};
  ResourceId moved = ResourceId::literal("resource.moved");
  const ResourceId taken = std::move(moved);
  CanonicalText typed, text;
  for (CanonicalText* out : {&typed, &text}) out->begin_array();
  for (const ResourceId& id : ids) {
    typed.string(id);
    text.string(id.str());
  }
  typed.string(moved);  // NOLINT(bugprone-use-after-move): its empty text
  text.string(moved.str());
  for (CanonicalText* out : {&typed, &text}) out->end_array();
  EXPECT_EQ(typed.text(), text.text());
  EXPECT_EQ(typed.text(),
            R"(["resource/weights/arena/f32:0","a","Z.y_x-w:v/u0123456789",""])");
  EXPECT_EQ(taken.str(), "resource.moved");
}

TEST(CanonicalEncoderTest, WithoutMemberEqualsTheDocumentWithTheMemberErased) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    json document = random_document(rng, 3);
    if (!document.is_object()) document = json{{"x", document}};
    document["plan_id"] = "anything";
    json erased = document;
    erased.erase("plan_id");
    CanonicalText out;
    out.json_without_member(document, "plan_id");
    EXPECT_EQ(out.text(), reference_text(erased));
  }
}

TEST(CanonicalEncoderTest, ResetDiscardsAPartialDocument) {
  CanonicalSha256 hash;
  hash.begin_object();
  hash.key("partial");
  for (int i = 0; i < 3000; ++i) hash.string("flush me");  // past a flush
  hash.reset();
  hash.json(json{{"b", 2}});
  EXPECT_EQ(hash.hex(), sha256_hex(R"({"b":2})"));
}

TEST(CanonicalEncoderTest, Sha256OfRawBytesIsTheStandardDigest) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(std::string(100000, 'a')), sha256_hex(std::string(100000, 'a')));
}

}  // namespace canonical_encoder_test
}  // namespace ferrite
