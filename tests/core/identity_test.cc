#include "ferrite/core/identity.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/core/identity_hash_map.h"

namespace ferrite {
namespace identity_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

void expect_invalid(const Result<NodeId>& result, std::string_view reason) {
  ASSERT_FALSE(result) << "unexpectedly valid: " << result->str();
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidIdentity);
  EXPECT_THAT(result.error().message(), StartsWith("node identity `"));
  EXPECT_THAT(result.error().message(), HasSubstr(std::string(reason)));
  EXPECT_EQ(result.error().fields().at("kind"), "node");
}

// Independent statement of the rule: ASCII alphanumeric or one of `. _ - : /`.
bool allowed_byte(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  return c == '.' || c == '_' || c == '-' || c == ':' || c == '/';
}

// ---- validity --------------------------------------------------------------

TEST(IdentityTest, AcceptsATypicalIdentity) {
  auto id = NodeId::create("layer.0.attn");
  ASSERT_TRUE(id) << id.error().to_string();
  EXPECT_EQ(id->str(), "layer.0.attn");
  EXPECT_EQ(id->view(), "layer.0.attn");
}

TEST(IdentityTest, RejectsEmpty) {
  auto id = NodeId::create("");
  expect_invalid(id, "must not be empty");
  EXPECT_EQ(id.error().message(), "node identity `` must not be empty");
  EXPECT_EQ(id.error().fields().at("reason"), "must not be empty");
}

TEST(IdentityTest, AcceptsSingleByte) {
  EXPECT_TRUE(NodeId::create("a"));
  EXPECT_TRUE(NodeId::create("0"));
  EXPECT_TRUE(NodeId::create("/"));
}

TEST(IdentityTest, Accepts160Bytes) {
  ASSERT_EQ(kMaxIdentityBytes, 160u);
  auto id = NodeId::create(std::string(160, 'a'));
  ASSERT_TRUE(id) << id.error().to_string();
  EXPECT_EQ(id->str().size(), 160u);
}

TEST(IdentityTest, Rejects161Bytes) {
  auto id = NodeId::create(std::string(161, 'a'));
  expect_invalid(id, "exceeds 160 bytes");
  EXPECT_EQ(id.error().fields().at("reason"), "exceeds 160 bytes");
  // The echoed value is cut to keep the message readable.
  EXPECT_THAT(id.error().message(), HasSubstr(std::string(64, 'a') + "...`"));
  EXPECT_THAT(id.error().message(), ::testing::Not(HasSubstr(std::string(65, 'a'))));
}

TEST(IdentityTest, LengthIsCountedInBytesNotCharacters) {
  // 81 two-byte UTF-8 characters are 162 bytes: the length rule fires first.
  std::string two_byte;
  for (int i = 0; i < 81; ++i) two_byte += "\xc3\xa9";
  expect_invalid(NodeId::create(two_byte), "exceeds 160 bytes");
}

TEST(IdentityTest, AcceptsEveryAllowedPunctuation) {
  for (char c : std::string(".", 1) + "_-:/") {
    std::string value = std::string("a") + c + "b";
    auto id = NodeId::create(value);
    EXPECT_TRUE(id) << "`" << value << "`: " << id.error().to_string();
    auto alone = NodeId::create(std::string(1, c));
    EXPECT_TRUE(alone) << "`" << c << "` alone";
  }
}

TEST(IdentityTest, AcceptsEveryAsciiAlphanumeric) {
  std::string all;
  for (char c = 'a'; c <= 'z'; ++c) all.push_back(c);
  for (char c = 'A'; c <= 'Z'; ++c) all.push_back(c);
  for (char c = '0'; c <= '9'; ++c) all.push_back(c);
  auto id = NodeId::create(all);
  ASSERT_TRUE(id) << id.error().to_string();
  EXPECT_EQ(id->str(), all);
}

TEST(IdentityTest, RejectsSpace) {
  auto id = NodeId::create("layer 0");
  expect_invalid(id, "contains a non-portable character");
  EXPECT_EQ(id.error().message(), "node identity `layer 0` contains a non-portable character");
  expect_invalid(NodeId::create(" "), "non-portable character");
  expect_invalid(NodeId::create("a "), "non-portable character");
}

TEST(IdentityTest, RejectsNonAsciiByte) {
  auto id = NodeId::create("caf\xc3\xa9");
  expect_invalid(id, "contains a non-portable character");
  // Non-printable bytes are escaped in the message.
  EXPECT_THAT(id.error().message(), HasSubstr("caf\\xc3\\xa9"));
  expect_invalid(NodeId::create(std::string(1, '\x80')), "non-portable character");
  expect_invalid(NodeId::create(std::string(1, '\xff')), "non-portable character");
}

