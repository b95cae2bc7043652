#pragma once
// Models publish telemetry here; whoever runs the simulation drains it into
// batches for detectors. Models never know who listens, so measuring code
// never edits a model.
#include <google/protobuf/arena.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"

namespace gauntlet::sim {

// A drained batch together with the arena its records live on: a month-long
// run publishes millions of records, and an arena allocates them in bulk and
// frees them at once with the batch.
class ArenaBatch {
 public:
  ArenaBatch(std::unique_ptr<google::protobuf::Arena> arena, telemetry::Batch* batch)
      : arena_(std::move(arena)), batch_(batch) {}
  telemetry::Batch& batch() { return *batch_; }
  const telemetry::Batch& batch() const { return *batch_; }

 private:
  std::unique_ptr<google::protobuf::Arena> arena_;
  telemetry::Batch* batch_;
};

class TelemetryBus {
 public:
  TelemetryBus();
  void publish(telemetry::Record record);
  // Copies `record` straight into the pending batch (no intermediate copy).
  void publish_copy(const telemetry::Record& record);
  // Builds a record where it will be drained: `build` fills it in place, on
  // the batch's arena, so neither it nor its strings are allocated twice.
  template <typename Build>
  void publish_built(Build&& build) {
    telemetry::Record* record = pending_->add_records();
    build(*record);
    published_bytes_ += record->ByteSizeLong();
  }
  void publish_steady(telemetry::SteadyRun run);
  // Builds a steady run where it will be drained: `build` fills it in place,
  // so a run of tens of thousands of records is written once.
  void publish_steady_in_place(const std::function<void(telemetry::SteadyRun&)>& build);
  // Lends `run` to the pending batch without copying it: the caller keeps it
  // alive and unchanged until that batch has been drained and freed (a
  // simulation frees each batch before it runs the engine on). `bytes` is its
  // ByteSizeLong().
  void lend_steady(telemetry::SteadyRun* run, std::uint64_t bytes);
  // Counts the batches begun: a lent run is still in the pending batch while
  // the generation it was lent in lasts.
  std::uint64_t generation() const { return generation_; }
  // Moves out everything published so far as one batch ending at until.
  telemetry::Batch drain(Nanos until);
  // The same batch without copying it off its arena.
  ArenaBatch drain_on_arena(Nanos until);
  std::uint64_t published_bytes() const { return published_bytes_; }
  // A records_version for steady runs, unique on this bus (several jobs
  // publish to one).
  std::uint64_t next_records_version() { return ++records_versions_; }

 private:
  void renew();

  std::unique_ptr<google::protobuf::Arena> arena_;
  telemetry::Batch* pending_ = nullptr;  // on arena_
  std::uint64_t published_bytes_ = 0;
  std::uint64_t records_versions_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace gauntlet::sim
