#include "harness/detectors/skeleton_inference.hpp"

#include <algorithm>
#include <optional>

#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

std::optional<sim::EndpointId> rnic_of_worker(const sim::Topology& t, const std::string& worker) {
  auto id = sim::ComponentId::parse(worker);
  if (!id || id->kind != sim::ComponentKind::gpu || !t.contains(*id)) return std::nullopt;
  return t.endpoint(id->host, t.nic_of_gpu(id->index));
}

}  // namespace

void SkeletonInference::add(const telemetry::CollectiveRecord& record, sim::Nanos at, long long repeats,
                            sim::Nanos last_at) {
  if (record.peer().empty() || record.worker() == record.peer()) return;
  auto src = rnic_of_worker(*topology_, record.worker());
  auto dst = rnic_of_worker(*topology_, record.peer());
  if (!src || !dst || topology_->host_of(*src) == topology_->host_of(*dst)) return;
  EdgeEvidence& e = evidence_[{record.communicator(), {*src, *dst}}];
  // Distinct iterations, not records: one collective reported twice is not a period.
  if (repeats > 1) e.steady_iterations += repeats;  // a steady run: one iteration per repeat
  else if (e.iterations.size() < 64) e.iterations.insert(record.sequence());
  e.last_seen = std::max(e.last_seen, last_at >= 0 ? last_at : at);
}

bool SkeletonInference::refresh(sim::Nanos now) {
  std::map<std::string, std::set<sim::EndpointId>> members;
  std::set<std::pair<sim::EndpointId, sim::EndpointId>> edges;
  for (auto it = evidence_.begin(); it != evidence_.end();) {
    const EdgeEvidence& e = it->second;
    if (now - e.last_seen > stale_after_) {
      it = evidence_.erase(it);  // that container is gone or re-placed
      continue;
    }
    const long long recurrences = static_cast<long long>(e.iterations.size()) + e.steady_iterations;
    if (recurrences >= min_repeats_) {
      const auto& [src, dst] = it->first.second;
      members[it->first.first].insert(src);
      members[it->first.first].insert(dst);
      edges.insert({src, dst});
    }
    ++it;
  }
  if (edges.empty() || edges == edges_) return false;
  std::vector<std::vector<sim::EndpointId>> groups;
  for (const auto& [name, set] : members) groups.emplace_back(set.begin(), set.end());
  groups_ = std::move(groups);
  edges_ = std::move(edges);
  ++version_;
  return true;
}

}  // namespace gauntlet::harness
