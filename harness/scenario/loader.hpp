#pragma once
// Reads a scenario file (docs/design.md) into a concrete Scenario: units parsed,
// target globs expanded, Poisson and periodic onsets drawn, and every rule
// below checked before anything runs. Any violation throws InputError
// ("file:line:col: message", 1-based) pointing at the offending key or value.
//
// Validation rules
//  - YAML syntax errors are reported where the parser stopped.
//  - Unknown keys are reported at the key, wrong types and bad values at the
//    value, missing required keys at the map that should hold them. A key
//    may appear only once per map.
//  - Durations take a unit (ns us ms s m h d); sizes take B KB MB GB TB KiB
//    MiB GiB TiB. seed is a non-negative integer; run duration must be > 0.
//  - engine is flow, packet or hybrid; mitigation is none, isolate-restart
//    or falcon-ladder. The packet engine takes clusters of at most
//    kPacketEngineMaxHosts hosts with kPacketEngineMaxRnicsPerHost RNICs
//    (the error points at the engine's value); hybrid takes any size, but
//    one job only (the error points at `jobs`).
//  - The cluster must be wireable (sim::Topology accepts it); otherwise the
//    error points at the `cluster` key.
//  - The job must fit: tp*pp*dp == gpus, gpus <= hosts*gpus_per_host,
//    tp <= gpus_per_host (tensor parallelism stays inside one host), dp a
//    multiple of ep, and the hosts it occupies plus spare_hosts must exist.
//    gradient_bytes is required when dp > 1, activation_bytes when pp > 1.
//  - Faults: the type must be known and each parameter known to that type
//    and in range (fractions in [0,1), numbers > 0, port_flap needs
//    0 < down < period); required parameters must be present. A target must
//    name an existing component of a kind the type accepts; a glob must
//    match at least one such component. reconfigure takes no target.
//    nic_down's fallback must be another RNIC of the same host.
//  - Every onset must fall before the end of the run.
//  - Two faults of the same type on the same target may not overlap in time
//    (a fault without duration lasts to the end of the run).
//  - Once an open-ended fail-stop fault (gpu_fail, node_crash) has started on
//    a host, no later fault may start on that host or its parts (GPUs, RNICs,
//    flow tables, CPU, agent, host links): the host is out of service and
//    nothing that happens to it afterwards can be observed or attributed.
//    Faults starting at the same instant are allowed (a glob may fail
//    several GPUs of one host at once).
//  - Poisson onsets are random, so instead of failing on a draw that would
//    break the two rules above, the draw picks uniformly among the matching
//    components that can still take the fault, and is dropped if none can.
//    Entry i (0-based) draws from RngStreams(seed).stream("faults/<i>"), and
//    Poisson entries are placed after all fixed and periodic ones, in file
//    order, so a seed always yields the same faults.
//  - count caps the onsets of an entry (in time order; a glob with a fixed
//    onset counts one onset per matching component).
//  - The scenario name names the results directory: letters, digits, '-',
//    '_' and '.', not starting with '.'.
//  - background is realistic (the default: the healthy fleet's variation,
//    background corruption and benign events, models/fleet/) or none (the
//    clean fleet: identical GPUs at nominal speed, no background; for tests
//    that pin exact clean values).
//  - calibration: keys are registered calibration attribute names
//    (calibration_block.hpp), each value in the attribute's unit and range.
//  - Detectors must be registered (or named exec:COMMAND, whose parameters
//    pass through untouched) and their parameters must satisfy the registry.
//    A detector may be listed only once.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/scenario.hpp"
#include "sim/component_id.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

// Packet-level simulation costs events per packet-hop: beyond this size a
// scenario belongs on the flow engine.
inline constexpr int kPacketEngineMaxHosts = 32;
inline constexpr int kPacketEngineMaxRnicsPerHost = 8;
// Detectors in one scenario (a suite's sensitivity values each add one).
inline constexpr std::size_t kMaxDetectors = 1'000;

// Command-line replacements for parts of a scenario. The seed is replaced
// before faults are drawn, so Poisson onsets follow the new seed.
struct LoadOverrides {
  std::optional<std::uint64_t> seed;
  std::optional<std::vector<std::string>> detectors;  // names, default parameters
  std::optional<std::string> mitigation;
  // Runs the scenario on this engine instead (compare-engines); its limits
  // then point at the scenario's `engine` key, or `cluster` without one.
  std::optional<std::string> engine;
};

// Reads and validates the file at path; errors name the file as given.
// Errors in overrides name the option ("--detectors:1:7: ..."). Faults are
// read through `fault_types` (nullptr: the built-in types), which the
// scenario keeps for the run.
Scenario load_scenario(const std::string& path, const DetectorRegistry& detectors, const LoadOverrides& overrides = {},
                       std::shared_ptr<const injectors::FaultCatalog> fault_types = nullptr);

// Same, from text already in memory; file_name is used in error messages.
Scenario parse_scenario(const std::string& yaml_text, const std::string& file_name, const DetectorRegistry& detectors,
                        const LoadOverrides& overrides = {},
                        std::shared_ptr<const injectors::FaultCatalog> fault_types = nullptr);

// The fault types a scenario's faults were read with; the built-in ones
// for a scenario assembled in code without them.
std::shared_ptr<const injectors::FaultCatalog> fault_types_of(const Scenario& scenario);

// Names of the components whose id matches the fnmatch pattern and whose kind
// is one of kinds (any kind when kinds is empty), in Topology::component_names
// order. A pattern without wildcards matches at most its own name.
std::vector<std::string> expand_target_glob(const sim::Topology& topology, const std::string& pattern,
                                            const std::vector<sim::ComponentKind>& kinds);

}  // namespace gauntlet::harness
