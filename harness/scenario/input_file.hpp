#pragma once
// Reads a file a user names: sim/input_file.hpp's reader, which every
// command's inputs go through (regular files only, bounded size, UTF-8).
#include "sim/input_file.hpp"

namespace gauntlet::harness {

using sim::kMaxInputFileBytes;
using sim::read_input_file;

}  // namespace gauntlet::harness
