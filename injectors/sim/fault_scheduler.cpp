#include "injectors/sim/fault_scheduler.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace gauntlet::injectors {
namespace {

constexpr sim::Nanos kForever = std::numeric_limits<sim::Nanos>::max();

}  // namespace

FaultScheduler::FaultScheduler(sim::NetworkEngine& engine, models::TrainingJob& job,
                               models::RoceTransportParams transport)
    : engine_(engine), job_(job), transport_(transport) {}

bool FaultScheduler::simulated(FaultType type) {
  switch (type) {
    case FaultType::link_loss:
    case FaultType::port_flap:
    case FaultType::stale_flow_table:
    case FaultType::gpu_throttle:
    case FaultType::congestion:
    case FaultType::cpu_contention:
    case FaultType::agent_hang:   // the data path is unaffected by design
    case FaultType::clock_skew:   // only telemetry timestamps move
    case FaultType::nic_down:
    case FaultType::gpu_fail:
    case FaultType::node_crash:
    case FaultType::reconfigure:
      return true;
    default:
      return false;
  }
}

sim::Nanos FaultScheduler::round_trip() const {
  // A cross-spine path has four hops each way.
  return 8 * engine_.topology().shape().link_latency;
}

double FaultScheduler::link_loss_factor(sim::LinkId link, double loss) const {
  const double rate = engine_.topology().link_bytes_per_second(link);
  return models::go_back_n_goodput(loss, models::window_packets(rate, round_trip(), transport_));
}

void FaultScheduler::arm(const std::vector<FaultSpec>& faults, sim::Nanos horizon) {
  for (const FaultSpec& fault : faults) {
    if (!simulated(fault.type))
      throw std::invalid_argument("fault type '" + std::string(fault_type_name(fault.type)) +
                                  "' is not simulated by this engine yet");
    schedule_fault(fault, horizon);
  }
  std::sort(change_times_.begin(), change_times_.end());
}

sim::Nanos FaultScheduler::next_change() const {
  auto it = std::upper_bound(change_times_.begin(), change_times_.end(), engine_.now());
  return it == change_times_.end() ? kForever : *it;
}

void FaultScheduler::schedule_fault(const FaultSpec& fault, sim::Nanos horizon) {
  const sim::Nanos start = fault.start;
  const sim::Nanos end = fault.end().value_or(kForever);
  const FaultParams& p = fault.params;
  const sim::Topology& topology = engine_.topology();
  const auto id = sim::ComponentId::parse(fault.target);
  auto apply_window = [&](const std::string& component, const Effect& effect) {
    schedule_change(start, component, fault.id, &effect);
    if (end != kForever) schedule_change(end, component, fault.id, nullptr);
  };
  switch (fault.type) {
    case FaultType::link_loss: {
      Effect e;
      e.bandwidth_factor = link_loss_factor(*topology.link_of(*id), p.rate);
      apply_window(fault.target, e);
      if (p.rate >= models::retry_exhaustion_loss(transport_))
        schedule_retry_exhaustion(start, std::min(end, horizon), *topology.link_of(*id));
      break;
    }
    case FaultType::congestion: {
      Effect e;
      e.bandwidth_factor = 1.0 - p.load;  // background traffic's share of capacity
      if (id->kind == sim::ComponentKind::leaf || id->kind == sim::ComponentKind::spine) {
        for (int link = 0; link < topology.links(); ++link) {
          const sim::ComponentId c = topology.link_component(link);
          const bool on_switch = id->kind == sim::ComponentKind::leaf ? c.leaf == id->leaf
                                                                       : c.kind == sim::ComponentKind::fabric_link &&
                                                                             c.spine == id->spine;
          if (on_switch) apply_window(c.str(), e);
        }
      } else {
        apply_window(fault.target, e);
      }
      break;
    }
    case FaultType::stale_flow_table: {
      // The slow software path: added latency, a throughput cap and its own
      // (small) loss, on the one RNIC's traffic only.
      Effect e;
      e.extra_latency = p.extra_latency;
      const sim::EndpointId endpoint = topology.endpoint(id->host, id->index);
      const double line = topology.link_bytes_per_second(topology.host_link(endpoint));
      if (p.cap_gbps > 0) e.bandwidth_factor = std::min(1.0, p.cap_gbps * 1e9 / 8.0 / line);
      e.bandwidth_factor *= link_loss_factor(topology.host_link(endpoint), p.loss);
      // The stale entries forward on the fast path until they are invalidated.
      const sim::Nanos slow_from = fault.effect_start();
      if (slow_from >= end) break;
      schedule_change(slow_from, fault.target, fault.id, &e);
      if (end != kForever) schedule_change(end, fault.target, fault.id, nullptr);
      break;
    }
    case FaultType::port_flap: {
      std::string link = fault.target;
      if (id->kind == sim::ComponentKind::nic)
        link = topology.link_name(topology.host_link(topology.endpoint(id->host, id->index)));
      static const Effect kDown{1.0, 0, true, 1.0};
      const sim::Nanos last = std::min(end, horizon);
      for (sim::Nanos t = start; t < last; t += p.period) {
        schedule_change(t, link, fault.id, &kDown);
        schedule_change(std::min(t + p.down, last), link, fault.id, nullptr);
        if (std::min(t + p.down, last) - t > transport_timeout_) schedule_transport_check(t, link);
      }
      break;
    }
    case FaultType::nic_down: {
      // NCCL moves the RNIC's GPUs to the fallback before anything is sent
      // on the dead link; with no other RNIC on the host there is nothing to
      // fall back to and the transport times out.
      const int rnics = topology.shape().rnics_per_host;
      int fallback = 0;
      if (!p.fallback.empty()) fallback = sim::ComponentId::parse(p.fallback)->index;
      else if (id->index == 0) fallback = rnics > 1 ? 1 : -1;
      const int host = id->host, nic = id->index;
      const std::string link = topology.link_name(topology.host_link(topology.endpoint(host, nic)));
      if (fallback >= 0 && fallback != nic) {
        schedule_job(start, [this, host, nic, fallback] { job_.set_nic_fallback(host, nic, fallback); });
        if (end != kForever) schedule_job(end, [this, host, nic] { job_.clear_nic_fallback(host, nic); });
      }
      static const Effect kDown{1.0, 0, true, 1.0};
      apply_window(link, kDown);
      if (fallback < 0 || fallback == nic) schedule_transport_check(start, link);
      break;
    }
    case FaultType::gpu_fail: {
      const int host = id->host, gpu = id->index;
      schedule_job(start, [this, host, gpu] { job_.fail_gpu(host, gpu); }, false);
      if (end != kForever) schedule_job(end, [this, host, gpu] { job_.repair_gpu(host, gpu); }, false);
      break;
    }
    case FaultType::node_crash: {
      // A crashed node's ports go dark with it; the job stops first, so its
      // links going down does not cut a steady run short.
      const int host = id->host;
      schedule_job(start, [this, host] { job_.fail_host(host); }, false);
      static const Effect kDown{1.0, 0, true, 1.0};
      for (int nic = 0; nic < topology.shape().rnics_per_host; ++nic) {
        const std::string link = topology.link_name(topology.host_link(topology.endpoint(host, nic)));
        schedule_change(start, link, fault.id, &kDown, false);
        if (end != kForever) schedule_change(end, link, fault.id, nullptr);
      }
      if (end != kForever) schedule_job(end, [this, host] { job_.repair_host(host); }, false);
      break;
    }
    case FaultType::reconfigure:
      schedule_job(start, [this] { job_.reconfigure(); });
      break;
    case FaultType::gpu_throttle: {
      Effect e;
      e.speed_factor = 1.0 - p.slowdown;
      apply_window(fault.target, e);
      break;
    }
    case FaultType::cpu_contention: {
      // Data loading and kernel launch share the host CPU: every GPU of the
      // host loses the same fraction of its step.
      Effect e;
      e.speed_factor = 1.0 - p.slowdown;
      for (int g = 0; g < topology.shape().gpus_per_host; ++g)
        apply_window(sim::ComponentId::make_gpu(id->host, g).str(), e);
      break;
    }
    default:
      break;  // no data-path effect
  }
}

