#pragma once
// The jobs of one simulated run: the job alone, or every tenant sharing the
// cluster, all on the same engine so that their flows compete on the links
// they share. One tenant is observed: its telemetry goes on the run's bus,
// the others' is drained and dropped (with detectors_scope: cluster, the
// observed tenant's records still stand for the jobs, and the others'
// records feed the samples of their GPUs and RNICs, which stay visible).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/scenario/scenario.hpp"
#include "models/telemetry/hardware_sampler.hpp"
#include "models/training_job.hpp"
#include "sim/network_engine.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::harness {

class Tenants {
 public:
  Tenants(const Scenario& scenario, const sim::Topology& topology, sim::NetworkEngine& engine,
          sim::TelemetryBus& observed_bus);

  models::TrainingJob& observed() { return *jobs_[observed_]; }
  std::vector<models::TrainingJob*> all() const;
  void set_fast_forward(bool enabled);
  // Every job starts at 0, in file order (so every view simulates the same).
  void start(sim::Nanos horizon);
  // Drops what the unobserved tenants published up to `until`.
  void drop_unobserved(sim::Nanos until);
  // The same, handing each one's batch first to `use` with its job and its
  // number among the unobserved (0, 1, ...).
  using UnobservedBatch = std::function<void(std::size_t, const models::TrainingJob&, const telemetry::Batch&)>;
  void drain_unobserved(sim::Nanos until, const UnobservedBatch& use);
  // Whether the observed tenant's detectors watch the whole cluster.
  bool cluster_scope() const { return cluster_scope_; }
  // What the samplers need of the jobs: the observed job's, or with
  // detectors_scope: cluster every job's (a GPU is busy when any job
  // computes on it, traffic flows while any job iterates).
  models::SampleInputs sample_inputs(const sim::NetworkEngine& engine) const;
  // The hosts whose samples the observed tenant's detectors see; nothing
  // when they see every host (a job alone, or detectors_scope: cluster).
  const std::optional<std::set<int>>& visible_hosts() const { return visible_; }

  // Which jobs each fault touches, by fault id, in file order of the jobs:
  //   - a host or a part of one (GPU, RNIC, CPU, agent, flow table, host
  //     link): the job holding the host (as a slot or a spare);
  //   - a leaf-spine link: the jobs whose traffic crosses it as placed at
  //     the start (ECMP routes of their rings, pipeline and all-to-all);
  //   - a spine: the jobs whose traffic crosses one of its links; a leaf:
  //     the jobs with an RNIC under it;
  //   - no target (reconfigure): every job.
  std::map<std::string, std::vector<std::string>> fault_jobs(const std::vector<injectors::FaultSpec>& faults) const;

 private:
  bool touches(std::size_t tenant, const std::string& target) const;

  const sim::Topology& topology_;
  std::vector<std::unique_ptr<sim::TelemetryBus>> unobserved_buses_;
  std::vector<std::unique_ptr<models::TrainingJob>> jobs_;
  std::vector<std::set<int>> held_hosts_;  // per job: slots and spares
  std::size_t observed_ = 0;
  std::optional<std::set<int>> visible_;
  bool cluster_scope_ = false;
};

}  // namespace gauntlet::harness
