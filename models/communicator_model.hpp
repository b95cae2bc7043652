#pragma once
// How the job's NCCL communicators and their RoCE queue pairs react to the
// state of the cluster: which RNIC takes over a dead one, how much goodput a
// lossy link leaves, and when the transport gives up and fails the
// collective (a link down longer than the transport timeout, or loss so high
// that some packet of every exchange loses all its tries).
//
// Fault injectors change the cluster's state (links, RNICs); this model owns
// the transport's verdicts on that state, so that injectors do not encode
// transport rules and mitigation policies ask it instead of restating them.
#include <optional>
#include <vector>

#include "models/placement.hpp"  // nccl_fallback_rnic
#include "models/roce_transport.hpp"
#include "sim/network_calibration.hpp"
#include "sim/network_engine.hpp"

namespace gauntlet::models {

class TrainingJob;

// RoCE's transport gives up on a connection after its retries span this long
// (retry count x timeout). 4 s is the detection margin SkeletonHunter reports
// for connectivity anomalies.
inline constexpr sim::Nanos kDefaultTransportTimeout = 4 * sim::kSecond;

// Jobs sharing the cluster each have communicators of their own: a verdict
// on a link fails the collective of every job whose traffic crosses it.
class CommunicatorModel {
 public:
  CommunicatorModel(sim::NetworkEngine& engine, std::vector<TrainingJob*> jobs, RoceTransportParams transport = {});
  CommunicatorModel(sim::NetworkEngine& engine, TrainingJob& job, RoceTransportParams transport = {})
      : CommunicatorModel(engine, std::vector<TrainingJob*>{&job}, transport) {}

  void set_transport_timeout(sim::Nanos timeout) { transport_timeout_ = timeout; }
  sim::Nanos transport_timeout() const { return transport_timeout_; }

  // The packet engine's measurements the transport's verdicts read
  // (default: the shipped table); it must outlive this model.
  void set_network_calibration(const sim::NetworkCalibration& table) { calibration_ = &table; }
  const sim::NetworkCalibration& network_calibration() const { return *calibration_; }

  // What RoCE's go-back-N makes of this loss rate on a link, per the table:
  // the goodput fraction it leaves and the retransmissions and NAKs it costs.
  sim::LossResponse link_loss(sim::LinkId link, double loss) const;
  double link_goodput(sim::LinkId link, double loss) const { return link_loss(link, loss).goodput; }
  // The retransmission timeouts each transfer across a link losing `loss`
  // draws (models/roce_transport.hpp transfer_stalls).
  sim::TransferStalls transfer_stalls(sim::LinkId link, double loss) const;
  // The engine's per-transfer stalls, or null on an engine that draws none
  // (one with packets acts loss out itself).
  sim::TransportStalls* transport_stalls() const { return dynamic_cast<sim::TransportStalls*>(&engine_); }
  // Whether loss this high exhausts the queue pairs' retries.
  bool exhausts_retries(double loss) const;

  // The link went down at `down_at`: one transport timeout later, if it is
  // still down, the collective of each job whose traffic crosses it fails.
  void watch_outage(sim::Nanos down_at, sim::LinkId link);
  // The link loses enough to exhaust retries from `from` to `until`: each
  // transport timeout the job spends crossing it, its collective fails
  // (again after a restart that still crosses it).
  void watch_retry_exhaustion(sim::Nanos from, sim::Nanos until, sim::LinkId link);

  // Times of the outage verdicts scheduled so far, in scheduling order. The
  // job must not fast-forward across one; retry exhaustion needs no bound
  // because the job's steady run ends with the failure it causes.
  const std::vector<sim::Nanos>& verdict_times() const { return verdict_times_; }

 private:
  sim::NetworkEngine& engine_;
  std::vector<TrainingJob*> jobs_;
  RoceTransportParams transport_;
  const sim::NetworkCalibration* calibration_ = &sim::shipped_network_calibration();
  sim::Nanos transport_timeout_ = kDefaultTransportTimeout;
  std::vector<sim::Nanos> verdict_times_;
};

}  // namespace gauntlet::models
