#include "harness/detectors/falcon_detector.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "harness/detectors/batch_order.hpp"

namespace gauntlet::harness {
namespace {

BocdConfig model_config(const FalconConfig& c) {
  BocdConfig b;
  b.hazard = c.hazard;
  b.max_run = c.max_run;
  // Observations are iteration times relative to the first one, so the prior
  // expects values near 1 with about 1% noise; the data quickly overrule it.
  b.prior = {1.0, 0.1, 1.0, 1e-4};
  b.confirm = c.min_gap;
  return b;
}

struct Estimate {
  double mean = 0;
  double rel_se2 = 0;  // squared standard error of the mean, relative to the mean
};

// Mean over iterations a..b of a span list, each span weighted by how many
// of its iterations fall in the range. nullopt when nothing overlaps.
template <typename Spans, typename Field>
std::optional<Estimate> mean_over(const Spans& spans, std::uint64_t a, std::uint64_t b, Field field) {
  double sum = 0, sum2 = 0, weight = 0;
  for (const auto& s : spans) {
    if (s.last < a || s.first > b) continue;
    const double w = static_cast<double>(std::min(s.last, b) - std::max(s.first, a) + 1);
    const double v = field(s);
    sum += w * v;
    sum2 += w * v * v;
    weight += w;
  }
  if (weight == 0) return std::nullopt;
  Estimate e;
  e.mean = sum / weight;
  const double var = std::max(0.0, sum2 / weight - e.mean * e.mean);
  if (e.mean > 0) e.rel_se2 = var / weight / (e.mean * e.mean);
  return e;
}

// Median of sorted[] with element k left out.
double median_without(const std::vector<double>& sorted, std::size_t k) {
  const std::size_t m = sorted.size() - 1;
  auto at = [&](std::size_t j) { return sorted[j < k ? j : j + 1]; };
  return m % 2 == 1 ? at(m / 2) : (at(m / 2 - 1) + at(m / 2)) / 2;
}

}  // namespace

FalconDetector::FalconDetector(FalconConfig config) : config_(config), bocd_(model_config(config)) {
  if (config_.min_gap < 1) throw std::invalid_argument("falcon: min_gap must be at least 1");
  if (config_.steady_copies < 1) throw std::invalid_argument("falcon: steady_copies must be at least 1");
}

DetectorInfo FalconDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo falcon;
  falcon.name = "falcon";
  falcon.summary =
      "Bayesian changepoint detection on iteration times, group profiling to find the slow workers, then GEMM and "
      "allreduce validation benchmarks that pause training (compute, communication, or neither: the host)";
  falcon.params = {
      declare_param("hazard", K::number, "0.005", "prior probability of a changepoint at each iteration", 1e-9, 0.5),
      declare_param("min_gap", K::integer, "10", "iterations required between accepted changepoints (and after one)",
                    2.0),
      declare_param("min_shift", K::number, "0.1", "relative mean shift a changepoint needs to be accepted", 0.0),
      declare_param("compute_ratio", K::number, "1.2", "compute slowdown versus peers that makes a worker a suspect",
                    1.0),
      declare_param("comm_ratio", K::number, "1.2",
                    "collective-time slowdown versus peers that makes a worker a suspect", 1.0),
      declare_param("max_run", K::integer, "512", "run lengths tracked by the changepoint model (memory bound)", 16.0),
      declare_param("steady_copies", K::integer, "64", "iterations of a steady run fed to the model; the rest are held",
                    1.0),
      declare_param(
          "validate", K::integer, "1",
          "1: confirm a slowdown with GEMM and allreduce benchmarks that pause training; 0: alert on the profile", 0.0,
          1.0),
      declare_param("gemm_ratio", K::number, "2", "GEMM time over the median that makes a GPU the compute suspect",
                    1.0),
      declare_param("allreduce_ratio", K::number, "1.1",
                    "allreduce benchmark time over the median that makes a group the communication suspect", 1.0),
      declare_param("validation_timeout", K::duration, "5m",
                    "how long to wait for benchmark results before alerting on the profile", 0.001),
  };
  falcon.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    FalconConfig config = FalconDetector::config_from(ctx.params);
    if (!ctx.name.empty()) config.name = ctx.name;
    return std::make_unique<FalconDetector>(std::move(config));
  };
  falcon.pauses_training = true;
  return falcon;
}

