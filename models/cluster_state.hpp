#pragma once
// The cluster's hardware as faults leave it: each GPU's compute speed,
// failed GPUs and hosts, and the RNIC each endpoint's traffic really leaves
// on (NCCL's fallback). Injectors change it through the training job's fault
// hooks; the job's iteration pipeline and lifecycle read it to simulate.
// Nothing that decides on the job's behalf reads it (see job_control.hpp):
// what an operator knows of it comes out of telemetry.
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

class ClusterState {
 public:
  explicit ClusterState(const sim::Topology& topology);

  // A GPU's compute speed relative to nominal (1.0) as faults leave it.
  void set_gpu_speed(int host, int gpu, double speed);
  // The healthy fleet's part (models/fleet/healthy_gpus.hpp): each GPU's
  // speed relative to the fleet's median GPU, and the whole fleet's pace of
  // the moment (the daily cycle). Both multiply the faults' speed.
  void set_healthy_speeds(std::vector<double> speeds);
  // The pace is no part of version(): a job repeating an iteration follows
  // it by scaling the iteration's time (TrainingJob::set_fleet_pace).
  void set_pace(double pace) { pace_ = pace; }
  double pace() const { return pace_; }
  // The speed the GPU computes at: the fault's, the healthy GPU's and the pace.
  double gpu_speed(int host, int gpu) const;

  void fail_gpu(int host, int gpu) { failed_gpus_.insert({host, gpu}); }
  void fail_host(int host) { failed_hosts_.insert(host); }
  void repair_gpu(int host, int gpu) { failed_gpus_.erase({host, gpu}); }
  void repair_host(int host) { failed_hosts_.erase(host); }
  // The GPU is dead, by itself or with its host.
  bool gpu_failed(int host, int gpu) const;
  bool host_failed(int host) const { return failed_hosts_.count(host) > 0; }
  // The host or any of its GPUs is down.
  bool host_broken(int host) const;
  const std::set<int>& failed_hosts() const { return failed_hosts_; }
  const std::set<std::pair<int, int>>& failed_gpus() const { return failed_gpus_; }

  // NCCL's fallback: the RNIC's traffic leaves on `fallback_nic` of the same
  // host from now on.
  void set_nic_fallback(int host, int nic, int fallback_nic);
  // The RNIC is back, but communicators keep their RNICs until they are
  // re-created: the fallback ends at the next restart_communicators().
  void clear_nic_fallback(int host, int nic);
  // Communicators are re-created (a restart): traffic of repaired RNICs goes
  // back to them. Whether any endpoint's path changed.
  bool restart_communicators();
  // The RNIC an endpoint's traffic leaves on now.
  sim::EndpointId traffic_endpoint(sim::EndpointId endpoint) const {
    return fallback_[static_cast<std::size_t>(endpoint)];
  }

  // Bumped by every change of a speed or a path; an iteration simulated
  // under the same version takes the same time.
  std::uint64_t version() const { return version_; }

 private:
  std::size_t gpu_index(int host, int gpu) const;

  const sim::Topology& topology_;
  std::vector<double> speed_;          // per (host, gpu) of the cluster
  std::vector<double> healthy_speed_;  // per (host, gpu); empty: all 1
  double pace_ = 1.0;
  std::vector<sim::EndpointId> fallback_;                    // per endpoint: where its traffic goes
  std::vector<std::pair<int, int>> pending_fallback_clear_;  // (host, nic)
  std::set<std::pair<int, int>> failed_gpus_;
  std::set<int> failed_hosts_;
  std::uint64_t version_ = 0;
};

}  // namespace gauntlet::models
