#include "ferrite/core/identity_sort.h"

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace ferrite {
namespace {

using Item = std::pair<ResourceId, int>;
const ResourceId& id_of(const Item& item) { return item.first; }

// The texts std::sort by identity would order, built to stress the 32-byte
// words: shared prefixes longer than 32 bytes (ties broken by the whole
// text), texts that are prefixes of others, texts that end inside a word,
// bytes on both sides of every word boundary, and the identity alphabet's
// extremes ('-' is the smallest portable byte, 'z' the largest).
std::vector<std::string> tricky_texts() {
  const std::string shared = "resource/activation/sha256/0123456789abcdef";  // 43 bytes
  std::vector<std::string> out = {shared,
                                  shared + "0",
                                  shared + "-",
                                  shared + "z",
                                  shared.substr(0, 32),
                                  shared.substr(0, 31),
                                  shared.substr(0, 33),
                                  shared.substr(0, 8),
                                  shared.substr(0, 7),
                                  shared.substr(0, 9),
                                  "a",
                                  "z",
                                  "-",
                                  "resource/weight-arena/sha256/ff",
                                  "resource/activation/sha256/0123456789abcdee"};
  for (size_t boundary : {7u, 8u, 15u, 16u, 24u, 31u, 32u}) {
    std::string low = shared, high = shared;
    low[boundary] = '-';
    high[boundary] = 'z';
    out.push_back(low);
    out.push_back(high);
  }
  std::mt19937 rng(7);
  const std::string alphabet = "-./0123456789:ABCXYZ_abcxyz";
  for (int i = 0; i < 300; ++i) {
    std::string text = i % 2 == 0 ? shared.substr(0, rng() % 44) : std::string();
    const size_t extra = 1 + rng() % 40;
    for (size_t k = 0; k < extra; ++k) text.push_back(alphabet[rng() % alphabet.size()]);
    out.push_back(text);
  }
  return out;
}

// Sorted by identity exactly as std::sort by identity sorts, whatever the
// starting order; each item keeps its payload.
TEST(IdentitySortTest, OrdersAsTheIdentitiesByteWiseOrder) {
  const std::vector<std::string> texts = tricky_texts();
  std::vector<Item> items;
  for (size_t i = 0; i < texts.size(); ++i) {
    items.emplace_back(*ResourceId::create(texts[i]), static_cast<int>(i));
  }
  std::mt19937 rng(11);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(items.begin(), items.end(), rng);
    std::vector<Item> expected = items;
    std::stable_sort(expected.begin(), expected.end(),
                     [](const Item& a, const Item& b) { return a.first < b.first; });
    std::vector<Item> got = items;
    sort_by_identity(got, id_of);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, expected[i].first) << "position " << i;
      // The payload travels with its identity (texts are distinct but for
      // the duplicates tricky_texts may draw; compare by text then).
      EXPECT_EQ(got[i].first.str(), texts[static_cast<size_t>(got[i].second)]);
    }
  }
}

// Equal identities end up adjacent; nothing is lost or made up.
TEST(IdentitySortTest, KeepsEveryItemOfEqualIdentities) {
  std::vector<Item> items;
  for (int i = 0; i < 50; ++i) {
    items.emplace_back(ResourceId::literal(i % 3 == 0 ? "resource/b" : "resource/a"), i);
  }
  sort_by_identity(items, id_of);
  ASSERT_EQ(items.size(), 50u);
  const auto first_b = std::find_if(items.begin(), items.end(), [](const Item& item) {
    return item.first.str() == "resource/b";
  });
  EXPECT_EQ(first_b - items.begin(), 33);
  EXPECT_TRUE(std::all_of(first_b, items.end(),
                          [](const Item& item) { return item.first.str() == "resource/b"; }));
  std::vector<int> payloads;
  for (const Item& item : items) payloads.push_back(item.second);
  std::sort(payloads.begin(), payloads.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(payloads[static_cast<size_t>(i)], i);
  std::vector<Item> none;
  sort_by_identity(none, id_of);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace ferrite
