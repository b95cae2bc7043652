// Work splits: the balancing arithmetic. Applying one is the training
// job's lever (training_job_levers.cpp).
#include "models/job_rebalance.hpp"

#include <algorithm>
#include <stdexcept>

namespace gauntlet::models {
namespace {

// Greedy min-max apportionment: start every bin at one unit and give each
// further unit to the bin whose cost after taking it is lowest.
std::vector<int> apportion(const std::vector<double>& speed, int total, int fixed) {
  const auto n = static_cast<int>(speed.size());
  if (n == 0 || total < n) throw std::invalid_argument("cannot give every part at least one unit");
  for (double s : speed)
    if (!(s > 0)) throw std::invalid_argument("speeds must be positive");
  std::vector<int> units(speed.size(), 1);
  for (int left = total - n; left > 0; --left) {
    std::size_t best = 0;
    double best_cost = 0;
    for (std::size_t i = 0; i < units.size(); ++i) {
      const double cost = (units[i] + 1 + fixed) / speed[i];
      if (i == 0 || cost < best_cost) {
        best = i;
        best_cost = cost;
      }
    }
    ++units[best];
  }
  return units;
}

}  // namespace

double WorkSplit::stage_share(int stage) const {
  if (stage_layers.empty()) return 1.0;
  return static_cast<double>(stage_layers[static_cast<std::size_t>(stage)]) / layers_per_stage;
}

int WorkSplit::replica_microbatches(int replica, int nominal) const {
  return microbatches.empty() ? nominal : microbatches[static_cast<std::size_t>(replica)];
}

std::vector<int> balance_microbatches(const std::vector<double>& replica_speed, int total, int pp) {
  return apportion(replica_speed, total, pp - 1);
}

std::vector<int> balance_layers(const std::vector<double>& stage_speed, int total) {
  return apportion(stage_speed, total, 0);
}

}  // namespace gauntlet::models
