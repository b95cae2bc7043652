#include "harness/probe_plan/probe_list.hpp"

#include <algorithm>
#include <optional>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "harness/probe_plan/identifiability.hpp"

namespace gauntlet::harness {
namespace {

// A set of non-zero 64-bit keys, open addressing with linear probing: the
// skeleton list of 40,000 RNICs checks over a million pairs, and a node per
// key (std::unordered_set) spent most of that time in the allocator.
class KeySet {
 public:
  void reserve(std::size_t n) {
    if (2 * n > slots_.size()) rehash(2 * n);
  }
  bool insert(std::uint64_t key) {  // key != 0
    if (2 * (size_ + 1) > slots_.size()) rehash(std::max<std::size_t>(16, 2 * slots_.size()));
    std::uint64_t& slot = slots_[slot_of(key)];
    if (slot == key) return false;
    slot = key;
    ++size_;
    return true;
  }
  bool contains(std::uint64_t key) const { return !slots_.empty() && slots_[slot_of(key)] == key; }

 private:
  // The slot holding `key`, or the empty one where it would go.
  std::size_t slot_of(std::uint64_t key) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 17) & mask;
    while (slots_[i] != 0 && slots_[i] != key) i = (i + 1) & mask;
    return i;
  }
  void rehash(std::size_t at_least) {
    std::size_t n = 16;
    while (n < at_least) n *= 2;
    std::vector<std::uint64_t> old = std::move(slots_);
    slots_.assign(n, 0);
    for (std::uint64_t k : old)
      if (k != 0) slots_[slot_of(k)] = k;
  }
  std::vector<std::uint64_t> slots_;  // size a power of two, 0 = empty
  std::size_t size_ = 0;
};

class ListBuilder {
 public:
  explicit ListBuilder(const sim::Topology& t) : load_(static_cast<std::size_t>(t.endpoints()), 0) {}

  // Adds the pair once (either orientation); `src_first` forces the source.
  bool add(sim::EndpointId a, sim::EndpointId b, bool overlay, bool balance) {
    if (a == b) return false;
    if (!seen_.insert(key(a, b, overlay))) return false;
    if (balance && load(b) < load(a)) std::swap(a, b);
    ++load_[static_cast<std::size_t>(a)];
    list_.push_back({a, b, overlay});
    return true;
  }
  bool contains(sim::EndpointId a, sim::EndpointId b, bool overlay) const { return seen_.contains(key(a, b, overlay)); }
  void reserve(std::size_t n) {
    seen_.reserve(n);
    list_.reserve(n);
  }
  long long load(sim::EndpointId e) const { return load_[static_cast<std::size_t>(e)]; }
  long long max_load() const { return load_.empty() ? 0 : *std::max_element(load_.begin(), load_.end()); }
  std::vector<PlannedProbe>& list() { return list_; }

 private:
  std::vector<long long> load_;
  static std::uint64_t key(sim::EndpointId a, sim::EndpointId b, bool overlay) {
    const auto lo = static_cast<std::uint64_t>(std::min(a, b)), hi = static_cast<std::uint64_t>(std::max(a, b));
    return (lo << 32 | hi) << 1 | (overlay ? 1 : 0);  // endpoints fit in 31 bits
  }
  KeySet seen_;  // keys are never 0: a probe joins two distinct endpoints
  std::vector<PlannedProbe> list_;
};

// Probe candidates that may split an ambiguous group of components: probes
// from an endpoint the first component belongs to (or from the leaf end of a
// fabric link) to partners near and far, in both layers.
std::vector<PlannedProbe> candidates(const sim::Topology& t, int component,
                                     const std::vector<std::vector<sim::EndpointId>>& on_leaf,
                                     const std::vector<sim::EndpointId>& partners_hint) {
  std::vector<PlannedProbe> out;
  auto toward = [&](sim::EndpointId src) {
    // A few of each kind suffice; large groups and leaves would otherwise
    // make this quadratic at 40,000 RNICs.
    constexpr std::size_t kEach = 16;
    for (std::size_t i = 0; i < partners_hint.size() && i < kEach; ++i) out.push_back({src, partners_hint[i], false});
    const auto& same_leaf = on_leaf[static_cast<std::size_t>(t.leaf_of(src))];
    for (std::size_t i = 0; i < same_leaf.size() && i < kEach; ++i) out.push_back({src, same_leaf[i], false});
    // Partners on other leaves, spread over the cluster.
    const int n = t.endpoints();
    const int step = std::max(1, n / 61);
    for (int k = 1; k <= 61 && k * step < n; ++k) out.push_back({src, (src + k * step) % n, false});
  };
  if (component >= t.links()) {
    toward(component - t.links());
  } else if (!t.is_fabric_link(component)) {
    toward(component);  // host link number == endpoint number
  } else {
    const int leaf = t.leaf_of_fabric_link(component);
    for (sim::EndpointId src : on_leaf[static_cast<std::size_t>(leaf)]) {
      toward(src);
      if (out.size() > 256) break;
    }
  }
  return out;
}

// Each group as a circulant tournament: member i probes the next m/2
// members, so no member sources more than m/2 probes.
void add_tournaments(const std::vector<std::vector<sim::EndpointId>>& groups, ListBuilder& builder,
                     std::vector<std::vector<sim::EndpointId>>& partners) {
  for (const auto& group : groups) {
    const std::size_t m = group.size();
    for (std::size_t d = 1; d <= m / 2; ++d)
      for (std::size_t i = 0; i < m; ++i) {
        if (2 * d == m && i >= m / 2) break;  // the diameter pairs once
        const sim::EndpointId a = group[i], b = group[(i + d) % m];
        builder.add(a, b, true, false);
        partners[static_cast<std::size_t>(a)].push_back(b);
        partners[static_cast<std::size_t>(b)].push_back(a);
      }
  }
}

