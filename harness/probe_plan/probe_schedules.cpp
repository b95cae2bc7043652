#include "harness/probe_plan/probe_schedules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>

#include "harness/probe_plan/probe_plan.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness {
namespace {

// Round lengths tried for a budget: from the shortest the probes allow, by
// factors of sqrt(2), up to `longest`, in whole seconds: detectors act on
// the telemetry batches of the first second at or past a round's end
// (harness/runner/simulation.hpp's observe interval), so a round of 16.2 s
// runs 17.
std::vector<double> candidate_rounds(double shortest, double longest) {
  std::vector<double> out;
  for (double t = shortest; t < longest * 1.0001; t *= std::sqrt(2.0))
    if (out.empty() || std::ceil(t) > out.back()) out.push_back(std::ceil(t));
  if (out.empty() || out.back() < longest) out.push_back(std::ceil(longest));
  return out;
}

std::vector<ClassPrediction> predict_all(const sim::Topology& t, const ProbeSchedule& schedule,
                                         const std::vector<FaultClass>& faults, int pings) {
  std::vector<ClassPrediction> out;
  for (const FaultClass& f : faults) out.push_back(predict_class(t, schedule, f, pings));
  return out;
}

std::string format_seconds(double s) {
  return sim::format_duration(static_cast<sim::Nanos>(std::llround(s * 1000)) * sim::kMillisecond);
}

}  // namespace

ListCrossings list_crossings(const sim::Topology& t, const std::vector<PlannedProbe>& list, const RouteFn& route) {
  ListCrossings out;
  out.begin.push_back(0);
  for (const PlannedProbe& p : list) {
    out.probes.push_back(p);
    for (int c : probe_components(t, p, route)) out.components.push_back(c);
    out.begin.push_back(out.components.size());
  }
  return out;
}

namespace {

// One round of a skeleton schedule: the probes [begin, end) of the list.
class SkeletonRound {
 public:
  SkeletonRound(const sim::Topology& t, const ListCrossings& list, int concurrency)
      : t_(t),
        list_(list),
        concurrency_(std::max(1, concurrency)),
        sent_(static_cast<std::size_t>(t.endpoints()), 0),
        touched_(sent_.size(), 0),
        tally_(static_cast<std::size_t>(component_count(t))) {}

  // Adds the round's chances to `s`; returns the probes its average source runs.
  double add(long long begin, long long end, int round, ProbeSchedule& s) {
    for (long long i = begin; i < end; ++i) {
      const PlannedProbe& p = list_.probes[static_cast<std::size_t>(i)];
      if (p.overlay) ++touched_[static_cast<std::size_t>(p.src)], ++touched_[static_cast<std::size_t>(p.dst)];
    }
    long long sources = 0;
    for (long long i = begin; i < end; ++i) tally_probe(i, sources);
    // Links crossed by the same probes tie in the detector's ranking.
    std::map<std::uint64_t, int> links_by_signature;
    for (int c : crossed_)
      if (c < t_.links()) ++links_by_signature[tally_[static_cast<std::size_t>(c)].signature];
    // The round's crossings of a component as one chance, at their mean slot.
    for (int c : crossed_) {
      Tally& x = tally_[static_cast<std::size_t>(c)];
      const int slot = std::min(s.slots_per_round - 1, static_cast<int>(x.slots / x.probes));
      const bool tied = c < t_.links() && links_by_signature[x.signature] > 1;
      s.fixed[static_cast<std::size_t>(c)].push_back({round * s.slots_per_round + slot, x.probes, x.direct, tied});
      x = {};
    }
    crossed_.clear();
    for (long long i = begin; i < end; ++i) {
      const PlannedProbe& p = list_.probes[static_cast<std::size_t>(i)];
      sent_[static_cast<std::size_t>(p.src)] = 0;
      touched_[static_cast<std::size_t>(p.src)] = touched_[static_cast<std::size_t>(p.dst)] = 0;
    }
    return static_cast<double>(end - begin) / static_cast<double>(std::max(1LL, sources));
  }

 private:
  struct Tally {
    int probes = 0, direct = 0;
    long long slots = 0;
    std::uint64_t signature = 0;  // of the probes crossing it: equal for links crossed by the same ones
  };

