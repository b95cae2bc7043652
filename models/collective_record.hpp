#pragma once
// The CollectiveRecord a rank publishes for one collective it took part in.
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"

namespace gauntlet::models {

inline telemetry::Record collective_record(const std::string& communicator, int rank, const std::string& worker,
                                           std::string_view op, std::string_view algorithm, std::uint64_t bytes,
                                           std::uint64_t sequence, sim::Nanos start, sim::Nanos end,
                                           const std::string& peer) {
  telemetry::Record record;
  auto* c = record.mutable_collective();
  c->set_communicator(communicator);
  c->set_rank(static_cast<std::uint32_t>(rank));
  c->set_worker(worker);
  c->set_op(std::string(op));
  c->set_algorithm(std::string(algorithm));
  c->set_bytes(bytes);
  c->set_sequence(sequence);
  c->set_start_ns(start);
  c->set_end_ns(end);
  c->set_peer(peer);
  return record;
}

}  // namespace gauntlet::models
