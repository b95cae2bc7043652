#pragma once
// A `faults:` entry that replays a failure trace onto the cluster:
//
//   - from_trace: traces/infinitehbd/fault_trace.json   # relative to the scenario
//     format: infinitehbd          # or csv (fault_trace.hpp)
//     start: 30d                   # trace time at the run's start (default 0)
//     map:
//       hosts: modulo              # or {SERVER: hN, ...}: only the servers listed replay
//       types:                     # trace category -> fault type
//         GPU: gpu_fail
//         "Hardware Failure/Parameter Plane Cable": {type: link_loss, rate: 0.2}
//         Fan: skip
//         "*": node_crash
//
// Hosts: with `modulo`, the trace's k-th server (in order of its first
// fault) is host h(k mod hosts). Types: a key names a category by its
// leading segments ("Hardware Failure/GPU") or by one segment alone ("GPU");
// the key matching the deepest segment wins, a prefix before a lone segment,
// "*" last; a category no key matches is bad input at its trace line. A
// type that targets part of a host (a GPU, an RNIC, a host link, ...) lands
// on one drawn from RngStreams(seed).stream("faults/<i>") among those of the
// host that have no such fault open. Repairs end the fault (a repair of 0
// lasts the trace's resolution, kTraceResolution); a fault never repaired
// is open-ended. Faults of one type on one target that overlap once mapped
// are merged into one window, and faults on a host after an open-ended
// fail-stop there are dropped (the host is out of service for good).
#include <cstdint>
#include <vector>

#include "harness/scenario/failure_rates.hpp"
#include "harness/scenario/yaml_read.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness::detail {

// The InfiniteHBD trace records event times to 10^-4 days.
inline constexpr sim::Nanos kTraceResolution = sim::kDay / 10'000;

// `map` is the entry; `index` its position in the faults list. The faults
// are in onset order and not yet numbered.
std::vector<injectors::FaultSpec> read_trace_entry(const yaml_read::Source& source, const yaml_read::MapView& map,
                                                   std::size_t index, const sim::Topology& topology,
                                                   sim::Nanos run_duration, std::uint64_t seed,
                                                   const injectors::FaultCatalog& types);

// A from_trace entry with `fit: {fleet: SERVERS}` (the servers the trace
// watched, failed or not): per key of map.types, its faults over the trace
// as a rate per host and day (faults / (fleet x the trace's span)) and a
// log-normal fit of their repair times, for Poisson onsets on this cluster.
std::vector<FailureRate> fit_trace_entry(const yaml_read::Source& source, const yaml_read::MapView& map,
                                         const sim::Topology& topology, const injectors::FaultCatalog& types);

}  // namespace gauntlet::harness::detail