// Of the first few candidates that split the ambiguous `group`, the one whose
// less busy end is least loaded, so augmentation does not lengthen the round
// more than it must.
std::optional<PlannedProbe> best_splitting_probe(const sim::Topology& t, const std::vector<int>& group,
                                                 const std::vector<PlannedProbe>& candidates,
                                                 const ListBuilder& builder, const RouteFn& route) {
  const std::unordered_set<int> members(group.begin(), group.end());
  std::optional<PlannedProbe> best;
  long long best_load = 0;
  int found = 0;
  for (const PlannedProbe& cand : candidates) {
    if (cand.src == cand.dst || builder.contains(cand.src, cand.dst, cand.overlay)) continue;
    // The less busy end sends; ECMP hashes each direction separately, so
    // the path is judged in the direction it will run.
    PlannedProbe oriented = cand;
    if (builder.load(cand.dst) < builder.load(cand.src)) std::swap(oriented.src, oriented.dst);
    const std::vector<int> comps = probe_components(t, oriented, route);
    std::size_t hit = 0;
    for (int c : comps) hit += members.count(c);
    if (hit == 0 || hit == members.size()) continue;
    const long long load = std::min(builder.load(cand.src), builder.load(cand.dst));
    if (!best || load < best_load) {
      best = oriented;
      best_load = load;
    }
    // A partner idler than the anchor cannot be bettered by much.
    if (++found == 16 || builder.load(cand.dst) < builder.load(cand.src)) break;
  }
  return best;
}

}  // namespace

std::string component_name(const sim::Topology& t, int component) {
  if (component < t.links()) return t.link_name(component);
  const sim::EndpointId e = component - t.links();
  return sim::ComponentId::make_flow_table(t.host_of(e), t.nic_of(e)).str();
}

std::vector<int> probe_components(const sim::Topology& t, const PlannedProbe& probe, const RouteFn& route) {
  std::vector<int> out;
  if (probe.overlay) out.push_back(flow_table_component(t, probe.src));
  for (sim::LinkId link : route(probe.src, probe.dst)) out.push_back(link);
  if (probe.overlay) out.push_back(flow_table_component(t, probe.dst));
  return out;
}

std::vector<PlannedProbe> skeleton_probe_list(const sim::Topology& t,
                                              const std::vector<std::vector<sim::EndpointId>>& groups,
                                              const RouteFn& route, int* unidentifiable) {
  ListBuilder builder(t);
  std::size_t expected = static_cast<std::size_t>(t.endpoints());
  for (const auto& group : groups) expected += group.size() * (group.size() - 1) / 2;
  builder.reserve(expected);
  std::vector<std::vector<sim::EndpointId>> partners(static_cast<std::size_t>(t.endpoints()));
  add_tournaments(groups, builder, partners);

  PathMatrix matrix(component_count(t));
  std::vector<int> on_paths;
  std::vector<char> marked(static_cast<std::size_t>(component_count(t)), 0);
  auto add_row = [&](const PlannedProbe& p) {
    const std::vector<int> comps = probe_components(t, p, route);
    matrix.add_path(comps);
    for (int c : comps)
      if (!marked[static_cast<std::size_t>(c)]) {
        marked[static_cast<std::size_t>(c)] = 1;
        on_paths.push_back(c);
      }
  };
  for (const PlannedProbe& p : builder.list()) add_row(p);

  std::vector<std::vector<sim::EndpointId>> on_leaf(static_cast<std::size_t>(t.leaves()));
  for (int e = 0; e < t.endpoints(); ++e) on_leaf[static_cast<std::size_t>(t.leaf_of(e))].push_back(e);
  // Only the components of the skeleton's own paths must be identifiable;
  // augmenting probes may cross others without obliging more probes.
  const std::vector<int> targets = on_paths;
  std::vector<std::vector<int>> ambiguous = matrix.ambiguous(targets);
  for (int pass = 0; pass < 8 && !ambiguous.empty(); ++pass) {
    bool progress = false;
    // Busiest anchors first, so they pair with idle partners while some are left.
    auto anchor_load = [&](const std::vector<int>& group) -> long long {
      const int c = group.front();
      if (c >= t.links()) return builder.load(c - t.links());
      return t.is_fabric_link(c) ? -1 : builder.load(c);
    };
    std::stable_sort(ambiguous.begin(), ambiguous.end(),
                     [&](const auto& a, const auto& b) { return anchor_load(a) > anchor_load(b); });
    for (const std::vector<int>& group : ambiguous) {
      // An earlier addition in this pass may already have split it.
      const std::uint64_t sig = matrix.signature(group.front());
      const bool still = std::any_of(group.begin() + 1, group.end(), [&](int c) { return matrix.signature(c) == sig; });
      if (!still) continue;
      const int first = group.front();
      std::vector<sim::EndpointId> hint;
      if (first >= t.links())
        hint = partners[static_cast<std::size_t>(first - t.links())];
      else if (!t.is_fabric_link(first))
        hint = partners[static_cast<std::size_t>(first)];
      const std::optional<PlannedProbe> best =
          best_splitting_probe(t, group, candidates(t, first, on_leaf, hint), builder, route);
      if (best && builder.add(best->src, best->dst, best->overlay, false)) {
        add_row(builder.list().back());
        progress = true;
      }
    }
    if (!progress) break;
    ambiguous = matrix.ambiguous(targets);
  }
  if (unidentifiable) {
    int left = 0;
    for (const auto& g : ambiguous) left += static_cast<int>(g.size());
    *unidentifiable = left;
  }
  return std::move(builder.list());
}

}  // namespace gauntlet::harness
