#pragma once
// Runs commands as argv vectors, never through a shell, and keeps their
// output. A handful of in-process "builtins" (argv[0] starting with '@') cover
// the file writes that have no safe command-line tool: they are journaled
// exactly like external commands.
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace gauntlet::injectors::real {

using Argv = std::vector<std::string>;

// Problems of real injection: a missing tool, an unsupported kernel, a
// command that failed. Distinct from SafetyRefusal, which means "will not".
class InjectionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SafetyRefusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CommandResult {
  int exit_code = -1;  // -1: could not be started or was killed
  std::string output;  // stdout and stderr interleaved, truncated to a few KB
  bool ok() const { return exit_code == 0; }
};

// Builtins:
//   @write FILE TEXT        write TEXT to FILE (no truncation semantics beyond O_TRUNC)
//   @mkdir DIR / @rmdir DIR (rmdir of a missing directory succeeds: reverts are idempotent)
//   @spawn CGROUP_DIR ARGV...  start ARGV detached inside the cgroup; output discarded
CommandResult run_command(const Argv& argv, std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Shell-quoted rendering for humans (dry-run and the audit log); never executed.
std::string display(const Argv& argv);

// Prepends a wrapper (for example "ip netns exec NS") to every external
// command; builtins are left alone.
Argv wrap(const Argv& prefix, const Argv& argv);

bool is_root();
bool tool_exists(const std::string& name);  // on PATH and executable

}  // namespace gauntlet::injectors::real
