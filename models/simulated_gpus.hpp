#pragma once
// The GPUs as the simulated hardware runs kernels on them, for the
// benchmarks that run outside training: a fixed kernel takes its nominal
// time divided by the GPU's clock relative to nominal; a dead GPU runs
// nothing. This is hardware simulation, so it reads the cluster's state.
#include <functional>

#include "models/benchmark_service.hpp"
#include "models/cluster_state.hpp"

namespace gauntlet::models {

// `clock` is the GPU's clock relative to nominal (1 = nominal) at the time asked.
KernelRunner simulated_gpus(const ClusterState& cluster, std::function<double(int host, int gpu)> clock);

}  // namespace gauntlet::models
