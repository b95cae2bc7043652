// FlowEngine::simulate_apart: the outcome of a transfer set on an idle copy
// of the network, computed in a forked child so the parent's engine keeps
// its clock, timers and transfers. The child simulates one sharing group
// at a time (groups share no link direction, so each ends as it would beside
// the others); that was first done because SimGrid 3.32's cost per completed
// transfer grew with every transfer in flight, which the engine now avoids
// (sim/flow/maestro_activities.hpp), and is kept so outcomes stay the same.
#include <algorithm>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include "sim/contract.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::sim {
namespace {

std::size_t find_root(std::vector<std::size_t>& parent, std::size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

constexpr std::string_view kDone = "done";
constexpr std::string_view kUnfinished = "unfinished";

}  // namespace

std::vector<std::vector<std::size_t>> FlowEngine::sharing_groups(const std::vector<TransferRequest>& transfers) const {
  const auto links = static_cast<std::size_t>(topology().links());
  std::vector<std::size_t> parent(transfers.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::unordered_map<std::size_t, std::size_t> holder;  // resource -> a transfer using it
  auto use = [&](std::size_t resource, std::size_t transfer) {
    auto [it, fresh] = holder.emplace(resource, transfer);
    if (!fresh) parent[find_root(parent, transfer)] = find_root(parent, it->second);
  };
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const TransferRequest& t = transfers[i];
    const std::vector<LinkId> path = route(t.src, t.dst);
    // The first half of a route climbs (RNIC to leaf to spine), the rest descends.
    for (std::size_t k = 0; k < path.size(); ++k)
      use(static_cast<std::size_t>(path[k]) * 2 + (2 * k < path.size() ? 1 : 0), i);
    use(2 * links + static_cast<std::size_t>(t.src) * 2 + 1, i);
    use(2 * links + static_cast<std::size_t>(t.dst) * 2, i);
  }
  // Groups in the order of their first transfer, each in transfer order.
  std::vector<std::vector<std::size_t>> groups;
  std::unordered_map<std::size_t, std::size_t> group_of_root;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    auto [it, fresh] = group_of_root.emplace(find_root(parent, i), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

std::optional<std::vector<Nanos>> FlowEngine::simulate_apart(const std::vector<TransferRequest>& transfers,
                                                             Nanos limit) {
  const std::vector<std::vector<std::size_t>> groups = sharing_groups(transfers);
  const std::string text = run_isolated([&]() -> std::string {
    drop_timers();
    std::vector<Nanos> offsets(transfers.size(), 0);
    for (const std::vector<std::size_t>& group : groups) {
      const Nanos begin = now();
      std::size_t left = group.size();
      for (std::size_t i : group)
        start_transfer(transfers[i].src, transfers[i].dst, transfers[i].bytes, [&, i, begin](Nanos at) {
          offsets[i] = at - begin;
          --left;
        });
      for (Nanos step = kMillisecond; left > 0; step = std::min(2 * step, kDay)) {
        if (now() - begin > limit) return std::string(kUnfinished);
        run_until(now() + step);
      }
    }
    std::ostringstream o;
    o << kDone;
    for (Nanos offset : offsets) o << " " << offset;
    return o.str();
  });
  std::istringstream in(text);
  std::string status;
  in >> status;
  if (status == kUnfinished) return std::nullopt;
  GAUNTLET_INVARIANT(status == kDone, "the child answered '" + status + "'");
  std::vector<Nanos> offsets(transfers.size(), 0);
  for (Nanos& offset : offsets) in >> offset;
  GAUNTLET_INVARIANT(!in.fail(), "the child's answer holds fewer offsets than transfers");
  return offsets;
}

}  // namespace gauntlet::sim
