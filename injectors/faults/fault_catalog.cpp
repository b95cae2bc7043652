#include "injectors/faults/fault_catalog.hpp"

#include <stdexcept>

#include "injectors/faults/builtin_faults.hpp"

namespace gauntlet::injectors {

void FaultCatalog::add(FaultDescriptor descriptor) {
  if (find(descriptor.spec.name)) throw std::logic_error("fault type '" + descriptor.spec.name + "' registered twice");
  descriptors_.push_back(std::move(descriptor));
}

const FaultDescriptor* FaultCatalog::find(std::string_view name) const {
  for (const FaultDescriptor& d : descriptors_)
    if (d.spec.name == name) return &d;
  return nullptr;
}

const SimulatedFault* FaultCatalog::simulated(std::string_view name) const {
  const FaultDescriptor* d = find(name);
  return d && d->simulated ? &*d->simulated : nullptr;
}

const FaultTypeInfo& FaultCatalog::spec(std::string_view name) const {
  const FaultDescriptor* d = find(name);
  if (!d) throw std::logic_error("unregistered fault type '" + std::string(name) + "'");
  return d->spec;
}

std::string FaultCatalog::names() const {
  std::string out;
  for (const FaultDescriptor& d : descriptors_) out += (out.empty() ? "" : ", ") + d.spec.name;
  return out;
}

FaultCatalog make_fault_catalog(std::span<const FaultRegistration> registrations) {
  FaultCatalog catalog;
  for (FaultRegistration registration : registrations) catalog.add(registration());
  return catalog;
}

FaultCatalog builtin_fault_catalog() {
  static constexpr FaultRegistration kBuiltin[] = {
      faults::link_loss,  faults::port_flap,      faults::stale_flow_table, faults::gpu_throttle, faults::nic_down,
      faults::congestion, faults::cpu_contention, faults::gpu_fail,         faults::node_crash,   faults::agent_hang,
      faults::clock_skew, faults::reconfigure,    faults::pfc_storm,
  };
  return make_fault_catalog(kBuiltin);
}

}  // namespace gauntlet::injectors
