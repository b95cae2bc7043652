#pragma once
// What a training job is: size, parallel layout, per-iteration work and its
// failure-handling settings.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace gauntlet::models {

struct ParallelismSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;
};

// Where spare hosts sit; see models/spare_layout.hpp.
enum class SpareLayout { tail, per_pod };

struct JobSpec {
  std::string name = "job";
  int gpus = 0;
  ParallelismSpec parallelism;
  sim::Nanos compute_per_iteration = sim::kSecond;
  std::uint64_t gradient_bytes = 0;    // DP allreduce per iteration, per rank
  std::uint64_t activation_bytes = 0;  // PP send/recv per micro-batch
  int microbatches = 1;
  sim::Nanos checkpoint_interval = 30 * sim::kMinute;
  sim::Nanos restart_cost = 5 * sim::kMinute;
  int spare_hosts = 0;
  SpareLayout spare_layout = SpareLayout::tail;
  sim::Nanos collective_timeout = 30 * sim::kMinute;  // NCCL watchdog
  // Writing a checkpoint stalls training this long (a sharded write of a
  // large model's state to a parallel file system takes seconds).
  sim::Nanos checkpoint_cost = 5 * sim::kSecond;
  std::uint64_t tp_bytes = 0;        // TP allreduce per iteration, per rank (NVLink only)
  std::uint64_t alltoall_bytes = 0;  // EP all-to-all per iteration, per rank (sent)
  int channels = 1;                  // NCCL channels a connection's bytes are split over
  int layers = 0;                    // model layers over all pipeline stages; 0: 8 per stage
  // Where the job runs when it shares the cluster with other jobs: its hosts
  // (one per slot) and its spares, ascending. Empty: the job alone, placed
  // by spare_layout from host 0 on.
  std::vector<int> hosts;
  std::vector<int> spares;
  int total_layers() const { return layers > 0 ? layers : 8 * parallelism.pp; }
};

}  // namespace gauntlet::models
