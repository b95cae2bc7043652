#include "harness/runner/simulation.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "harness/detectors/external_detector.hpp"
#include "harness/metrics/openmetrics.hpp"
#include "harness/metrics/prom_rules_detector.hpp"
#include "harness/runner/probe_wiring.hpp"
#include "harness/runner/containers_csv.hpp"
#include "harness/runner/tenants.hpp"
#include "harness/runner/tenant_telemetry.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_scheduler.hpp"
#include "injectors/sim/telemetry_effects_from_faults.hpp"
#include "models/host/host_clock.hpp"
#include "models/benchmark_service.hpp"
#include "models/collectives/flow_set_archive.hpp"
#include "models/host/job_view.hpp"
#include "models/job_console.hpp"
#include "models/simulated_gpus.hpp"
#include "models/profiler.hpp"
#include "models/telemetry/fabric_sampler.hpp"
#include "models/telemetry/flow_table_sampler.hpp"
#include "models/telemetry/hardware_sampler.hpp"
#include "harness/runner/engine_setup.hpp"
#include "harness/runner/hybrid_telemetry.hpp"
#include "sim/packet/packet_telemetry.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

struct ActiveDetector {
  std::string name;
  std::unique_ptr<Detector> detector;
  // Its probes run on a prober of its own, made at its first request: its
  // own source-RNIC slots and loss draws, so no detector's probing delays or
  // reshuffles another's.
  std::unique_ptr<models::ProbeService> prober;
};

// What an external detector is told before its first batch: what the
// operator and the scheduler know, never the faults.
ExternalRunInfo external_run_info(const Scenario& scenario, const sim::Topology& topology, sim::Nanos batch_period) {
  ExternalRunInfo run;
  run.topology = &topology;
  run.job_name = scenario.job.name;
  run.job_gpus = scenario.job.gpus;
  const int per_host = std::max(1, topology.shape().gpus_per_host);
  run.job_hosts = (scenario.job.gpus + per_host - 1) / per_host;
  run.spare_hosts = scenario.job.spare_hosts;
  run.batch_period = batch_period;
  run.heartbeat_period = scenario.calibration.duration(models::calibration::kAgentHeartbeat);
  run.duration = scenario.duration;
  return run;
}

// A detector entry this run cannot take is bad input at that entry (the
// loader checks what it can; an exec: detector's parameters are read only
// here, in the simulation's own process).
[[noreturn]] void reject_detector(const Scenario& scenario, const DetectorSpec& spec, const std::string& message) {
  throw InputError(scenario.source_path, spec.pos.line, spec.pos.column, message);
}

std::vector<ActiveDetector> make_detectors(const Scenario& scenario, const DetectorRegistry& registry,
                                           const sim::Topology& topology, sim::Nanos batch_period) {
  std::vector<ActiveDetector> out;
  for (const DetectorSpec& spec : scenario.detectors) {
    if (spec.name.starts_with(ExternalDetector::kPrefix)) {
      ExternalConfig config;
      try {
        config = external_config_from(spec.params);
      } catch (const std::invalid_argument& e) {
        reject_detector(scenario, spec, e.what());
      }
      auto external =
          std::make_unique<ExternalDetector>(spec.name, config, external_run_info(scenario, topology, batch_period));
      out.push_back({spec.run_name(), std::move(external)});
      continue;
    }
    if (spec.name.starts_with(PromRulesDetector::kPrefix)) {
      std::string error, bad_key;
      auto config = parse_prom_config(spec.name.substr(std::string(PromRulesDetector::kPrefix).size()), spec.params,
                                      &error, &bad_key);
      if (!config) reject_detector(scenario, spec, "detector '" + spec.name + "': " + error);
      out.push_back({spec.run_name(), std::make_unique<PromRulesDetector>(spec.name, *config, scenario.duration)});
      continue;
    }
    const DetectorInfo* info = registry.find(spec.name);
    if (!info) reject_detector(scenario, spec, "detector '" + spec.name + "' is not available in this build");
    std::string error;
    auto params = registry.resolve(*info, spec.params, &error);
    if (!params) reject_detector(scenario, spec, "detector '" + spec.name + "': " + error);
    DetectorContext context{&topology, *params, spec.run_name()};
    out.push_back({spec.run_name(), info->make(context)});
  }
  return out;
}

