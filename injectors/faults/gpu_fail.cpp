// gpu_fail{xid}: a GPU stops; the job hangs until its watchdog fires, then
// restarts without it (on a spare) or waits for the repair at the fault's end.
// The driver logs the failure's XID (79 fallen off the bus by default; 48
// double-bit ECC, 94 contained and 95 uncontained ECC errors, which also
// count a double-bit error and a remapped row; 74 NVLink; 119 GSP timeout),
// which the GPU's DCGM fields show from the fault's start.
#include "injectors/faults/builtin_faults.hpp"
#include "models/telemetry/gpu_errors.hpp"

namespace gauntlet::injectors::faults {
namespace {

std::uint32_t xid_of(const FaultSpec& fault) {
  return fault.params.has("xid") ? static_cast<std::uint32_t>(fault.params.number("xid"))
                                 : models::xid::kFallenOffTheBus;
}

std::optional<ParamProblem> check_xid(const FaultSpec& fault) {
  if (!fault.params.has("xid")) return std::nullopt;
  const double x = fault.params.number("xid");
  if (x == static_cast<std::uint32_t>(x) && models::xid::is_gpu_failure(static_cast<std::uint32_t>(x)))
    return std::nullopt;
  return ParamProblem{"xid", "must be an XID a failing GPU raises: 48, 74, 79, 94, 95 or 119"};
}

}  // namespace

void fail_target_gpu_during(FaultEffectScope& scope) {
  const sim::ComponentId id = *sim::ComponentId::parse(scope.fault().target);
  const auto& jobs = scope.jobs();
  const int host = id.host, gpu = id.index;
  scope.call_during(
      [&jobs, host, gpu] {
        for (models::TrainingJob* job : jobs) job->fail_gpu(host, gpu);
      },
      [&jobs, host, gpu] {
        for (models::TrainingJob* job : jobs) job->repair_gpu(host, gpu);
      },
      false);
}

void fail_gpu_until(FaultEffectScope& scope, int host, int gpu, sim::Nanos at, sim::Nanos back,
                    const std::string& error) {
  const auto& jobs = scope.jobs();
  scope.call_at(
      at,
      [&jobs, host, gpu, error] {
        for (models::TrainingJob* job : jobs) job->fail_gpu(host, gpu, error);
      },
      false);
  if (back < scope.horizon())
    scope.call_at(
        back,
        [&jobs, host, gpu] {
          for (models::TrainingJob* job : jobs) job->repair_gpu(host, gpu);
        },
        false);
}

FaultDescriptor gpu_fail() {
  FaultDescriptor d;
  d.spec = {.name = "gpu_fail",
            .summary = "a GPU failing",
            .targets = {sim::ComponentKind::gpu},
            .params = {{.name = "xid",
                        .kind = ParamKind::positive_number,
                        .help = "the XID the driver logs: 79 (default), 48, 74, 94, 95 or 119",
                        .simulated_only = true}},
            .fail_stop = true,
            .check = check_xid};
  d.simulated = SimulatedFault{
      .telemetry = [](const FaultSpec& fault, sim::Nanos, const sim::Topology&, models::TelemetryEffects& effects) {
        const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
        effects.add_gpu_error(id.host, id.index, models::GpuErrorEvent::for_failure(fault.start, xid_of(fault)));
      }};
  d.simulated->apply = fail_target_gpu_during;
  return d;
}

}  // namespace gauntlet::injectors::faults
