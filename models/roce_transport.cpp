#include "models/roce_transport.hpp"

#include <cmath>

#include "sim/fec.hpp"

namespace gauntlet::models {

double retry_exhaustion_loss(const RoceTransportParams& params) {
  return std::pow(1.0 / params.exchange_packets, 1.0 / (params.retry_count + 1));
}

sim::TransferStalls transfer_stalls(double loss, double line_rate_gbps, double goodput,
                                    const RoceTransportParams& params) {
  sim::TransferStalls s;
  if (loss <= 0) return s;
  const double control_loss = sim::frame_loss_by_length(
      loss, params.mtu_bytes + params.header_bytes, params.control_frame_bytes, line_rate_gbps >= sim::kRsFecFromGbps);
  s.per_packet = loss * (loss + control_loss);
  s.per_message = loss + control_loss;
  s.repeat = loss;
  s.first_timeout = params.initial_retransmit_timeout;
  s.packet_bytes = params.mtu_bytes;
  s.tail_packets = line_rate_gbps * 1e9 / 8 * goodput * sim::to_seconds(params.nak_interval) / params.mtu_bytes;
  return s;
}

}  // namespace gauntlet::models
