#pragma once
// Forward error correction counters of a PAM4 Ethernet link (400GBASE's
// RS(544,514) over 10-bit symbols, IEEE 802.3 clause 119), from a symbol
// error probability: the codewords a receiver corrects, the ones it cannot
// (more than 15 symbol errors: the frames they carry are dropped as CRC
// errors), and the symbol errors it corrects. Symbol errors are taken as
// independent (a Poisson count per codeword); real errors come in bursts,
// which this leaves out.
namespace gauntlet::sim {

inline constexpr int kFecSymbolsPerCodeword = 544;
inline constexpr int kFecCorrectableSymbols = 15;
inline constexpr double kFecPayloadBitsPerCodeword = 514 * 10;

struct FecCounts {
  double corrected_codewords = 0;
  double uncorrectable_codewords = 0;
  double symbol_errors = 0;  // in the codewords corrected
};

// A 10-bit symbol's error probability at a bit error ratio (pre-FEC BER).
double symbol_error_probability_from_ber(double ber);

// Counts over `bits` payload bits received at symbol error probability `p`.
FecCounts fec_counts(double symbol_error_probability, double bits);

// The symbol error probability at which frames of `frame_bytes` are lost
// (hold an uncorrectable codeword) with probability `frame_loss` (< 1).
double symbol_error_probability_for(double frame_loss, double frame_bytes);

}  // namespace gauntlet::sim