  void tally_probe(long long i, long long& sources) {
    const PlannedProbe& p = list_.probes[static_cast<std::size_t>(i)];
    const int position = sent_[static_cast<std::size_t>(p.src)]++;
    if (position == 0) ++sources;
    // Alone enough: an underlay failure, or an overlay one no other overlay probe clears an end of.
    const bool direct =
        !p.overlay || touched_[static_cast<std::size_t>(p.src)] == 1 || touched_[static_cast<std::size_t>(p.dst)] == 1;
    for (std::size_t k = list_.begin[static_cast<std::size_t>(i)]; k < list_.begin[static_cast<std::size_t>(i) + 1];
         ++k) {
      Tally& c = tally_[static_cast<std::size_t>(list_.components[k])];
      if (c.probes == 0) crossed_.push_back(list_.components[k]);
      ++c.probes;
      c.direct += direct ? 1 : 0;
      c.slots += position / concurrency_;
      c.signature += sim::splitmix64(static_cast<std::uint64_t>(i) + 1);
    }
  }

  const sim::Topology& t_;
  const ListCrossings& list_;
  int concurrency_;
  std::vector<int> sent_, touched_;
  std::vector<Tally> tally_;
  std::vector<int> crossed_;
};

}  // namespace

ProbeSchedule skeleton_schedule(const sim::Topology& t, const ListCrossings& list, long long per_round,
                                double round_seconds, const models::ProbeCost& cost, int tie_rounds) {
  ProbeSchedule s;
  s.round_seconds = round_seconds;
  s.slot_seconds = sim::to_seconds(cost.probe_duration());
  s.slots_per_round = std::max(1, static_cast<int>(std::floor(round_seconds / s.slot_seconds + 1e-9)));
  // A failed overlay probe is checked by an underlay probe between its ends first.
  s.confirm_s = s.slot_seconds;
  s.fixed.assign(static_cast<std::size_t>(component_count(t)), {});
  const long long n = static_cast<long long>(list.probes.size());
  const long long p = std::max(1LL, std::min(per_round, n));
  s.cycle_rounds = n == 0 ? 1 : static_cast<int>((n + p - 1) / p);
  SkeletonRound rounds(t, list, cost.concurrency);
  double per_source = 0;
  for (int round = 0; round < s.cycle_rounds; ++round)
    per_source += rounds.add(round * p, std::min(n, (round + 1) * p), round, s);
  per_source /= s.cycle_rounds;
  // Each attempt to tell tied links apart sends identifying probes when the
  // checks are back, queued behind their sources' probes of the round: half
  // of them on average.
  s.tie_s = tie_rounds * s.slot_seconds * (1 + per_source / std::max(1, cost.concurrency) / 2);
  return s;
}

long long skeleton_busiest_source(const sim::Topology& t, const ListCrossings& list, long long per_round) {
  const long long n = static_cast<long long>(list.probes.size());
  const long long p = std::max(1LL, std::min(per_round, n));
  std::vector<long long> load(static_cast<std::size_t>(t.endpoints()), 0);
  long long busiest = 0;
  for (long long start = 0; start < n; start += p) {
    const long long end = std::min(n, start + p);
    for (long long i = start; i < end; ++i)
      busiest = std::max(busiest, ++load[static_cast<std::size_t>(list.probes[static_cast<std::size_t>(i)].src)]);
    for (long long i = start; i < end; ++i)
      load[static_cast<std::size_t>(list.probes[static_cast<std::size_t>(i)].src)] = 0;
  }
  return busiest;
}

