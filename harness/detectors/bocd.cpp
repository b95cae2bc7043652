#include "harness/detectors/bocd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace gauntlet::harness {
namespace {

double log_add(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  double hi = std::max(a, b), lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}

}  // namespace

Bocd::Bocd(BocdConfig config) : config_(config) {
  if (!(config_.hazard > 0 && config_.hazard < 1)) throw std::invalid_argument("bocd: hazard must be in (0, 1)");
  if (config_.max_run < 2) throw std::invalid_argument("bocd: max_run must be at least 2");
  const auto& p = config_.prior;
  if (!(p.kappa > 0 && p.alpha > 0 && p.beta > 0))
    throw std::invalid_argument("bocd: prior kappa, alpha, beta must be > 0");
  runs_.reserve(config_.max_run + 1);
  next_.reserve(config_.max_run + 1);
}

// Student-t with 2*alpha degrees of freedom, location mu and squared scale
// beta*(kappa+1)/(alpha*kappa): the Normal-Gamma posterior predictive.
double Bocd::log_predictive(const NormalGammaPrior& p, double x) {
  const double nu = 2 * p.alpha;
  const double scale2 = p.beta * (p.kappa + 1) / (p.alpha * p.kappa);
  const double z2 = (x - p.mu) * (x - p.mu) / scale2;
  return std::lgamma((nu + 1) / 2) - std::lgamma(nu / 2) - 0.5 * std::log(nu * std::numbers::pi * scale2) -
         (nu + 1) / 2 * std::log1p(z2 / nu);
}

NormalGammaPrior Bocd::update(const NormalGammaPrior& p, double x) {
  NormalGammaPrior q;
  q.kappa = p.kappa + 1;
  q.mu = (p.kappa * p.mu + x) / q.kappa;
  q.alpha = p.alpha + 0.5;
  q.beta = p.beta + p.kappa * (x - p.mu) * (x - p.mu) / (2 * q.kappa);
  return q;
}

std::optional<std::uint64_t> Bocd::push(double x) {
  const double log_h = std::log(config_.hazard);
  const double log_stay = std::log1p(-config_.hazard);
  next_.clear();

  // A new segment starting with x: every current hypothesis may end here,
  // and their posteriors sum to one, so its weight is H * p(x | prior).
  Run fresh{count_, log_predictive(config_.prior, x), update(config_.prior, x)};
  if (!runs_.empty()) fresh.log_p += log_h;
  next_.push_back(fresh);
  // Each current segment may continue and absorb x.
  for (const Run& r : runs_)
    next_.push_back({r.start, r.log_p + log_stay + log_predictive(r.post, x), update(r.post, x)});

  // Bound memory: the two oldest hypotheses are merged, keeping the older
  // start and statistics, which differ little for runs this long.
  while (next_.size() > config_.max_run) {
    Run last = next_.back();
    next_.pop_back();
    Run& keep = next_.back();
    double merged = log_add(keep.log_p, last.log_p);
    keep.start = last.start;
    keep.post = last.post;
    keep.log_p = merged;
  }

  double total = -std::numeric_limits<double>::infinity();
  for (const Run& r : next_) total = log_add(total, r.log_p);
  for (Run& r : next_) r.log_p -= total;
  std::swap(runs_, next_);
  ++count_;

  const std::uint64_t start = map_segment_start();
  const std::uint64_t length = count_ - start;
  if (start > 0 && length >= config_.confirm && (!reported_ || start > *reported_)) {
    reported_ = start;
    return start;
  }
  return std::nullopt;
}

std::size_t Bocd::map_run_length() const {
  return count_ == 0 ? 0 : static_cast<std::size_t>(count_ - map_segment_start());
}

std::uint64_t Bocd::map_segment_start() const {
  if (runs_.empty()) return 0;
  const Run* best = &runs_.front();
  for (const Run& r : runs_)
    if (r.log_p > best->log_p) best = &r;
  return best->start;
}

double Bocd::probability_change_since(std::uint64_t index) const {
  double p = 0;
  for (const Run& r : runs_)
    if (r.start >= index) p += std::exp(r.log_p);
  return std::min(p, 1.0);
}

}  // namespace gauntlet::harness
