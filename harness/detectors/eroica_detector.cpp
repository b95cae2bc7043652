#include "harness/detectors/eroica_detector.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool compute_function(const std::string& f) { return f == "forward" || f == "backward" || f == "optimizer"; }

// Robust z-scores of `values` against their median and MAD.
std::vector<double> robust_z(const std::vector<double>& values, double* median_out) {
  const double median = median_of(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::abs(v - median));
  const double mad = median_of(deviations);
  *median_out = median;
  std::vector<double> z;
  for (double v : values) z.push_back(mad > 0 ? 0.6745 * (v - median) / mad : (v > median ? INFINITY : 0.0));
  return z;
}

}  // namespace

DetectorInfo EroicaDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo eroica;
  eroica.name = "eroica";
  eroica.summary =
      "EROICA: an iteration-time slowdown switches function-level profiling on for a short window; each worker's "
      "function summaries are compared with the peer majority to name the worker, function and device";
  eroica.params = {
      declare_param("slowdown", K::number, "1.1", "iteration time over its recent baseline that triggers profiling",
                    1.0),
      declare_param("baseline_iterations", K::integer, "8", "iterations that form the baseline", 1.0),
      declare_param("window", K::duration, "60s", "how long profiling stays on once triggered", 0.001),
      declare_param("cooldown", K::duration, "10m", "minimum time between two profiling windows", 0.0),
      declare_param("outlier_z", K::number, "3.5",
                    "robust z-score (median absolute deviation) that makes a worker an outlier", 0.0),
      declare_param("min_deviation", K::number, "0.05",
                    "relative deviation from the peer median an outlier must also reach", 0.0),
  };
  eroica.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<EroicaDetector>(EroicaDetector::config_from(ctx.params), ctx.topology);
  };
  eroica.shares_profiling = true;
  return eroica;
}

EroicaConfig EroicaDetector::config_from(const DetectorParams& params) {
  EroicaConfig c;
  c.slowdown = params.number("slowdown");
  c.baseline_iterations = static_cast<std::size_t>(params.integer("baseline_iterations"));
  c.window = params.duration("window");
  c.cooldown = params.duration("cooldown");
  c.outlier_z = params.number("outlier_z");
  c.min_deviation = params.number("min_deviation");
  return c;
}

std::vector<EroicaOutlier> eroica_outliers(const std::vector<telemetry::ProfileSummary>& summaries,
                                           const EroicaConfig& config, const sim::Topology* topology) {
  std::map<std::string, std::vector<const telemetry::ProfileSummary*>> by_function;
  for (const auto& s : summaries)
    if (s.calls() > 0) by_function[s.function()].push_back(&s);
  std::vector<EroicaOutlier> out;
  for (const auto& [function, rows] : by_function) {
    if (rows.size() < 3) continue;  // no majority to compare with
    std::vector<double> per_call, clock, cpu, nic;
    for (const auto* s : rows) {
      per_call.push_back(static_cast<double>(s->total_ns()) / static_cast<double>(s->calls()));
      clock.push_back(s->gpu_clock_mhz());
      cpu.push_back(s->cpu_utilization());
      nic.push_back(s->nic_gbps());
    }
    double median = 0;
    const std::vector<double> z = robust_z(per_call, &median);
    const double median_clock = median_of(clock), median_cpu = median_of(cpu), median_nic = median_of(nic);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double deviation = median > 0 ? (per_call[i] - median) / median : 0;
      if (z[i] < config.outlier_z || deviation < config.min_deviation) continue;
      const auto id = sim::ComponentId::parse(rows[i]->worker());
      if (!id || id->kind != sim::ComponentKind::gpu) continue;
      EroicaOutlier o{rows[i]->worker(), function, deviation, "", 0};
      const double tolerance = 1.0 - config.min_deviation;
      if (compute_function(function)) {
        o.device = rows[i]->worker();
        o.confidence = clock[i] < median_clock * tolerance ? 1.0 : 0.7;
      } else if (function == "dataloader") {
        o.device = sim::ComponentId::make_cpu(id->host).str();
        o.confidence = cpu[i] > median_cpu / tolerance ? 1.0 : 0.7;
      } else {
        const int nic_index = topology ? topology->nic_of_gpu(id->index) : id->index;
        const bool slow_nic = nic[i] < median_nic * tolerance;
        o.confidence = slow_nic ? 1.0 : 0.5;
        if (topology && id->host < topology->hosts())
          o.device = topology->link_name(topology->host_link(topology->endpoint(id->host, nic_index)));
        else
          o.device = sim::ComponentId::make_nic(id->host, nic_index).str();
      }
      out.push_back(std::move(o));
    }
  }
  // Most deviant first; ties by worker and function for a stable order.
  std::stable_sort(out.begin(), out.end(), [](const EroicaOutlier& a, const EroicaOutlier& b) {
    const double sa = a.deviation * a.confidence, sb = b.deviation * b.confidence;
    if (sa != sb) return sa > sb;
    return std::tie(a.worker, a.function) < std::tie(b.worker, b.function);
  });
  return out;
}

