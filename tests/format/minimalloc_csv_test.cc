#include "ferrite/format/minimalloc_csv.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace ferrite {
namespace minimalloc_csv_test {

constexpr const char* kExample =
    "id,lower,upper,size\n"
    "b1,0,3,4\n"
    "b2,3,9,4\n"
    "b3,0,9,4\n"
    "b4,9,21,4\n"
    "b5,0,21,4\n";

// Parses `text`, expecting a kSerialization error whose message contains `needle`.
void expect_error(const std::string& text, const std::string& needle) {
  auto parsed = parse_minimalloc_csv(text);
  ASSERT_FALSE(parsed) << "accepted: " << text;
  EXPECT_EQ(parsed.error().code(), ErrorCode::kSerialization);
  EXPECT_NE(parsed.error().message().find(needle), std::string::npos)
      << parsed.error().message() << " lacks " << needle;
}

TEST(MinimallocCsvTest, ParsesRowsIdsAndLines) {
  auto parsed = parse_minimalloc_csv(kExample);
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  ASSERT_EQ(parsed->buffers.size(), 5u);
  EXPECT_EQ(parsed->ids, (std::vector<std::string>{"b1", "b2", "b3", "b4", "b5"}));
  EXPECT_EQ(parsed->lines, (std::vector<size_t>{2, 3, 4, 5, 6}));
  EXPECT_EQ(parsed->buffers[3], (PackingBuffer{.id = 3, .lower = 9, .upper = 21, .size = 4}));
  EXPECT_FALSE(parsed->offsets.has_value());
}

TEST(MinimallocCsvTest, AcceptsOffsetColumnCrlfAndMissingFinalNewline) {
  auto parsed = parse_minimalloc_csv(
      "id,lower,upper,size,offset\r\n7,0,1,5,10\r\n8,1,18446744073709551615,1,0");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  ASSERT_TRUE(parsed->offsets.has_value());
  EXPECT_EQ(*parsed->offsets, (std::vector<uint64_t>{10, 0}));
  EXPECT_EQ(parsed->buffers[1].upper, UINT64_MAX);
}

TEST(MinimallocCsvTest, HeaderOnlyIsAnEmptyInstance) {
  auto parsed = parse_minimalloc_csv("id,lower,upper,size\n");
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->buffers.empty());
}

TEST(MinimallocCsvTest, RejectsMalformedTextNamingTheLine) {
  expect_error("", "line 1: empty file");
  expect_error("id,lower,upper\n", "line 1: the header must be");
  expect_error("a,0,1,1\n", "line 1: the header must be");
  expect_error("id,lower,upper,size\n\n", "line 2: blank line");
  expect_error("id,lower,upper,size\na,0,1,1\nb,0,1\n", "line 3: 3 fields, the header has 4");
  expect_error("id,lower,upper,size\na,0,1,1,5\n", "line 2: 5 fields");
  expect_error("id,lower,upper,size\na,0,x,1\n", "line 2: column `upper`: `x` is not a decimal");
  expect_error("id,lower,upper,size\na,-1,2,1\n", "column `lower`");
  expect_error("id,lower,upper,size\na, 0,2,1\n", "column `lower`");
  expect_error("id,lower,upper,size\na,00,2,1\n", "leading zero");
  expect_error("id,lower,upper,size\na,0,18446744073709551616,1\n", "exceeds 2^64 - 1");
  expect_error("id,lower,upper,size\na,0,2,\n", "column `size` is empty");
  expect_error("id,lower,upper,size\na,2,2,1\n",
               "line 2: buffer `a`: lower 2 must be below upper 2");
  expect_error("id,lower,upper,size\na,0,2,0\n", "line 2: buffer `a`: size must be positive");
  expect_error("id,lower,upper,size\na,0,2,1\na,3,4,1\n", "line 3: duplicate id `a`");
  expect_error("id,lower,upper,size\na b,0,2,1\n", "outside [A-Za-z0-9_.-]");
  expect_error("id,lower,upper,size\n,0,2,1\n", "the id must have 1 to 128 characters");
  expect_error("id,lower,upper,size\na,0,1,1\rb,0,1,1\n", "stray carriage return");
  expect_error("id,lower,upper,size\na,0,1,18446744073709551615\nb,0,1,1\n",
               "line 3: buffer `b`: the sum of sizes overflows u64");
}

TEST(MinimallocCsvTest, ErrorsCarryLineAndIdFields) {
  auto parsed = parse_minimalloc_csv("id,lower,upper,size\nx1,5,4,1\n");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().fields().at("line"), "2");
  EXPECT_EQ(parsed.error().fields().at("id"), "x1");
}

TEST(MinimallocCsvTest, WriterRoundTripsWithOffsets) {
  auto parsed = parse_minimalloc_csv(kExample);
  ASSERT_TRUE(parsed);
  const std::vector<uint64_t> offsets = {0, 4, 8, 0, 12};
  auto text = write_minimalloc_csv(*parsed, offsets);
  ASSERT_TRUE(text);
  EXPECT_EQ(text->substr(0, 36), "id,lower,upper,size,offset\nb1,0,3,4,");
  auto again = parse_minimalloc_csv(*text);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->buffers, parsed->buffers);
  EXPECT_EQ(again->ids, parsed->ids);
  EXPECT_EQ(*again->offsets, offsets);
  EXPECT_FALSE(write_minimalloc_csv(*parsed, std::vector<uint64_t>{1, 2}));
}

TEST(MinimallocCsvTest, MissingFileIsAnIoError) {
  auto read = read_minimalloc_csv("/nonexistent/ferrite/instance.csv");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), ErrorCode::kIo);
}

TEST(MinimallocCsvTest, ReadsTheBundledExampleWhenPresent) {
  const std::filesystem::path path =
      std::filesystem::path(FERRITE_SOURCE_DIR "/../shared/bench/minimalloc") / "example.12.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not available";
  auto read = read_minimalloc_csv(path);
  ASSERT_TRUE(read) << read.error().to_string();
  EXPECT_EQ(read->buffers.size(), 5u);
  EXPECT_EQ(read->ids.front(), "b1");
}

}  // namespace minimalloc_csv_test
}  // namespace ferrite
