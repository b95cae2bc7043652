#include "models/container.hpp"

#include <algorithm>

#include "sim/component_id.hpp"

namespace gauntlet::models {

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::gpu_failed:
      return "gpu_failed";
    case StopReason::host_failed:
      return "host_failed";
    case StopReason::isolated:
      return "isolated";
    case StopReason::restart:
      return "restart";
    case StopReason::reconfigure:
      return "reconfigure";
  }
  return "restart";
}

bool Container::holds_gpu(int gpu) const { return std::find(gpus.begin(), gpus.end(), gpu) != gpus.end(); }

ContainerSet::ContainerSet(std::string job_name, const sim::Topology& topology, sim::TelemetryBus* bus)
    : job_(std::move(job_name)),
      topology_(topology),
      bus_(bus),
      live_on_host_(static_cast<std::size_t>(topology.hosts()), -1),
      vf_at_(static_cast<std::size_t>(topology.endpoints()), {-1, -1}),
      vfs_in_use_(static_cast<std::size_t>(topology.endpoints()), 0) {}

// 10.<slot high>.<slot low>.<nic + 1>: one /24 per slot, stable across
// incarnations and hosts.
std::uint32_t ContainerSet::overlay_address(int slot, int nic) {
  return (10u << 24) | (static_cast<std::uint32_t>(slot) & 0xffffu) << 8 | static_cast<std::uint32_t>(nic + 1);
}

// Per slot, the rules of its container: one per (own RNIC, peer VF on
// another host) its workers exchange data with.
std::vector<std::vector<VSwitchRule>> ContainerSet::derive_rules(const Placement& placement) const {
  const int per_host = topology_.shape().gpus_per_host;
  std::vector<std::vector<VSwitchRule>> rules(static_cast<std::size_t>(placement.hosts_used()));
  auto connect = [&](int a, int b) {
    const RankPlace& pa = placement.rank(a);
    const RankPlace& pb = placement.rank(b);
    if (pa.host == pb.host) return;  // NVLink: never on the overlay
    rules[static_cast<std::size_t>(a / per_host)].push_back(
        {pa.endpoint, overlay_address(b / per_host, topology_.nic_of(pb.endpoint)), pb.endpoint});
    rules[static_cast<std::size_t>(b / per_host)].push_back(
        {pb.endpoint, overlay_address(a / per_host, topology_.nic_of(pa.endpoint)), pa.endpoint});
  };
  for (const DpGroup& ring : placement.dp_groups())  // each rank and its successor; duplicates go below
    for (std::size_t i = 0; ring.ranks.size() > 1 && i < ring.ranks.size(); ++i)
      connect(ring.ranks[i], ring.ranks[(i + 1) % ring.ranks.size()]);
  for (const PipelineEdge& edge : placement.pipeline_edges()) connect(edge.sender, edge.receiver);
  for (const DpGroup& group : placement.ep_groups())
    for (std::size_t i = 0; i < group.ranks.size(); ++i)
      for (std::size_t j = i + 1; j < group.ranks.size(); ++j) connect(group.ranks[i], group.ranks[j]);
  for (auto& own : rules) {
    std::sort(own.begin(), own.end());
    own.erase(std::unique(own.begin(), own.end()), own.end());
  }
  return rules;
}

void ContainerSet::start_all(sim::Nanos now, const Placement& placement) {
  const int per_host = topology_.shape().gpus_per_host;
  std::vector<std::vector<VSwitchRule>> rules = derive_rules(placement);
  for (int slot = 0; slot < placement.hosts_used(); ++slot) {
    Container c;
    c.slot = slot;
    c.incarnation = incarnation_;
    c.id = job_ + "/c" + std::to_string(slot) + "." + std::to_string(incarnation_);
    c.host = placement.hosts()[static_cast<std::size_t>(slot)];
    c.started_at = now;
    for (int r = slot * per_host; r < std::min(placement.ranks(), (slot + 1) * per_host); ++r) {
      const RankPlace& place = placement.rank(r);
      c.gpus.push_back(place.gpu);
      const bool attached =
          std::any_of(c.vfs.begin(), c.vfs.end(), [&](const VirtualFunction& vf) { return vf.rnic == place.endpoint; });
      if (attached) continue;
      // The lowest VF of the RNIC no live container holds.
      std::uint32_t& in_use = vfs_in_use_[static_cast<std::size_t>(place.endpoint)];
      int index = 0;
      while (index < 31 && (in_use >> index & 1u)) ++index;
      in_use |= 1u << index;
      c.vfs.push_back({place.endpoint, index, overlay_address(slot, topology_.nic_of(place.endpoint))});
    }
    std::sort(c.vfs.begin(), c.vfs.end(),
              [](const VirtualFunction& a, const VirtualFunction& b) { return a.rnic < b.rnic; });
    c.rules = std::move(rules[static_cast<std::size_t>(slot)]);
    const int index = static_cast<int>(containers_.size());
    live_on_host_[static_cast<std::size_t>(c.host)] = index;
    for (std::size_t v = 0; v < c.vfs.size(); ++v)
      vf_at_[static_cast<std::size_t>(c.vfs[v].rnic)] = {index, static_cast<int>(v)};
    live_.push_back(static_cast<std::size_t>(index));
    containers_.push_back(std::move(c));
    publish(containers_.back(), true);
  }
  ++incarnation_;
}

