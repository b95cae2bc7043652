#pragma once
// A run's healthy fleet (models/fleet/): its GPUs' variation, its links'
// background corruption and its benign background events, drawn from the
// scenario's seed unless the scenario asks for the clean fleet
// (`background: none`). The same draws give the simulation its effects and
// ground truth its benign episodes.
#include <vector>

#include "harness/scenario/scenario.hpp"
#include "harness/scoring/score.hpp"
#include "models/fleet/background.hpp"
#include "models/fleet/healthy_gpus.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "sim/network_engine.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

models::HealthyGpus healthy_gpus(const Scenario& scenario, const sim::Topology& topology);
models::Background background_of(const Scenario& scenario, const sim::Topology& topology);

// What the background shows in telemetry: corrupting links' CRC errors,
// XIDs in the GPUs' gauges, ECN marks and CNPs of the bursts' load. A
// packet engine also corrupts the frames themselves.
void add_background_effects(const models::Background& background, const sim::Topology& topology,
                            models::TelemetryEffects& effects, sim::PacketFaults* packets);

// Ground truth's benign episodes: each background condition and each GPU of
// a slow machine, ids "bg1", "bg2", ... in onset order. Only an alert naming
// one's target reports it (see FaultEpisode::background).
std::vector<FaultEpisode> background_episodes(const Scenario& scenario);
// The same, appended to `episodes` (a month's background is 10^5-10^6
// episodes: built in place, not copied from a second list).
void append_background_episodes(const Scenario& scenario, std::vector<FaultEpisode>& episodes);

}  // namespace gauntlet::harness
