// write_file_atomically (format/atomic_file.h): the whole file or none, and
// a commit hook that can refuse the file after its bytes are written.
#include "ferrite/format/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace ferrite {
namespace atomic_file_test {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ferrite-atomic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Every entry of the directory (the temporary files included).
  size_t entries() const {
    return static_cast<size_t>(
        std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, WritesThePartsAsOneFile) {
  const fs::path out = dir_ / "plan.json";
  ASSERT_TRUE(write_file_atomically(out, {"{\"a\":1}", "\n"}));
  EXPECT_EQ(read(out), "{\"a\":1}\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, ARefusedCommitLeavesNoFileAndReturnsItsError) {
  const fs::path out = dir_ / "plan.json";
  bool asked = false;
  auto written = write_file_atomically(out, {"text"}, [&]() -> Result<void> {
    asked = true;
    EXPECT_EQ(entries(), 1u);  // the temporary file, written and flushed
    return make_error(ErrorCode::kInvalidExecutionPlan, "refused by the check");
  });
  ASSERT_FALSE(written);
  EXPECT_TRUE(asked);
  EXPECT_EQ(written.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_EQ(written.error().message(), "refused by the check");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(entries(), 0u);  // the temporary file removed
}

TEST_F(AtomicFileTest, ARefusedCommitKeepsTheOldFile) {
  const fs::path out = dir_ / "plan.json";
  ASSERT_TRUE(write_file_atomically(out, {"old"}));
  auto written = write_file_atomically(out, {"new"}, [] {
    return Result<void>(make_error(ErrorCode::kIo, "no"));
  });
  ASSERT_FALSE(written);
  EXPECT_EQ(read(out), "old");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, AnAcceptedCommitReplacesTheFile) {
  const fs::path out = dir_ / "plan.json";
  ASSERT_TRUE(write_file_atomically(out, {"old"}));
  ASSERT_TRUE(write_file_atomically(out, {"new", "\n"}, [] { return Result<void>(); }));
  EXPECT_EQ(read(out), "new\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, TheCommitIsNotAskedWhenWritingFails) {
  bool asked = false;
  auto written = write_file_atomically(dir_ / "missing" / "plan.json", {"text"}, [&] {
    asked = true;
    return Result<void>();
  });
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code(), ErrorCode::kIo);
  EXPECT_FALSE(asked);
}

}  // namespace atomic_file_test
}  // namespace ferrite
