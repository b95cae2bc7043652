#pragma once
// One descriptor per fault type, registered by name: its spec (targets,
// parameters with units and ranges, rules), its simulated effect (data
// path, telemetry, probes) and its real driver, each part optional.
//
// The parts live in the layers they belong to and are joined here by the
// fault's name, so the dependency rule holds: injectors/spec knows only the
// spec part (FaultTypeInfo), injectors/sim the simulated part
// (SimulatedFault), injectors/real the driver (RealDriver); this library sits
// above all three and below the harness, which reads scenarios and chaos
// plans through the spec part. Each built-in type is one file here
// (link_loss.cpp, ...) returning its descriptor; a catalog is built from a
// list of such functions, never held globally.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "injectors/real/drivers.hpp"
#include "injectors/sim/simulated_fault.hpp"
#include "injectors/spec/fault_spec.hpp"

namespace gauntlet::injectors {

struct FaultDescriptor {
  FaultTypeInfo spec;
  std::optional<SimulatedFault> simulated;  // none: the simulator cannot run it
  std::optional<real::RealDriver> real;     // none: no real host can take it
};

class FaultCatalog final : public SimulatedFaults {
 public:
  // Throws std::logic_error when the name is taken.
  void add(FaultDescriptor descriptor);

  const FaultDescriptor* find(std::string_view name) const;
  const SimulatedFault* simulated(std::string_view name) const override;
  const std::vector<FaultDescriptor>& all() const { return descriptors_; }
  std::string names() const;  // "a, b, c", for messages

  // The spec part, for a name already known to be registered.
  const FaultTypeInfo& spec(std::string_view name) const;

 private:
  std::vector<FaultDescriptor> descriptors_;
};

using FaultRegistration = FaultDescriptor (*)();

FaultCatalog make_fault_catalog(std::span<const FaultRegistration> registrations);

// The fault types that ship with gauntlet.
FaultCatalog builtin_fault_catalog();

// `faults` with each parameter a fault left out and whose default is a
// calibration attribute (ParamInfo::calibrated) set to the run's value,
// where the run sets that attribute: what the simulation acts on.
std::vector<FaultSpec> with_calibrated_defaults(const std::vector<FaultSpec>& faults, const FaultCatalog& catalog,
                                                const sim::Calibration& calibration);

}  // namespace gauntlet::injectors
