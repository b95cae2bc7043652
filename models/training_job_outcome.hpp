#pragma once
// One simulated iteration: its cache keys for fast-forward, its timing and
// the records it produced. Private to the training job's sources.
#include <cstdint>
#include <vector>

#include "models/training_job.hpp"

namespace gauntlet::models {

struct TrainingJob::Outcome {
  std::uint64_t key_network = 0;
  std::uint64_t key_compute = 0;
  std::uint64_t key_layout = 0;
  // False when traffic of an abandoned iteration was still on the wire: that
  // iteration shared links with it, so its timing is not the steady one.
  bool reusable = true;
  std::uint64_t iteration = 0;
  sim::Nanos start = 0;
  sim::Nanos duration = 0;
  std::vector<sim::Nanos> busy;            // per rank: compute time (bubble excluded)
  std::vector<telemetry::Record> records;  // of the iteration that started at `start`
};

}  // namespace gauntlet::models
