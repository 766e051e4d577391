#include "cli/cli.h"

int main(int argc, char** argv) { return ferrite::cli::run_cli(argc, argv); }
