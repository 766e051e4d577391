// leave_to_process_exit: destroys at once unless the process was told that
// commands end with it; then keeps the value alive, unfreed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "cli/process_exit.h"

namespace ferrite::cli {
namespace process_exit_test {

struct Counted {
  explicit Counted(int* destroyed) : destroyed(destroyed) {}
  Counted(Counted&& other) noexcept : destroyed(other.destroyed) { other.destroyed = nullptr; }
  ~Counted() {
    if (destroyed != nullptr) ++*destroyed;
  }
  int* destroyed;
};

TEST(ProcessExitTest, DestroysAtOnceInAProcessThatGoesOn) {
  ASSERT_FALSE(commands_end_with_the_process());  // only the executable's main sets it
  int destroyed = 0;
  {
    Counted value(&destroyed);
    leave_to_process_exit(std::move(value));
  }
  EXPECT_EQ(destroyed, 1);
}

TEST(ProcessExitTest, KeepsTheValueUntilTheProcessEndsOnceTold) {
  // In a child process: the setting is for the whole process.
  EXPECT_EXIT(
      {
        end_commands_with_the_process();
        static int destroyed = 0;
        {
          Counted value(&destroyed);
          leave_to_process_exit(std::move(value));
        }
        std::_Exit(destroyed == 0 && commands_end_with_the_process() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace process_exit_test
}  // namespace ferrite::cli
