// gpu_gsp_error{stale_after}: a GPU's system processor (GSP) stops
// answering, the class Llama 3 counts 17 of its 419 unexpected
// interruptions for (Table 5). The driver's RPCs to the GSP time out: it
// logs XID 119 (NVIDIA's XID catalog: GSP RPC timeout) and every request to
// the GPU hangs, DCGM's field reads included, so the GPU's series go stale
// instead of reporting values: its last sample, stale_after into the fault,
// carries the XID, then none until the fault ends (the GPU is reset). The
// GPU does no more work: the job hangs in its next collective until the
// watchdog fires, then restarts on a spare or waits for the reset.
#include "injectors/faults/builtin_faults.hpp"
#include "models/telemetry/gpu_errors.hpp"
#include "models/telemetry/gpu_failure_calibration.hpp"

namespace gauntlet::injectors::faults {

FaultDescriptor gpu_gsp_error() {
  FaultDescriptor d;
  d.spec = {.name = "gpu_gsp_error",
            .summary = "a GPU's system processor hanging: XID 119, the GPU's DCGM series go stale",
            .targets = {sim::ComponentKind::gpu},
            .params = {{.name = "stale_after",
                        .kind = ParamKind::duration,
                        .unit = "ns",
                        .help = "how long DCGM still reports the GPU after its GSP hangs (default: "
                                "gpu_failure.gsp_stale_after)",
                        .samples = {"1s", "3s"},
                        .calibrated = &models::calibration::kGspStaleAfter}},
            .fail_stop = true};
  d.simulated = SimulatedFault{
      .telemetry = [](const FaultSpec& fault, sim::Nanos end, const sim::Topology&, models::TelemetryEffects& effects) {
        const sim::ComponentId id = *sim::ComponentId::parse(fault.target);
        effects.add_xid(id.host, id.index, fault.start, models::xid::kGspTimeout);
        const sim::Nanos stale_from =
            fault.start + calibrated_duration(fault, "stale_after", models::calibration::kGspStaleAfter);
        effects.add_gpu_silence(id.host, id.index, stale_from, end);
      }};
  d.simulated->apply = fail_target_gpu_during;
  return d;
}

}  // namespace gauntlet::injectors::faults
