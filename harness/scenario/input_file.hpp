#pragma once
// Reads a file a user names (scenario, sweep, chaos plan). Only regular files
// up to kMaxInputFileBytes: a device such as /dev/zero or a huge file would
// otherwise be read without end, and YAML costs far more memory than bytes.
#include <cstddef>
#include <string>

namespace gauntlet::harness {

inline constexpr std::size_t kMaxInputFileBytes = 1u << 20;  // 1 MiB; the shipped files are under 2 KiB

// Throws InputError (file:1:1: ...) when the file is missing, not a regular
// file, or larger than max_bytes.
std::string read_input_file(const std::string& path, std::size_t max_bytes = kMaxInputFileBytes);

}  // namespace gauntlet::harness
