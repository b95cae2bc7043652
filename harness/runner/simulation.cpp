#include "harness/runner/simulation.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "harness/runner/containers_csv.hpp"
#include "harness/runner/detector_session.hpp"
#include "harness/runner/engine_setup.hpp"
#include "harness/runner/telemetry_pipeline.hpp"
#include "harness/runner/healthy_fleet.hpp"
#include "harness/runner/tenants.hpp"
#include "harness/scenario/loader.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "injectors/sim/fault_scheduler.hpp"
#include "injectors/sim/telemetry_effects_from_faults.hpp"
#include "models/fleet/healthy_gpus.hpp"
#include "models/benchmark_service.hpp"
#include "models/calibration.hpp"
#include "models/collectives/flow_set_archive.hpp"
#include "models/packet_transport_calibration.hpp"
#include "models/profiler.hpp"
#include "models/simulated_gpus.hpp"
#include "sim/packet/packet_engine.hpp"
#include "sim/telemetry_bus.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

// Every job computes at its GPUs' healthy speeds, at the fleet's pace of
// the daily cycle's step, which moves at each step's start.
void apply_healthy_fleet(const models::HealthyGpus& healthy, const std::vector<models::TrainingJob*>& jobs,
                         sim::NetworkEngine& engine, sim::Nanos horizon) {
  if (!healthy.varied()) return;
  for (models::TrainingJob* job : jobs) {
    job->set_healthy_speeds(healthy.speeds());
    job->set_fleet_pace(healthy.pace(0));
  }
  auto step = std::make_shared<std::function<void()>>();
  *step = [&healthy, jobs, &engine, horizon, weak = std::weak_ptr(step)] {
    for (models::TrainingJob* job : jobs) job->set_fleet_pace(healthy.pace(engine.now()));
    const sim::Nanos next = healthy.next_step(engine.now());
    if (auto again = weak.lock(); again && next < horizon) engine.schedule_at(next, [again] { (*again)(); });
  };
  const sim::Nanos first = healthy.next_step(0);
  if (first < horizon) engine.schedule_at(first, [step] { (*step)(); });
}

// The simulated cluster a run's parts share: its network, its jobs, and the
// faults acting on them (the scheduler, and what they change in telemetry).
struct SimulatedCluster {
  SimulatedCluster(const Scenario& scenario, const SimulationRequest& request)
      : topology(scenario.cluster),
        engine(make_engine(scenario, topology)),
        tenants(scenario, topology, *engine, bus),
        job(tenants.observed()),
        fault_types(fault_types_of(scenario)),
        faults(injectors::with_calibrated_defaults(scenario.faults, *fault_types, scenario.calibration)),
        healthy(healthy_gpus(scenario, topology)) {
    // Packets and their counters exist only in simulated iterations, so the
    // packet engine simulates every one (the hybrid engine's batches change
    // the network's state, so its jobs simulate every iteration while a
    // packet fault lasts); so do jobs sharing the fabric, since each one's
    // traffic changes the other's iterations from step to step.
    tenants.set_fast_forward(request.fast_forward && !engine->packet_counters().every_transfer && !scenario.shared());
    // Other runs of this fabric may have simulated the job's flow sets already.
    if (!request.flow_sets.empty() && scenario.engine == "flow" && !scenario.shared()) {
      flow_sets.emplace(request.flow_sets, models::FlowSetArchive::salt_for(topology));
      job.set_flow_set_archive(&*flow_sets);
    }
    // The flow model's give-up under loss counts the same NCCL_IB_RETRY_CNT
    // tries as the packet engine's queue pairs.
    models::RoceTransportParams transport;
    transport.retry_count = scenario.calibration.count(models::calibration::kIbRetryCount);
    transport.initial_retransmit_timeout =
        scenario.calibration.duration(models::calibration::kRetransmitInitialTimeout);
    transport.nak_interval = scenario.calibration.duration(models::calibration::kNakInterval);
    scheduler.emplace(*engine, tenants.all(), *fault_types, transport);
    scheduler->communicator().set_transport_timeout(
        scenario.calibration.duration(models::calibration::kTransportTimeout));
    scheduler->communicator().set_network_calibration(scenario.network_table());
    // On packets a queue pair out of retries errors its work request
    // (IBV_WC_RETRY_EXC_ERR) and NCCL aborts: the job owning it fails.
    if (auto* packet = dynamic_cast<sim::PacketEngine*>(engine.get()))
      packet->set_qp_error_handler([this](sim::EndpointId src, sim::EndpointId dst) {
        for (models::TrainingJob* owner : tenants.all())
          if (owner->uses_link(topology.host_link(src)) && owner->uses_link(topology.host_link(dst)))
            owner->fail_collective("NCCL Error: transport retry counter exceeded");
      });
    if (request.inject_faults) scheduler->arm(faults, scenario.duration);
    apply_healthy_fleet(healthy, tenants.all(), *engine, scenario.duration);
    if (request.inject_faults) {
      // What faults change in telemetry beyond the data path: clocks, CPU share, skew.
      effects = injectors::telemetry_effects_from(faults, *fault_types, topology, scenario.duration);
      skewed = std::any_of(scenario.faults.begin(), scenario.faults.end(),
                           [&](const injectors::FaultSpec& f) { return fault_types->spec(f.type).skews_clocks; });
    }
    // The healthy fabric's background, in faulty and fault-free runs alike
    // (a packet engine corrupts the frames themselves).
    add_background_effects(background_of(scenario, topology), topology, effects,
                           scenario.engine == "packet" ? engine->packet_faults() : nullptr);
  }