// What the profiler reads of the hardware: the faults' telemetry effects at
// the engine's now (the same windows the scheduler applies, composed alike).
models::HardwareState hardware_from(const models::TelemetryEffects* effects, const sim::NetworkEngine* engine) {
  return {[effects, engine](int host, int gpu) { return effects->clock_factor(host, gpu, engine->now()); },
          [effects, engine](int host) { return effects->cpu_factor(host, engine->now()); }};
}

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

models::BenchmarkSettings benchmark_settings(const sim::Calibration& c) {
  namespace k = models::calibration;
  return {c.duration(k::kBenchmarkGemmTime), c.value(k::kBenchmarkAllreduceSize), c.duration(k::kBenchmarkTimeout),
          c.value(k::kBenchmarkJitter)};
}

class Progress {
 public:
  Progress(bool enabled, sim::Nanos total) : enabled_(enabled), total_(total) {}
  void update(sim::Nanos now) {
    if (!enabled_ || total_ <= 0) return;
    const int percent = static_cast<int>(100 * now / total_);
    if (percent < next_) return;
    std::fprintf(stderr, "\rsimulating: %3d%% of %.0f s", percent, sim::to_seconds(total_));
    if (percent >= 100) std::fprintf(stderr, "\n");
    next_ = percent + 5;
  }

 private:
  bool enabled_;
  sim::Nanos total_;
  int next_ = 0;
};

}  // namespace

std::uint64_t SimulationOutcome::iterations() const {
  std::uint64_t total = 0;
  for (const auto& span : timeline) total += span.count;
  return total;
}

