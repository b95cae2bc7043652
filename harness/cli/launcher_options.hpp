#pragma once
// What `sweep` and `suite` share on the command line: --shard I/N, and
// --emit k8s|slurm with the options of the launcher it prints.
#include <boost/program_options.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "harness/cli/unsigned_option.hpp"
#include "harness/sweep/emit.hpp"

namespace gauntlet::cli {

// Each local worker is a process running a whole simulation; more than this
// only thrashes the machine.
inline constexpr std::size_t kMaxJobs = 256;
// Prints the reason and returns false when --jobs is out of range.
bool check_jobs(std::size_t jobs);

struct LauncherChoice {
  std::string shard_text;
  std::string emit;  // empty: run here
  UnsignedOption shards{0};
  harness::EmitOptions launcher;
};

// Adds --shard, --emit, --shards, --image, --binary, --cpus, --memory,
// --time, --claim, --storage and --workdir; `tasks` names what is sharded.
void add_launcher_options(boost::program_options::options_description& options, LauncherChoice& choice,
                          const std::string& tasks);

// Checks --shard and --emit; prints the reason and returns false when wrong.
bool parse_launcher_choice(const LauncherChoice& choice, std::size_t& shard, std::size_t& shard_count);

// Prints the launcher for `tasks` tasks of `name` (the sweep's or suite's)
// at `path`; out_dir is --out as given, default_out the file's own. Returns
// the exit code. gather, given the tasks' results folder, returns the
// gather step's arguments (none: `report OUT`).
using GatherArgs = std::function<std::vector<std::string>(const std::string& out)>;
int emit_launcher(LauncherChoice& choice, const std::string& path, const std::string& name, std::size_t tasks,
                  const std::string& out_dir, const std::string& default_out, const GatherArgs& gather = nullptr);

}  // namespace gauntlet::cli