FalconConfig FalconDetector::config_from(const DetectorParams& params) {
  FalconConfig c;
  c.hazard = params.number("hazard");
  c.min_gap = static_cast<std::uint64_t>(std::max(1LL, params.integer("min_gap")));
  c.min_shift = params.number("min_shift");
  c.compute_ratio = params.number("compute_ratio");
  c.comm_ratio = params.number("comm_ratio");
  c.max_run = static_cast<std::size_t>(std::max(2LL, params.integer("max_run")));
  c.steady_copies = static_cast<std::size_t>(std::max(1LL, params.integer("steady_copies")));
  c.validate = params.integer("validate") != 0;
  c.gemm_ratio = params.number("gemm_ratio");
  c.allreduce_ratio = params.number("allreduce_ratio");
  c.validation_timeout = params.duration("validation_timeout");
  return c;
}

void FalconDetector::observe(const telemetry::Batch& batch) {
  for (const BatchItem& item : ordered_items(batch)) {
    if (item.steady) {
      on_steady(*item.steady);
      continue;
    }
    const auto& r = *item.record;
    switch (r.body_case()) {
      case telemetry::Record::kIteration:
        on_iteration(r.iteration());
        break;
      case telemetry::Record::kCollective:
        on_collective(r.collective());
        break;
      case telemetry::Record::kBenchmark:
        on_benchmark(r.benchmark());
        break;
      case telemetry::Record::kJob:
        if (r.job().kind() == telemetry::JobEvent::CRASH || r.job().kind() == telemetry::JobEvent::RESTART) {
          // A restarted job replays iterations from its checkpoint, so the
          // numbering starts over; whatever was half-reported is done.
          if (!pending_.empty()) finalize_before(pending_.rbegin()->first + 1);
          last_finalized_.reset();
          stable_ = false;
        }
        break;
      default:
        break;
    }
  }
  if (calibrating_ && !gemm_reference_.empty()) calibrating_ = false;
  // Once the job runs steadily, one GEMM round records each GPU's healthy time.
  if (config_.validate && !calibration_requested_ && bocd_.observations() >= config_.min_gap) {
    calibration_requested_ = calibrating_ = true;
    request_benchmark({"gemm", {}});
  }
  if (validation_) {
    const bool answered = validation_->have_gemm && validation_->have_allreduce;
    if (answered || batch.until_ns() - validation_->requested_ns >= config_.validation_timeout)
      conclude(batch.until_ns());
  }
}

void FalconDetector::on_collective(const telemetry::CollectiveRecord& c) {
  if (c.end_ns() > 0) worker(c.worker()).comm_open_ns += static_cast<double>(c.end_ns() - c.start_ns());
  if (c.communicator().starts_with("dp.")) communicators_[c.communicator()].insert(c.worker());
}

void FalconDetector::on_benchmark(const telemetry::BenchmarkResult& b) {
  if (b.detector() != config_.name) return;
  // The first GEMM round is the healthy reference, asked for early in the run.
  if (calibrating_ && b.kind() == "gemm" && !gemm_reference_.count(b.target())) {
    gemm_reference_[b.target()] = static_cast<double>(b.duration_ns());
    return;
  }
  if (!validation_) return;
  if (b.kind() == "gemm") {
    validation_->gemm[b.target()] = static_cast<double>(b.duration_ns());
    validation_->have_gemm = true;
  } else if (b.kind() == "allreduce") {
    validation_->allreduce[b.target()] = static_cast<double>(b.duration_ns());
    validation_->have_allreduce = true;
  }
}

FalconDetector::Worker& FalconDetector::worker(const std::string& id) {
  auto [it, added] = worker_index_.emplace(id, workers_.size());
  if (added) workers_.push_back(Worker{id, {}, 0});
  return workers_[it->second];
}

void FalconDetector::add_span(Worker& w, Span span) {
  w.history.push_back(span);
  // Enough for the segment after a changepoint plus a baseline before it;
  // with thousands of workers a longer memory costs more than it tells.
  const std::size_t cap = std::max<std::size_t>(64, 6 * config_.min_gap);
  while (w.history.size() > cap) w.history.pop_front();
}