TEST(IdentityTest, RejectsNulByte) {
  auto id = NodeId::create(std::string("a\0b", 3));
  expect_invalid(id, "contains a non-portable character");
  EXPECT_THAT(id.error().message(), HasSubstr("a\\x00b"));
  expect_invalid(NodeId::create(std::string(1, '\0')), "non-portable character");
}

TEST(IdentityTest, EscapesBacktickInMessage) {
  auto id = NodeId::create("a`b");
  expect_invalid(id, "non-portable character");
  EXPECT_THAT(id.error().message(), HasSubstr("a\\x60b"));
}

TEST(IdentityTest, EveryByteValueFollowsThePortableRule) {
  for (int b = 0; b < 256; ++b) {
    const auto c = static_cast<unsigned char>(b);
    std::string value = "x";
    value.push_back(static_cast<char>(c));
    auto id = NodeId::create(value);
    EXPECT_EQ(static_cast<bool>(id), allowed_byte(c)) << "byte 0x" << std::hex << b;
    if (!id) {
      EXPECT_EQ(id.error().code(), ErrorCode::kInvalidIdentity);
    }
  }
}

// ---- kinds -----------------------------------------------------------------

TEST(IdentityTest, MessageNamesTheKind) {
  auto op = OperationId::create("");
  ASSERT_FALSE(op);
  EXPECT_THAT(op.error().message(), StartsWith("operation identity `"));
  EXPECT_EQ(op.error().fields().at("kind"), "operation");

  auto attr = AttributeId::create("bad id");
  ASSERT_FALSE(attr);
  EXPECT_THAT(attr.error().message(), StartsWith("operation attribute identity `bad id`"));
  EXPECT_EQ(attr.error().fields().at("kind"), "operation attribute");

  auto policy = PolicyId::create("p!");
  ASSERT_FALSE(policy);
  EXPECT_THAT(policy.error().message(), StartsWith("runtime policy identity `p!`"));

  auto family = ModelFamilyId::create(std::string(200, 'f'));
  ASSERT_FALSE(family);
  EXPECT_THAT(family.error().message(), StartsWith("model family identity `"));
  EXPECT_THAT(family.error().message(), HasSubstr("exceeds 160 bytes"));
}

TEST(IdentityTest, KindAccessorMatchesTag) {
  EXPECT_EQ(NodeId::kind(), "node");
  EXPECT_EQ(CapabilityId::kind(), "capability");
  EXPECT_EQ(DeviceId::kind(), "device");
  EXPECT_EQ(ModelFamilyId::kind(), "model family");
  EXPECT_EQ(OperationId::kind(), "operation");
  EXPECT_EQ(PlanId::kind(), "plan");
  EXPECT_EQ(ProgramValueId::kind(), "program value");
  EXPECT_EQ(ProviderId::kind(), "provider");
  EXPECT_EQ(QuantizationFormatId::kind(), "quantization format");
  EXPECT_EQ(ResourceId::kind(), "resource");
  EXPECT_EQ(StateId::kind(), "state");
  EXPECT_EQ(TensorId::kind(), "tensor");
  EXPECT_EQ(WeightId::kind(), "weight");
  EXPECT_EQ(WeightFormatId::kind(), "weight format");
  EXPECT_EQ(WeightLayoutId::kind(), "weight layout");
  EXPECT_EQ(WeightMaterializerId::kind(), "weight materializer");
  EXPECT_EQ(AttributeId::kind(), "operation attribute");
  EXPECT_EQ(PolicyId::kind(), "runtime policy");
}

TEST(IdentityTest, ValidateIdentityUsesTheGivenKind) {
  EXPECT_TRUE(validate_identity("custom", "ok.value"));
  auto bad = validate_identity("custom thing", "no way");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidIdentity);
  EXPECT_EQ(bad.error().message(), "custom thing identity `no way` contains a non-portable character");
  EXPECT_EQ(bad.error().fields().at("kind"), "custom thing");
}

