#include "harness/probe_plan/detection_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "harness/probe_plan/probe_list.hpp"

namespace gauntlet::harness {

const char* fault_site_name(FaultSite site) {
  return site == FaultSite::fabric_link ? "fabric link" : site == FaultSite::host_link ? "host link" : "flow table";
}

std::string fault_class_name(const FaultClass& fault) {
  char text[64];
  std::snprintf(text, sizeof text, "%s %.3g%% loss", fault_site_name(fault.site), 100 * fault.loss);
  return text;
}

double train_failure_probability(const FaultClass& fault, int pings) {
  const double crossings = fault.site == FaultSite::flow_table ? pings : 2.0 * pings;
  if (fault.loss >= 1) return 1;
  return -std::expm1(crossings * std::log1p(-std::max(0.0, fault.loss)));
}

double mean_detection_s(const std::vector<Opportunity>& chances, double cycle_seconds) {
  const std::size_t k = chances.size();
  if (k == 0 || !(cycle_seconds > 0)) return std::numeric_limits<double>::infinity();
  // F_i, the time from chance i to the read of the first that sees the
  // fault, solves F_i = pi_i read_i + (1 - pi_i) (t_{i+1} - t_i + F_{i+1})
  // with F_{k+1} = F_1 a cycle later: affine in F_1 going backwards,
  // F_i = a_i + b_i F_1.
  std::vector<double> a(k), b(k);
  double next_a = 0, next_b = 1;
  for (std::size_t i = k; i-- > 0;) {
    const Opportunity& c = chances[i];
    const double next_time = i + 1 < k ? chances[i + 1].time_s : chances[0].time_s + cycle_seconds;
    const double miss = 1 - c.probability;
    a[i] = c.probability * c.read_s + miss * (next_time - c.time_s + next_a);
    b[i] = miss * next_b;
    next_a = a[i];
    next_b = b[i];
  }
  if (!(b[0] < 1)) return std::numeric_limits<double>::infinity();
  const double first = a[0] / (1 - b[0]);
  // An onset between chances i-1 and i waits for chance i.
  double total = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double previous = i > 0 ? chances[i - 1].time_s : chances[k - 1].time_s - cycle_seconds;
    const double span = chances[i].time_s - previous;
    total += span * span / 2 + span * (a[i] + b[i] * first);
  }
  return total / cycle_seconds;
}

double predicted_latency_s(const ProbeSchedule& schedule, int component, const FaultClass& fault, int pings) {
  const double q = train_failure_probability(fault, pings);
  const double drawn = schedule.draw_share.empty() ? 0 : schedule.draw_share[static_cast<std::size_t>(component)];
  const auto& fixed = schedule.fixed[static_cast<std::size_t>(component)];
  const int slots = schedule.cycle_rounds * schedule.slots_per_round;
  auto fixed_miss = [q](const SlotProbes& s) {
    return std::pow(1 - q, s.probes) * (1 + static_cast<double>(s.probes - s.direct) * q);
  };
  auto chance = [&](int slot, double miss, bool tied) {
    // Read at the first round boundary after its train ends.
    const double in_round = (slot % schedule.slots_per_round) * schedule.slot_seconds;
    const double read =
        schedule.round_seconds * std::ceil((in_round + schedule.slot_seconds) / schedule.round_seconds - 1e-9) -
        in_round;
    return Opportunity{schedule.slot_time(slot), 1 - miss, read + schedule.confirm_s + (tied ? schedule.tie_s : 0)};
  };
  std::vector<Opportunity> chances;
  std::size_t next = 0;
  // The slots with draws or fixed probes, in order: a long round's later slots hold neither.
  const bool draws = q * drawn > 0 && !schedule.draw_slots.empty();
  std::size_t next_draw = 0;
  while (true) {
    const int fixed_slot = next < fixed.size() ? fixed[next].slot : slots;
    const int draw_slot = draws && next_draw < schedule.draw_slots.size() ? schedule.draw_slots[next_draw] : slots;
    const int slot = std::min(fixed_slot, draw_slot);
    if (slot >= slots) break;
    double miss = 1;
    if (draw_slot == slot) {
      miss = std::pow(1 - q * drawn, schedule.draws_per_slot[static_cast<std::size_t>(slot)]);
      ++next_draw;
    }
    bool tied = false;
    for (; next < fixed.size() && fixed[next].slot == slot; ++next) {
      miss *= fixed_miss(fixed[next]);
      tied = tied || fixed[next].tied;
    }
    if (miss < 1) chances.push_back(chance(slot, miss, tied));
  }
  return mean_detection_s(chances, schedule.cycle_seconds());
}

std::vector<int> site_components(const sim::Topology& t, FaultSite site) {
  std::vector<int> out;
  if (site == FaultSite::host_link)
    for (int e = 0; e < t.endpoints(); ++e) out.push_back(t.host_link(e));
  else if (site == FaultSite::fabric_link)
    for (int link = t.endpoints(); link < t.links(); ++link) out.push_back(link);
  else
    for (int e = 0; e < t.endpoints(); ++e) out.push_back(flow_table_component(t, e));
  return out;
}

ClassPrediction predict_class(const sim::Topology& t, const ProbeSchedule& schedule, const FaultClass& fault,
                              int pings) {
  ClassPrediction out;
  out.fault = fault;
  double sum = 0;
  int probed = 0;
  for (int c : site_components(t, fault.site)) {
    ++out.components;
    const double latency = predicted_latency_s(schedule, c, fault, pings);
    if (!std::isfinite(latency)) {
      ++out.never_probed;
      continue;
    }
    out.best_s = probed == 0 ? latency : std::min(out.best_s, latency);
    out.worst_s = std::max(out.worst_s, latency);
    sum += latency;
    ++probed;
  }
  out.mean_s = probed > 0 ? sum / probed : std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace gauntlet::harness