void FalconDetector::on_iteration(const telemetry::IterationRecord& r) {
  Worker& w = worker(r.worker());
  add_span(w, {r.iteration(), r.iteration(), static_cast<double>(r.compute_ns()), w.comm_open_ns});
  w.comm_open_ns = 0;
  // A late copy of an iteration already counted adds nothing to the series.
  if (last_finalized_ && r.iteration() <= *last_finalized_) return;

  // Training is synchronous: once any worker reports iteration i, every
  // earlier iteration is complete.
  finalize_before(r.iteration());
  PendingIteration& p = pending_[r.iteration()];
  p.duration_ns = std::max(p.duration_ns, r.end_ns() - r.start_ns());
  p.end_ns = std::max(p.end_ns, r.end_ns());
  ++p.reports;
  // Everyone known has reported: no need to wait for the next iteration. Only
  // trusted once a full iteration has shown who the workers are.
  if (stable_ && p.reports >= workers_.size()) finalize_before(r.iteration() + 1);
}

void FalconDetector::finalize_before(std::uint64_t iteration) {
  while (!pending_.empty() && pending_.begin()->first < iteration) {
    auto node = pending_.extract(pending_.begin());
    feed(node.key(), node.mapped().duration_ns, node.mapped().end_ns);
    last_finalized_ = node.key();
    stable_ = true;
  }
}

void FalconDetector::on_steady(const telemetry::SteadyRun& run) {
  finalize_before(run.first_iteration());
  if (last_finalized_ && run.first_iteration() <= *last_finalized_) return;
  sim::Nanos duration = 0, end = 0;
  std::map<std::size_t, Span> spans;
  for (const auto& r : run.records()) {
    if (r.has_iteration()) {
      const auto& it = r.iteration();
      duration = std::max(duration, it.end_ns() - it.start_ns());
      end = std::max(end, it.end_ns());
      worker(it.worker());
      spans[worker_index_.at(it.worker())].compute_ns = static_cast<double>(it.compute_ns());
    } else if (r.has_collective() && r.collective().end_ns() > 0) {
      const auto& c = r.collective();
      worker(c.worker());
      spans[worker_index_.at(c.worker())].comm_ns += static_cast<double>(c.end_ns() - c.start_ns());
      if (c.communicator().starts_with("dp.")) communicators_[c.communicator()].insert(c.worker());
    }
  }
  for (auto& [index, span] : spans) {
    span.first = run.first_iteration();
    span.last = run.last_iteration();
    workers_[index].comm_open_ns = 0;
    add_span(workers_[index], span);
  }
  if (duration <= 0) return;
  // A bounded number of copies: enough for the model to confirm a change
  // that begins with this run; beyond that the state simply holds.
  const std::uint64_t n = run.last_iteration() - run.first_iteration() + 1;
  const std::uint64_t k = std::min<std::uint64_t>(n, config_.steady_copies);
  for (std::uint64_t j = 0; j < k; ++j) {
    const std::uint64_t iteration = j + 1 == k ? run.last_iteration() : run.first_iteration() + j;
    feed(iteration, duration, end + static_cast<sim::Nanos>(iteration - run.first_iteration()) * run.period_ns());
  }
  last_finalized_ = run.last_iteration();
  stable_ = true;
}

void FalconDetector::feed(std::uint64_t iteration, sim::Nanos duration_ns, sim::Nanos end_ns) {
  if (duration_ns <= 0) return;
  if (reference_ns_ == 0) reference_ns_ = static_cast<double>(duration_ns);
  const double value = static_cast<double>(duration_ns) / reference_ns_;
  series_.push_back({bocd_.observations(), iteration, value, end_ns});
  while (series_.size() > config_.max_run + 4 * config_.min_gap) series_.pop_front();
  if (auto cp = bocd_.push(value)) consider(*cp);
}

