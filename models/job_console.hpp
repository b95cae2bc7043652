#pragma once
// The job-control interface over a simulated training job: levers go to the
// job, measurements come from the telemetry it published. This is all a
// policy or service is handed; the job's fault state stays behind it.
#include "models/job_control.hpp"
#include "models/training_job.hpp"

namespace gauntlet::models {

class JobConsole final : public JobControl {
 public:
  JobConsole(TrainingJob& job, const JobMeasurements& measured) : job_(job), measured_(measured) {}

  const JobSpec& spec() const override { return job_.spec(); }
  const Placement& placement() const override { return job_.placement(); }
  const sim::Topology& topology() const override { return job_.topology(); }
  // What the rank's NCCL log line names: the endpoint its communicators use.
  sim::EndpointId rank_endpoint(int rank) const override { return job_.rank_endpoint(rank); }
  JobState state() const override { return job_.state(); }
  const std::vector<IterationSpan>& timeline() const override { return job_.timeline(); }
  const WorkSplit& work_split() const override { return job_.work_split(); }
  int spares_left() const override { return job_.spares_left(); }
  const std::set<int>& isolated_hosts() const override { return job_.isolated_hosts(); }
  const JobMeasurements& measurements() const override { return measured_; }

  int isolate(const std::vector<std::string>& components) override { return job_.isolate(components); }
  void apply_work_split(WorkSplit split, sim::Nanos pause) override { job_.apply_work_split(std::move(split), pause); }
  bool drain_fabric_link(sim::LinkId link, sim::Nanos pause) override { return job_.drain_fabric_link(link, pause); }
  void move_nic_traffic(int host, int nic, int to_nic, sim::Nanos pause) override {
    job_.move_nic_traffic(host, nic, to_nic, pause);
  }
  void hold(std::function<void()> on_held) override { job_.hold(std::move(on_held)); }
  void release() override { job_.release(); }

 private:
  TrainingJob& job_;
  const JobMeasurements& measured_;
};

}  // namespace gauntlet::models