PingmeshShape pingmesh_shape(const sim::Topology& t, const SpineFn& spine) {
  PingmeshShape shape;
  const int n = t.endpoints();
  shape.draw_share.assign(static_cast<std::size_t>(component_count(t)), 0);
  std::vector<long long> on_leaf(static_cast<std::size_t>(t.leaves()), 0);
  for (int e = 0; e < n; ++e) ++on_leaf[static_cast<std::size_t>(t.leaf_of(e))];
  for (long long m : on_leaf) {
    shape.intra_pairs += m * (m - 1) / 2;
    shape.busiest_intra = std::max(shape.busiest_intra, m - 1);  // the first member sends to every other
  }
  // A draw crosses both ends' host links and, joining two leaves, each
  // leaf's link to the spine the pair hashes onto.
  long long cross = 0, drawn = 0;
  auto count = [&](int a, int b) {
    ++drawn;
    if (t.leaf_of(a) == t.leaf_of(b)) return;
    ++cross;
    const int s = spine(a, b);
    for (int link : {t.host_link(a), t.host_link(b), t.fabric_link(t.leaf_of(a), s), t.fabric_link(t.leaf_of(b), s)})
      shape.draw_share[static_cast<std::size_t>(link)] += 1;
  };
  const long long pairs = static_cast<long long>(n) * n;
  constexpr long long kEnumerated = 1LL << 24, kSampled = 1LL << 22;
  if (pairs <= kEnumerated) {
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) count(a, b);
  } else {
    sim::Rng rng(sim::RngStreams(1).stream("pingmesh-shape"));
    for (long long k = 0; k < kSampled; ++k)
      count(static_cast<int>(rng.below(static_cast<std::uint64_t>(n))),
            static_cast<int>(rng.below(static_cast<std::uint64_t>(n))));
  }
  for (double& share : shape.draw_share) share /= static_cast<double>(std::max(1LL, cross));
  shape.cross_leaf_share = static_cast<double>(cross) / static_cast<double>(drawn);
  return shape;
}

ProbeSchedule pingmesh_schedule(const sim::Topology& t, const PingmeshShape& shape, double draws, double round_seconds,
                                const models::ProbeCost& cost) {
  ProbeSchedule s;
  s.round_seconds = round_seconds;
  s.slot_seconds = sim::to_seconds(cost.probe_duration()) / std::max(1, cost.concurrency);
  s.slots_per_round = std::max(1, static_cast<int>(std::floor(round_seconds / s.slot_seconds + 1e-9)));
  s.cycle_rounds = 2;  // the mesh under each leaf swaps its senders every other round
  s.fixed.assign(static_cast<std::size_t>(component_count(t)), {});
  s.draw_share = shape.draw_share;
  s.draws_per_slot.assign(static_cast<std::size_t>(s.cycle_rounds * s.slots_per_round), 0);
  std::vector<std::vector<int>> on_leaf(static_cast<std::size_t>(t.leaves()));
  for (int e = 0; e < t.endpoints(); ++e) on_leaf[static_cast<std::size_t>(t.leaf_of(e))].push_back(e);
  // Per host link and round, the slots of the intra-leaf probes crossing it.
  std::vector<std::map<int, int>> slots(static_cast<std::size_t>(t.endpoints()));
  std::vector<int> intra(static_cast<std::size_t>(t.endpoints()) * 2, 0);  // probes each sources, per round
  for (const auto& members : on_leaf) {
    const int m = static_cast<int>(members.size());
    for (int i = 0; i < m; ++i)
      for (int j = i + 1; j < m; ++j) {
        // Round 0: member i sends to j as its (j - i)th; round 1: j sends to i as its (i + 1)th.
        for (int round = 0; round < 2; ++round) {
          const int src = round == 0 ? members[static_cast<std::size_t>(i)] : members[static_cast<std::size_t>(j)];
          const int dst = round == 0 ? members[static_cast<std::size_t>(j)] : members[static_cast<std::size_t>(i)];
          const int slot = std::min(s.slots_per_round - 1, round == 0 ? j - i - 1 : i);
          ++intra[static_cast<std::size_t>(src) * 2 + static_cast<std::size_t>(round)];
          for (int e : {src, dst}) ++slots[static_cast<std::size_t>(e)][round * s.slots_per_round + slot];
        }
      }
  }
  for (int e = 0; e < t.endpoints(); ++e)
    for (const auto& [slot, probes] : slots[static_cast<std::size_t>(e)])
      s.fixed[static_cast<std::size_t>(t.host_link(e))].push_back({slot, probes, probes});
  // The draws sent (those joining two leaves), about as many from each RNIC,
  // after its intra-leaf probes: its k-th draw in slot intra + k, sent when
  // it has more than k, Poisson-distributed.
  const double per_source = draws * shape.cross_leaf_share / t.endpoints();
  for (int e = 0; e < t.endpoints(); ++e)
    for (int round = 0; round < 2; ++round) {
      const int first = intra[static_cast<std::size_t>(e) * 2 + static_cast<std::size_t>(round)];
      double term = std::exp(-per_source), below = term;  // P(N = k), P(N <= k)
      for (int k = 0; first + k < s.slots_per_round && 1 - below > 1e-12; ++k) {
        s.draws_per_slot[static_cast<std::size_t>(round * s.slots_per_round + first + k)] += 1 - below;
        term *= per_source / (k + 1);
        below += term;
      }
    }
  for (std::size_t slot = 0; slot < s.draws_per_slot.size(); ++slot)
    if (s.draws_per_slot[slot] > 0) s.draw_slots.push_back(static_cast<int>(slot));
  return s;
}

