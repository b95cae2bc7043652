#include "harness/runner/healthy_fleet.hpp"

#include <algorithm>

#include "sim/component_id.hpp"

namespace gauntlet::harness {

models::HealthyGpus healthy_gpus(const Scenario& scenario, const sim::Topology& topology) {
  const auto params = models::HealthyGpuParams::from(scenario.calibration);
  const int hosts = topology.hosts(), per_host = topology.shape().gpus_per_host;
  return scenario.background ? models::HealthyGpus(hosts, per_host, params, scenario.seed)
                             : models::HealthyGpus(hosts, per_host, params);
}

models::Background background_of(const Scenario& scenario, const sim::Topology& topology) {
  const auto params = models::BackgroundParams::from(scenario.calibration);
  return scenario.background ? models::Background(topology, params, scenario.seed, scenario.duration)
                             : models::Background(topology, params);
}

void add_background_effects(const models::Background& background, const sim::Topology& topology,
                            models::TelemetryEffects& effects, sim::PacketFaults* packets) {
  for (const models::BackgroundCondition& c : background.conditions()) {
    const sim::ComponentId id = *sim::ComponentId::parse(c.target);
    switch (c.kind) {
      case models::BackgroundKind::link_corruption: {
        const sim::LinkId link = *topology.link_of(id);
        effects.add_link_loss(link, c.start, c.end, c.value);
        if (packets) packets->set_link_loss(link, "background", c.value);
        break;
      }
      case models::BackgroundKind::app_xid:
        effects.add_xid(id.host, id.index, c.start, static_cast<std::uint32_t>(c.value));
        break;
      case models::BackgroundKind::ecn_burst:
        effects.add_background_load(*topology.link_of(id), c.start, c.end, c.value);
        break;
      case models::BackgroundKind::slow_machine:
        break;  // in the GPUs' speeds (HealthyGpus)
    }
  }
}

std::vector<FaultEpisode> background_episodes(const Scenario& scenario) {
  std::vector<FaultEpisode> episodes;
  append_background_episodes(scenario, episodes);
  return episodes;
}

void append_background_episodes(const Scenario& scenario, std::vector<FaultEpisode>& episodes) {
  if (!scenario.background) return;
  const sim::Topology topology(scenario.cluster);
  const models::HealthyGpus gpus = healthy_gpus(scenario, topology);
  std::vector<models::BackgroundCondition> conditions = background_of(scenario, topology).conditions();
  const int per_host = topology.shape().gpus_per_host;
  for (int host : gpus.slow_hosts())
    for (int g = 0; g < per_host; ++g)
      conditions.push_back({models::BackgroundKind::slow_machine, sim::ComponentId::make_gpu(host, g).str(), 0,
                            scenario.duration, gpus.params().slow_machine_slowdown});
  std::stable_sort(conditions.begin(), conditions.end(),
                   [](const auto& a, const auto& b) { return a.start < b.start; });
  episodes.reserve(episodes.size() + conditions.size());
  std::size_t listed = 0;
  for (const models::BackgroundCondition& c : conditions) {
    FaultEpisode e;
    e.id = "bg" + std::to_string(++listed);
    e.type = models::background_kind_name(c.kind);
    e.target = c.target;
    e.start_s = sim::to_seconds(c.start);
    if (c.end < scenario.duration) e.end_s = sim::to_seconds(c.end);
    e.affected_job = false;
    e.benign = true;
    e.background = true;
    episodes.push_back(std::move(e));
  }
}

}  // namespace gauntlet::harness
