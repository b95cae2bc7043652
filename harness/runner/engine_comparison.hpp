#pragma once
// A scenario run under both network engines, measured the same way per
// window (before the first fault, then each fault's window): mean iteration
// time, the busiest link directions' utilization, probe RTT, and the
// counters both engines fill from one telemetry schema. The flow engine
// models rules on flows, the packet engine every packet; where they part,
// one of them is wrong for that fault, and this is how to see which.
// Counters are read as the telemetry publishes them, once a second, so a
// window should span whole seconds (a sample counts in the window holding
// the end of its second).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/scenario.hpp"

namespace gauntlet::harness {

struct LinkUtilization {
  std::string link;  // "leaf3~spine2 up": the direction toward the spine or leaf
  double utilization = 0;
};

struct EngineWindowMeasure {
  // Mean over the iterations a fault's window overlaps, or that ended within
  // the healthy stretch; -1: none.
  double iteration_s = -1;
  // The median over the same iterations: the typical step, which a rare
  // stall (a retransmission timeout) moves far less than the mean.
  double median_iteration_s = -1;
  std::uint64_t iterations = 0;
  std::vector<LinkUtilization> busiest;  // at most three, busiest first
  double probe_rtt_us = -1;              // mean over probes answered in the window; -1: none
  std::uint64_t probes_lost = 0;
  std::map<std::string, std::uint64_t> counters;  // crc_errors, ecn_marked, pause_sent, ...
};

struct ComparedWindow {
  std::string label;  // "healthy" or "f1 link_loss leaf3~spine2"
  sim::Nanos start = 0;
  sim::Nanos end = 0;
  bool healthy = false;  // the stretch before the first fault
  EngineWindowMeasure flow;
  EngineWindowMeasure packet;
  std::optional<EngineWindowMeasure> hybrid;  // when the comparison ran it
};

struct EngineComparison {
  std::string scenario;
  std::vector<ComparedWindow> windows;
  // Each engine's run, wall-clock seconds: what its fidelity costs.
  double flow_wall_s = 0;
  double packet_wall_s = 0;
  double hybrid_wall_s = 0;
};

// The windows the comparison measures: from 0 to the first fault's onset
// ("healthy"), then each fault's own window, cut at the run's end.
std::vector<ComparedWindow> comparison_windows(const Scenario& scenario);

// Runs the scenario once per engine, each in its own process, with only the
// measuring observer as its detector; `hybrid` adds a run on the hybrid
// engine. The scenario must fit the packet engine (its limits are the
// loader's).
EngineComparison compare_engines(const Scenario& scenario, bool hybrid = false);

// The relative difference of the packet engine's iteration time from the
// flow engine's in a window, or nothing when either has no iteration.
std::optional<double> iteration_gap(const ComparedWindow& window);
// The hybrid engine's error against the packet engine's iteration time, or
// nothing when either has no iteration (or the hybrid did not run).
std::optional<double> hybrid_error(const ComparedWindow& window);

// How closely an engine's steps follow the packet engine's in a window: its
// mean and median step against the packet run's, and whether both lie
// within the band it is held to (the flow engine's 15%, the hybrid's 10%).
struct Agreement {
  double mean_error = 0;    // engine's mean step / packet's - 1
  double median_error = 0;  // the same for the median
  double band = 0;
  bool within() const;
};
inline constexpr double kFlowAgreementBand = 0.15;
inline constexpr double kHybridAgreementBand = 0.10;
// Nothing when either run has no iteration in the window (or the hybrid
// did not run).
std::optional<Agreement> flow_agreement(const ComparedWindow& window);
std::optional<Agreement> hybrid_agreement(const ComparedWindow& window);

std::string format_comparison(const EngineComparison& comparison);
nlohmann::ordered_json comparison_json(const EngineComparison& comparison);

}  // namespace gauntlet::harness
