// Progress bars: drawn in place on a terminal (a pseudo-terminal made by
// util-linux `script`), absent from pipes, files and string streams.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/progress.h"
#include "support/cli_invoke.h"

namespace ferrite::cli {
namespace progress_test {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

TEST(ProgressBar, DrawsInPlaceOnlyWhenThePercentChangesAndErasesItself) {
  std::ostringstream out;
  {
    ProgressBar bar(&out, "loading weights", 1000);
    for (int i = 0; i < 100; ++i) bar.advance(5);  // 0..50%, in 0.5% steps
    bar.advance(10'000);                            // clamped at 100%
  }
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("\rloading weights [---"));
  EXPECT_THAT(text, HasSubstr(" 50%  500 B / 1000 B"));
  EXPECT_THAT(text, HasSubstr("[##############################] 100%  1000 B / 1000 B"));
  // 0%, 1%, ..., 50%, then 100%: one draw per whole percent.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 51 + 1 + 1 /* erase */);
  EXPECT_TRUE(text.ends_with("\r\033[K"));
}

TEST(ProgressBar, QuietWithoutATerminal) {
  std::ostringstream err;
  EXPECT_EQ(progress_stream(err), nullptr);  // not std::cerr
  ProgressBar bar(nullptr, "x", 10);
  bar.advance(10);  // draws nothing, does not crash
}


// `ferrite run` on a terminal shows "loading weights" and erases it; with
// stderr redirected to a file it writes no bar at all.
TEST(ProgressBar, RunShowsBarsOnATerminalOnly) {
  const fs::path dir = fs::temp_directory_path() / ("ferrite_progress_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string model =
      (fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models" / "stories260K.gguf").string();
  const std::string run = std::string(FERRITE_BINARY) + " run " + model +
                          " --prompt Once --steps 4 --threads 1";
  const fs::path typescript = dir / "tty.txt";
  const std::string on_tty = "TERM=xterm script -qec '" + run + " >/dev/null' " +
                             typescript.string() + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(on_tty.c_str()), 0) << on_tty;
  const std::string tty = test_support::read_file(typescript);
  EXPECT_THAT(tty, HasSubstr("hashing weights ["));
  EXPECT_THAT(tty, HasSubstr("loading weights ["));
  EXPECT_THAT(tty, HasSubstr("100%"));
  EXPECT_THAT(tty, HasSubstr("\r\033[K"));

  const fs::path err_file = dir / "err.txt";
  const std::string to_file = "TERM=xterm " + run + " >/dev/null 2>" + err_file.string();
  ASSERT_EQ(std::system(to_file.c_str()), 0);
  EXPECT_THAT(test_support::read_file(err_file), Not(HasSubstr("weights [")));
  fs::remove_all(dir);
}

}  // namespace progress_test
}  // namespace ferrite::cli
