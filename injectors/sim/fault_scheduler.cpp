#include "injectors/sim/fault_scheduler.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "sim/contract.hpp"

namespace gauntlet::injectors {

const sim::Topology& FaultEffectScope::topology() const { return scheduler_.engine_.topology(); }
const std::vector<models::TrainingJob*>& FaultEffectScope::jobs() { return scheduler_.jobs_; }
models::CommunicatorModel& FaultEffectScope::communicator() { return scheduler_.communicator_; }
sim::PacketFaults* FaultEffectScope::packets() { return scheduler_.engine_.packet_faults(); }

void FaultEffectScope::set_during(const std::string& component, const PathEffect& effect) {
  set_at(start(), component, &effect);
  if (end() != kOpenEnded) set_at(end(), component, nullptr);
}

void FaultEffectScope::set_at(sim::Nanos at, const std::string& component, const PathEffect* effect,
                              bool bounds_steady_runs) {
  scheduler_.schedule_change(at, component, fault_.id, effect, bounds_steady_runs);
}

void FaultEffectScope::call_at(sim::Nanos at, std::function<void()> action, bool bounds_steady_runs) {
  scheduler_.schedule_job(at, std::move(action), bounds_steady_runs);
}

void FaultEffectScope::call_during(std::function<void()> on, std::function<void()> off, bool bounds_steady_runs) {
  call_at(start(), std::move(on), bounds_steady_runs);
  if (end() != kOpenEnded) call_at(end(), std::move(off), bounds_steady_runs);
}

void FaultEffectScope::watch_outage(sim::Nanos down_at, const std::string& link) {
  const sim::Topology& t = topology();
  const sim::ComponentId id = *sim::ComponentId::parse(link);
  const sim::LinkId link_id =
      id.kind == sim::ComponentKind::nic ? t.host_link(t.endpoint(id.host, id.index)) : *t.link_of(id);
  communicator().watch_outage(down_at, link_id);
}

FaultScheduler::FaultScheduler(sim::NetworkEngine& engine, std::vector<models::TrainingJob*> jobs,
                               const SimulatedFaults& types, models::RoceTransportParams transport)
    : engine_(engine), jobs_(std::move(jobs)), types_(types), communicator_(engine, jobs_, transport) {}

void FaultScheduler::arm(const std::vector<FaultSpec>& faults, sim::Nanos horizon) {
  for (const FaultSpec& fault : faults) {
    const SimulatedFault* type = types_.simulated(fault.type);
    if (!type) throw std::invalid_argument("fault type '" + fault.type + "' is not simulated by this engine yet");
    if (!type->apply) continue;
    fault_ends_[fault.id] = fault.end().value_or(kOpenEnded);
    FaultEffectScope scope(*this, fault, horizon);
    type->apply(scope);
  }
  const std::vector<sim::Nanos>& verdicts = communicator_.verdict_times();
  change_times_.insert(change_times_.end(), verdicts.begin(), verdicts.end());
  std::sort(change_times_.begin(), change_times_.end());
}

sim::Nanos FaultScheduler::next_change() const {
  auto it = std::upper_bound(change_times_.begin(), change_times_.end(), engine_.now());
  return it == change_times_.end() ? kOpenEnded : *it;
}

void FaultScheduler::check_windows_closed() const {
  const sim::Nanos now = engine_.now();
  for (const auto& [component, effects] : active_)
    for (const auto& [fault_id, effect] : effects) {
      const auto end = fault_ends_.find(fault_id);
      GAUNTLET_INVARIANT(end != fault_ends_.end() && end->second >= now,
                         "fault " + fault_id + "'s effect on " + component + " is still in force at " +
                             sim::format_duration(now) + ", after its window ended");
    }
}

void FaultScheduler::schedule_job(sim::Nanos at, std::function<void()> action, bool bounds_steady_runs) {
  if (bounds_steady_runs) change_times_.push_back(at);
  engine_.schedule_at(at, std::move(action));
}

void FaultScheduler::schedule_change(sim::Nanos at, const std::string& component, const std::string& key,
                                     const PathEffect* effect, bool bounds_steady_runs) {
  if (bounds_steady_runs) change_times_.push_back(at);
  std::optional<PathEffect> copy;
  if (effect) copy = *effect;
  engine_.schedule_at(at, [this, component, key, copy] { set_effect(component, key, copy ? &*copy : nullptr); });
}

void FaultScheduler::set_effect(const std::string& component, const std::string& key, const PathEffect* effect) {
  if (effect)
    active_[component][key] = *effect;
  else
    active_[component].erase(key);
  refresh(component);
}

void FaultScheduler::refresh(const std::string& component) {
  PathEffect total;
  for (const auto& [key, e] : active_[component]) {
    total.bandwidth_factor *= e.bandwidth_factor;
    total.extra_latency += e.extra_latency;
    total.down = total.down || e.down;
    total.speed_factor *= e.speed_factor;
  }
  const sim::ComponentId id = *sim::ComponentId::parse(component);
  const sim::Topology& topology = engine_.topology();
  const sim::PathState state{total.bandwidth_factor, total.extra_latency, !total.down};
  switch (id.kind) {
    case sim::ComponentKind::host_link:
    case sim::ComponentKind::fabric_link:
      engine_.set_link_state(*topology.link_of(id), state);
      break;
    case sim::ComponentKind::flow_table:
      engine_.set_endpoint_state(topology.endpoint(id.host, id.index), state);
      break;
    case sim::ComponentKind::gpu:
      for (models::TrainingJob* job : jobs_) job->set_gpu_speed(id.host, id.index, total.speed_factor);
      break;
    default:
      break;
  }
}

}  // namespace gauntlet::injectors
