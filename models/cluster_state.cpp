#include "models/cluster_state.hpp"

#include <algorithm>
#include <utility>

namespace gauntlet::models {

ClusterState::ClusterState(const sim::Topology& topology)
    : topology_(topology),
      speed_(static_cast<std::size_t>(topology.hosts() * topology.shape().gpus_per_host), 1.0),
      fallback_(static_cast<std::size_t>(topology.endpoints())) {
  for (std::size_t e = 0; e < fallback_.size(); ++e) fallback_[e] = static_cast<sim::EndpointId>(e);
}

std::size_t ClusterState::gpu_index(int host, int gpu) const {
  return static_cast<std::size_t>(host * topology_.shape().gpus_per_host + gpu);
}

void ClusterState::set_gpu_speed(int host, int gpu, double speed) {
  speed_[gpu_index(host, gpu)] = speed;
  ++version_;
}

void ClusterState::set_healthy_speeds(std::vector<double> speeds) {
  healthy_speed_ = std::move(speeds);
  ++version_;
}

double ClusterState::gpu_speed(int host, int gpu) const {
  const std::size_t i = gpu_index(host, gpu);
  const double healthy = i < healthy_speed_.size() ? healthy_speed_[i] : 1.0;
  return speed_[i] * healthy * pace_;
}

bool ClusterState::gpu_failed(int host, int gpu) const {
  return failed_hosts_.count(host) || failed_gpus_.count({host, gpu});
}

bool ClusterState::host_broken(int host) const {
  if (failed_hosts_.count(host)) return true;
  auto it = failed_gpus_.lower_bound({host, 0});
  return it != failed_gpus_.end() && it->first == host;
}

void ClusterState::set_nic_fallback(int host, int nic, int fallback_nic) {
  std::erase(pending_fallback_clear_, std::pair{host, nic});
  fallback_[static_cast<std::size_t>(topology_.endpoint(host, nic))] = topology_.endpoint(host, fallback_nic);
  ++version_;
}

void ClusterState::clear_nic_fallback(int host, int nic) { pending_fallback_clear_.push_back({host, nic}); }

bool ClusterState::restart_communicators() {
  for (auto [host, nic] : pending_fallback_clear_) {
    const auto e = static_cast<std::size_t>(topology_.endpoint(host, nic));
    fallback_[e] = static_cast<sim::EndpointId>(e);
  }
  const bool changed = !pending_fallback_clear_.empty();
  if (changed) ++version_;
  pending_fallback_clear_.clear();
  return changed;
}

}  // namespace gauntlet::models
