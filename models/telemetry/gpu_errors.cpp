#include "models/telemetry/gpu_errors.hpp"

namespace gauntlet::models {

bool xid::is_gpu_failure(std::uint32_t x) {
  return x == kDoubleBitEcc || x == kFallenOffTheBus || x == kContainedEcc || x == kUncontainedEcc ||
         x == kGspTimeout || x == kNvlinkError;
}

GpuErrorEvent GpuErrorEvent::for_failure(sim::Nanos at, std::uint32_t x) {
  GpuErrorEvent e;
  e.at = at;
  e.xid = x;
  if (x == xid::kDoubleBitEcc || x == xid::kContainedEcc || x == xid::kUncontainedEcc) {
    e.ecc_dbe = 1;
    e.remapped_rows_uncorrectable = 1;
  }
  if (x == xid::kNvlinkError) {
    // The failing link's error counters move with it (one of each: a
    // modelling choice; no published per-event counts).
    e.nvlink_crc_flit_errors = 1;
    e.nvlink_replay_errors = 1;
    e.nvlink_recovery_errors = 1;
  }
  return e;
}

void GpuErrorEvent::add(const GpuErrorEvent& o) {
  ecc_sbe += o.ecc_sbe;
  ecc_dbe += o.ecc_dbe;
  retired_pages_sbe += o.retired_pages_sbe;
  retired_pages_dbe += o.retired_pages_dbe;
  remapped_rows_correctable += o.remapped_rows_correctable;
  remapped_rows_uncorrectable += o.remapped_rows_uncorrectable;
  row_remap_failure = row_remap_failure || o.row_remap_failure;
  nvlink_crc_flit_errors += o.nvlink_crc_flit_errors;
  nvlink_crc_data_errors += o.nvlink_crc_data_errors;
  nvlink_replay_errors += o.nvlink_replay_errors;
  nvlink_recovery_errors += o.nvlink_recovery_errors;
  pcie_replays += o.pcie_replays;
}

bool GpuErrorEvent::counts_anything() const {
  return ecc_sbe || ecc_dbe || retired_pages_sbe || retired_pages_dbe || remapped_rows_correctable ||
         remapped_rows_uncorrectable || nvlink_crc_flit_errors || nvlink_crc_data_errors || nvlink_replay_errors ||
         nvlink_recovery_errors || pcie_replays;
}

}  // namespace gauntlet::models
