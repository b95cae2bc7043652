#include "sim/telemetry_bus.hpp"

#include <utility>

namespace gauntlet::sim {

TelemetryBus::TelemetryBus() { renew(); }

// A scale run's batch holds tens of thousands of records: the arena's
// default blocks (at most 8 KiB) made each batch thousands of heap
// allocations, and the allocator a fifth of the run's time.
void TelemetryBus::renew() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 16 * 1024;
  options.max_block_size = 1024 * 1024;
  arena_ = std::make_unique<google::protobuf::Arena>(options);
  pending_ = google::protobuf::Arena::CreateMessage<telemetry::Batch>(arena_.get());
  ++generation_;
}

void TelemetryBus::publish(telemetry::Record record) {
  published_bytes_ += record.ByteSizeLong();
  // The arena takes ownership of the heap record: no copy.
  pending_->mutable_records()->AddAllocated(new telemetry::Record(std::move(record)));
}

void TelemetryBus::publish_copy(const telemetry::Record& record) {
  published_bytes_ += record.ByteSizeLong();
  *pending_->add_records() = record;
}

void TelemetryBus::publish_steady(telemetry::SteadyRun run) {
  published_bytes_ += run.ByteSizeLong();
  pending_->mutable_steady()->AddAllocated(new telemetry::SteadyRun(std::move(run)));
}

void TelemetryBus::publish_steady_in_place(const std::function<void(telemetry::SteadyRun&)>& build) {
  telemetry::SteadyRun* run = pending_->add_steady();
  build(*run);
  published_bytes_ += run->ByteSizeLong();
}

void TelemetryBus::lend_steady(telemetry::SteadyRun* run, std::uint64_t bytes) {
  published_bytes_ += bytes;
  // The batch lives on an arena, which frees only its own blocks: the lent
  // run stays the lender's.
  pending_->mutable_steady()->UnsafeArenaAddAllocated(run);
}

telemetry::Batch TelemetryBus::drain(Nanos until) {
  telemetry::Batch out = *pending_;
  out.set_until_ns(until);
  renew();
  return out;
}

ArenaBatch TelemetryBus::drain_on_arena(Nanos until) {
  pending_->set_until_ns(until);
  ArenaBatch out(std::move(arena_), pending_);
  renew();
  return out;
}

}  // namespace gauntlet::sim
