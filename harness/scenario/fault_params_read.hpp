#pragma once
// Reading a fault's parameters through its type's descriptor, shared by the
// scenario loader and the chaos plan loader so that both accept the same
// values with the same messages.
#include "harness/scenario/yaml_read.hpp"
#include "injectors/spec/fault_spec.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness::yaml_read {

// Reads every parameter `type` declares from the fault entry `map`, each
// by its kind and within its kind's range; a required one left out fails at
// the map. `topology` checks component values against the cluster (nullptr:
// only their form). Keys the type does not declare are the caller's to
// reject.
injectors::FaultParams read_fault_params(const Source& source, const MapView& map, const injectors::FaultTypeInfo& type,
                                         const sim::Topology* topology);

// Fails at the offending parameter (or the map when it is absent) if the
// fault breaks a rule of its type.
void check_fault_rules(const Source& source, const MapView& map, const injectors::FaultTypeInfo& type,
                       const injectors::FaultSpec& fault);

}  // namespace gauntlet::harness::yaml_read
