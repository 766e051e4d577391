// tests/support/cli_invoke.h — run a `ferrite` subcommand in-process and keep
// what it printed; read and write whole files.
//
// `invoke(run_compile, CompileArgs{...})` calls the command function of
// src/cli/commands.h with fresh output streams and returns its exit code with
// both streams' text.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ferrite::cli::test_support {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

template <class Args>
Outcome invoke(int (*command)(const Args&, std::ostream&, std::ostream&), const Args& args) {
  std::ostringstream out, err;
  const int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

}  // namespace ferrite::cli::test_support
