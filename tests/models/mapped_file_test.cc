#include "ferrite/models/mapped_file.h"

#include <gtest/gtest.h>

#include "models/model_test_util.h"

namespace ferrite {
namespace mapped_file_test {

using testing::fails_with;
using testing::TempDir;

TEST(MappedFileTest, MapsContentsAndSurvivesMoves) {
  TempDir dir;
  const auto path = dir.write_text("data.bin", "hello");
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  EXPECT_EQ(file->size(), 5u);
  EXPECT_EQ(file->path(), path);
  const std::byte* before = file->bytes().data();
  MappedFile moved = std::move(*file);
  EXPECT_EQ(moved.bytes().data(), before);
  EXPECT_EQ(static_cast<char>(moved.bytes()[4]), 'o');
  EXPECT_TRUE(file->bytes().empty());
  auto other = MappedFile::open(dir.write_text("other.bin", "xy"));
  ASSERT_TRUE(other);
  moved = std::move(*other);
  EXPECT_EQ(moved.size(), 2u);
}

TEST(MappedFileTest, EmptyFileMapsToAnEmptySpan) {
  TempDir dir;
  auto file = MappedFile::open(dir.write_text("empty.bin", ""));
  ASSERT_TRUE(file) << file.error().to_string();
  EXPECT_EQ(file->size(), 0u);
  EXPECT_TRUE(file->bytes().empty());
}

TEST(MappedFileTest, ReportsIoErrorsNamingThePath) {
  TempDir dir;
  EXPECT_TRUE(fails_with(MappedFile::open(dir.path() / "absent.bin"), ErrorCode::kIo,
                         "absent.bin`: open failed"));
  EXPECT_TRUE(fails_with(MappedFile::open(dir.path()), ErrorCode::kIo, "not a regular file"));
}

}  // namespace mapped_file_test
}  // namespace ferrite
