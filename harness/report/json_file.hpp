#pragma once
// Reading a JSON file whose syntax errors become InputError at file:line:col.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace gauntlet::harness {

nlohmann::ordered_json read_json_file(const std::filesystem::path& path);

// Replaces path's contents at once (write a sibling, then rename).
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

}  // namespace gauntlet::harness