void EroicaDetector::on_iteration_time(sim::Nanos duration, sim::Nanos now, std::uint64_t iterations) {
  if (duration <= 0) return;
  const bool full = baseline_.size() >= config_.baseline_iterations;
  std::vector<double> values(baseline_.begin(), baseline_.end());
  const double baseline = median_of(values);
  const bool slow = full && static_cast<double>(duration) > config_.slowdown * baseline;
  if (!slow) {
    // A steady run's iterations are each a healthy iteration of the baseline.
    const std::uint64_t copies = std::min<std::uint64_t>(iterations, config_.baseline_iterations);
    for (std::uint64_t i = 0; i < copies; ++i) baseline_.push_back(duration);
    while (baseline_.size() > config_.baseline_iterations) baseline_.pop_front();
    return;
  }
  const bool cooling = last_window_ && now - *last_window_ < config_.cooldown;
  if (profiling_since_ || cooling) return;
  request_profiling({config_.window, {}});
  profiling_since_ = now;
  last_window_ = now;
  ++windows_requested_;
  profiling_seconds_ += sim::to_seconds(config_.window);
}

void EroicaDetector::diagnose(sim::Nanos window_start, sim::Nanos now) {
  const std::vector<EroicaOutlier> outliers = eroica_outliers(summaries_[window_start], config_, topology_);
  summaries_.erase(window_start);
  profiling_since_.reset();
  baseline_.clear();  // the level after the diagnosis is the new normal
  Alert alert;
  alert.time_s = sim::to_seconds(now);
  alert.detector = kName;
  bool only_network = !outliers.empty();
  std::set<std::string> named;
  for (const EroicaOutlier& o : outliers) {
    only_network = only_network && !compute_function(o.function) && o.function != "dataloader";
    if (!named.insert(o.device).second) continue;
    alert.suspects.push_back({o.device, o.deviation * o.confidence});
    // A communication outlier's RNIC follows its host link.
    if (!compute_function(o.function) && o.function != "dataloader") {
      const auto id = sim::ComponentId::parse(o.worker);
      const int nic = topology_ ? topology_->nic_of_gpu(id->index) : id->index;
      const std::string rnic = sim::ComponentId::make_nic(id->host, nic).str();
      if (named.insert(rnic).second) alert.suspects.push_back({rnic, o.deviation * o.confidence * 0.9});
    }
  }
  alert.kind = only_network ? "network" : "fail_slow";
  raise(std::move(alert));
}

void EroicaDetector::observe(const telemetry::Batch& batch) {
  const sim::Nanos now = batch.until_ns();
  std::set<sim::Nanos> arrived;
  for (const telemetry::Record& r : batch.records()) {
    if (r.has_iteration()) {
      const auto& it = r.iteration();
      if (last_fed_ && it.iteration() <= *last_fed_) continue;
      sim::Nanos& longest = pending_[it.iteration()];
      longest = std::max(longest, it.end_ns() - it.start_ns());
    } else if (r.has_profile()) {
      summaries_[r.profile().window_start_ns()].push_back(r.profile());
      arrived.insert(r.profile().window_start_ns());
    }
  }
  // Single iterations publish all their workers' records together, so every
  // pending iteration is whole by the end of the batch.
  for (const auto& [iteration, duration] : pending_) {
    on_iteration_time(duration, now);
    last_fed_ = iteration;
  }
  pending_.clear();
  for (const telemetry::SteadyRun& run : batch.steady()) {
    sim::Nanos longest = 0;
    for (const telemetry::Record& r : run.records())
      if (r.has_iteration()) longest = std::max(longest, r.iteration().end_ns() - r.iteration().start_ns());
    on_iteration_time(longest, now, run.last_iteration() - run.first_iteration() + 1);
    last_fed_ = std::max(last_fed_.value_or(0), run.last_iteration());
  }
  // Windows another detector asked for are not this one's to diagnose.
  for (sim::Nanos start : arrived) {
    if (profiling_since_ && start == *profiling_since_)
      diagnose(start, now);
    else
      summaries_.erase(start);
  }
  // A window whose summaries never came (the job hung) does not block the next.
  if (profiling_since_ && now - *profiling_since_ > config_.window + config_.cooldown) profiling_since_.reset();
}

}  // namespace gauntlet::harness
