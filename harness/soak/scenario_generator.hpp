#pragma once
// Random valid scenarios for the scenario fuzzer: from a seed and a case
// number, a small cluster, a job laid out on it, a mix of the registered
// fault types with parameters in range, detectors and a mitigation policy.
// Six cases in ten run on the flow engine, two on the packet engine and two
// on the hybrid, those at the scale packet-level simulation affords. Fault
// types come from a catalog, drawn by their descriptors: the types the
// engine can act out, their targets' kinds and their parameters' samples.
// The text is what a user would write; the scenario loader decides whether
// it is valid, so a scenario it refuses is a finding too.
#include <cstdint>
#include <string>

#include "injectors/faults/fault_catalog.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness::soak {

// The scenario of case `case_number` under `seed`, as YAML; the same
// arguments give the same text.
std::string random_scenario_yaml(std::uint64_t seed, std::uint64_t case_number, const injectors::FaultCatalog& catalog);
// The same with the built-in fault types.
std::string random_scenario_yaml(std::uint64_t seed, std::uint64_t case_number);

// When faults start and how long they last, in `unit` ("ms", "s" or "m"):
// a start in [at_low, at_high], a length in [length_low, length_high] cut
// to end by `end`.
struct FaultWindow {
  std::string unit = "s";
  int at_low = 0, at_high = 0;
  int length_low = 1, length_high = 1;
  int end = 0;
};

// A `faults:` block of fewest to most faults of the flow engine's types, drawn
// as the fuzzer draws them (targets on the job's first `job_hosts` hosts, at
// most one fault per component and per host; a draw the catalog's rules
// refuse is skipped, so a block may hold fewer).
std::string random_faults_yaml(std::uint64_t seed, const injectors::FaultCatalog& catalog,
                               const sim::Topology& topology, int job_hosts, const FaultWindow& window, int fewest,
                               int most);

}  // namespace gauntlet::harness::soak
