#pragma once
// What a GPU fault leaves in the GPU's DCGM error fields: the XID the driver
// logs and the error counts at one moment (ECC, retired pages, row remaps,
// NVLink and PCIe retries).
#include <cstdint>

#include "sim/time.hpp"

namespace gauntlet::models {

// XIDs (NVIDIA's XID catalog) the simulated faults raise.
namespace xid {
inline constexpr std::uint32_t kDoubleBitEcc = 48;
inline constexpr std::uint32_t kRowRemapRecorded = 63;
inline constexpr std::uint32_t kRowRemapFailure = 64;
inline constexpr std::uint32_t kNvlinkError = 74;
inline constexpr std::uint32_t kFallenOffTheBus = 79;
inline constexpr std::uint32_t kContainedEcc = 94;
inline constexpr std::uint32_t kUncontainedEcc = 95;
inline constexpr std::uint32_t kGspTimeout = 119;
// XIDs a gpu_fail fault may raise.
bool is_gpu_failure(std::uint32_t xid);
}  // namespace xid

// What a fault leaves in one GPU's fields at `at`: counts added to DCGM's
// running totals, and the XID the driver logs (0: none; the XID gauge is
// TelemetryEffects::last_xid's).
struct GpuErrorEvent {
  sim::Nanos at = 0;
  std::uint32_t xid = 0;
  std::uint32_t ecc_sbe = 0, ecc_dbe = 0;
  std::uint32_t retired_pages_sbe = 0, retired_pages_dbe = 0;
  std::uint32_t remapped_rows_correctable = 0, remapped_rows_uncorrectable = 0;
  bool row_remap_failure = false;  // holds from `at` on
  std::uint32_t nvlink_crc_flit_errors = 0, nvlink_crc_data_errors = 0, nvlink_replay_errors = 0,
                nvlink_recovery_errors = 0;
  std::uint32_t pcie_replays = 0;

  // What the GPU's fields show when a gpu_fail fault raises `xid`. On an
  // H100 an uncorrectable ECC error remaps the faulty row (row remapping
  // replaced page retirement with Ampere), so 48/94/95 count a double-bit
  // error and an uncorrectable remapped row.
  static GpuErrorEvent for_failure(sim::Nanos at, std::uint32_t xid);
  // Adds `other`'s counts.
  void add(const GpuErrorEvent& other);
  bool counts_anything() const;
};

}  // namespace gauntlet::models
