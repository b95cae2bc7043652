#pragma once
// The scenario loader's errors are the simulator's InputError, so they keep
// their type and position when a child process reports them (see
// sim/isolated_run.hpp).
#include "sim/input_error.hpp"

namespace gauntlet::harness {

using sim::InputError;

}  // namespace gauntlet::harness
