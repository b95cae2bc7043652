#include "harness/runner/tenants.hpp"

#include "models/host/job_view.hpp"
#include "models/spare_layout.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {

Tenants::Tenants(const Scenario& scenario, const sim::Topology& topology, sim::NetworkEngine& engine,
                 sim::TelemetryBus& observed_bus)
    : topology_(topology) {
  const std::vector<JobSpec> alone{scenario.job};
  const std::vector<JobSpec>& specs = scenario.shared() ? scenario.jobs : alone;
  observed_ = scenario.shared() ? scenario.observed_job : 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    sim::TelemetryBus* bus = &observed_bus;
    if (i != observed_) bus = unobserved_buses_.emplace_back(std::make_unique<sim::TelemetryBus>()).get();
    jobs_.push_back(std::make_unique<models::TrainingJob>(specs[i], topology, engine, *bus));
    const models::HostPlan plan = models::plan_hosts(specs[i], topology);
    std::set<int>& held = held_hosts_.emplace_back(plan.job_hosts.begin(), plan.job_hosts.end());
    held.insert(plan.spares.begin(), plan.spares.end());
  }
  if (scenario.shared() && scenario.detectors_scope == DetectorScope::tenant) visible_ = held_hosts_[observed_];
  cluster_scope_ = scenario.shared() && scenario.detectors_scope == DetectorScope::cluster;
}

std::vector<models::TrainingJob*> Tenants::all() const {
  std::vector<models::TrainingJob*> out;
  for (const auto& job : jobs_) out.push_back(job.get());
  return out;
}

void Tenants::set_fast_forward(bool enabled) {
  for (const auto& job : jobs_) job->set_fast_forward(enabled);
}

void Tenants::start(sim::Nanos horizon) {
  for (const auto& job : jobs_) job->start(0, horizon);
}

void Tenants::drop_unobserved(sim::Nanos until) {
  for (const auto& bus : unobserved_buses_) (void)bus->drain_on_arena(until);
}

void Tenants::drain_unobserved(sim::Nanos until, const UnobservedBatch& use) {
  for (std::size_t k = 0, job = 0; k < unobserved_buses_.size(); ++k, ++job) {
    if (job == observed_) ++job;
    sim::ArenaBatch drained = unobserved_buses_[k]->drain_on_arena(until);
    use(k, *jobs_[job], drained.batch());
  }
}

models::SampleInputs Tenants::sample_inputs(const sim::NetworkEngine& engine) const {
  models::SampleInputs inputs = models::job_sample_inputs(*jobs_[observed_], engine);
  if (!cluster_scope_) return inputs;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    if (i == observed_) continue;
    const models::SampleInputs other = models::job_sample_inputs(*jobs_[i], engine);
    inputs.gpu_busy = [mine = inputs.gpu_busy, theirs = other.gpu_busy](int host, int gpu) {
      return mine(host, gpu) || theirs(host, gpu);
    };
    inputs.traffic_flowing = inputs.traffic_flowing || other.traffic_flowing;
    inputs.version = inputs.version * 1000003u + other.version;
  }
  return inputs;
}

bool Tenants::touches(std::size_t tenant, const std::string& target) const {
  if (target.empty()) return true;
  const auto id = sim::ComponentId::parse(target);
  if (!id) return true;  // not a component this cluster names: assume the worst
  const models::TrainingJob& job = *jobs_[tenant];
  const std::set<int>& held = held_hosts_[tenant];
  switch (id->kind) {
    case sim::ComponentKind::fabric_link:
      return job.uses_link(*topology_.link_of(*id));
    case sim::ComponentKind::spine:
      for (int leaf = 0; leaf < topology_.leaves(); ++leaf)
        if (job.uses_link(topology_.fabric_link(leaf, id->spine))) return true;
      return false;
    case sim::ComponentKind::leaf:
      for (int host : held)
        for (int nic = 0; nic < topology_.shape().rnics_per_host; ++nic)
          if (topology_.leaf_of(topology_.endpoint(host, nic)) == id->leaf) return true;
      return false;
    default:
      return held.count(id->host) > 0;
  }
}

std::map<std::string, std::vector<std::string>> Tenants::fault_jobs(
    const std::vector<injectors::FaultSpec>& faults) const {
  std::map<std::string, std::vector<std::string>> out;
  for (const injectors::FaultSpec& fault : faults) {
    std::vector<std::string>& names = out[fault.id];
    for (std::size_t i = 0; i < jobs_.size(); ++i)
      if (touches(i, fault.target)) names.push_back(jobs_[i]->spec().name);
  }
  return out;
}

}  // namespace gauntlet::harness
