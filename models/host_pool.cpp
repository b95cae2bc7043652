#include "models/host_pool.hpp"

#include <algorithm>

#include "models/spare_layout.hpp"

namespace gauntlet::models {

HostPool::HostPool(std::vector<int> spares, const ClusterState& cluster, const sim::Topology& topology,
                   SpareLayout layout)
    : cluster_(cluster), topology_(topology), layout_(layout), spare_pool_(std::move(spares)) {}

bool HostPool::all_usable(const std::vector<int>& hosts) const {
  return std::all_of(hosts.begin(), hosts.end(), [this](int h) { return usable(h); });
}

int HostPool::spares_left() const {
  int n = 0;
  for (int h : spare_pool_) n += usable(h) ? 1 : 0;
  return n;
}

std::optional<std::vector<int>> HostPool::restart_hosts(std::vector<int> hosts) {
  std::vector<int> pool = spare_pool_;
  int taken = 0;
  for (int& h : hosts) {
    if (usable(h)) continue;
    const auto spare = pick_spare(pool, h, topology_, layout_, [this](int s) { return usable(s); });
    if (!spare) return std::nullopt;
    h = pool[*spare];
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(*spare));
    ++taken;
  }
  spares_used_ += taken;
  return hosts;
}

int HostPool::hosts_short(const std::vector<int>& hosts) const {
  const auto unusable = std::count_if(hosts.begin(), hosts.end(), [this](int h) { return !usable(h); });
  return std::max(0, static_cast<int>(unusable) - spares_left());
}

std::vector<int> HostPool::shifted(const std::vector<int>& hosts) const {
  std::vector<int> pool = hosts;
  for (int h : spare_pool_)
    if (usable(h) && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) pool.push_back(h);
  std::sort(pool.begin(), pool.end());
  std::vector<int> out;
  for (int h : hosts) {
    const auto at = static_cast<std::size_t>(std::find(pool.begin(), pool.end(), h) - pool.begin());
    out.push_back(pool[(at + 1) % pool.size()]);
  }
  return out;
}

void HostPool::moved(const std::vector<int>& before, const Placement& now) {
  for (int h : now.hosts()) std::erase(spare_pool_, h);
  for (int h : before) {
    if (now.uses_host(h) || isolated_.count(h)) continue;
    if (usable(h))
      spare_pool_.push_back(h);
    else
      replaced_.insert(h);
  }
  std::sort(spare_pool_.begin(), spare_pool_.end());
}

void HostPool::isolate(const std::set<int>& hosts, const Placement& placement) {
  int free_spares = spares_left();
  for (int h : hosts) {
    if (placement.uses_host(h) && !isolated_.count(h)) {
      if (free_spares == 0) continue;
      --free_spares;
    }
    isolated_.insert(h);
  }
}

void HostPool::repaired(int host, const Placement& placement) {
  if (cluster_.host_broken(host)) return;
  if (isolated_.erase(host) && !placement.uses_host(host)) replaced_.insert(host);
  if (replaced_.erase(host) && !placement.uses_host(host)) {
    spare_pool_.push_back(host);
    std::sort(spare_pool_.begin(), spare_pool_.end());
  }
}

}  // namespace gauntlet::models