void FalconDetector::consider(std::uint64_t changepoint) {
  if (series_.empty() || series_.front().index > changepoint) return;
  const std::size_t at = static_cast<std::size_t>(changepoint - series_.front().index);
  const Observation& cp = series_[at];
  const Observation& latest = series_.back();

  // The segment before runs from the previous accepted changepoint (or the
  // oldest observation kept) up to this one.
  std::size_t from = 0;
  if (accepted_at_) {
    if (cp.iteration < accepted_at_->iteration + config_.min_gap) return;
    if (accepted_at_->index > series_.front().index)
      from = static_cast<std::size_t>(accepted_at_->index - series_.front().index);
  }
  if (at - from < config_.min_gap) return;
  double before = 0, after = 0;
  for (std::size_t i = from; i < at; ++i) before += series_[i].value;
  for (std::size_t i = at; i < series_.size(); ++i) after += series_[i].value;
  before /= static_cast<double>(at - from);
  after /= static_cast<double>(series_.size() - at);
  const double shift = (after - before) / before;
  if (std::fabs(shift) < config_.min_shift) return;

  accepted_at_ = cp;
  ++accepted_;
  if (shift <= 0) return;  // a recovery: the new, faster level becomes the baseline
  Verdict profiled = localize(cp.iteration, latest.iteration, series_[from].iteration);
  if (!config_.validate || validation_) {
    // Unvalidated, or a second change while benchmarks are pending: the profile alone.
    raise({sim::to_seconds(latest.end_ns), kName, "fail_slow", std::move(profiled.suspects)});
    return;
  }
  validation_ = Validation{latest.end_ns, std::move(profiled), {}, {}, false, false};
  ++validations_;
  request_benchmark({"gemm", {}});
  request_benchmark({"allreduce", {}});
}