SimulationOutcome simulate(const Scenario& scenario, const DetectorRegistry& registry,
                           const SimulationRequest& request) {
  sim::Topology topology(scenario.cluster);
  const EngineSetup setup = make_engine(scenario, topology);
  sim::NetworkEngine& engine = *setup.engine;
  sim::TelemetryBus bus;
  Tenants tenants(scenario, topology, engine, bus);
  models::TrainingJob& job = tenants.observed();
  // Packets and their counters exist only in simulated iterations, so the
  // packet engine simulates every one (the hybrid engine's batches change
  // the network's state, so its jobs simulate every iteration while a
  // packet fault lasts); so do jobs sharing the fabric, since each one's
  // traffic changes the other's iterations from step to step.
  tenants.set_fast_forward(request.fast_forward && !setup.packet && !scenario.shared());
  // Other runs of this fabric may have simulated the job's flow sets already.
  std::optional<models::FlowSetArchive> flow_sets;
  if (!request.flow_sets.empty() && scenario.engine == "flow" && !scenario.shared()) {
    flow_sets.emplace(request.flow_sets, models::FlowSetArchive::salt_for(topology));
    job.set_flow_set_archive(&*flow_sets);
  }
  const sim::Calibration& calibration = scenario.calibration;
  const auto fault_types = fault_types_of(scenario);
  injectors::FaultScheduler scheduler(engine, tenants.all(), *fault_types);
  scheduler.communicator().set_transport_timeout(calibration.duration(models::calibration::kTransportTimeout));
  const sim::NetworkCalibration& network_table = scenario.network_table();
  scheduler.communicator().set_network_calibration(network_table);
  if (request.inject_faults) scheduler.arm(scenario.faults, scenario.duration);

  std::vector<ActiveDetector> detectors;
  if (request.run_detectors) {
    Scenario observed = scenario;
    if (!request.only_detector.empty())
      std::erase_if(observed.detectors, [&](const DetectorSpec& d) { return d.run_name() != request.only_detector; });
    std::erase_if(observed.detectors, [&](const DetectorSpec& d) {
      return std::find(request.skip_detectors.begin(), request.skip_detectors.end(), d.run_name()) !=
             request.skip_detectors.end();
    });
    detectors = make_detectors(observed, registry, topology, request.observe_interval);
  }
  const std::unique_ptr<MitigationPolicy> policy =
      make_policy(request.mitigation, scenario.job, scenario.mitigation_costs, calibration);
  // Policies and services see the job through its levers and its telemetry.
  models::JobMeasurements measured(scenario.job);
  models::JobConsole console(job, measured);
  const bool measure = policy && policy->reads_measurements();
  // Switch port counters and RNIC CNPs measured from the job's flows, or
  // counted off the packets under the packet engine.
  std::optional<models::FabricSampler> fabric;
  // The hosts' monitoring agents: heartbeats throughout, and probes on
  // request. Each detector's prober starts the probe stream of the run's seed
  // afresh, so a detector draws the same losses beside others as alone.
  auto make_prober = [&] {
    auto prober =
        std::make_unique<models::ProbeService>(engine, bus, scenario.seed, models::ProbeCost::from(calibration));
    prober->set_overlay(&job.containers());  // overlay probes reach the job's live containers only
    // On the flow engine probes wait as long as the fabric counters' queues say.
    prober->set_queueing_delay([&fabric, &engine](sim::LinkId link) {
      return fabric ? fabric->queueing_delay(link) : engine.queueing_delay(link);
    });
    if (request.inject_faults) arm_probe_faults(*prober, scenario.faults, *fault_types, topology, scenario.duration);
    return prober;
  };
  const std::unique_ptr<models::ProbeService> agents = make_prober();
  if (std::any_of(detectors.begin(), detectors.end(),
                  [](const ActiveDetector& d) { return d.detector->reads_heartbeats(); }))
    agents->start_heartbeats(calibration.duration(models::calibration::kAgentHeartbeat), scenario.duration);

  // Function-level profiling, on only while a detector asked for it.
  // What faults change in telemetry beyond the data path: clocks, CPU share, skew.
  const models::TelemetryEffects effects =
      request.inject_faults
          ? injectors::telemetry_effects_from(scenario.faults, *fault_types, topology, scenario.duration)
          : models::TelemetryEffects{};
  const bool skewed = request.inject_faults &&
                      std::any_of(scenario.faults.begin(), scenario.faults.end(), [&](const injectors::FaultSpec& f) {
                        return fault_types->spec(f.type).skews_clocks;
                      });
  models::Profiler profiler(bus, hardware_from(&effects, &engine), scenario.seed,
                            models::ProfilerSettings::from(calibration));
  // Validation benchmarks pause the job while they run; GEMMs run at the GPUs' clocks.
  models::BenchmarkService benchmarks(engine, console, bus,
                                      models::simulated_gpus(job.cluster(),
                                                             [&effects, &engine](int host, int gpu) {
                                                               return effects.clock_factor(host, gpu, engine.now());
                                                             }),
                                      scenario.seed, benchmark_settings(calibration));
  job.set_change_horizon([&scheduler, &profiler, &engine, &effects, skewed] {
    // Routing convergence after a fabric link changes is an engine-internal
    // change; a skew's edges end steady runs so each is read off one clock.
    const sim::Nanos skew_edge = skewed ? effects.next_change(engine.now()) : std::numeric_limits<sim::Nanos>::max();
    return std::min(
        {scheduler.next_change(), profiler.next_window_end(engine.now()), engine.next_internal_change(), skew_edge});
  });
  // GPU, CPU and RNIC samples every observe interval, for detectors only.
  models::HardwareSampler sampler(topology, effects, models::HardwareSamplerParams::from(calibration));
  std::optional<sim::PacketTelemetry> packet_counters;
  std::optional<sim::PacketTelemetry> batch_counters;  // the hybrid engine's packet batches
  // RNIC flow table statistics, measured only when a detector reads them.
  std::optional<models::FlowTableSampler> flow_tables;
  if (std::any_of(detectors.begin(), detectors.end(),
                  [](const ActiveDetector& d) { return d.detector->reads_flow_tables(); }))
    flow_tables.emplace(engine,
                        models::FlowTableSamplerParams{.mtu_bytes = calibration.value(models::calibration::kRnicMtu)});
  // What exporters would show Prometheus, when asked for.
  std::optional<ExporterSeries> exporters;
  if (request.record_metrics) exporters.emplace();
  const bool sampling = exporters || std::any_of(detectors.begin(), detectors.end(),
                                                 [](const ActiveDetector& d) { return d.detector->reads_samples(); });
  sim::ReplayLedger::Observation replays_counted;  // ends before the samplers it feeds
  if (sampling && setup.packet) {
    packet_counters.emplace(*setup.packet);
  } else if (sampling) {
    fabric.emplace(
        engine, effects,
        models::FabricSamplerParams{.counters = models::FabricCounterParams::from(calibration, network_table)});
    replays_counted = count_replayed_flows(engine, *fabric, flow_tables ? &*flow_tables : nullptr);
    if (setup.hybrid) batch_counters.emplace(*setup.hybrid);
  }

  SimulationOutcome outcome;
  for (const ActiveDetector& d : detectors) outcome.detectors[d.name];
  std::optional<CollectiveSampler> collectives;
  if (request.sample_collectives) {
    std::vector<std::string> targets;
    for (const injectors::FaultSpec& f : scenario.faults) targets.push_back(f.target);
    collectives.emplace(sample_workers(job.placement(), targets), job.placement().ranks());
  }
  // Without detectors, exporters or a policy that measures, the collective
  // sample is the only reader of the records steady runs repeat.
  if (detectors.empty() && !exporters && !measure)
    job.set_steady_record_filter([&collectives](const telemetry::Record& r) {
      return collectives && r.has_collective() && collectives->samples(r.collective().worker());
    });
  if (scenario.shared()) outcome.fault_jobs = tenants.fault_jobs(scenario.faults);  // as placed at the start
  tenants.start(scenario.duration);
  Progress progress(request.show_progress, scenario.duration);
  for (sim::Nanos t = 0; t < scenario.duration;) {
    t = std::min(t + request.observe_interval, scenario.duration);
    engine.run_until(t);
    sim::ArenaBatch drained = bus.drain_on_arena(t);  // freed at once at the end of the step
    telemetry::Batch& batch = drained.batch();
    if (sampling && tenants.cluster_scope())  // their GPUs and RNICs are sampled from their own records
      tenants.drain_unobserved(t, [&](std::size_t k, const models::TrainingJob& other, const telemetry::Batch& theirs) {
        sampler.observe_traffic(
            theirs, [&] { return models::job_endpoints(other, topology); }, k + 1);
      });
    else
      tenants.drop_unobserved(t);
    profiler.observe(batch);  // finished windows publish into the next batch
    if (measure) measured.observe(batch);
    if (collectives) collectives->observe(batch);
    if (sampling) {
      sampler.observe_traffic(batch, [&] { return models::job_endpoints(job, topology); });
      models::SampleInputs inputs = tenants.sample_inputs(engine);
      telemetry::Batch counted;  // the hybrid engine's batches, merged below
      if (packet_counters) {
        packet_counters->sample(t, &batch);
        inputs.cnp_per_second = [&packet_counters](sim::EndpointId e) { return packet_counters->cnp_rate(e); };
        inputs.host_link_bytes_per_second = [&packet_counters, &topology](sim::EndpointId e, bool upward) {
          return packet_counters->port_bytes_per_second(topology.host_link(e), upward);
        };
        inputs.version = inputs.version * 1000003u + packet_counters->version();
      } else {
        fabric->observe_traffic(batch);
        fabric->measure_second(t, inputs.traffic_flowing);
        if (batch_counters) batch_counters->sample(t, &counted);
        // An RNIC a packet batch ran on reports the CNPs it handled there.
        inputs.cnp_per_second = [&fabric, &batch_counters](sim::EndpointId e) {
          const double handled = batch_counters ? batch_counters->cnp_rate(e) : 0;
          return handled > 0 ? handled : fabric->cnp_rate(e);
        };
        inputs.host_link_bytes_per_second = [&fabric](sim::EndpointId e, bool upward) {
          return fabric->host_link_bytes_per_second(e, upward);
        };
        inputs.version =
            inputs.version * 1000003u + fabric->version() + (batch_counters ? batch_counters->version() : 0);
      }
      sampler.sample(t, inputs, &batch);
      if (fabric) fabric->sample(t, inputs.traffic_flowing, &batch);
      if (batch_counters) merge_packet_counts(counted, &batch);
      if (flow_tables) flow_tables->sample(t, &batch);
      if (t == scenario.duration) {  // the last repeats
        sampler.flush(&batch);
        if (fabric) fabric->flush(&batch);
      }
    }
    if (skewed) models::apply_host_clocks(effects, &batch);  // as the hosts' clocks stamp it
    if (exporters) exporters->observe(batch);                // the cluster's exporters see every host
    if (const auto& hosts = tenants.visible_hosts()) keep_tenant_telemetry(batch, *hosts);
    for (ActiveDetector& d : detectors) {
      d.detector->observe(batch);
      if (std::vector<models::ProbeOrder> orders = probe_orders(d.detector->take_probe_requests(), topology);
          !orders.empty()) {
        if (!d.prober) d.prober = make_prober();
        d.prober->submit(d.name, orders);
      }
      DetectorOutcome& result = outcome.detectors[d.name];
      for (Alert& alert : d.detector->take_alerts()) {
        alert.detector = d.name;
        if (policy) policy->on_alert(alert, console, t);
        result.alerts.push_back(std::move(alert));
      }
      for (const ProfilingRequest& p : d.detector->take_profiling_requests()) {
        const models::ProfilingCost cost = profiler.start(t, std::min(p.duration, scenario.duration - t), p.workers);
        result.profiling_seconds += cost.window_seconds;
        result.profiling_overhead_s += cost.overhead_seconds;
        job.cut_steady_run();  // the window's iterations are published as it closes, not at a stretch's end
      }
      for (BenchmarkRequest& b : d.detector->take_benchmark_requests()) {
        if (b.kind != "gemm" && b.kind != "allreduce") continue;  // nothing to run
        benchmarks.submit({d.name, std::move(b.kind), std::move(b.targets)});
      }
    }
    if (policy) policy->on_tick(console, t);
    progress.update(t);
  }
  if (request.inject_faults) scheduler.check_windows_closed();
  for (const ActiveDetector& d : detectors) outcome.detectors[d.name].status = d.detector->status();
  for (const ActiveDetector& d : detectors)
    if (d.prober) outcome.detectors[d.name].probes_sent = d.prober->probes_sent(d.name);
  for (const ActiveDetector& d : detectors) {
    const models::BenchmarkCost cost = benchmarks.cost(d.name);
    DetectorOutcome& result = outcome.detectors[d.name];
    result.benchmarks = cost.benchmarks;
    result.benchmark_pause_s = cost.pause_seconds;
    result.benchmark_pause_iterations = cost.pause_iterations;
  }
  if (policy)
    for (const ActiveDetector& d : detectors) outcome.detectors[d.name].actions = policy->actions();
  outcome.timeline = job.timeline();
  outcome.telemetry_bytes = static_cast<long long>(
      bus.published_bytes() + sampler.published_bytes() + (fabric ? fabric->published_bytes() : 0) +
      (packet_counters ? packet_counters->published_bytes() : 0) + (flow_tables ? flow_tables->published_bytes() : 0));
  outcome.simulated_iterations = job.simulated_iterations();
  if (collectives) outcome.collectives = collectives->sample();
  outcome.containers_csv = containers_csv(job.containers(), topology);
  if (exporters)
    outcome.openmetrics = openmetrics_text(exporters->series(scenario.duration), exporters->scrape_interval());
  return outcome;
}