BudgetSetting best_skeleton_setting(const sim::Topology& t, const ListCrossings& list, const models::ProbeCost& cost,
                                    double budget, const std::vector<FaultClass>& faults, int tie_rounds) {
  const double train = sim::to_seconds(cost.probe_duration());
  const long long n = static_cast<long long>(list.probes.size());
  BudgetSetting best;
  best.budget = budget;
  double best_latency = std::numeric_limits<double>::infinity();
  if (n == 0 || faults.empty()) return best;
  const double longest = std::max(30.0, static_cast<double>(n) / budget);
  for (double round : candidate_rounds(train, longest)) {
    const long long per_round = std::clamp(static_cast<long long>(std::floor(budget * round)), 1LL, n);
    // The busiest RNIC's probes, back to back, are back before the round ends.
    if (round_seconds(skeleton_busiest_source(t, list, per_round), cost) > round) continue;
    const double latency = predict_class(t, skeleton_schedule(t, list, per_round, round, cost, tie_rounds),
                                         faults.front(), cost.pings_per_probe)
                               .mean_s;
    if (!(latency < best_latency)) continue;
    best_latency = latency;
    best.round_seconds = round;
    best.per_round = per_round;
    best.probes_per_second = static_cast<double>(per_round) / round;
  }
  if (best.per_round > 0) {
    best.predictions = predict_all(t, skeleton_schedule(t, list, best.per_round, best.round_seconds, cost, tie_rounds),
                                   faults, cost.pings_per_probe);
    best.detector = "{name: skeleton, round: " + format_seconds(best.round_seconds) +
                    ", budget: " + std::to_string(best.per_round) + "}";
  }
  return best;
}

BudgetSetting best_pingmesh_setting(const sim::Topology& t, const PingmeshShape& shape, const models::ProbeCost& cost,
                                    double budget, const std::vector<FaultClass>& faults) {
  const double train = sim::to_seconds(cost.probe_duration());
  BudgetSetting best;
  best.budget = budget;
  double best_latency = std::numeric_limits<double>::infinity();
  if (faults.empty()) return best;
  // The mesh under each leaf is probed whole each round: the budget sets the shortest round.
  const double shortest = std::max(train, static_cast<double>(shape.intra_pairs) / budget);
  for (double round : candidate_rounds(shortest, std::max(30.0, shortest) * 64)) {
    const double spare = std::max(0.0, budget * round - static_cast<double>(shape.intra_pairs));
    const long long draws =
        shape.cross_leaf_share > 0 ? static_cast<long long>(std::floor(spare / shape.cross_leaf_share)) : 0;
    const double busiest = static_cast<double>(shape.busiest_intra) + static_cast<double>(draws) / t.endpoints();
    if (round_seconds(static_cast<long long>(std::ceil(busiest)), cost) > round) continue;
    const double latency = predict_class(t, pingmesh_schedule(t, shape, static_cast<double>(draws), round, cost),
                                         faults.front(), cost.pings_per_probe)
                               .mean_s;
    // Never seen at any round (no draw fits): the shortest round still probes the mesh under each leaf.
    if (!(latency < best_latency) && best.round_seconds > 0) continue;
    best_latency = latency;
    best.round_seconds = round;
    best.per_round = draws;
    best.probes_per_second =
        (static_cast<double>(shape.intra_pairs) + static_cast<double>(draws) * shape.cross_leaf_share) / round;
  }
  if (best.round_seconds > 0) {
    best.predictions =
        predict_all(t, pingmesh_schedule(t, shape, static_cast<double>(best.per_round), best.round_seconds, cost),
                    faults, cost.pings_per_probe);
    best.detector = "{name: pingmesh, round: " + format_seconds(best.round_seconds) +
                    ", inter_tor_sample: " + std::to_string(best.per_round) + "}";
  }
  return best;
}

}  // namespace gauntlet::harness
