#pragma once
// Reading a JSON file whose syntax errors become InputError at file:line:col.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/runner/results_folder.hpp"  // write_file_atomically

namespace gauntlet::harness {

// Summaries, episodes, cells and plans gauntlet wrote; a month's summary
// with every fault is a few MiB.
inline constexpr std::size_t kMaxJsonFileBytes = 64u << 20;

// Through sim/input_file.hpp and sim/json_input.hpp: a regular file of at
// most kMaxJsonFileBytes, UTF-8, nested at most kMaxJsonDepth deep, or
// InputError at file:line:col.
nlohmann::ordered_json read_json_file(const std::filesystem::path& path);

}  // namespace gauntlet::harness
