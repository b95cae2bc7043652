#pragma once
// The `faults:` list of a scenario: each entry validated, its glob expanded
// and its schedule (fixed, periodic or Poisson) turned into concrete faults.
#include <cstdint>
#include <string_view>
#include <vector>

#include "harness/scenario/yaml_read.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness::detail {

// Faults sorted by onset (ties keep entry order) and numbered f1, f2, ...
std::vector<injectors::FaultSpec> read_faults(const yaml_read::Source& source, const yaml_read::Field& faults,
                                              const sim::Topology& topology, sim::Nanos run_duration,
                                              std::uint64_t seed, const injectors::FaultCatalog& types,
                                              std::string_view engine);

}  // namespace gauntlet::harness::detail
