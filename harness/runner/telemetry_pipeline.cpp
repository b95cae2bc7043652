#include "harness/runner/telemetry_pipeline.hpp"

#include <map>

#include "harness/metrics/openmetrics.hpp"
#include "harness/metrics/pipeline_calibration.hpp"
#include "harness/runner/hybrid_telemetry.hpp"
#include "harness/runner/tenant_telemetry.hpp"
#include "models/calibration.hpp"
#include "models/host/host_clock.hpp"
#include "models/host/job_view.hpp"

namespace gauntlet::harness {
namespace {

// Flow sets the job replays never reach the engine's transfer listeners;
// the fabric counters (and the flow tables, if sampled) are told of them
// here for as long as the returned observation lasts.
sim::ReplayLedger::Observation count_replayed_flows(sim::NetworkEngine& engine, models::FabricSampler& fabric,
                                                    models::FlowTableSampler* flow_tables) {
  return engine.observe_replays([&engine, &fabric, flow_tables](const sim::ReplayedSet& set) {
    std::map<sim::EndpointId, int> sending;
    for (const sim::TransferRequest& t : set.transfers) ++sending[t.src];
    for (std::size_t i = 0; i < set.transfers.size(); ++i) {
      const sim::TransferRequest& t = set.transfers[i];
      const sim::Nanos sent = set.delivered[i] - engine.route_latency(t.src, t.dst);
      fabric.add_replayed(t.src, t.dst, set.start, sent, t.bytes, sending[t.src]);
      if (flow_tables) flow_tables->add_replayed(t.src, t.dst, set.start, sent, t.bytes);
    }
  });
}

}  // namespace

ScrapeSettings run_scrape_settings(const Scenario& scenario, const models::TelemetryEffects& effects) {
  ScrapeSettings settings = scrape_settings(scenario.calibration, scenario.seed);
  for (const models::TelemetryEffects::GpuWindow& w : effects.gpu_silences())
    settings.unanswered_gpus["h" + std::to_string(w.host) + ".gpu" + std::to_string(w.gpu)].emplace_back(w.start,
                                                                                                         w.end);
  return settings;
}

TelemetryPipeline::TelemetryPipeline(const Scenario& scenario, const sim::Topology& topology,
                                     sim::NetworkEngine& engine, sim::TelemetryBus& bus, Tenants& tenants,
                                     const models::TelemetryEffects& effects, const models::HealthyGpus& healthy,
                                     bool skewed_clocks, TelemetryNeeds needs)
    : scenario_(scenario),
      topology_(topology),
      engine_(engine),
      bus_(bus),
      tenants_(tenants),
      effects_(effects),
      skewed_clocks_(skewed_clocks),
      sampler_(topology, effects, models::HardwareSamplerParams::from(scenario.calibration), &healthy) {
  const sim::Calibration& calibration = scenario.calibration;
  if (needs.flow_tables)
    flow_tables_.emplace(engine,
                         models::FlowTableSamplerParams{.mtu_bytes = calibration.value(models::calibration::kRnicMtu)});
  if (needs.metrics) exporters_.emplace(run_scrape_settings(scenario, effects));
  publish_samples_ = exporters_ || needs.samples;
  sampling_ = publish_samples_ || needs.flow_records;
  if (!sampling_) return;
  const sim::NetworkEngine::PacketCounting packets = engine.packet_counters();
  if (packets.source && packets.every_transfer) {
    packet_counters_.emplace(*packets.source);
    return;
  }
  fabric_.emplace(
      engine, effects,
      models::FabricSamplerParams{.counters = models::FabricCounterParams::from(calibration, scenario.network_table()),
                                  .flows = needs.flow_records});
  // Flow records meter the flow model's per-connection rates (the packet
  // engine, returned above, has none yet).
  if (needs.flow_records) flow_records_.emplace(topology, models::FlowRecordParams::from(calibration, scenario.seed));
  replays_counted_ = count_replayed_flows(engine, *fabric_, flow_tables_ ? &*flow_tables_ : nullptr);
  if (packets.source) batch_counters_.emplace(*packets.source);
}

sim::ArenaBatch TelemetryPipeline::drain(sim::Nanos t) {
  sim::ArenaBatch drained = bus_.drain_on_arena(t);
  if (publish_samples_ && tenants_.cluster_scope())  // their GPUs and RNICs are sampled from their own records
    tenants_.drain_unobserved(t, [&](std::size_t k, const models::TrainingJob& other, const telemetry::Batch& theirs) {
      sampler_.observe_traffic(
          theirs, [&] { return models::job_endpoints(other, topology_); }, k + 1);
    });
  else
    tenants_.drop_unobserved(t);
  return drained;
}

void TelemetryPipeline::complete(sim::Nanos t, telemetry::Batch* batch) {
  if (sampling_) sample(t, batch);
  if (skewed_clocks_) models::apply_host_clocks(effects_, batch);  // as the hosts' clocks stamp it
  if (exporters_) exporters_->observe(*batch);                     // the cluster's exporters see every host
  if (const auto& hosts = tenants_.visible_hosts()) keep_tenant_telemetry(*batch, *hosts);
}

void TelemetryPipeline::sample(sim::Nanos t, telemetry::Batch* batch) {
  if (publish_samples_)
    sampler_.observe_traffic(*batch, [&] { return models::job_endpoints(tenants_.observed(), topology_); });
  telemetry::Batch counted;  // the hybrid engine's batches, merged below
  const models::SampleInputs inputs = counted_inputs(t, batch, &counted);
  if (publish_samples_) {
    sampler_.sample(t, inputs, batch);
    if (fabric_) fabric_->sample(t, inputs.traffic_flowing, batch);
    if (batch_counters_) batch_merge_.merge(counted, batch);
  }
  if (flow_tables_) flow_tables_->sample(t, batch);
  if (flow_records_) flow_records_->meter(t, fabric_->flow_rates(), &tenants_.observed().containers(), batch);
  if (t == scenario_.duration) {  // the last repeats
    if (publish_samples_) {
      sampler_.flush(batch);
      if (fabric_) fabric_->flush(batch);
    }
    if (flow_records_) flow_records_->flush(t, batch);
  }
}

// What the samplers are told of the network this step: counted off the
// packets, or measured by the flow model (with what the hybrid engine's
// packet batches counted in `counted`).
models::SampleInputs TelemetryPipeline::counted_inputs(sim::Nanos t, telemetry::Batch* batch,
                                                       telemetry::Batch* counted) {
  models::SampleInputs inputs = tenants_.sample_inputs(engine_);
  if (packet_counters_) {
    sim::PacketTelemetry& packets = *packet_counters_;
    packets.sample(t, batch);
    inputs.cnp_per_second = [&packets](sim::EndpointId e) { return packets.cnp_rate(e); };
    inputs.host_link_bytes_per_second = [&packets, this](sim::EndpointId e, bool upward) {
      return packets.port_bytes_per_second(topology_.host_link(e), upward);
    };
    inputs.version = inputs.version * 1000003u + packets.version();
    return inputs;
  }
  models::FabricSampler& fabric = *fabric_;
  fabric.observe_traffic(*batch);
  fabric.measure_second(t, inputs.traffic_flowing);
  if (batch_counters_) batch_counters_->sample(t, counted);
  // An RNIC a packet batch ran on reports the CNPs it handled there.
  const sim::PacketTelemetry* batches = batch_counters_ ? &*batch_counters_ : nullptr;
  inputs.cnp_per_second = [&fabric, batches](sim::EndpointId e) {
    const double handled = batches ? batches->cnp_rate(e) : 0;
    return handled > 0 ? handled : fabric.cnp_rate(e);
  };
  inputs.host_link_bytes_per_second = [&fabric](sim::EndpointId e, bool upward) {
    return fabric.host_link_bytes_per_second(e, upward);
  };
  inputs.version = inputs.version * 1000003u + fabric.version() + (batches ? batches->version() : 0);
  return inputs;
}

sim::Nanos TelemetryPipeline::queueing_delay(sim::LinkId link) const {
  return fabric_ ? fabric_->queueing_delay(link) : engine_.queueing_delay(link);
}

long long TelemetryPipeline::published_bytes() const {
  return static_cast<long long>(
      bus_.published_bytes() + sampler_.published_bytes() + (fabric_ ? fabric_->published_bytes() : 0) +
      (packet_counters_ ? packet_counters_->published_bytes() : 0) +
      (flow_tables_ ? flow_tables_->published_bytes() : 0) + (flow_records_ ? flow_records_->published_bytes() : 0));
}

std::string TelemetryPipeline::openmetrics(sim::Nanos until) const {
  return exporters_ ? openmetrics_text(exporters_->series(until), exporters_->scrape_interval()) : std::string();
}

}  // namespace gauntlet::harness
