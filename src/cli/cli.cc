#include "cli/cli.h"

namespace ferrite::cli {
int run_cli(int, char**) { return kExitOk; }
}  // namespace ferrite::cli