namespace {

json actions_json(const std::vector<MitigationAction>& actions) {
  json out = json::array();
  for (const MitigationAction& a : actions) out.push_back({a.time_s, a.action, a.components, a.spares_used});
  return out;
}

}  // namespace

std::string SimulationOutcome::to_json() const {
  json j;
  j["timeline"] = json::array();
  for (const auto& s : timeline) j["timeline"].push_back({s.first, s.count, s.start, s.duration});
  j["telemetry_bytes"] = telemetry_bytes;
  j["simulated_iterations"] = simulated_iterations;
  j["containers_csv"] = containers_csv;
  if (!fault_jobs.empty()) j["fault_jobs"] = fault_jobs;
  if (!openmetrics.empty()) j["openmetrics"] = openmetrics;
  if (!collectives.workers.empty()) {
    json slices = json::array();
    for (const CollectiveSlice& c : collectives.slices)
      slices.push_back({c.worker, c.communicator, c.op, c.iteration, c.bytes, c.start, c.end});
    j["collectives"] = {{"workers", collectives.workers},
                        {"ranks", collectives.ranks_total},
                        {"iterations_sampled", collectives.iterations_sampled},
                        {"iterations_skipped", collectives.iterations_skipped},
                        {"slices", slices}};
  }
  j["detectors"] = json::object();
  for (const auto& [name, d] : detectors) {
    json alerts = json::array();
    for (const Alert& a : d.alerts) {
      json suspects = json::array();
      for (const Suspect& s : a.suspects) suspects.push_back({s.id, s.score});
      alerts.push_back({a.time_s, a.kind, suspects});
    }
    j["detectors"][name] = {{"alerts", alerts},
                            {"probes_sent", d.probes_sent},
                            {"profiling_seconds", d.profiling_seconds},
                            {"profiling_overhead_s", d.profiling_overhead_s},
                            {"status", d.status},
                            {"benchmarks", d.benchmarks},
                            {"benchmark_pause_s", d.benchmark_pause_s},
                            {"benchmark_pause_iterations", d.benchmark_pause_iterations},
                            {"actions", actions_json(d.actions)}};
  }
  return j.dump();
}

