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

namespace gauntlet::harness::soak {

// The scenario of case `case_number` under `seed`, as YAML; the same
// arguments give the same text.
std::string random_scenario_yaml(std::uint64_t seed, std::uint64_t case_number, const injectors::FaultCatalog& catalog);
// The same with the built-in fault types.
std::string random_scenario_yaml(std::uint64_t seed, std::uint64_t case_number);

}  // namespace gauntlet::harness::soak