void ContainerSet::stop_all(sim::Nanos now, StopReason cause, const HostTrouble& trouble) {
  for (std::size_t index : live_) {
    Container& c = containers_[index];
    StopReason reason = cause;
    if (trouble.isolated.count(c.host)) {
      reason = StopReason::isolated;
    } else if (trouble.failed_hosts.count(c.host)) {
      reason = StopReason::host_failed;
    } else {
      auto it = trouble.failed_gpus.lower_bound({c.host, 0});
      if (it != trouble.failed_gpus.end() && it->first == c.host) reason = StopReason::gpu_failed;
    }
    c.stopped_at = now;
    c.stop_reason = reason;
    std::vector<VSwitchRule>().swap(c.rules);  // the vSwitch withdraws them
    live_on_host_[static_cast<std::size_t>(c.host)] = -1;
    for (const VirtualFunction& vf : c.vfs) {
      vf_at_[static_cast<std::size_t>(vf.rnic)] = {-1, -1};
      vfs_in_use_[static_cast<std::size_t>(vf.rnic)] &= ~(1u << vf.index);
    }
    publish(c, false);
  }
  live_.clear();
}

std::vector<const Container*> ContainerSet::live_at(sim::Nanos t) const {
  std::vector<const Container*> out;
  for (const Container& c : containers_)
    if (c.live_at(t)) out.push_back(&c);
  return out;
}

const Container* ContainerSet::container_of_gpu(int host, int gpu, sim::Nanos t) const {
  for (const Container& c : containers_)
    if (c.host == host && c.live_at(t) && c.holds_gpu(gpu)) return &c;
  return nullptr;
}

const Container* ContainerSet::live_on_host(int host) const {
  const int index = live_on_host_[static_cast<std::size_t>(host)];
  return index < 0 ? nullptr : &containers_[static_cast<std::size_t>(index)];
}

const VirtualFunction* ContainerSet::attached_vf(sim::EndpointId rnic) const {
  if (rnic < 0 || rnic >= static_cast<sim::EndpointId>(vf_at_.size())) return nullptr;
  const auto [container, vf] = vf_at_[static_cast<std::size_t>(rnic)];
  if (container < 0) return nullptr;
  return &containers_[static_cast<std::size_t>(container)].vfs[static_cast<std::size_t>(vf)];
}

std::optional<sim::EndpointId> ContainerSet::rule(sim::EndpointId rnic, std::uint32_t address) const {
  if (rnic < 0 || rnic >= static_cast<sim::EndpointId>(vf_at_.size())) return std::nullopt;
  const int container = vf_at_[static_cast<std::size_t>(rnic)].first;
  if (container < 0) return std::nullopt;
  const std::vector<VSwitchRule>& rules = containers_[static_cast<std::size_t>(container)].rules;
  auto it = std::lower_bound(rules.begin(), rules.end(), VSwitchRule{rnic, address, 0},
                             [](const VSwitchRule& a, const VSwitchRule& b) {
                               return std::pair(a.rnic, a.peer_address) < std::pair(b.rnic, b.peer_address);
                             });
  if (it == rules.end() || it->rnic != rnic || it->peer_address != address) return std::nullopt;
  return it->underlay;
}

void ContainerSet::publish(const Container& c, bool start) const {
  if (!bus_) return;
  telemetry::Record record;
  auto* e = record.mutable_container();
  e->set_kind(start ? telemetry::ContainerEvent::START : telemetry::ContainerEvent::STOP);
  e->set_time_ns(start ? c.started_at : *c.stopped_at);
  e->set_container(c.id);
  e->set_host(sim::ComponentId::make_host(c.host).str());
  for (int gpu : c.gpus) e->add_gpus(sim::ComponentId::make_gpu(c.host, gpu).str());
  for (const VirtualFunction& vf : c.vfs) {
    auto* v = e->add_vfs();
    v->set_rnic(sim::ComponentId::make_nic(topology_.host_of(vf.rnic), topology_.nic_of(vf.rnic)).str());
    v->set_index(static_cast<std::uint32_t>(vf.index));
    v->set_overlay_address(overlay_address_text(vf.overlay_address));
  }
  if (!start) e->set_reason(std::string(stop_reason_name(*c.stop_reason)));
  bus_->publish(std::move(record));
}

}  // namespace gauntlet::models
