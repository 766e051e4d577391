#include "ferrite/core/fingerprint.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ferrite {
namespace fingerprint_test {

using nlohmann::json;

constexpr const char* kEmptySha =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbcSha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

// ---- sha256_hex ------------------------------------------------------------

TEST(FingerprintTest, Sha256OfEmptyString) { EXPECT_EQ(sha256_hex(""), kEmptySha); }

TEST(FingerprintTest, Sha256OfAbc) { EXPECT_EQ(sha256_hex("abc"), kAbcSha); }

TEST(FingerprintTest, Sha256OfTwoBlockMessage) {
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(FingerprintTest, Sha256OfMillionAs) {
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(FingerprintTest, Sha256HashesEmbeddedNulBytes) {
  EXPECT_EQ(sha256_hex(std::string_view("\0", 1)),
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
  EXPECT_NE(sha256_hex(std::string_view("abc\0", 4)), kAbcSha);
}

TEST(FingerprintTest, Sha256OutputIsCanonical) {
  for (const char* text : {"", "abc", "ferrite", "\xff\xfe"}) {
    const std::string digest = sha256_hex(text);
    EXPECT_EQ(digest.size(), 64u);
    EXPECT_TRUE(is_canonical_sha256(digest)) << digest;
  }
}

// ---- canonical_json --------------------------------------------------------

TEST(FingerprintTest, CanonicalJsonSortsTopLevelKeys) {
  json value;
  value["b"] = 1;
  value["a"] = 2;
  EXPECT_EQ(canonical_json(value), R"({"a":2,"b":1})");
}

TEST(FingerprintTest, CanonicalJsonSortsKeysAtEveryDepth) {
  json value;
  value["z"]["y"] = 1;
  value["z"]["x"] = json::array({json{{"d", 1}, {"c", 2}}, 3});
  value["a"] = nullptr;
  value["m"] = json{{"q", json{{"s", true}, {"r", false}}}, {"p", "text"}};
  EXPECT_EQ(canonical_json(value),
            R"({"a":null,"m":{"p":"text","q":{"r":false,"s":true}},"z":{"x":[{"c":2,"d":1},3],"y":1}})");
}

TEST(FingerprintTest, CanonicalJsonSortsKeysByteWise) {
  json value;
  value["b"] = 0;
  value["a.b"] = 0;
  value["B"] = 0;
  value["a"] = 0;
  value["_"] = 0;
  value["ab"] = 0;
  EXPECT_EQ(canonical_json(value), R"({"B":0,"_":0,"a":0,"a.b":0,"ab":0,"b":0})");
}

TEST(FingerprintTest, CanonicalJsonIsCompactAndKeepsArrayOrder) {
  json value = json::array({3, 1, 2, json::array(), json::object(), "a b"});
  const std::string text = canonical_json(value);
  EXPECT_EQ(text, R"([3,1,2,[],{},"a b"])");
  EXPECT_EQ(text.find('\n'), std::string::npos);
}

TEST(FingerprintTest, CanonicalJsonEncodesIntegersExactly) {
  json value = json{{"max", std::numeric_limits<uint64_t>::max()},
                    {"min", std::numeric_limits<int64_t>::min()},
                    {"zero", 0}};
  EXPECT_EQ(canonical_json(value),
            R"({"max":18446744073709551615,"min":-9223372036854775808,"zero":0})");
}

TEST(FingerprintTest, CanonicalJsonKeepsUtf8AndEscapesControls) {
  json value = json{{"s", "caf\xc3\xa9"}, {"q", "a\"b\\c\n"}};
  EXPECT_EQ(canonical_json(value), "{\"q\":\"a\\\"b\\\\c\\n\",\"s\":\"caf\xc3\xa9\"}");
}

TEST(FingerprintTest, CanonicalJsonIgnoresInsertionOrder) {
  json first;
  first["k1"] = json{{"b", 1}, {"a", 2}};
  first["k0"] = 5;
  json second;
  second["k0"] = 5;
  second["k1"] = json{{"a", 2}, {"b", 1}};
  EXPECT_EQ(canonical_json(first), canonical_json(second));
  EXPECT_EQ(canonical_fingerprint(first), canonical_fingerprint(second));
}

// ---- canonical_fingerprint -------------------------------------------------

TEST(FingerprintTest, CanonicalFingerprintHashesTheCanonicalEncoding) {
  const json value = json{{"b", 1}, {"a", 2}};
  EXPECT_EQ(canonical_fingerprint(value), sha256_hex("{\"a\":2,\"b\":1}"));
  EXPECT_EQ(canonical_fingerprint(value),
            "d3626ac30a87e6f7a6428233b3c68299976865fa5508e4267c5415c76af7a772");
  EXPECT_EQ(canonical_fingerprint(json("abc")), sha256_hex("\"abc\""));
}

TEST(FingerprintTest, CanonicalFingerprintDistinguishesValues) {
  EXPECT_NE(canonical_fingerprint(json{{"a", 1}}), canonical_fingerprint(json{{"a", 2}}));
  EXPECT_NE(canonical_fingerprint(json{{"a", 1}}), canonical_fingerprint(json{{"a", "1"}}));
  EXPECT_NE(canonical_fingerprint(json::array({1, 2})), canonical_fingerprint(json::array({2, 1})));
}

// ---- is_canonical_sha256 ---------------------------------------------------

TEST(FingerprintTest, IsCanonicalSha256AcceptsLowercaseHex64) {
  EXPECT_TRUE(is_canonical_sha256(kEmptySha));
  EXPECT_TRUE(is_canonical_sha256(std::string(64, '0')));
  EXPECT_TRUE(is_canonical_sha256(std::string(64, 'f')));
  EXPECT_TRUE(is_canonical_sha256("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
}

TEST(FingerprintTest, IsCanonicalSha256RejectsUppercase) {
  std::string upper = kAbcSha;
  upper[0] = 'B';
  EXPECT_FALSE(is_canonical_sha256(upper));
  EXPECT_FALSE(is_canonical_sha256(std::string(64, 'A')));
  EXPECT_FALSE(is_canonical_sha256(std::string(64, 'F')));
}

// Every byte value at every one of the 64 positions (each 16-byte block and
// its edges): accepted exactly when it is 0-9 or a-f.
TEST(FingerprintTest, IsCanonicalSha256ChecksEveryByteAtEveryPosition) {
  const std::string good = kAbcSha;
  for (size_t at = 0; at < 64; ++at) {
    for (int byte = 0; byte < 256; ++byte) {
      std::string text = good;
      text[at] = static_cast<char>(byte);
      const bool hex = (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'f');
      ASSERT_EQ(is_canonical_sha256(text), hex) << "byte " << byte << " at " << at;
    }
  }
}

TEST(FingerprintTest, IsCanonicalSha256RejectsWrongLength) {
  const std::string good = kAbcSha;
  EXPECT_FALSE(is_canonical_sha256(good.substr(0, 63)));
  EXPECT_FALSE(is_canonical_sha256(good + "0"));
  EXPECT_FALSE(is_canonical_sha256(""));
  EXPECT_FALSE(is_canonical_sha256(good + good));
}

TEST(FingerprintTest, IsCanonicalSha256RejectsNonHex) {
  std::string bad = kAbcSha;
  for (char c : {'g', 'z', ' ', '-', 'x', '\0'}) {
    bad[10] = c;
    EXPECT_FALSE(is_canonical_sha256(bad)) << "char code " << static_cast<int>(c);
  }
  EXPECT_FALSE(is_canonical_sha256("sha256:" + std::string(kAbcSha).substr(7)));
}

}  // namespace fingerprint_test
}  // namespace ferrite
