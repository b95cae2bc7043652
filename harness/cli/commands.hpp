#pragma once
// One function per gauntlet subcommand. Each gets the arguments after the
// subcommand name and returns the process exit code: 0 ok, 1 run failed,
// 2 bad input.
#include <string>
#include <vector>

namespace gauntlet::cli {

using Args = std::vector<std::string>;

int run_command(const Args& args);
int validate_command(const Args& args);
int plan_probes_command(const Args& args);
int plan_command(const Args& args);
int score_command(const Args& args);
int chaos_command(const Args& args);
int recover_command(const Args& args);
int report_command(const Args& args);
int sweep_command(const Args& args);
int suite_command(const Args& args);
int compare_engines_command(const Args& args);
int calibrate_command(const Args& args);

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitBadInput = 2;

}  // namespace gauntlet::cli

namespace gauntlet::harness {
struct Aggregate;
}

namespace gauntlet::cli {

// What a merge over many runs lacks, on stderr: the sweep's cells with no
// results yet and the runs in which a detector failed. kExitRunFailed when
// cells are missing, or a detector failed and that is not allowed.
int merged_runs_status(const harness::Aggregate& aggregate, bool allow_detector_failure);

}  // namespace gauntlet::cli
