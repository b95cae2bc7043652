#include "models/roce_transport.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::models {

double window_packets(double bytes_per_second, sim::Nanos rtt, const RoceTransportParams& params) {
  const double bdp = bytes_per_second * sim::to_seconds(rtt + params.ack_overhead);
  return std::max(1.0, std::ceil(bdp / params.mtu_bytes));
}

double go_back_n_goodput(double loss, double window) {
  if (loss <= 0) return 1.0;
  if (loss >= 1) return 0.0;
  return (1.0 - loss) / (1.0 + loss * (window - 1.0));
}

double retry_exhaustion_loss(const RoceTransportParams& params) {
  return std::pow(1.0 / params.exchange_packets, 1.0 / (params.retry_count + 1));
}

}  // namespace gauntlet::models
