#pragma once
// The run's telemetry pipeline: what the cluster's monitoring collects each
// observe interval, as detectors are handed it. Per step, in order:
//   1. drain(t): the records jobs, agents and services published on the bus
//      since the last step (other tenants' records feed their GPUs' and
//      RNICs' samples, then are dropped);
//   2. the run's services read those raw records (profiler, measurements);
//   3. complete(t, batch): the samplers' records (GPU, CPU and RNIC
//      samples; switch port and RNIC counters, from the flow model or
//      counted off packets; RNIC flow tables; flow records), stamped by the
//      hosts' clocks,
//      shown to the exporters, and cut to the tenant's hosts.
// The samplers run only when something reads them (TelemetryNeeds).
#include <cstdint>
#include <optional>
#include <string>

#include "harness/metrics/exporter_series.hpp"
#include "harness/runner/hybrid_telemetry.hpp"
#include "harness/runner/tenants.hpp"
#include "harness/scenario/scenario.hpp"
#include "models/telemetry/fabric_sampler.hpp"
#include "models/telemetry/flow_records.hpp"
#include "models/telemetry/flow_table_sampler.hpp"
#include "models/telemetry/hardware_sampler.hpp"
#include "models/telemetry/telemetry_effects.hpp"
#include "sim/network_engine.hpp"
#include "sim/packet/packet_telemetry.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::harness {

struct TelemetryNeeds {
  bool samples = false;       // some detector reads GPU, CPU, RNIC or fabric samples
  bool flow_tables = false;   // some detector reads RNIC flow tables
  bool flow_records = false;  // some detector reads flow records (metered off the flow model's rates)
  bool metrics = false;       // the telemetry as OpenMetrics (--metrics-out)
};

// The scenario's scrape pipeline (pipeline_calibration.hpp), with the
// windows in which faults leave a GPU unanswered (a hung GSP): what the
// exporters and prom: rules see.
ScrapeSettings run_scrape_settings(const Scenario& scenario, const models::TelemetryEffects& effects);

class TelemetryPipeline {
 public:
  // `effects`: what faults change in telemetry beyond the data path;
  // `healthy`: the fleet's healthy GPUs the samples vary by;
  // `skewed_clocks`: some fault skews a host's clock, so records are stamped
  // by the hosts' clocks. Both must outlive the pipeline, as must the rest.
  TelemetryPipeline(const Scenario& scenario, const sim::Topology& topology, sim::NetworkEngine& engine,
                    sim::TelemetryBus& bus, Tenants& tenants, const models::TelemetryEffects& effects,
                    const models::HealthyGpus& healthy, bool skewed_clocks, TelemetryNeeds needs);
  TelemetryPipeline(const TelemetryPipeline&) = delete;
  TelemetryPipeline& operator=(const TelemetryPipeline&) = delete;

  // Step 1: what the bus carried up to `t`; freed at once when dropped.
  sim::ArenaBatch drain(sim::Nanos t);
  // Step 3: `batch` as detectors see it at `t`.
  void complete(sim::Nanos t, telemetry::Batch* batch);

  bool samples() const { return sampling_; }
  bool exports() const { return exporters_.has_value(); }
  // What a probe waits on the link now: the fabric counters' queues when
  // the flow model keeps them, else the engine's own.
  sim::Nanos queueing_delay(sim::LinkId link) const;
  // Bytes published on the bus and by the samplers.
  long long published_bytes() const;
  // The exporters' series up to `until` as OpenMetrics text; empty unless exporting.
  std::string openmetrics(sim::Nanos until) const;

 private:
  void sample(sim::Nanos t, telemetry::Batch* batch);
  models::SampleInputs counted_inputs(sim::Nanos t, telemetry::Batch* batch, telemetry::Batch* counted);

  const Scenario& scenario_;
  const sim::Topology& topology_;
  sim::NetworkEngine& engine_;
  sim::TelemetryBus& bus_;
  Tenants& tenants_;
  const models::TelemetryEffects& effects_;
  const bool skewed_clocks_;
  // GPU, CPU and RNIC samples every observe interval, for detectors only.
  models::HardwareSampler sampler_;
  // Switch port counters and RNIC CNPs measured from the job's flows, or
  // counted off the packets under the packet engine.
  std::optional<models::FabricSampler> fabric_;
  std::optional<sim::PacketTelemetry> packet_counters_;
  std::optional<sim::PacketTelemetry> batch_counters_;      // the hybrid engine's packet batches
  PacketCountMerge batch_merge_;                            // folds them into the model's records
  std::optional<models::FlowTableSampler> flow_tables_;     // measured only when a detector reads them
  std::optional<models::FlowRecordExporter> flow_records_;  // likewise
  std::optional<ExporterSeries> exporters_;                 // what exporters would show Prometheus
  bool sampling_ = false;                                   // the fabric counters are measured
  bool publish_samples_ = false;                            // ... and the samples published (not only flow records)
  sim::ReplayLedger::Observation replays_counted_;          // declared last: ends before the samplers it feeds
};

}  // namespace gauntlet::harness
