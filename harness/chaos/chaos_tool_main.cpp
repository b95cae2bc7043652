// Test helper: the chaos-related subcommands in a binary of their own, so the
// tests can SIGKILL a real chaos process without the full gauntlet binary.
#include <cstdio>
#include <string>

#include "harness/cli/commands.hpp"

int main(int argc, char** argv) {
  using namespace gauntlet::cli;
  if (argc < 2) return kExitBadInput;
  std::string name = argv[1];
  Args args(argv + 2, argv + argc);
  if (name == "chaos") return chaos_command(args);
  if (name == "recover") return recover_command(args);
  if (name == "score") return score_command(args);
  std::fprintf(stderr, "unknown command %s\n", name.c_str());
  return kExitBadInput;
}