TEST(IdentityTest, ResourceIdAcceptsSlashSeparatedPaths) {
  auto id = ResourceId::create(
      "resource/weight-arena/sha256/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_TRUE(id) << id.error().to_string();
}

// ---- literal ---------------------------------------------------------------

TEST(IdentityTest, LiteralBuildsValidIdentity) {
  auto op = OperationId::literal("operation.rms_norm");
  EXPECT_EQ(op.str(), "operation.rms_norm");
  EXPECT_EQ(op, *OperationId::create("operation.rms_norm"));
}

TEST(IdentityTest, LiteralAbortsOnInvalidValue) {
  EXPECT_DEATH((void)NodeId::literal("not valid"), "invalid identity literal");
}

// ---- ordering --------------------------------------------------------------

TEST(IdentityTest, OrdersByteWise) {
  EXPECT_LT(NodeId::literal("B"), NodeId::literal("a"));  // 0x42 < 0x61
  EXPECT_LT(NodeId::literal("a"), NodeId::literal("a.b"));  // prefix first
  EXPECT_LT(NodeId::literal("Z"), NodeId::literal("_"));    // 0x5a < 0x5f
  EXPECT_LT(NodeId::literal("_"), NodeId::literal("a"));    // 0x5f < 0x61
  EXPECT_LT(NodeId::literal("a.b"), NodeId::literal("a/b"));
  EXPECT_LT(NodeId::literal("a10"), NodeId::literal("a9"));  // not numeric-aware
  EXPECT_GT(NodeId::literal("b"), NodeId::literal("a.z"));
}

TEST(IdentityTest, SetIteratesInByteOrder) {
  std::set<NodeId> ids;
  for (const char* v : {"a", "-", ".", "/", "0", ":", "A", "_", "a.b", "B", "z"}) {
    ids.insert(NodeId::literal(v));
  }
  std::vector<std::string> order;
  for (const auto& id : ids) order.emplace_back(id.str());
  const std::vector<std::string> expected = {"-", ".", "/", "0", ":", "A", "B",
                                             "_", "a", "a.b", "z"};
  EXPECT_EQ(order, expected);
  EXPECT_TRUE(std::is_sorted(expected.begin(), expected.end()));
}

// Long texts (beyond std::string's inline buffer) sharing long prefixes,
// differing only near the end, and prefixes of one another: the order of
// identities is their texts' byte order, whichever texts are alive.
TEST(IdentityTest, LongIdentitiesOrderLikeTheirTexts) {
  std::vector<std::string> texts;
  for (int i = 0; i < 300; ++i) {
    texts.push_back("value.chain." + std::to_string(i * 7919 % 1000) + ".out");
    texts.push_back("resource/activation/sha256/" + std::to_string(i * 104729 % 100003));
  }
  texts.push_back("value.chain.1");
  texts.push_back("value.chain.1.out.more");
  std::set<NodeId> ids;
  for (const auto& text : texts) ids.insert(*NodeId::create(text));
  std::set<std::string> expected(texts.begin(), texts.end());
  ASSERT_EQ(ids.size(), expected.size());
  auto it = expected.begin();
  for (const NodeId& id : ids) {
    EXPECT_EQ(id.str(), *it);
    EXPECT_EQ(id.view(), *it);
    ++it;
  }
  const std::vector<NodeId> sorted(ids.begin(), ids.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    EXPECT_LT(sorted[i - 1], sorted[i]) << sorted[i - 1].str() << " " << sorted[i].str();
    EXPECT_GT(sorted[i], sorted[i - 1]);
  }
}

// Every byte value at the first, a middle and the last position of a long
// identity: valid exactly when it is an ASCII letter, digit or `. _ - : /`.
TEST(IdentityTest, EveryByteValueAtEveryPlaceIsCheckedAgainstThePortableSet) {
  const std::string base(kMaxIdentityBytes, 'a');
  for (size_t at : {size_t{0}, size_t{1}, kMaxIdentityBytes / 2, kMaxIdentityBytes - 1}) {
    for (int byte = 0; byte < 256; ++byte) {
      std::string text = base;
      text[at] = static_cast<char>(byte);
      const bool portable = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                            (byte >= '0' && byte <= '9') || byte == '.' || byte == '_' ||
                            byte == '-' || byte == ':' || byte == '/';
      ASSERT_EQ(NodeId::create(text).has_value(), portable) << "byte " << byte << " at " << at;
    }
  }
}

// Identities are interned: equal texts share one string (across kinds too),
// copies share it, a moved-from identity holds the empty text, and order
// stays the texts' byte-wise order.
TEST(IdentityTest, EqualTextsShareOneInternedString) {
  NodeId a = NodeId::literal("intern.a");
  const NodeId b = *NodeId::create("intern.a");
  const ProviderId p = ProviderId::literal("intern.a");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.str().data(), b.str().data());
  EXPECT_EQ(a.str().data(), p.str().data());
  const NodeId copy = a;
  EXPECT_EQ(copy.str().data(), a.str().data());
  NodeId moved = std::move(a);
  EXPECT_EQ(moved, b);
  EXPECT_EQ(a.str(), "");  // NOLINT(bugprone-use-after-move): the documented state
  a = b;
  EXPECT_EQ(a, b);
  const NodeId& same = a;
  a = same;  // self-assignment keeps the text
  EXPECT_EQ(a.str(), "intern.a");
  EXPECT_LT(NodeId::literal("intern.a"), NodeId::literal("intern.b"));
  EXPECT_NE(NodeId::literal("intern.a"), NodeId::literal("intern.b"));
}

