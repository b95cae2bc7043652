#include "harness/runner/job_impact.hpp"

#include <algorithm>
#include <cmath>

#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

double span_end_s(const models::IterationSpan& span) {
  return sim::to_seconds(span.start + static_cast<sim::Nanos>(span.count) * span.duration);
}

}  // namespace

double mean_iteration_seconds(const SimulationOutcome& run) {
  double total = 0, count = 0;
  for (const auto& span : run.timeline) {
    total += sim::to_seconds(span.duration) * static_cast<double>(span.count);
    count += static_cast<double>(span.count);
  }
  return count > 0 ? total / count : 0;
}

JobImpact::JobImpact(const SimulationOutcome& faulty, const SimulationOutcome& fault_free,
                     std::vector<FaultWindow> faults, double slowdown, double run_end_s)
    : faulty_(faulty),
      fault_free_(fault_free),
      faults_(std::move(faults)),
      slowdown_(slowdown),
      run_end_s_(run_end_s),
      settle_s_(2 * mean_iteration_seconds(fault_free)) {
  for (std::size_t epoch = 0; epoch < std::max<std::size_t>(1, faulty_.placements.size()); ++epoch)
    epoch_ratios_.push_back(epoch_ratio(epoch));
}

std::optional<int> JobImpact::host_of(const std::string& target) {
  const auto id = sim::ComponentId::parse(target);
  if (!id || id->host < 0) return std::nullopt;
  return id->host;
}

double JobImpact::epoch_start(std::size_t epoch) const {
  return epoch == 0 || epoch >= faulty_.placements.size() ? 0 : sim::to_seconds(faulty_.placements[epoch].start);
}

double JobImpact::epoch_end(std::size_t epoch) const {
  return epoch + 1 < faulty_.placements.size() ? sim::to_seconds(faulty_.placements[epoch + 1].start) : run_end_s_;
}

// A fault on a host the job did not hold in that epoch cannot touch it; one
// on the fabric (or with no target) may.
bool JobImpact::could_touch(const FaultWindow& fault, std::size_t epoch) const {
  const std::optional<int> host = host_of(fault.target);
  if (!host || epoch >= faulty_.placements.size()) return true;
  const std::vector<int>& hosts = faulty_.placements[epoch].hosts;
  return std::find(hosts.begin(), hosts.end(), *host) != hosts.end();
}

// Time-weighted mean of the faulty run's iteration duration over the
// fault-free run's at the same instants, within `span`, where the faulty run
// was iterating.
JobImpact::RatioSum JobImpact::ratio_over(Interval span) const {
  RatioSum sum;
  for (const models::IterationSpan& f : faulty_.timeline) {
    const double lo = std::max(span.lo, sim::to_seconds(f.start));
    const double hi = std::min(span.hi, span_end_s(f));
    if (hi <= lo || f.duration <= 0) continue;
    // The fault-free run iterates without a gap, its spans in time order.
    const auto& spans = fault_free_.timeline;
    auto free = std::partition_point(spans.begin(), spans.end(),
                                     [lo](const models::IterationSpan& s) { return span_end_s(s) <= lo; });
    for (; free != spans.end() && sim::to_seconds(free->start) < hi; ++free) {
      const double a = std::max(lo, sim::to_seconds(free->start));
      const double b = std::min(hi, span_end_s(*free));
      if (b <= a || free->duration <= 0) continue;
      sum.weighted += (b - a) * static_cast<double>(f.duration) / static_cast<double>(free->duration);
      sum.seconds += b - a;
    }
  }
  return sum;
}

// What the epoch's placement costs by itself: the ratio over its stretches
// that no fault able to touch it overlapped (1 when there are none).
double JobImpact::epoch_ratio(std::size_t epoch) const {
  std::vector<Interval> busy;
  for (const FaultWindow& f : faults_)
    if (!f.benign && could_touch(f, epoch)) busy.push_back({f.start_s, std::min(run_end_s_, f.end_s + settle_s_)});
  std::sort(busy.begin(), busy.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
  RatioSum clean;
  double from = epoch_start(epoch);
  const double to = epoch_end(epoch);
  for (const Interval& b : busy) {
    if (b.lo > from) {
      const RatioSum part = ratio_over({from, std::min(b.lo, to)});
      clean.weighted += part.weighted;
      clean.seconds += part.seconds;
    }
    from = std::max(from, b.hi);
    if (from >= to) break;
  }
  if (from < to) {
    const RatioSum part = ratio_over({from, to});
    clean.weighted += part.weighted;
    clean.seconds += part.seconds;
  }
  return clean.seconds > 0 ? clean.weighted / clean.seconds : 1.0;
}

// Iterations that ended within `span`.
double JobImpact::completions(const SimulationOutcome& run, Interval span) const {
  double count = 0;
  for (const models::IterationSpan& s : run.timeline) {
    const double step = sim::to_seconds(s.duration);
    if (step <= 0 || s.count == 0) continue;
    const double first_end = sim::to_seconds(s.start + s.duration);
    const double last_end = first_end + step * static_cast<double>(s.count - 1);
    if (last_end < span.lo || first_end > span.hi) continue;
    const double lo = std::max(0.0, std::ceil((span.lo - first_end) / step));
    const double hi = std::min(static_cast<double>(s.count - 1), std::floor((span.hi - first_end) / step));
    if (hi >= lo) count += hi - lo + 1;
  }
  return count;
}

bool JobImpact::affected(std::size_t index) const {
  const FaultWindow& fault = faults_.at(index);
  if (fault.benign) return false;
  // The window in each epoch the fault could touch, and what that
  // epoch's placement would have cost without it.
  RatioSum observed;
  double expected = 0;
  bool touched = false;
  for (std::size_t epoch = 0; epoch < epoch_ratios_.size(); ++epoch) {
    const Interval part{std::max(fault.start_s, epoch_start(epoch)),
                        std::min(std::min(fault.end_s, run_end_s_) + settle_s_, epoch_end(epoch))};
    if (part.hi <= part.lo || !could_touch(fault, epoch)) continue;
    touched = true;
    const RatioSum sum = ratio_over({part.lo, std::min(part.hi, fault.end_s)});
    observed.weighted += sum.weighted;
    observed.seconds += sum.seconds;
    expected += sum.seconds * epoch_ratios_[epoch];
  }
  if (!touched) return false;
  if (observed.seconds > 0 && observed.weighted > expected * (1 + slowdown_)) return true;
  // A hang or crash completes fewer iterations than the counterfactual in the
  // same window (maybe none at all), even if the ones it completes are not
  // slower. Either run may complete one more at each end of the window than
  // the other, its iterations being out of phase after a restart.
  const Interval window{fault.start_s, std::min(run_end_s_, fault.end_s + settle_s_)};
  const double pace = observed.seconds > 0 ? expected / observed.seconds : 1.0;
  return completions(faulty_, window) + 2 < completions(fault_free_, window) / pace;
}

}  // namespace gauntlet::harness
