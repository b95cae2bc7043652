#pragma once
// What the GPU failure class tests share: a pod of four 8-GPU hosts with a
// spare, a data-parallel job on it, a run with faults, and a fault's DCGM
// signature (the XID gauge and error counts its GPU shows).
#include <memory>
#include <utility>
#include <vector>

#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_scheduler.hpp"
#include "injectors/sim/fault_test_support.hpp"
#include "injectors/sim/telemetry_effects_from_faults.hpp"
#include "models/job_test_support.hpp"

namespace gauntlet::injectors::testing {

using models::testing::JobReport;
using Kind = telemetry::JobEvent;

// Four hosts the job uses and h4, a spare when the job allows one.
inline sim::ClusterShape gpu_pod() {
  sim::ClusterShape s;
  s.spines = 1;
  s.leaves = 8;
  s.hosts = 5;
  s.gpus_per_host = 8;
  s.rnics_per_host = 8;
  return s;
}

inline models::JobSpec gpu_pod_job() {
  models::JobSpec j;
  j.gpus = 32;
  j.parallelism = {8, 1, 4, 1};
  j.compute_per_iteration = sim::kSecond;
  j.gradient_bytes = 10'000'000'000;
  j.checkpoint_interval = 10 * sim::kMinute;
  j.checkpoint_cost = 0;
  j.collective_timeout = 2 * sim::kMinute;
  j.restart_cost = sim::kMinute;
  return j;
}

inline JobReport run_gpu_faults(const models::JobSpec& job, sim::Nanos horizon, std::vector<FaultSpec> faults,
                                const std::function<void(models::testing::JobHarness&)>& extra = {}) {
  return models::testing::run_job(gpu_pod(), job, horizon, true, [faults, horizon, extra](auto& h) {
    auto types = std::make_shared<const FaultCatalog>(builtin_fault_catalog());
    auto scheduler = std::make_shared<FaultScheduler>(h.engine, h.job, *types);
    scheduler->arm(faults, horizon);
    h.job.set_change_horizon([s = scheduler.get()] { return s->next_change(); });
    h.keep = std::make_shared<std::pair<std::shared_ptr<const FaultCatalog>, std::shared_ptr<FaultScheduler>>>(
        types, scheduler);
    if (extra) extra(h);
  });
}

// What the faults leave in the cluster's GPU telemetry until `horizon`.
inline models::TelemetryEffects gpu_signature(const std::vector<FaultSpec>& faults, sim::Nanos horizon) {
  const sim::Topology topology(gpu_pod());
  return telemetry_effects_from(faults, builtin_fault_catalog(), topology, horizon);
}

}  // namespace gauntlet::injectors::testing
