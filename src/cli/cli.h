// cli/cli.h — the `ferrite` command line.
//
// Contract: `run_cli` parses argv, dispatches to one subcommand and returns
// the process exit code: 0 success, 1 the program/options/plan were rejected
// (message on stderr), 2 usage errors or unreadable/malformed files.
#pragma once

namespace ferrite::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRejected = 1;
inline constexpr int kExitUsage = 2;

int run_cli(int argc, char** argv);

}  // namespace ferrite::cli