  sim::Topology topology;
  std::unique_ptr<sim::NetworkEngine> engine;
  sim::TelemetryBus bus;
  Tenants tenants;
  models::TrainingJob& job;
  std::optional<models::FlowSetArchive> flow_sets;
  std::shared_ptr<const injectors::FaultCatalog> fault_types;
  // The scenario's faults with the run's calibration in the parameters they
  // leave out; the scheduler keeps references to them.
  std::vector<injectors::FaultSpec> faults;
  std::optional<injectors::FaultScheduler> scheduler;
  models::TelemetryEffects effects;
  bool skewed = false;          // some fault skews a host's clock
  models::HealthyGpus healthy;  // the fleet's healthy variation (models/fleet/)
};

// What the profiler reads of the hardware: the faults' telemetry effects at
// the engine's now (the same windows the scheduler applies, composed alike).
// A GPU's clock relative to the nominal one now: its healthy speed, the
// fleet's pace and any throttle.
double gpu_clock_now(const models::TelemetryEffects& effects, const models::HealthyGpus& healthy, int gpus_per_host,
                     int host, int gpu, sim::Nanos now) {
  const auto index = static_cast<std::size_t>(host * gpus_per_host + gpu);
  return effects.clock_factor(host, gpu, now) * healthy.speed(index) * healthy.pace(now);
}

models::HardwareState hardware_from(const models::TelemetryEffects* effects, const models::HealthyGpus* healthy,
                                    int gpus_per_host, const sim::NetworkEngine* engine) {
  return {[effects, healthy, gpus_per_host, engine](int host, int gpu) {
            return gpu_clock_now(*effects, *healthy, gpus_per_host, host, gpu, engine->now());
          },
          [effects, engine](int host) { return effects->cpu_factor(host, engine->now()); }};
}

models::BenchmarkSettings benchmark_settings(const sim::Calibration& c) {
  namespace k = models::calibration;
  return {c.duration(k::kBenchmarkGemmTime), c.value(k::kBenchmarkAllreduceSize), c.duration(k::kBenchmarkTimeout),
          c.value(k::kBenchmarkJitter)};
}

// The services a run offers detectors: function-level profiling (on only
// while a detector asked for it) and validation benchmarks, which pause the
// job while they run (GEMMs at the GPUs' clocks).
struct RunServices {
  RunServices(const Scenario& scenario, SimulatedCluster& cluster, models::JobControl& console)
      : profiler(cluster.bus,
                 hardware_from(&cluster.effects, &cluster.healthy, cluster.topology.shape().gpus_per_host,
                               cluster.engine.get()),
                 scenario.seed, models::ProfilerSettings::from(scenario.calibration)),
        benchmarks(*cluster.engine, console, cluster.bus,
                   models::simulated_gpus(cluster.job.cluster(),
                                          [&cluster](int host, int gpu) {
                                            return gpu_clock_now(cluster.effects, cluster.healthy,
                                                                 cluster.topology.shape().gpus_per_host, host, gpu,
                                                                 cluster.engine->now());
                                          }),
                   scenario.seed, benchmark_settings(scenario.calibration)) {
    cluster.job.set_change_horizon([&cluster, this] {
      // Routing convergence after a fabric link changes is an engine-internal
      // change; a skew's edges end steady runs so each is read off one clock.
      const sim::NetworkEngine& engine = *cluster.engine;
      const sim::Nanos skew_edge =
          cluster.skewed ? cluster.effects.next_host_change(engine.now()) : std::numeric_limits<sim::Nanos>::max();
      return std::min({cluster.scheduler->next_change(), profiler.next_window_end(engine.now()),
                       engine.next_internal_change(), skew_edge});
    });
  }
  DetectorServices for_detectors() { return {profiler, benchmarks}; }

  models::Profiler profiler;
  models::BenchmarkService benchmarks;
};

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

// A bounded per-rank sample of the job's collectives (for trace.json), when asked for.
std::optional<CollectiveSampler> collective_sampler(const Scenario& scenario, const SimulationRequest& request,
                                                    const models::TrainingJob& job) {
  if (!request.sample_collectives) return std::nullopt;
  std::vector<std::string> targets;
  for (const injectors::FaultSpec& f : scenario.faults) targets.push_back(f.target);
  return CollectiveSampler(sample_workers(job.placement(), targets), job.placement().ranks());
}