namespace {

double median_value(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string host_cpu_of(const std::string& worker) {
  const auto dot = worker.find('.');
  return worker.substr(0, dot) + ".cpu";
}

}  // namespace

void FalconDetector::conclude(sim::Nanos now) {
  Validation v = std::move(*validation_);
  validation_.reset();
  const double time_s = sim::to_seconds(now);
  std::vector<Suspect> out;
  auto add = [&out](const std::string& id, double score) {
    for (const Suspect& s : out)
      if (s.id == id) return;
    out.push_back({id, score});
  };
  auto by_score = [](const Suspect& a, const Suspect& b) { return a.score > b.score; };

  std::vector<double> gemm;
  for (const auto& [w, ns] : v.gemm) gemm.push_back(ns);
  const double gemm_median = gemm.empty() ? 0 : median_value(gemm);
  // Compute: GPUs whose GEMM is far off their peers'.
  if (gemm_median > 0)
    for (const auto& [w, ns] : v.gemm)
      if (ns > config_.gemm_ratio * gemm_median) add(w, ns / gemm_median);
  if (!out.empty()) {
    std::stable_sort(out.begin(), out.end(), by_score);
    raise({time_s, kName, "fail_slow", out});
    return;
  }
  // Communication: a data-parallel group whose allreduce is off its peers'.
  std::vector<double> rings;
  for (const auto& [c, ns] : v.allreduce) rings.push_back(ns);
  const double ring_median = rings.empty() ? 0 : median_value(rings);
  std::vector<std::pair<double, std::string>> slow;
  if (ring_median > 0)
    for (const auto& [c, ns] : v.allreduce)
      if (ns > config_.allreduce_ratio * ring_median) slow.push_back({ns / ring_median, c});
  if (!slow.empty()) {
    std::stable_sort(slow.begin(), slow.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [ratio, c] : slow) {
      const auto& members = communicators_[c];
      if (!v.profiled.compute)
        for (const Suspect& s : v.profiled.suspects)
          if (members.count(s.id)) add(s.id, ratio * s.score);
    }
    for (const auto& [ratio, c] : slow)
      for (const std::string& w : communicators_[c]) add(w, ratio * 0.5);
    raise({time_s, kName, "network", out});
    return;
  }
  // Neither benchmark stands out: the profile stands, checked against the GEMMs.
  if (v.profiled.compute && gemm_median > 0) {
    for (const Suspect& s : v.profiled.suspects) {
      auto it = v.gemm.find(s.id);
      const double gemm_ratio = it == v.gemm.end() ? 1.0 : it->second / gemm_median;
      if (it != v.gemm.end() && gemm_ratio - 1 >= 0.5 * (s.score - 1))
        add(s.id, s.score);
      else
        add(host_cpu_of(s.id), s.score);
    }
    std::stable_sort(out.begin(), out.end(), by_score);
    raise({time_s, kName, "fail_slow", out});
    return;
  }
  // Compute grew for everyone alike: each GEMM against the GPU's own healthy
  // one (measured once early in the run) tells the GPUs from their hosts.
  if (v.profiled.suspects.empty() && !v.profiled.slowed.empty() && !gemm_reference_.empty()) {
    for (const Suspect& s : v.profiled.slowed) {
      auto it = v.gemm.find(s.id);
      auto ref = gemm_reference_.find(s.id);
      if (it == v.gemm.end() || ref == gemm_reference_.end() || ref->second <= 0) continue;
      if (it->second / ref->second - 1 >= 0.5 * (s.score - 1))
        add(s.id, s.score);
      else
        add(host_cpu_of(s.id), s.score);
    }
    std::stable_sort(out.begin(), out.end(), by_score);
    raise({time_s, kName, "fail_slow", out});
    return;
  }
  raise({time_s, kName, "fail_slow", std::move(v.profiled.suspects)});
}

FalconDetector::Verdict FalconDetector::localize(std::uint64_t from_iteration, std::uint64_t to_iteration,
                                                 std::uint64_t baseline_from) const {
  // Ratio of each worker's time after the change to its own time before;
  // falls back to the raw time when some worker has no history before it.
  struct Ratio {
    std::size_t worker;
    double value;
    double rel_se2;
  };
  auto ratios = [&](auto field, bool* based = nullptr) {
    std::vector<Ratio> recent;
    std::vector<Estimate> base;
    bool all_have_base = from_iteration > baseline_from;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      auto r = mean_over(workers_[i].history, from_iteration, to_iteration, field);
      if (!r || r->mean <= 0) continue;
      recent.push_back({i, r->mean, r->rel_se2});
      auto b = all_have_base ? mean_over(workers_[i].history, baseline_from, from_iteration - 1, field) : std::nullopt;
      if (!b || b->mean <= 0) all_have_base = false;
      base.push_back(b.value_or(Estimate{}));
    }
    if (all_have_base)
      for (std::size_t j = 0; j < recent.size(); ++j) {
        recent[j].value /= base[j].mean;
        recent[j].rel_se2 += base[j].rel_se2;
      }
    if (based) *based = all_have_base;
    return recent;
  };
  // A worker stands out when its ratio to the median of its peers reaches the
  // threshold within measurement noise (three standard errors of its own
  // means), so a slowdown of exactly the threshold is not missed half the time.
  auto standouts = [&](const std::vector<Ratio>& values, double threshold) {
    std::vector<Suspect> out;
    if (values.size() < 2) return out;
    std::vector<double> sorted;
    for (const auto& v : values) sorted.push_back(v.value);
    std::sort(sorted.begin(), sorted.end());
    for (const Ratio& r : values) {
      // Leaving out the first equal entry leaves the same multiset as leaving out this one.
      auto k = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), r.value) - sorted.begin());
      const double peers = median_without(sorted, k);
      if (peers <= 0) continue;
      const double ratio = r.value / peers;
      const double tolerance = 3 * std::sqrt(r.rel_se2) + 1e-9;
      if (ratio * (1 + tolerance) >= threshold) out.push_back({workers_[r.worker].id, ratio});
    }
    std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) { return a.score > b.score; });
    return out;
  };
  bool based = false;
  const std::vector<Ratio> compute_ratios = ratios([](const Span& s) { return s.compute_ns; }, &based);
  auto compute = standouts(compute_ratios, config_.compute_ratio);
  if (!compute.empty()) return {std::move(compute), true, {}};
  // Nobody stands out from its peers, yet compute may have grown for all
  // alike (a one-host job, a shared cause): who slowed against its own past.
  std::vector<Suspect> slowed;
  if (based)
    for (const Ratio& r : compute_ratios)
      if (r.value * (1 + 3 * std::sqrt(r.rel_se2) + 1e-9) >= config_.compute_ratio)
        slowed.push_back({workers_[r.worker].id, r.value});
  return {standouts(ratios([](const Span& s) { return s.comm_ns; }), config_.comm_ratio), false, std::move(slowed)};
}

}  // namespace gauntlet::harness
