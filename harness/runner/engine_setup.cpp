#include "harness/runner/engine_setup.hpp"

#include "models/calibration.hpp"
#include "models/dcqcn_calibration.hpp"
#include "models/packet_transport_calibration.hpp"
#include "models/pfc_watchdog_calibration.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/hybrid_engine.hpp"
#include "sim/packet/packet_engine.hpp"

namespace gauntlet::harness {
namespace {

constexpr double kMbpsInBytesPerSecond = 1e6 / 8;

// The NIC's DCQCN settings, from the firmware's units to the engine's.
void set_dcqcn_reaction(const sim::Calibration& calibration, sim::DcqcnParams& d) {
  namespace k = models::calibration;
  d.cnp_interval = calibration.duration(k::kDcqcnCnpInterval);
  d.alpha_update_period = calibration.duration(k::kDcqcnAlphaPeriod);
  d.alpha_gain = 1 - calibration.count(k::kDcqcnAlphaG) / 1024.0;
  d.initial_alpha = calibration.count(k::kDcqcnInitialAlpha) / 1024.0;
  d.rate_reduce_monitor_period = calibration.duration(k::kDcqcnMonitorPeriod);
  d.min_decrease_factor = calibration.count(k::kDcqcnMinDecFac) / 100.0;
  d.rate_increase_interval = calibration.duration(k::kDcqcnTimeReset);
  d.byte_counter = calibration.value(k::kDcqcnByteReset);
  d.fast_recovery_steps = calibration.count(k::kDcqcnThreshold);
  d.additive_increase = calibration.count(k::kDcqcnAiRate) * kMbpsInBytesPerSecond;
  d.hyper_increase = calibration.count(k::kDcqcnHaiRate) * kMbpsInBytesPerSecond;
  d.min_rate = calibration.count(k::kDcqcnMinRate) * kMbpsInBytesPerSecond;
}

}  // namespace

sim::RoceParams roce_params_from(const sim::Calibration& calibration) {
  namespace k = models::calibration;
  sim::RoceParams params;
  params.transport.ib_timeout = calibration.count(k::kIbTimeout);
  params.transport.retry_count = calibration.count(k::kIbRetryCount);
  params.transport.initial_retransmit_timeout = calibration.duration(k::kRetransmitInitialTimeout);
  params.transport.nak_interval = calibration.duration(k::kNakInterval);
  // One ECN setting for both engines: the flow engine's load profile and the
  // packet engine's switches.
  params.dcqcn.kmin_bytes = calibration.value(k::kEcnKmin);
  params.dcqcn.kmax_bytes = calibration.value(k::kEcnKmax);
  params.dcqcn.pmax = calibration.value(k::kEcnPmax);
  set_dcqcn_reaction(calibration, params.dcqcn);
  sim::PfcWatchdogParams& w = params.watchdog;
  w.switch_enabled = calibration.count(k::kPfcwdEnabled) == 1;
  w.detection_time = calibration.duration(k::kPfcwdDetectionTime);
  w.restoration_time = calibration.duration(k::kPfcwdRestorationTime);
  w.forward = calibration.count(k::kPfcwdForward) == 1;
  w.nic_enabled = calibration.count(k::kPfcwdNicEnabled) == 1;
  w.nic_stall_timeout = calibration.duration(k::kPfcwdNicStallTimeout);
  return params;
}

std::unique_ptr<sim::NetworkEngine> make_engine(const Scenario& scenario, const sim::Topology& topology) {
  const sim::RoceParams roce = roce_params_from(scenario.calibration);
  if (scenario.engine == "packet") return std::make_unique<sim::PacketEngine>(topology, scenario.seed, roce);
  if (scenario.engine == "hybrid") {
    sim::HybridParams params;
    params.roce = roce;
    return std::make_unique<sim::HybridEngine>(topology, scenario.seed, params);
  }
  return std::make_unique<sim::FlowEngine>(topology, scenario.seed);
}

}  // namespace gauntlet::harness