// Every restart starts all the job's containers at once: one epoch each.
std::vector<PlacementEpoch> placement_epochs(const models::ContainerSet& containers) {
  std::map<sim::Nanos, std::map<int, int>> hosts_by_start;  // start -> slot -> host
  for (const models::Container& c : containers.lifetimes()) hosts_by_start[c.started_at][c.slot] = c.host;
  std::vector<PlacementEpoch> epochs;
  for (const auto& [start, slots] : hosts_by_start) {
    PlacementEpoch& epoch = epochs.emplace_back(PlacementEpoch{start, {}});
    for (const auto& [slot, host] : slots) epoch.hosts.push_back(host);
  }
  return epochs;
}

}  // namespace

std::uint64_t SimulationOutcome::iterations() const {
  std::uint64_t total = 0;
  for (const auto& span : timeline) total += span.count;
  return total;
}

// The run assembled from its parts: the cluster and its faults, the
// detector session, the services detectors call on, the telemetry pipeline
// between them; then stepped one observe interval at a time.
SimulationOutcome simulate(const Scenario& scenario, const DetectorRegistry& registry,
                           const SimulationRequest& request) {
  SimulatedCluster cluster(scenario, request);
  models::TrainingJob& job = cluster.job;
  std::optional<TelemetryPipeline> pipeline;  // made after the session, whose probers ask it for queueing delays
  DetectorSession session(scenario, registry, request, cluster.topology, *cluster.engine, cluster.bus, job,
                          *cluster.fault_types, run_scrape_settings(scenario, cluster.effects),
                          [&pipeline, &engine = *cluster.engine](sim::LinkId link) {
                            return pipeline ? pipeline->queueing_delay(link) : engine.queueing_delay(link);
                          });
  RunServices services(scenario, cluster, session.console());
  pipeline.emplace(scenario, cluster.topology, *cluster.engine, cluster.bus, cluster.tenants, cluster.effects,
                   cluster.healthy, cluster.skewed,
                   TelemetryNeeds{.samples = session.reads_samples(),
                                  .flow_tables = session.reads_flow_tables(),
                                  .flow_records = session.reads_flow_records(),
                                  .metrics = request.record_metrics});
  std::optional<CollectiveSampler> collectives = collective_sampler(scenario, request, job);
  // Without detectors, exporters or a policy that measures, the collective
  // sample is the only reader of the records steady runs repeat.
  if (session.empty() && !pipeline->exports() && !session.measures())
    job.set_steady_record_filter([&collectives](const telemetry::Record& r) {
      return collectives && r.has_collective() && collectives->samples(r.collective().worker());
    });
  SimulationOutcome outcome;
  if (scenario.shared()) outcome.fault_jobs = cluster.tenants.fault_jobs(scenario.faults);  // as placed at the start
  cluster.tenants.start(scenario.duration);
  Progress progress(request.show_progress, scenario.duration);
  for (sim::Nanos t = 0; t < scenario.duration;) {
    t = std::min(t + request.observe_interval, scenario.duration);
    cluster.engine->run_until(t);
    sim::ArenaBatch drained = pipeline->drain(t);  // freed at once at the end of the step
    telemetry::Batch& batch = drained.batch();
    services.profiler.observe(batch);  // finished windows publish into the next batch
    session.measure(batch);
    if (collectives) collectives->observe(batch);
    pipeline->complete(t, &batch);
    session.deliver(t, batch, services.for_detectors());
    session.tick(t);
    progress.update(t);
  }
  if (request.inject_faults) cluster.scheduler->check_windows_closed();
  outcome.detectors = session.finish(services.benchmarks);
  outcome.timeline = job.timeline();
  outcome.placements = placement_epochs(job.containers());
  outcome.shortfall = job.shortfall(scenario.duration);
  outcome.telemetry_bytes = pipeline->published_bytes();
  outcome.simulated_iterations = job.simulated_iterations();
  if (collectives) outcome.collectives = collectives->sample();
  outcome.containers_csv = containers_csv(job.containers(), cluster.topology);
  outcome.openmetrics = pipeline->openmetrics(scenario.duration);
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
  j["placements"] = json::array();
  for (const PlacementEpoch& p : placements) j["placements"].push_back({p.start, p.hosts});
  j["shortfall"] = {shortfall.waited, shortfall.stretches, shortfall.most_hosts_short};
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
      json alert = {a.time_s, a.kind, suspects};
      if (!a.name.empty()) alert.push_back({a.name, a.labels, a.annotations});
      alerts.push_back(std::move(alert));
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
  if (j.contains("placements"))
    for (const auto& p : j["placements"])
      out.placements.push_back({p[0].get<sim::Nanos>(), p[1].get<std::vector<int>>()});
  if (j.contains("shortfall"))
    out.shortfall = {j["shortfall"][0].get<sim::Nanos>(), j["shortfall"][1].get<int>(), j["shortfall"][2].get<int>()};
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
      if (a.size() > 3) {
        alert.name = a[3][0].get<std::string>();
        alert.labels = a[3][1].get<std::map<std::string, std::string>>();
        alert.annotations = a[3][2].get<std::map<std::string, std::string>>();
      }
      detector.alerts.push_back(std::move(alert));
    }
  }
  return out;
}

}  // namespace gauntlet::harness
