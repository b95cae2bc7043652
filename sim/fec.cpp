#include "sim/fec.hpp"

#include <algorithm>
#include <cmath>

namespace gauntlet::sim {
namespace {

// P(X = k) for k = 0..15 of a Poisson count with mean `mean`.
struct PoissonHead {
  double mean;
  double p[kFecCorrectableSymbols + 1];
  explicit PoissonHead(double m) : mean(m) {
    p[0] = std::exp(-mean);
    for (int k = 1; k <= kFecCorrectableSymbols; ++k) p[k] = p[k - 1] * mean / k;
  }
  double correctable() const {  // P(X <= 15)
    double sum = 0;
    for (double v : p) sum += v;
    return std::min(1.0, sum);
  }
  // P(X > 15), summed term by term where it is small (1 - P(X <= 15)
  // cancels to rounding noise there).
  double uncorrectable() const {
    const double head = correctable();
    if (head < 0.5) return 1 - head;
    double tail = 0, term = p[kFecCorrectableSymbols];
    for (int k = kFecCorrectableSymbols + 1; k < kFecCorrectableSymbols + 400; ++k) {
      term *= mean / k;
      tail += term;
      if (term < tail * 1e-17) break;
    }
    return tail;
  }
};

}  // namespace

double fec_codewords_spanned(double frame_bytes) {
  return 1 + std::max(0.0, frame_bytes * 8 - 1) / kFecPayloadBitsPerCodeword;
}

double corruption_exposure(double frame_bytes, bool rs_fec) {
  return rs_fec ? fec_codewords_spanned(frame_bytes) : frame_bytes * 8;
}

double frame_loss_by_length(double reference_loss, double reference_bytes, double frame_bytes, bool rs_fec) {
  const double share = corruption_exposure(frame_bytes, rs_fec) / corruption_exposure(reference_bytes, rs_fec);
  return -std::expm1(std::log1p(-reference_loss) * share);
}

double symbol_error_probability_from_ber(double ber) { return 1 - std::pow(1 - std::clamp(ber, 0.0, 1.0), 10); }

FecCounts fec_counts(double symbol_error_probability, double bits) {
  FecCounts out;
  if (symbol_error_probability <= 0 || bits <= 0) return out;
  const double codewords = bits / kFecPayloadBitsPerCodeword;
  const double mean = kFecSymbolsPerCodeword * std::min(1.0, symbol_error_probability);
  const PoissonHead head(mean);
  double corrected = 0, symbols = 0;
  for (int k = 1; k <= kFecCorrectableSymbols; ++k) {
    corrected += head.p[k];
    symbols += k * head.p[k];
  }
  out.corrected_codewords = corrected * codewords;
  out.uncorrectable_codewords = head.uncorrectable() * codewords;
  out.symbol_errors = symbols * codewords;
  return out;
}

double symbol_error_probability_for(double frame_loss, double frame_bytes) {
  if (frame_loss <= 0) return 0;
  frame_loss = std::min(frame_loss, 1 - 1e-12);
  // A frame spans `per_frame` codewords and is lost if any is uncorrectable.
  const double per_frame = fec_codewords_spanned(frame_bytes);
  const double codeword_loss = 1 - std::pow(1 - frame_loss, 1 / per_frame);
  double lo = 0, hi = kFecSymbolsPerCodeword;  // the mean symbol errors per codeword
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (PoissonHead(mid).uncorrectable() < codeword_loss ? lo : hi) = mid;
  }
  return (lo + hi) / 2 / kFecSymbolsPerCodeword;
}

}  // namespace gauntlet::sim
