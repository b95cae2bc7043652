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
      faults::link_loss,  faults::port_flap,     faults::stale_flow_table, faults::gpu_throttle,
      faults::nic_down,   faults::congestion,    faults::cpu_contention,   faults::gpu_fail,
      faults::node_crash, faults::agent_hang,    faults::clock_skew,       faults::reconfigure,
      faults::pfc_storm,  faults::gpu_hbm_error, faults::gpu_sram_error,   faults::gpu_gsp_error,
      faults::gpu_sdc,
  };
  return make_fault_catalog(kBuiltin);
}

std::vector<FaultSpec> with_calibrated_defaults(const std::vector<FaultSpec>& faults, const FaultCatalog& catalog,
                                                const sim::Calibration& calibration) {
  std::vector<FaultSpec> out = faults;
  for (FaultSpec& fault : out) {
    const FaultDescriptor* type = catalog.find(fault.type);
    if (!type) continue;
    for (const ParamInfo& param : type->spec.params) {
      if (!param.calibrated || fault.params.has(param.name) || !calibration.is_set(*param.calibrated)) continue;
      if (param.kind == ParamKind::duration)
        fault.params.set_duration(param.name, calibration.duration(*param.calibrated));
      else
        fault.params.set_number(param.name, calibration.value(*param.calibrated));
    }
  }
  return out;
}

}  // namespace gauntlet::injectors

namespace gauntlet::injectors::faults {

sim::Nanos calibrated_duration(const FaultSpec& fault, std::string_view param, const sim::Attribute& attribute) {
  return fault.params.has(param) ? fault.params.duration(param) : attribute.default_duration();
}

double calibrated_number(const FaultSpec& fault, std::string_view param, const sim::Attribute& attribute) {
  return fault.params.has(param) ? fault.params.number(param) : attribute.default_value;
}

}  // namespace gauntlet::injectors::faults