void FaultScheduler::schedule_job(sim::Nanos at, std::function<void()> action, bool bounds_steady_runs) {
  if (bounds_steady_runs) change_times_.push_back(at);
  engine_.schedule_at(at, std::move(action));
}

// When the link is still down a transport timeout after it went down and the
// job's traffic crosses it, the collective fails and the job crashes.
void FaultScheduler::schedule_transport_check(sim::Nanos down_at, const std::string& link) {
  const sim::LinkId id = *engine_.topology().link_of(*sim::ComponentId::parse(link));
  schedule_job(down_at + transport_timeout_, [this, id] {
    if (!engine_.link_state(id).up && job_.uses_link(id)) job_.fail_collective("NCCL Error");
  });
}

// Loss this high makes some packet of every exchange lose all its tries:
// each transport timeout the job spends crossing the link, its collective
// fails. Checked again through the window, so a restarted job that still
// crosses the link fails again.
void FaultScheduler::schedule_retry_exhaustion(sim::Nanos from, sim::Nanos until, sim::LinkId link) {
  for (sim::Nanos t = from + transport_timeout_; t < until; t += transport_timeout_)
    schedule_job(t, [this, link] {
      if (job_.uses_link(link)) job_.fail_collective("NCCL Error");
    }, /*bounds_steady_runs=*/false);
}

void FaultScheduler::schedule_change(sim::Nanos at, const std::string& component, const std::string& key,
                                     const Effect* effect, bool bounds_steady_runs) {
  if (bounds_steady_runs) change_times_.push_back(at);
  std::optional<Effect> copy;
  if (effect) copy = *effect;
  engine_.schedule_at(at, [this, component, key, copy] { set_effect(component, key, copy ? &*copy : nullptr); });
}

void FaultScheduler::set_effect(const std::string& component, const std::string& key, const Effect* effect) {
  if (effect)
    active_[component][key] = *effect;
  else
    active_[component].erase(key);
  refresh(component);
}

void FaultScheduler::refresh(const std::string& component) {
  Effect total;
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
    case sim::ComponentKind::fabric_link: engine_.set_link_state(*topology.link_of(id), state); break;
    case sim::ComponentKind::flow_table: engine_.set_endpoint_state(topology.endpoint(id.host, id.index), state); break;
    case sim::ComponentKind::gpu: job_.set_gpu_speed(id.host, id.index, total.speed_factor); break;
    default: break;
  }
}

}  // namespace gauntlet::injectors
