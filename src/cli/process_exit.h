// cli/process_exit.h — results a command may leave to the end of the process.
//
// Contract: once `end_commands_with_the_process()` has been called (by the
// `ferrite` executable's main, before it runs the command), a command may
// hand its large results to `leave_to_process_exit` instead of destroying
// them: they stay alive, reachable, until the process ends and the kernel
// takes the whole heap back at once. Without that call — tests and embedders
// running `run_cli` in a process that goes on — `leave_to_process_exit`
// destroys the value at once, as going out of scope would.
//
// Why: a 128-layer compile's resolution and plan are tens of thousands of
// small objects; freeing them one by one took about 8 ms of a 0.18 s
// `ferrite compile`, right before exit (docs/performance.md, step 12).
// Compilers do the same (clang's -disable-free).
//
// Example:
//   auto compiled = compile_plan(inputs);
//   ... write the plan ...
//   leave_to_process_exit(std::move(compiled));
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace ferrite::cli {

void end_commands_with_the_process();
bool commands_end_with_the_process();

namespace process_exit_internal {
// Keeps `kept` until the process ends (a holder reached from a static, so
// leak checkers see it as reachable).
void keep(std::shared_ptr<void> kept);
}  // namespace process_exit_internal

template <class T>
void leave_to_process_exit(T&& value) {
  static_assert(!std::is_lvalue_reference_v<T>, "hand over the value: std::move(value)");
  if (!commands_end_with_the_process()) return;  // `value` is destroyed by the caller's scope
  process_exit_internal::keep(std::make_shared<std::decay_t<T>>(std::forward<T>(value)));
}

}  // namespace ferrite::cli