// str() views the interned bytes themselves (one allocation per text, no
// copy), c_str() is the same bytes NUL-terminated, and the view stays valid
// while any copy of the identity lives, whatever happened to the original.
TEST(IdentityTest, TextIsAViewOfTheInternedBytesNulTerminated) {
  const std::string text(kMaxIdentityBytes, 'q');
  std::optional<ResourceId> original = *ResourceId::create(text);
  const ResourceId copy = *original;
  const std::string_view view = copy.str();
  EXPECT_EQ(view, text);
  EXPECT_EQ(copy.c_str(), view.data());
  EXPECT_EQ(std::strlen(copy.c_str()), text.size());
  EXPECT_EQ(view.data(), original->str().data());
  original.reset();  // the copy keeps the text alive
  EXPECT_EQ(std::string(copy.c_str()), text);
  EXPECT_EQ(copy.view(), text);
  const NodeId moved_from = [] {
    NodeId a = NodeId::literal("view.a");
    NodeId b = std::move(a);
    return a;  // NOLINT(bugprone-use-after-move): the documented empty state
  }();
  EXPECT_EQ(moved_from.str(), "");
  EXPECT_EQ(moved_from.c_str()[0], '\0');
}

// A look-up table keyed by identities hashes their interned text's address:
// an identity made anew from the same text finds the entry, a different text
// (even one with the same bytes in another order) does not, and a text
// released and interned again still finds entries keyed by a live holder.
TEST(IdentityTest, AddressHashFindsEqualIdentitiesOnly) {
  IdentityHashMap<NodeId, int> table;
  for (int i = 0; i < 1000; ++i) {
    table.emplace(*NodeId::create("hash.node." + std::to_string(i)), i);
  }
  ASSERT_EQ(table.size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    const NodeId probe = *NodeId::create("hash.node." + std::to_string(i));
    auto found = table.find(probe);
    ASSERT_NE(found, table.end()) << probe.str();
    EXPECT_EQ(probe.address_hash(), found->first.address_hash());
    EXPECT_EQ(found->second, i);
  }
  EXPECT_EQ(table.count(NodeId::literal("hash.node.1000")), 0u);
  EXPECT_EQ(table.count(NodeId::literal("hash.edon.1")), 0u);
  EXPECT_NE(NodeId::literal("hash.node.1").address_hash(),
            NodeId::literal("hash.node.2").address_hash());
  // Identities of different kinds with one text share it, so hash alike.
  EXPECT_EQ(NodeId::literal("hash.node.7").address_hash(),
            ProviderId::literal("hash.node.7").address_hash());
}

// Threads creating, copying and dropping the same few texts at once: every
// identity keeps its text (an entry freed while held, or a text interned
// twice, shows here, and as a use-after-free under AddressSanitizer).
TEST(IdentityTest, InterningIsSafeAcrossThreads) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < kRounds; ++i) {
        const std::string text = "stress." + std::to_string((i * 7 + t) % 16);
        const NodeId first = *NodeId::create(text);
        NodeId second = *NodeId::create(text);
        const NodeId copy = second;
        second = NodeId::literal("stress.other");
        if (first != copy || first.str().data() != copy.str().data() || first.str() != text ||
            second.str() != "stress.other") {
          ++failures[static_cast<size_t>(t)];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
}

TEST(IdentityTest, EqualityComparesValue) {
  EXPECT_EQ(NodeId::literal("n"), NodeId::literal("n"));
  EXPECT_NE(NodeId::literal("n"), NodeId::literal("N"));
  EXPECT_EQ(NodeId::literal("n") <=> NodeId::literal("n"), std::strong_ordering::equal);
}

}  // namespace identity_test
}  // namespace ferrite
