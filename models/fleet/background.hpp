#pragma once
// The healthy fabric's background and the benign events of a healthy fleet,
// drawn once per run from the scenario's seed (streams "fleet/links",
// "fleet/xids", "fleet/ecn_bursts"):
//
// - Links: a fleet.corrupting_link_share of links corrupt packets at a low,
//   stable rate, drawn from CorrOpt's distribution of corrupting links over
//   decades of loss rate (Zhuo et al., SIGCOMM'17) below
//   fleet.background_loss_max, the rate where a `link_loss` fault begins.
//   Every PAM4 link has a pre-FEC bit error rate, log-uniform between
//   link.pre_fec_ber_min and link.pre_fec_ber_max: corrected FEC codewords
//   always count, uncorrectable ones stay 0.
// - Events: application XIDs (13, 31, 43, 45) that leave the GPU healthy,
//   and short ECN/CNP bursts on host links under normal load, each a Poisson
//   process per component.
//
// Every condition is listed for ground truth, which records it as benign.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/calibration.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

struct BackgroundParams {
  double corrupting_link_share = 0.01;
  double background_loss_max = 1e-5;
  double pre_fec_ber_min = 1e-8;
  double pre_fec_ber_max = 2e-4;
  sim::Nanos app_xid_interval = 150 * sim::kHour;
  sim::Nanos ecn_burst_interval = 8 * sim::kHour;
  sim::Nanos ecn_burst_length = 2 * sim::kSecond;
  double ecn_burst_load = 0.15;

  static BackgroundParams from(const sim::Calibration& calibration);
};

// CorrOpt's share of corrupting links per decade of loss rate (their
// Table 1): 1e-8..1e-5 as one band, then 1e-5..1e-4, 1e-4..1e-3, 1e-3..1e-2.
struct CorruptionBand {
  double low, high, share;
};
inline constexpr CorruptionBand kCorrOptBands[] = {
    {1e-8, 1e-5, 0.4723}, {1e-5, 1e-4, 0.1843}, {1e-4, 1e-3, 0.2167}, {1e-3, 1e-2, 0.1267}};

// Draws one corrupting link's loss rate from CorrOpt's bands below `max`
// (log-uniform within a band; the band `max` cuts keeps its share below it).
double draw_corruption_rate(double uniform_band, double uniform_within, double max);

enum class BackgroundKind { slow_machine, link_corruption, app_xid, ecn_burst };
const char* background_kind_name(BackgroundKind kind);

// One background condition, as ground truth records it.
struct BackgroundCondition {
  BackgroundKind kind;
  std::string target;  // a GPU, or a link's name
  sim::Nanos start = 0;
  sim::Nanos end = 0;  // the horizon for lasting ones
  double value = 0;    // the loss rate, the XID, the burst's load, the machine's slowdown
};

// The XIDs NVIDIA's device plugin treats as application errors.
inline constexpr std::uint32_t kApplicationXids[] = {13, 31, 43, 45};

class Background {
 public:
  // Clean: no corruption, no events, every link at pre_fec_ber_min.
  Background(const sim::Topology& topology, const BackgroundParams& params = {});
  // Drawn from `seed` for a run of `horizon`.
  Background(const sim::Topology& topology, const BackgroundParams& params, std::uint64_t seed, sim::Nanos horizon);

  double corruption(int link) const { return corruption_[static_cast<std::size_t>(link)]; }
  double pre_fec_ber(int link) const { return pre_fec_ber_[static_cast<std::size_t>(link)]; }
  // Corrected FEC codewords per second on a link of `line_bits_per_second`
  // (RS(544,514): 5,440-bit codewords; a codeword holding any bit error is
  // corrected, while the errors stay rare).
  static double fec_corrected_per_second(double pre_fec_ber, double line_bits_per_second);
  // Lasting conditions (corrupting links) and events, by start time.
  const std::vector<BackgroundCondition>& conditions() const { return conditions_; }

 private:
  std::vector<double> corruption_, pre_fec_ber_;
  std::vector<BackgroundCondition> conditions_;
};

}  // namespace gauntlet::models
