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

// RS-FEC is mandatory on the 100 Gb/s PHYs RoCE fabrics use (IEEE 802.3
// clause 91, RS(528,514): 100GBASE-SR4/CR4/KR4) and on every 200/400 Gb/s
// PAM4 PHY (clause 119, RS(544,514)); both carry 5,140 payload bits per
// codeword. Slower links (40GBASE-R) run without it.
inline constexpr double kRsFecFromGbps = 100;

// The codewords a frame of `frame_bytes` touches on average: a frame starts
// anywhere in the codeword stream, so one of L bits spans 1 + (L - 1) / C
// codewords of C payload bits (a 64-byte frame 1.10, a 4,158-byte one 7.47).
double fec_codewords_spanned(double frame_bytes);

// A frame's loss to corruption on a link that loses frames of
// `reference_bytes` with `reference_loss`. With RS-FEC what survives
// correction are whole uncorrectable codewords, and a frame is lost when
// one it touches is; without FEC independent bit errors lose a frame of b
// bits with 1 - (1 - BER)^b. A 64-byte ACK is lost 6.8 times less often
// than a 4,158-byte data frame with RS-FEC, 65 times less without.
double frame_loss_by_length(double reference_loss, double reference_bytes, double frame_bytes, bool rs_fec);

// How exposed a frame of `frame_bytes` is to corruption, in the unit
// frame_loss_by_length scales by: codewords touched with RS-FEC, bits
// without.
double corruption_exposure(double frame_bytes, bool rs_fec);

// Counts over `bits` payload bits received at symbol error probability `p`.
FecCounts fec_counts(double symbol_error_probability, double bits);

// The symbol error probability at which frames of `frame_bytes` are lost
// (hold an uncorrectable codeword) with probability `frame_loss` (< 1).
double symbol_error_probability_for(double frame_loss, double frame_bytes);

}  // namespace gauntlet::sim
