#pragma once
// The models' calibration constants (sim/calibration.hpp): every figure a
// model takes from hardware, a seed paper or a modelling choice, with its
// unit, range and where its default comes from. Each model's parameter
// struct defaults to these and reads them from a run's Calibration.
#include "sim/calibration.hpp"

namespace gauntlet::models::calibration {

using sim::Attribute;
using sim::AttributeUnit;

// Durations are declared in nanoseconds.
constexpr double kUs = 1e3, kMs = 1e6, kS = 1e9, kMin = 60e9, kHour = 3600e9;

// Active probing by the hosts' monitoring agents (probe_service.hpp).
inline constexpr Attribute kProbePingInterval{
    "probe.ping_interval",
    AttributeUnit::duration,
    100 * kMs,
    1 * kUs,
    10 * kS,
    "gap between the pings of one probe train",
    "SkeletonHunter's published probing round times (harness/probe_plan/probe_plan.hpp)"};
inline constexpr Attribute kProbePings{
    "probe.pings",
    AttributeUnit::count,
    20,
    1,
    1000,
    "pings in one probe train; a probe holds its source RNIC's probing slot for pings x ping_interval",
    "SkeletonHunter's published probing round times"};
inline constexpr Attribute kProbeConcurrency{
    "probe.concurrency",
    AttributeUnit::count,
    1,
    1,
    64,
    "probes one RNIC runs at once (one keeps probing off the queue pairs training uses)",
    ""};
inline constexpr Attribute kProbePingSize{
    "probe.ping_size", AttributeUnit::bytes, 64, 1, 9000, "bytes of one ping on the wire, each direction", ""};
inline constexpr Attribute kProbeProcessing{
    "probe.processing",
    AttributeUnit::duration,
    6 * kUs,
    0,
    1 * kMs,
    "agent timestamping plus the responder RNIC's turnaround, once per round trip: the RTT floor above propagation",
    "a healthy cross-spine underlay RTT of 14 us with 4 hops of 1 us each way (stale-flow-table seed case)"};
inline constexpr Attribute kProbeOverlayProcessing{
    "probe.overlay_processing",
    AttributeUnit::duration,
    2 * kUs,
    0,
    1 * kMs,
    "the containers' vSwitch and offloaded flow tables at both ends, once per overlay round trip",
    "a healthy overlay RTT of 16 us (stale-flow-table seed case)"};
inline constexpr Attribute kAgentHeartbeat{"agent.heartbeat_interval",
                                           AttributeUnit::duration,
                                           10 * kS,
                                           1 * kMs,
                                           1 * kHour,
                                           "how often each host's monitoring agent sends a heartbeat",
                                           ""};

// The RoCE transport under a link outage (injectors/sim/fault_scheduler.hpp).
inline constexpr Attribute kTransportTimeout{
    "transport.timeout",
    AttributeUnit::duration,
    4 * kS,
    1 * kMs,
    1 * kHour,
    "how long a connection whose link is down retries before its collective fails with \"NCCL Error\"",
    "SkeletonHunter: a connectivity anomaly over 4 s times collectives out (connectivity-timeout seed case)"};

// Falcon's validation benchmarks (benchmark_service.hpp).
inline constexpr Attribute kBenchmarkGemmTime{"benchmark.gemm_time",
                                              AttributeUnit::duration,
                                              200 * kMs,
                                              1 * kMs,
                                              10 * kMin,
                                              "the GEMM benchmark's run time on a GPU at nominal clock",
                                              "Falcon's validation GEMM"};
inline constexpr Attribute kBenchmarkAllreduceSize{"benchmark.allreduce_size",
                                                   AttributeUnit::bytes,
                                                   1073741824,
                                                   1,
                                                   1e13,
                                                   "bytes per rank of the allreduce benchmark",
                                                   ""};
inline constexpr Attribute kBenchmarkTimeout{
    "benchmark.timeout",
    AttributeUnit::duration,
    60 * kS,
    1 * kS,
    1 * kHour,
    "an allreduce benchmark not done by then (a link down) reports the timeout",
    ""};
inline constexpr Attribute kBenchmarkJitter{
    "benchmark.jitter", AttributeUnit::ratio, 0.005, 0, 0.5, "relative spread of benchmark results (seeded)", ""};

// GPU and CPU samples (telemetry/hardware_sampler.hpp) and profiles (profiler.hpp).
inline constexpr Attribute kGpuClock{"gpu.clock",
                                     AttributeUnit::megahertz,
                                     1980,
                                     100,
                                     5000,
                                     "nominal SM clock; a throttled GPU reports it times its clock factor",
                                     "H100 SXM boost clock"};
inline constexpr Attribute kGpuSmBusy{
    "gpu.sm_busy", AttributeUnit::ratio, 0.9, 0.01, 1, "SM utilization of a GPU computing at full speed", ""};
inline constexpr Attribute kGpuIdlePower{"gpu.idle_power",       AttributeUnit::watts, 100, 0, 2000,
                                         "power of an idle GPU", "H100 SXM figures"};
inline constexpr Attribute kGpuBusyPower{
    "gpu.busy_power",  AttributeUnit::watts, 600, 0, 2000, "power of a GPU computing at full clock and utilization",
    "H100 SXM figures"};
inline constexpr Attribute kGpuIdleTemperature{
    "gpu.idle_temperature", AttributeUnit::celsius, 35, -20, 120, "temperature an idle GPU settles at", ""};
inline constexpr Attribute kGpuBusyTemperature{"gpu.busy_temperature",
                                               AttributeUnit::celsius,
                                               50,
                                               -20,
                                               120,
                                               "temperature a healthy GPU settles at under load",
                                               "the hot GPU's peers at 50 C (hot-slow-gpu seed case)"};
inline constexpr Attribute kGpuHotTemperature{
    "gpu.hot_temperature",
    AttributeUnit::celsius,
    70,
    -20,
    120,
    "temperature a GPU throttled by gpu.hot_slowdown or more settles at (linear in the slowdown below that)",
    "the seed's hot, 20% slower GPU at ~70 C (hot-slow-gpu seed case)"};
inline constexpr Attribute kGpuHotSlowdown{"gpu.hot_slowdown",
                                           AttributeUnit::ratio,
                                           0.2,
                                           0.001,
                                           1,
                                           "clock loss at which a throttled GPU reaches gpu.hot_temperature",
                                           "the seed's hot GPU, 20% slower (hot-slow-gpu seed case)"};
inline constexpr Attribute kGpuThermalTimeConstant{"gpu.thermal_time_constant",
                                                   AttributeUnit::duration,
                                                   30 * kS,
                                                   1 * kMs,
                                                   1 * kHour,
                                                   "time constant of a GPU's temperature relaxing to its target",
                                                   ""};
inline constexpr Attribute kCpuIdle{
    "cpu.idle_utilization", AttributeUnit::ratio, 0.05, 0, 1, "host CPU utilization with no job on the host", ""};
inline constexpr Attribute kCpuBusy{
    "cpu.busy_utilization", AttributeUnit::ratio, 0.3, 0, 1, "host CPU utilization of an uncontended training job", ""};
inline constexpr Attribute kCpuContended{"cpu.contended_utilization",
                                         AttributeUnit::ratio,
                                         1.0,
                                         0,
                                         1,
                                         "host CPU utilization under CPU contention (saturated)",
                                         ""};
inline constexpr Attribute kProfilerOverhead{"profiler.overhead",
                                             AttributeUnit::ratio,
                                             0.02,
                                             0,
                                             0.99,
                                             "training slowdown while function-level profiling is on",
                                             ""};
inline constexpr Attribute kProfilerJitter{
    "profiler.jitter", AttributeUnit::ratio, 0.005, 0, 0.5, "relative spread of profiled times (seeded)", ""};

// RNIC and switch counters (telemetry/fabric_counters.hpp, flow_table_sampler.hpp).
inline constexpr Attribute kRnicMtu{
    "rnic.mtu",        AttributeUnit::bytes, 4096, 256, 65536, "RoCE payload per packet, for packet counters",
    "RoCE's 4 KiB MTU"};
// The switches' ECN setting picks the network calibration table's load
// profile measured nearest it (sim/network_calibration.hpp).
inline constexpr Attribute kEcnKmin{
    "fabric.ecn_kmin",     AttributeUnit::bytes, 100e3, 0, 1e9, "switch queue depth at which ECN marking starts",
    "400G switch settings"};
inline constexpr Attribute kEcnKmax{"fabric.ecn_kmax",
                                    AttributeUnit::bytes,
                                    400e3,
                                    0,
                                    1e9,
                                    "switch queue depth at which the marking probability reaches fabric.ecn_pmax",
                                    "400G switch settings"};
inline constexpr Attribute kEcnPmax{"fabric.ecn_pmax",
                                    AttributeUnit::ratio,
                                    0.01,
                                    0,
                                    1,
                                    "ECN marking probability at fabric.ecn_kmax",
                                    "DCQCN's deployment guideline (Zhu et al., SIGCOMM 2015)"};

inline constexpr const Attribute* kAll[] = {&kProbePingInterval,
                                            &kProbePings,
                                            &kProbeConcurrency,
                                            &kProbePingSize,
                                            &kProbeProcessing,
                                            &kProbeOverlayProcessing,
                                            &kAgentHeartbeat,
                                            &kGpuClock,
                                            &kGpuSmBusy,
                                            &kGpuIdlePower,
                                            &kGpuBusyPower,
                                            &kGpuIdleTemperature,
                                            &kGpuBusyTemperature,
                                            &kGpuHotTemperature,
                                            &kGpuHotSlowdown,
                                            &kGpuThermalTimeConstant,
                                            &kCpuIdle,
                                            &kCpuBusy,
                                            &kCpuContended,
                                            &kProfilerOverhead,
                                            &kProfilerJitter,
                                            &kRnicMtu,
                                            &kEcnKmin,
                                            &kEcnKmax,
                                            &kEcnPmax,
                                            &kTransportTimeout,
                                            &kBenchmarkGemmTime,
                                            &kBenchmarkAllreduceSize,
                                            &kBenchmarkTimeout,
                                            &kBenchmarkJitter};

}  // namespace gauntlet::models::calibration
