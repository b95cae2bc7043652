#pragma once
// A bounded sample of the job's per-rank collective records, for trace.json.
// A 4,096-GPU job publishes ~10^5 collective records per iteration, so the
// trace keeps a few ranks (evenly spread over the job, plus the GPUs faults
// target) and a bounded number of iterations: every iteration simulated one
// by one (they sit around state changes: faults, levers, restarts) and the
// first iteration of each steady run, until the slice budget is spent.
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "models/placement.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"

namespace gauntlet::harness {

struct CollectiveSlice {
  std::string worker;        // the rank's track: h<N>.gpu<K>
  std::string communicator;  // dp.pp0.tp3, pp.dp1.tp0, ...
  std::string op;            // allreduce, send, recv, alltoall
  std::uint64_t iteration = 0;
  std::uint64_t bytes = 0;
  sim::Nanos start = 0;
  sim::Nanos end = 0;  // 0: the rank never left it (a hang)
};

struct CollectiveSample {
  std::vector<std::string> workers;  // the sampled ranks, in rank order
  int ranks_total = 0;
  std::uint64_t iterations_sampled = 0;
  std::uint64_t iterations_skipped = 0;  // would have been sampled, over budget
  std::vector<CollectiveSlice> slices;
};

inline constexpr std::size_t kMaxSampledRanks = 16;
inline constexpr std::size_t kMaxCollectiveSlices = 20000;

// Ranks to sample: up to kMaxSampledRanks evenly spread over the job, with
// any GPU named in `targets` that the job uses taking precedence.
std::vector<std::string> sample_workers(const models::Placement& placement, const std::vector<std::string>& targets);

class CollectiveSampler {
 public:
  CollectiveSampler(std::vector<std::string> workers, int ranks_total);
  void observe(const telemetry::Batch& batch);
  const CollectiveSample& sample() const { return sample_; }
  bool samples(const std::string& worker) const { return sampled_.count(worker) > 0; }

 private:
  void add(const telemetry::CollectiveRecord& record);
  bool take_iteration(std::uint64_t iteration, std::size_t slices_needed);

  CollectiveSample sample_;
  std::unordered_set<std::string> sampled_;  // sample_.workers
  std::uint64_t last_taken_ = UINT64_MAX;
  // The sampled slices of the last steady run counted, by records_version.
  std::uint64_t counted_version_ = 0;
  std::size_t counted_slices_ = 0;
};

}  // namespace gauntlet::harness
