#include "models/communicator_model.hpp"

#include "models/training_job.hpp"

namespace gauntlet::models {

CommunicatorModel::CommunicatorModel(sim::NetworkEngine& engine, std::vector<TrainingJob*> jobs,
                                     RoceTransportParams transport)
    : engine_(engine), jobs_(std::move(jobs)), transport_(transport) {}

sim::LossResponse CommunicatorModel::link_loss(sim::LinkId link, double loss) const {
  const double rate = engine_.topology().link_bytes_per_second(link);
  return calibration_->loss_response(loss, bdp_packets(rate, cross_spine_round_trip(engine_.topology()), transport_));
}

sim::TransferStalls CommunicatorModel::transfer_stalls(sim::LinkId link, double loss) const {
  return models::transfer_stalls(loss, engine_.topology().link_bytes_per_second(link) * 8 / 1e9,
                                 link_goodput(link, loss), transport_);
}

bool CommunicatorModel::exhausts_retries(double loss) const { return loss >= retry_exhaustion_loss(transport_); }

void CommunicatorModel::watch_outage(sim::Nanos down_at, sim::LinkId link) {
  const sim::Nanos verdict = down_at + transport_timeout_;
  verdict_times_.push_back(verdict);
  engine_.schedule_at(verdict, [this, link] {
    if (engine_.link_state(link).up) return;
    for (TrainingJob* job : jobs_)
      if (job->uses_link(link)) job->fail_collective("NCCL Error");
  });
}

void CommunicatorModel::watch_retry_exhaustion(sim::Nanos from, sim::Nanos until, sim::LinkId link) {
  for (sim::Nanos t = from + transport_timeout_; t < until; t += transport_timeout_)
    engine_.schedule_at(t, [this, link] {
      for (TrainingJob* job : jobs_)
        if (job->uses_link(link)) job->fail_collective("NCCL Error");
    });
}

}  // namespace gauntlet::models