SimulationOutcome SimulationOutcome::from_json(const std::string& text) {
  const json j = json::parse(text);
  SimulationOutcome out;
  for (const auto& s : j["timeline"])
    out.timeline.push_back(
        {s[0].get<std::uint64_t>(), s[1].get<std::uint64_t>(), s[2].get<sim::Nanos>(), s[3].get<sim::Nanos>()});
  out.telemetry_bytes = j["telemetry_bytes"].get<long long>();
  out.simulated_iterations = j["simulated_iterations"].get<std::uint64_t>();
  out.containers_csv = j.value("containers_csv", std::string());
  out.openmetrics = j.value("openmetrics", std::string());
  if (j.contains("fault_jobs")) out.fault_jobs = j["fault_jobs"].get<std::map<std::string, std::vector<std::string>>>();
  if (j.contains("collectives")) {
    const json& c = j["collectives"];
    CollectiveSample& sample = out.collectives;
    sample.workers = c["workers"].get<std::vector<std::string>>();
    sample.ranks_total = c["ranks"].get<int>();
    sample.iterations_sampled = c["iterations_sampled"].get<std::uint64_t>();
    sample.iterations_skipped = c["iterations_skipped"].get<std::uint64_t>();
    for (const json& s : c["slices"])
      sample.slices.push_back({s[0].get<std::string>(), s[1].get<std::string>(), s[2].get<std::string>(),
                               s[3].get<std::uint64_t>(), s[4].get<std::uint64_t>(), s[5].get<sim::Nanos>(),
                               s[6].get<sim::Nanos>()});
  }
  for (const auto& [name, d] : j["detectors"].items()) {
    DetectorOutcome& detector = out.detectors[name];
    detector.probes_sent = d["probes_sent"].get<long long>();
    detector.profiling_seconds = d["profiling_seconds"].get<double>();
    detector.profiling_overhead_s = d["profiling_overhead_s"].get<double>();
    detector.status = d["status"].get<std::string>();
    detector.benchmarks = d.value("benchmarks", 0);
    detector.benchmark_pause_s = d.value("benchmark_pause_s", 0.0);
    detector.benchmark_pause_iterations = d.value("benchmark_pause_iterations", 0.0);
    for (const auto& a : d["actions"])
      detector.actions.push_back(
          {a[0].get<double>(), a[1].get<std::string>(), a[2].get<std::vector<std::string>>(), a[3].get<int>()});
    for (const auto& a : d["alerts"]) {
      Alert alert;
      alert.time_s = a[0].get<double>();
      alert.detector = name;
      alert.kind = a[1].get<std::string>();
      for (const auto& s : a[2]) alert.suspects.push_back({s[0].get<std::string>(), s[1].get<double>()});
      detector.alerts.push_back(std::move(alert));
    }
  }
  return out;
}

}  // namespace gauntlet::harness
