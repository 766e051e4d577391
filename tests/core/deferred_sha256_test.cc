#include "ferrite/core/deferred_sha256.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace deferred_sha256_test {

// Writes `text`, counting how often it is asked to and whether it was released.
class CountingSource : public DeferredSha256::Source {
 public:
  CountingSource(std::string text, std::atomic<int>* writes, std::atomic<int>* releases)
      : text_(std::move(text)), writes_(writes), releases_(releases) {}

 protected:
  void write(CanonicalSha256& out) const override {
    writes_->fetch_add(1);
    out.update(text_);
  }
  void release() override {
    releases_->fetch_add(1);
    text_.clear();
  }

 private:
  std::string text_;
  std::atomic<int>* writes_;
  std::atomic<int>* releases_;
};

TEST(DeferredSha256Test, CopiesShareOneDigestComputedOnTheFirstReadOnly) {
  std::atomic<int> writes{0}, releases{0};
  DeferredSha256 digest =
      DeferredSha256::of(std::make_shared<CountingSource>("hello", &writes, &releases));
  DeferredSha256 copy = digest;
  EXPECT_FALSE(digest.computed());
  EXPECT_TRUE(digest.is_canonical_sha256());  // by construction, not by hashing
  EXPECT_TRUE(copy == digest);                 // the same source: equal unhashed
  EXPECT_EQ(writes.load(), 0);
  EXPECT_EQ(copy.hex(), sha256_hex("hello"));
  EXPECT_TRUE(digest.computed());
  EXPECT_EQ(digest.hex(), sha256_hex("hello"));
  EXPECT_EQ(writes.load(), 1);
  EXPECT_EQ(releases.load(), 1);
}

TEST(DeferredSha256Test, DifferentSourcesCompareByTheirDigests) {
  std::atomic<int> writes{0}, releases{0};
  auto a = DeferredSha256::of(std::make_shared<CountingSource>("same", &writes, &releases));
  auto b = DeferredSha256::of(std::make_shared<CountingSource>("same", &writes, &releases));
  auto c = DeferredSha256::of(std::make_shared<CountingSource>("other", &writes, &releases));
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_TRUE(a == DeferredSha256(sha256_hex("same")));
  EXPECT_TRUE(a == std::string_view(sha256_hex("same")));
  EXPECT_FALSE(c == DeferredSha256("forged"));
  EXPECT_EQ(writes.load(), 3);  // each computed once, however often compared
}

TEST(DeferredSha256Test, GivenTextIsCheckedAndEmptyIsNoDigest) {
  EXPECT_TRUE(DeferredSha256(sha256_hex("x")).is_canonical_sha256());
  EXPECT_TRUE(DeferredSha256(sha256_hex("x")).computed());
  EXPECT_FALSE(DeferredSha256("not-a-sha").is_canonical_sha256());
  EXPECT_EQ(DeferredSha256("not-a-sha").hex(), "not-a-sha");
  DeferredSha256 empty;
  EXPECT_EQ(empty.hex(), "");
  EXPECT_FALSE(empty.is_canonical_sha256());
  EXPECT_TRUE(empty == DeferredSha256());
  EXPECT_TRUE(empty == DeferredSha256(""));  // no digest equals the empty text
}

TEST(DeferredSha256Test, ManyThreadsReadingAtOnceComputeItOnce) {
  std::atomic<int> writes{0}, releases{0};
  auto digest = DeferredSha256::of(
      std::make_shared<CountingSource>(std::string(1 << 16, 'z'), &writes, &releases));
  std::vector<std::thread> readers;
  std::vector<std::string> seen(8);
  for (size_t i = 0; i < seen.size(); ++i) {
    readers.emplace_back([&, i] { seen[i] = DeferredSha256(digest).hex(); });
  }
  for (auto& reader : readers) reader.join();
  for (const auto& hex : seen) EXPECT_EQ(hex, sha256_hex(std::string(1 << 16, 'z')));
  EXPECT_EQ(writes.load(), 1);
  EXPECT_EQ(releases.load(), 1);
}

}  // namespace deferred_sha256_test
}  // namespace ferrite
