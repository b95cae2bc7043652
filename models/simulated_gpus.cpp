#include "models/simulated_gpus.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::models {

KernelRunner simulated_gpus(const ClusterState& cluster, std::function<double(int host, int gpu)> clock) {
  return [&cluster, clock = std::move(clock)](int host, int gpu, sim::Nanos nominal) -> std::optional<sim::Nanos> {
    if (cluster.gpu_failed(host, gpu)) return std::nullopt;
    const double factor = std::max(1e-6, clock(host, gpu));
    return static_cast<sim::Nanos>(std::llround(static_cast<double>(nominal) / factor));
  };
}

}  // namespace gauntlet::models
