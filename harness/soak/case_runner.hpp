#pragma once
// One case of the scenario fuzzer: the generated scenario, loaded as a user's
// would be, simulated five times in processes of their own, and every
// invariant of harness/soak/invariants.hpp checked across the runs:
//   the faulty run twice (the same seed must give the same bytes), with the
//   exporters' counters (bytes sent and received);
//   the fault-free run from the same seed (no alert before the first fault
//   that the fault-free run did not raise too);
//   the faulty run without detectors, fast-forwarded and step by step (the
//   same iterations to the nanosecond).
// Any run that fails (a broken GAUNTLET_INVARIANT, an exception) is a
// problem too, as is a generated scenario the loader refuses.
// The byte balance needs the exporters' counters at a scrape: a run shorter
// than the scenario's scrape interval (monitoring.scrape_interval) has none,
// so that check is skipped for it and counted as skipped; the others run.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/detectors/registry.hpp"

namespace gauntlet::harness::soak {

struct CaseReport {
  std::string scenario_yaml;
  std::vector<std::string> problems;  // empty: every invariant held
  std::uint64_t iterations = 0;       // in the faulty run
  std::size_t faults = 0;
  // What the case reached, for the fuzzer's summary: its engine (empty if
  // the scenario was refused) and the type of each fault.
  std::string engine;
  std::vector<std::string> fault_types;
  // The invariants checked (kCheckNames), and those the case could not
  // reach, each with why.
  std::vector<std::string> checked;
  std::vector<std::pair<std::string, std::string>> skipped;
};

// The checks across runs, as the summary names them.
inline constexpr const char* kSameBytes = "same seed, same bytes";
inline constexpr const char* kForwardIterations = "iterations go forward";
inline constexpr const char* kFastForward = "fast-forward = step by step";
inline constexpr const char* kNoEarlyAlerts = "no alert before a fault";
inline constexpr const char* kByteBalance = "bytes balance per link";
inline const std::vector<std::string> kCheckNames = {kSameBytes, kForwardIterations, kFastForward, kNoEarlyAlerts,
                                                     kByteBalance};

CaseReport run_case(std::uint64_t seed, std::uint64_t case_number, const DetectorRegistry& registry, int parallel);
// The same checks on a scenario given as text (a shrunk case, a user's file).
CaseReport check_scenario_text(const std::string& yaml, const DetectorRegistry& registry, int parallel);

}  // namespace gauntlet::harness::soak
