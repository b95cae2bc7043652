#include "models/roce_transport.hpp"

#include <cmath>

namespace gauntlet::models {

double retry_exhaustion_loss(const RoceTransportParams& params) {
  return std::pow(1.0 / params.exchange_packets, 1.0 / (params.retry_count + 1));
}

}  // namespace gauntlet::models
