#pragma once
// The limits a scenario must stay within (README "Limits"), and a rough
// estimate of what a run will cost, checked before anything is built: a typo
// such as `hosts: 10000000` or `period: 2ns` is refused with the limit in the
// message instead of eating the machine's memory.
#include <cstdint>

#include "harness/scenario/scenario.hpp"
#include "harness/scenario/yaml_read.hpp"

namespace gauntlet::harness {

inline constexpr int kMaxHosts = 65'536;
inline constexpr int kMaxPerHost = 16;       // GPUs and RNICs per host
inline constexpr int kMaxSwitches = 4'096;   // spines, leaves
inline constexpr int kMaxJobGpus = 524'288;  // kMaxHosts x 8
inline constexpr int kMaxChannels = 64;
inline constexpr int kMaxMicrobatches = 65'536;
inline constexpr double kMinLinkGbps = 0.1;
inline constexpr double kMaxLinkGbps = 100'000;  // 100 Tb/s
inline constexpr sim::Nanos kMaxLinkLatency = sim::kSecond;
inline constexpr std::uint64_t kMaxTransferBytes = std::uint64_t{1} << 50;  // 1 PiB per rank and iteration
inline constexpr double kMaxFaultEventsPerSecond = 1'000;                   // a port_flap period of 2 ms at the least
inline constexpr double kMaxEstimatedEvents = 1e9;  // about an hour of wall time at the month run's pace
inline constexpr double kMaxEstimatedBytes = 8.0 * (1ull << 30);
// The packet engine at README's 2.5 M ns-3 events/s: about half an hour.
inline constexpr double kMaxPacketEvents = 4e9;
// The test file a prom: detector hands promtool (one alert_rule_test entry
// per evaluation and alert name), held in memory while promtool reads it.
inline constexpr double kMaxPromTestBytes = 256.0 * (1 << 20);

// Upper-bound figures for one run, from the scenario alone.
struct RunEstimate {
  double components = 0;        // hosts' parts, switches and links
  double telemetry_blocks = 0;  // per component, one steady block per 10 simulated minutes at the least
  double fault_events = 0;      // onsets, ends and every flap
  double iterations = 0;        // per run, at most duration / compute_per_iteration per job
  double packets = 0;           // engine: packet, every frame of both runs (fault-free and faulty)
  double events = 0;
  double packet_events = 0;   // engine: packet, about 6 ns-3 events a frame
  double bytes = 0;           // resident memory (telemetry is streamed, not kept; iterations are)
  double results_bytes = 0;   // the results folder, timeline.csv most of it
  double promtool_bytes = 0;  // the largest prom: detector's promtool test file
};

RunEstimate estimate_run(const Scenario& scenario);

// Both throw InputError at the offending value when a limit is exceeded.
// The cluster is checked before its topology is built, the rest once the
// scenario is read (`top`: the scenario's root map, to point at values).
void check_cluster_limits(const yaml_read::Source& source, const yaml_read::Field& cluster_field,
                          const sim::ClusterShape& shape);
void check_scenario_limits(const yaml_read::Source& source, const yaml_read::MapView& top, const Scenario& scenario);
// A job entry's sizes (`job:` or one of `jobs:`).
void check_job_limits(const yaml_read::Source& source, const yaml_read::Field& job, const JobSpec& spec);

}  // namespace gauntlet::harness
