#include "harness/scoring/score.hpp"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>
#include <set>

namespace gauntlet::harness {
namespace {

// Nearest-rank percentile of a sorted, non-empty sample.
double nearest_rank(const std::vector<double>& sorted, double percent) {
  const double n = static_cast<double>(sorted.size());
  std::size_t rank = static_cast<std::size_t>(std::ceil(percent / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

LatencyStats stats(std::vector<double> values) {
  LatencyStats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  s.p50 = nearest_rank(values, 50);
  s.p95 = nearest_rank(values, 95);
  return s;
}

bool names(const Alert& alert, const std::string& target) {
  if (target.empty()) return false;
  return std::any_of(alert.suspects.begin(), alert.suspects.end(), [&](const Suspect& s) { return s.id == target; });
}

// The figures of one class from its faults' outcomes.
ClassScore class_score(const std::vector<const FaultOutcome*>& outcomes) {
  ClassScore c;
  std::vector<double> latencies, localize_times;
  double top1 = 0, top3 = 0, host_top1 = 0, pod_top1 = 0;
  bool pods = false;
  for (const FaultOutcome* o : outcomes) {
    ++c.scored_faults;
    if (!o->detected) continue;
    ++c.detected;
    latencies.push_back(o->detection_latency_s);
    top1 += o->top1;
    top3 += o->top3;
    host_top1 += o->host_top1;
    pods = pods || o->pod_top1.has_value();
    pod_top1 += o->pod_top1.value_or(0);
    if (o->time_to_localize_s) {
      ++c.localized;
      localize_times.push_back(*o->time_to_localize_s);
    }
  }
  if (c.scored_faults > 0) c.recall = static_cast<double>(c.detected) / c.scored_faults;
  if (c.detected > 0) {
    c.detection_latency_s = stats(latencies);
    c.localization_top1 = top1 / c.detected;
    c.localization_top3 = top3 / c.detected;
    c.localization_host_top1 = host_top1 / c.detected;
    if (pods) c.localization_pod_top1 = pod_top1 / c.detected;
  }
  if (c.localized > 0) c.time_to_localize_s = stats(localize_times);
  return c;
}

}  // namespace

double localization_credit(const std::vector<Suspect>& suspects, const std::string& target, int k) {
  auto named = std::find_if(suspects.begin(), suspects.end(), [&](const Suspect& s) { return s.id == target; });
  if (target.empty() || named == suspects.end()) return 0;
  int above = 0, tied = 0;  // suspects ranked strictly above the target, and its tie group (itself included)
  for (const Suspect& s : suspects) {
    if (s.score > named->score) ++above;
    if (s.score == named->score) ++tied;
  }
  const int inside = std::clamp(k - above, 0, tied);
  return static_cast<double>(inside) / tied;
}

namespace {

// A fault's outcome from the alerts matched to it, in time order.
FaultOutcome fault_outcome(const FaultEpisode& f, const std::vector<const Alert*>& matched,
                           const std::function<std::vector<std::string>(const std::string&)>& pods_of) {
  FaultOutcome o;
  o.id = f.id;
  o.scored = !f.benign && !f.other_tenants;
  o.latent = o.scored && !f.affected_job;
  o.alerts = static_cast<int>(matched.size());
  o.detected = !matched.empty();
  if (o.detected) o.detection_latency_s = matched.front()->time_s - f.start_s;
  // Judged on the first alert that names anyone: later guesses do not
  // rescue a wrong first localization.
  for (const Alert* a : matched) {
    if (a->suspects.empty()) continue;
    o.top1 = localization_credit(a->suspects, f.target, 1);
    o.top3 = localization_credit(a->suspects, f.target, 3);
    o.host_top1 = level_credit(a->suspects, host_level_units(f.target), host_level_units, 1);
    if (pods_of) o.pod_top1 = level_credit(a->suspects, pods_of(f.target), pods_of, 1);
    break;
  }
  if (pods_of && !o.pod_top1) o.pod_top1 = 0;
  for (const Alert* a : matched)
    if (localization_credit(a->suspects, f.target, 1) == 1.0) {
      o.time_to_localize_s = a->time_s - f.start_s;
      break;
    }
  return o;
}

}  // namespace

namespace {

// Positions 0..n-1 ordered by `key`, ties in input order.
template <typename Key>
std::vector<std::size_t> stable_order(std::size_t n, Key key) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  return order;
}

// The fault an alert reports among those open at its time (`open` holds
// ranks in `by_start`): the first it names, else the earliest open; none if
// it blames an expected change (a benign episode) and no fault. `in_benign`
// says whether the alert came during an expected change: a benign episode
// open then that is not the fleet's background, or one the alert names.
std::optional<std::size_t> fault_of_alert(const Alert& a, const std::set<std::size_t>& open,
                                          const std::vector<std::size_t>& by_start,
                                          const std::vector<FaultEpisode>& faults, bool& in_benign) {
  std::optional<std::size_t> named, any, named_elsewhere;
  bool names_benign = false;
  in_benign = false;
  for (std::size_t rank : open) {
    const std::size_t fi = by_start[rank];
    const FaultEpisode& f = faults[fi];
    if (f.other_tenants) {
      if (!named_elsewhere && names(a, f.target)) named_elsewhere = fi;
      continue;
    }
    if (f.benign) {
      const bool names_it = names(a, f.target);
      in_benign = in_benign || !f.background || names_it;
      names_benign = names_benign || names_it;
      continue;
    }
    if (!any) any = fi;
    if (!named && names(a, f.target)) named = fi;
  }
  // An alert blaming the expected change, and no fault, reports the
  // background, whatever else is open then.
  if (!named && names_benign) any.reset();
  // A component that really is faulty, named, is never a false alarm, even
  // when its fault touched only other tenants.
  if (!named && named_elsewhere) return named_elsewhere;
  return named ? named : any;
}

// Each fault's alerts in time order; alerts that match none (or name only
// components the cluster lacks) are counted false in `score`.
std::vector<std::vector<const Alert*>> match_alerts(const std::vector<FaultEpisode>& faults,
                                                    const std::vector<Alert>& alerts, const ScoringOptions& options,
                                                    DetectorScore& score) {
  auto closes = [&](const FaultEpisode& f) {
    double end = f.end_s                 ? *f.end_s
                 : options.run_end_s > 0 ? options.run_end_s
                                         : std::numeric_limits<double>::infinity();
    return std::max(end, f.start_s) + options.grace_s;
  };
  // Episodes by start so "earliest open" is the first hit; alerts in time
  // order, so each fault's matches come out in time order.
  const std::vector<std::size_t> by_start =
      stable_order(faults.size(), [&](std::size_t i) { return faults[i].start_s; });
  const std::vector<std::size_t> by_time = stable_order(alerts.size(), [&](std::size_t i) { return alerts[i].time_s; });

  // The faults open at the current alert's time, by their rank in by_start:
  // alerts come in time order, so a fault joins once its start has passed
  // and leaves for good once its window has closed. Each alert then looks at
  // the faults open at its time only, not at every fault.
  std::set<std::size_t> open;
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>, std::greater<>>
      closing;  // (close time, rank)
  std::size_t next_start = 0;
  std::vector<std::vector<const Alert*>> matched(faults.size());
  for (std::size_t ai : by_time) {
    const Alert& a = alerts[ai];
    for (; next_start < by_start.size() && faults[by_start[next_start]].start_s <= a.time_s; ++next_start) {
      open.insert(next_start);
      closing.emplace(closes(faults[by_start[next_start]]), next_start);
    }
    for (; !closing.empty() && closing.top().first < a.time_s; closing.pop()) open.erase(closing.top().second);
    if (options.known_component && !a.suspects.empty() &&
        std::none_of(a.suspects.begin(), a.suspects.end(),
                     [&](const Suspect& s) { return options.known_component(s.id); })) {
      ++score.false_alerts;
      continue;
    }
    bool in_benign = false;
    if (const auto pick = fault_of_alert(a, open, by_start, faults, in_benign)) {
      matched[*pick].push_back(&a);
    } else {
      ++score.false_alerts;
      if (in_benign) ++score.benign_alerts;
    }
  }
  return matched;
}

}  // namespace

DetectorScore score_detector(const std::vector<FaultEpisode>& faults, const std::vector<Alert>& alerts,
                             const ScoringOptions& options) {
  DetectorScore score;
  score.alerts = static_cast<int>(alerts.size());
  const std::vector<std::vector<const Alert*>> matched = match_alerts(faults, alerts, options, score);
  std::size_t with_outcome = faults.size();
  while (with_outcome > 0 && faults[with_outcome - 1].background) --with_outcome;
  score.faults.reserve(with_outcome);
  for (std::size_t fi = 0; fi < faults.size(); ++fi) {
    if (fi < with_outcome) score.faults.push_back(fault_outcome(faults[fi], matched[fi], options.pods_of));
    if (faults[fi].other_tenants) score.other_tenant_alerts += static_cast<int>(matched[fi].size());
  }
  std::vector<const FaultOutcome*> all, impactful, latent;
  for (const FaultOutcome& o : score.faults) {
    if (!o.scored) continue;
    all.push_back(&o);
    (o.latent ? latent : impactful).push_back(&o);
  }
  score.overall = class_score(all);
  score.impactful = class_score(impactful);
  score.latent = class_score(latent);
  if (score.alerts > 0) score.precision = static_cast<double>(score.alerts - score.false_alerts) / score.alerts;
  return score;
}

std::vector<FaultEpisode> faults_for_tenant(const std::vector<FaultEpisode>& faults, const std::string& job) {
  const auto touches = [&](const FaultEpisode& f) {
    return std::find(f.jobs.begin(), f.jobs.end(), job) != f.jobs.end();
  };
  std::vector<FaultEpisode> out;
  for (const FaultEpisode& f : faults)
    if (touches(f)) out.push_back(f);
  for (const FaultEpisode& f : faults)
    if (!touches(f) && !f.benign) {
      out.push_back(f);
      out.back().other_tenants = true;
    }
  return out;
}

std::vector<std::string> host_level_units(const std::string& id) {
  const auto c = sim::ComponentId::parse(id);
  if (!c) return {};
  const auto host = [&] { return sim::ComponentId::make_host(c->host).str(); };
  const auto leaf = [&] { return sim::ComponentId::make_leaf(c->leaf).str(); };
  switch (c->kind) {
    case sim::ComponentKind::leaf:
    case sim::ComponentKind::spine:
      return {id};
    case sim::ComponentKind::host_link:
      return {host(), leaf()};
    case sim::ComponentKind::fabric_link:
      return {leaf(), sim::ComponentId::make_spine(c->spine).str()};
    default:
      return {host()};
  }
}

std::function<std::vector<std::string>(const std::string&)> pods_in(const sim::ClusterShape& shape) {
  const sim::Topology topology(shape);
  const int rails = shape.rail_optimized ? shape.rnics_per_host : 1;
  return [topology, rails](const std::string& id) -> std::vector<std::string> {
    const auto c = sim::ComponentId::parse(id);
    if (!c) return {};
    const auto pod = [](int p) { return "pod" + std::to_string(p); };
    const auto leaf_pod = [&] { return pod(c->leaf / rails); };
    const auto spine = [&] { return sim::ComponentId::make_spine(c->spine).str(); };
    switch (c->kind) {
      case sim::ComponentKind::leaf:
        return {leaf_pod()};
      case sim::ComponentKind::spine:
        return {spine()};
      case sim::ComponentKind::fabric_link:
        return {leaf_pod(), spine()};
      default:  // host-resident parts, and a host link (its leaf serves the host's pod)
        return {pod(topology.pod_of_host(c->host))};
    }
  };
}

double level_credit(const std::vector<Suspect>& suspects, const std::vector<std::string>& units,
                    const std::function<std::vector<std::string>(const std::string&)>& unit_of, int k) {
  const auto right = [&](const Suspect& s) {
    const std::vector<std::string> of = unit_of(s.id);
    return std::any_of(of.begin(), of.end(),
                       [&](const std::string& u) { return std::find(units.begin(), units.end(), u) != units.end(); });
  };
  // The best-ranked right suspect's tie group: those above it fill places
  // first, then its group's places go in any order.
  const Suspect* best = nullptr;
  for (const Suspect& s : suspects)
    if (right(s) && (!best || s.score > best->score)) best = &s;
  if (units.empty() || !best) return 0;
  int above = 0, tied = 0, tied_right = 0;
  for (const Suspect& s : suspects) {
    if (s.score > best->score) ++above;
    if (s.score == best->score) ++tied, tied_right += right(s) ? 1 : 0;
  }
  const int places = std::clamp(k - above, 0, tied);
  // The chance that none of the right ones gets one of `places` of `tied`.
  double none = 1;
  for (int i = 0; i < places; ++i) none *= static_cast<double>(tied - tied_right - i) / (tied - i);
  return 1 - std::max(none, 0.0);
}

DetectorScore with_scored_outcomes_only(const DetectorScore& score) {
  DetectorScore out;
  out.alerts = score.alerts;
  out.false_alerts = score.false_alerts;
  out.benign_alerts = score.benign_alerts;
  out.other_tenant_alerts = score.other_tenant_alerts;
  out.precision = score.precision;
  out.overall = score.overall;
  out.impactful = score.impactful;
  out.latent = score.latent;
  std::copy_if(score.faults.begin(), score.faults.end(), std::back_inserter(out.faults),
               [](const FaultOutcome& f) { return f.scored; });
  out.costs = score.costs;
  return out;
}

}  // namespace gauntlet::harness
