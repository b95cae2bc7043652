#include "models/fleet/background.hpp"

#include <algorithm>
#include <cmath>

#include "models/fleet/fleet_calibration.hpp"
#include "sim/component_id.hpp"
#include "sim/rng.hpp"

namespace gauntlet::models {
namespace {

constexpr double kCodewordBits = 5440;  // RS(544,514) over 10-bit symbols

double log_uniform(double low, double high, double u) {
  if (low <= 0 || high <= low) return high;
  return low * std::pow(high / low, u);
}

// Poisson onsets with mean gap `interval` over [0, horizon).
template <typename Each>
void poisson(sim::Rng& rng, sim::Nanos interval, sim::Nanos horizon, Each each) {
  double t = rng.exponential(static_cast<double>(interval));
  while (t < static_cast<double>(horizon)) {
    each(static_cast<sim::Nanos>(t));
    t += rng.exponential(static_cast<double>(interval));
  }
}

}  // namespace

BackgroundParams BackgroundParams::from(const sim::Calibration& c) {
  namespace k = calibration;
  BackgroundParams p;
  p.corrupting_link_share = c.value(k::kFleetCorruptingLinkShare);
  p.background_loss_max = c.value(k::kFleetBackgroundLossMax);
  p.pre_fec_ber_min = c.value(k::kLinkPreFecBerMin);
  p.pre_fec_ber_max = c.value(k::kLinkPreFecBerMax);
  p.app_xid_interval = c.duration(k::kFleetAppXidInterval);
  p.ecn_burst_interval = c.duration(k::kFleetEcnBurstInterval);
  p.ecn_burst_length = c.duration(k::kFleetEcnBurstLength);
  p.ecn_burst_load = c.value(k::kFleetEcnBurstLoad);
  return p;
}

const char* background_kind_name(BackgroundKind kind) {
  switch (kind) {
    case BackgroundKind::slow_machine:
      return "slow_machine";
    case BackgroundKind::link_corruption:
      return "link_corruption";
    case BackgroundKind::app_xid:
      return "app_xid";
    case BackgroundKind::ecn_burst:
      return "ecn_burst";
  }
  return "background";
}

double draw_corruption_rate(double uniform_band, double uniform_within, double max) {
  // The bands below `max` (the one it cuts ends there), their shares renormalized.
  double total = 0;
  for (const CorruptionBand& band : kCorrOptBands)
    if (band.low < max) total += band.share;
  if (total <= 0) return 0;  // `max` at or below CorrOpt's lowest rate: no background corruption
  double seen = 0;
  const CorruptionBand* last = nullptr;
  for (const CorruptionBand& band : kCorrOptBands) {
    if (band.low >= max) break;
    last = &band;
    seen += band.share / total;
    if (uniform_band < seen) break;
  }
  return log_uniform(last->low, std::min(last->high, max), uniform_within);
}

double Background::fec_corrected_per_second(double pre_fec_ber, double line_bits_per_second) {
  const double codewords = line_bits_per_second / kCodewordBits;
  return codewords * (1.0 - std::pow(1.0 - pre_fec_ber, kCodewordBits));
}

Background::Background(const sim::Topology& topology, const BackgroundParams& params)
    : corruption_(static_cast<std::size_t>(topology.links()), 0.0),
      pre_fec_ber_(static_cast<std::size_t>(topology.links()), params.pre_fec_ber_min) {}

Background::Background(const sim::Topology& topology, const BackgroundParams& params, std::uint64_t seed,
                       sim::Nanos horizon)
    : Background(topology, params) {
  const sim::RngStreams streams(seed);
  sim::Rng links = streams.stream("fleet/links");
  for (int l = 0; l < topology.links(); ++l) {
    const auto i = static_cast<std::size_t>(l);
    pre_fec_ber_[i] = log_uniform(params.pre_fec_ber_min, params.pre_fec_ber_max, links.uniform());
    const bool corrupting = links.uniform() < params.corrupting_link_share;
    const double band = links.uniform(), within = links.uniform();
    if (!corrupting) continue;
    corruption_[i] = draw_corruption_rate(band, within, params.background_loss_max);
    if (corruption_[i] > 0)
      conditions_.push_back({BackgroundKind::link_corruption, topology.link_name(l), 0, horizon, corruption_[i]});
  }
  sim::Rng xids = streams.stream("fleet/xids");
  const int per_host = topology.shape().gpus_per_host;
  for (int h = 0; h < topology.hosts(); ++h)
    for (int g = 0; g < per_host; ++g)
      poisson(xids, params.app_xid_interval, horizon, [&](sim::Nanos at) {
        const double code = kApplicationXids[xids.below(std::size(kApplicationXids))];
        // The gauge keeps the XID: the condition lasts to the end.
        conditions_.push_back({BackgroundKind::app_xid, sim::ComponentId::make_gpu(h, g).str(), at, horizon, code});
      });
  sim::Rng bursts = streams.stream("fleet/ecn_bursts");
  for (int e = 0; e < topology.endpoints(); ++e)
    poisson(bursts, params.ecn_burst_interval, horizon, [&](sim::Nanos at) {
      conditions_.push_back({BackgroundKind::ecn_burst, topology.link_name(topology.host_link(e)), at,
                             std::min(horizon, at + params.ecn_burst_length), params.ecn_burst_load});
    });
  std::stable_sort(conditions_.begin(), conditions_.end(),
                   [](const BackgroundCondition& a, const BackgroundCondition& b) { return a.start < b.start; });
}

}  // namespace gauntlet::models
