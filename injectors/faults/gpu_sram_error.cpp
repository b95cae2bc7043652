// gpu_sram_error{containment, reset}: an uncorrectable ECC error in a GPU's
// on-chip SRAM (register file, caches), the class Llama 3 counts 19 of its
// 419 unexpected interruptions for (Table 5). DCGM counts one double-bit
// error and no row remap (SRAM has no rows to remap). NVIDIA's XID catalog:
// contained (XID 94), only the processes using the GPU die, restarting the
// application is enough and the GPU stays healthy; uncontained (XID 95), the
// GPU needs a reset and is out until it is done. Either way the training
// processes die at once with CUDA's uncorrectable-ECC error.
#include <algorithm>

#include "injectors/faults/builtin_faults.hpp"
#include "models/telemetry/gpu_errors.hpp"
#include "models/telemetry/gpu_failure_calibration.hpp"

namespace gauntlet::injectors::faults {
namespace {

namespace k = models::calibration;

bool contained(const FaultSpec& fault) { return fault.params.text("containment") != "uncontained"; }

void act(FaultEffectScope& scope) {
  const FaultSpec& fault = scope.fault();
  const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
  const auto& jobs = scope.jobs();
  const int host = id.host, gpu = id.index;
  if (contained(fault)) {
    scope.call_at(
        fault.start,
        [&jobs, host, gpu] {
          for (models::TrainingJob* job : jobs) job->crash_on_gpu(host, gpu, kUncorrectableEccError);
        },
        false);
    return;
  }
  const sim::Nanos back = std::min(scope.end(), fault.start + calibrated_duration(fault, "reset", k::kGpuResetTime));
  fail_gpu_until(scope, host, gpu, fault.start, back, kUncorrectableEccError);
}

}  // namespace

FaultDescriptor gpu_sram_error() {
  FaultDescriptor d;
  d.spec = {.name = "gpu_sram_error",
            .summary = "an uncorrectable SRAM ECC error: contained (XID 94) or uncontained (XID 95)",
            .targets = {sim::ComponentKind::gpu},
            .params = {{.name = "containment",
                        .kind = ParamKind::choice,
                        .help = "contained (XID 94, the default: the job restarts, the GPU stays healthy) or "
                                "uncontained (XID 95: the GPU is out for its reset)",
                        .choices = {"contained", "uncontained"},
                        .samples = {"contained", "uncontained"}},
                       {.name = "reset",
                        .kind = ParamKind::duration,
                        .unit = "ns",
                        .help = "how long an uncontained error's reset keeps the GPU out, at most until the fault "
                                "ends (default: gpu_failure.reset_time)",
                        .samples = {"20s"},
                        .calibrated = &models::calibration::kGpuResetTime}},
            .fail_stop = true};
  d.simulated = SimulatedFault{
      .apply = act,
      .telemetry = [](const FaultSpec& fault, sim::Nanos, const sim::Topology&, models::TelemetryEffects& effects) {
        const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
        models::GpuErrorEvent error;
        error.at = fault.start;
        error.xid = contained(fault) ? models::xid::kContainedEcc : models::xid::kUncontainedEcc;
        error.ecc_dbe = 1;
        effects.add_gpu_error(id.host, id.index, error);
      }};
  return d;
}

}  // namespace gauntlet::injectors::faults
