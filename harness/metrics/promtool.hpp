#pragma once
// Runs Debian's promtool (package prometheus) on files held in memory: each
// file is a memory file the child sees at promtool_file_path(i), so nothing
// is written to disk and nothing is left behind however the run ends.
#include <cstdint>
#include <string>
#include <vector>

namespace gauntlet::harness {

// What promtool prints is read up to this size; more is reported as a
// failure by the caller.
constexpr std::uintmax_t kMaxPromtoolOutputBytes = 64u << 20;

// Where promtool finds files[i] of run_promtool.
std::string promtool_file_path(std::size_t i);

// Runs `promtool ARGS...` (killed with this process), files[i] readable at
// promtool_file_path(i); its stdout and stderr into `output`. The exit
// status, or -1 with `error` set (promtool missing among the causes).
int run_promtool(const std::vector<std::string>& args, const std::vector<std::string>& files, std::string& output,
                 std::string* error);

}  // namespace gauntlet::harness
