#include "models/profiler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "sim/component_id.hpp"

namespace gauntlet::models {
namespace {

// How many of the repetitions t0 + k * period, k in [0, count), fall in [from, to).
std::uint64_t repetitions_in(sim::Nanos t0, sim::Nanos period, std::uint64_t count, sim::Nanos from, sim::Nanos to) {
  if (count == 0) return 0;
  if (period <= 0 || count == 1) return t0 >= from && t0 < to ? 1 : 0;
  auto ceil_div = [](sim::Nanos a, sim::Nanos b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
  const sim::Nanos first = std::max<sim::Nanos>(0, ceil_div(from - t0, period));
  const sim::Nanos last = std::min<sim::Nanos>(static_cast<sim::Nanos>(count) - 1, ceil_div(to - t0, period) - 1);
  return last >= first ? static_cast<std::uint64_t>(last - first + 1) : 0;
}

bool ring_op(const std::string& op) { return op == "allreduce" || op == "reduce_scatter" || op == "allgather"; }

// Bytes a rank puts on its outgoing edge: a ring allreduce moves 2(n-1)/n of
// the buffer per edge, reduce-scatter and allgather half that each.
double wire_bytes(const telemetry::CollectiveRecord& c, int ring_size) {
  const double bytes = static_cast<double>(c.bytes());
  if (!ring_op(c.op()) || ring_size <= 1) return bytes;
  const double edge = static_cast<double>(ring_size - 1) / ring_size * bytes;
  return c.op() == "allreduce" ? 2 * edge : edge;
}

}  // namespace

ProfilerSettings ProfilerSettings::from(const sim::Calibration& c) {
  namespace k = calibration;
  ProfilerSettings s;
  s.overhead = c.value(k::kProfilerOverhead);
  s.gpu_clock_mhz = c.value(k::kGpuClock);
  s.cpu_busy = c.value(k::kCpuBusy);
  s.sm_busy = c.value(k::kGpuSmBusy);
  s.jitter = c.value(k::kProfilerJitter);
  return s;
}

Profiler::Profiler(sim::TelemetryBus& bus, HardwareState hardware, std::uint64_t seed, ProfilerSettings settings)
    : bus_(bus), hardware_(std::move(hardware)), rng_(sim::RngStreams(seed).stream("profiler")), settings_(settings) {}

ProfilingCost Profiler::start(sim::Nanos now, sim::Nanos duration, const std::vector<std::string>& workers) {
  Window w;
  w.start = now;
  w.end = now + std::max<sim::Nanos>(duration, 0);
  w.workers = workers;
  std::sort(w.workers.begin(), w.workers.end());
  windows_.push_back(std::move(w));
  const double seconds = sim::to_seconds(std::max<sim::Nanos>(duration, 0));
  return {seconds, seconds * settings_.overhead};
}

double Profiler::gpu_clock(int host, int gpu) const {
  return hardware_.gpu_clock ? std::clamp(hardware_.gpu_clock(host, gpu), 1e-6, 1.0) : 1.0;
}

double Profiler::cpu_share(int host) const {
  return hardware_.cpu_share ? std::clamp(hardware_.cpu_share(host), 1e-6, 1.0) : 1.0;
}

sim::Nanos Profiler::next_window_end(sim::Nanos now) const {
  sim::Nanos next = std::numeric_limits<sim::Nanos>::max();
  for (const Window& w : windows_)
    if (w.end > now) next = std::min(next, w.end);
  return next;
}

bool Profiler::profiles(const Window& w, const std::string& worker) const {
  return w.workers.empty() || std::binary_search(w.workers.begin(), w.workers.end(), worker);
}

double Profiler::jittered(double value) {
  // Box-Muller on the project's portable uniform draws.
  const double u1 = 1.0 - rng_.uniform(), u2 = rng_.uniform();
  const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  return value * std::max(0.0, 1.0 + settings_.jitter * normal);
}

void Profiler::add(Window& w, const std::string& worker, const std::string& function, double ns, std::uint64_t calls,
                   double clock, double sm, double nic, double cpu, double pcie) {
  Figures& f = w.functions[{worker, function}];
  f.ns += ns;
  f.calls += calls;
  f.clock += clock * ns;
  f.sm += sm * ns;
  f.nic += nic * ns;
  f.cpu += cpu * ns;
  f.pcie += pcie * ns;
}

void Profiler::add_iteration(Window& w, const telemetry::IterationRecord& r, std::uint64_t count) {
  const auto id = sim::ComponentId::parse(r.worker());
  if (!id || id->kind != sim::ComponentKind::gpu) return;
  const double cpu = cpu_share(id->host), gpu = gpu_clock(id->host, id->index);
  const double compute = static_cast<double>(r.compute_ns());
  // Recover the nominal step from the job's compute (nominal / (c g)); the
  // kernels take their share / g and the host part its share / c. Whatever
  // the job's composition adds beyond that goes to the slowed side(s), in
  // proportion to how much each is slowed, so the functions add up to the
  // compute the job really spent.
  const double kernel_share = settings_.forward_share + settings_.backward_share + settings_.optimizer_share;
  const double nominal = compute * cpu * gpu;
  double kernels = kernel_share * nominal / gpu;
  double host = (1.0 - kernel_share) * nominal / cpu;
  const double rest = compute - kernels - host;
  const double kernel_excess = 1.0 / gpu - 1.0, host_excess = 1.0 / cpu - 1.0;
  if (kernel_excess + host_excess > 0) {
    kernels += rest * kernel_excess / (kernel_excess + host_excess);
    host += rest * host_excess / (kernel_excess + host_excess);
  }
  const double forward = kernels * settings_.forward_share / kernel_share;
  const double backward = kernels * settings_.backward_share / kernel_share;
  const double optimizer = kernels * settings_.optimizer_share / kernel_share;
  const double dataloader = std::max(0.0, host);
  const double clock = settings_.gpu_clock_mhz * gpu;
  const double host_cpu = cpu < 1.0 ? 1.0 : settings_.cpu_busy;
  const double n = static_cast<double>(count);
  add(w, r.worker(), "forward", forward * n, count, clock, settings_.sm_busy, 0, host_cpu, 0);
  add(w, r.worker(), "backward", backward * n, count, clock, settings_.sm_busy, 0, host_cpu, 0);
  add(w, r.worker(), "optimizer", optimizer * n, count, clock, settings_.sm_busy * 0.5, 0, host_cpu, 0);
  add(w, r.worker(), "dataloader", dataloader * n, count, clock, 0.02, 0, host_cpu, 0);
}

void Profiler::add_collective(Window& w, const telemetry::CollectiveRecord& c, int ring_size, std::uint64_t count) {
  if (c.end_ns() == 0 || c.end_ns() < c.start_ns()) return;  // a hung collective has no summary yet
  const auto id = sim::ComponentId::parse(c.worker());
  const auto peer = sim::ComponentId::parse(c.peer());
  if (!id || id->kind != sim::ComponentKind::gpu) return;
  const double ns = static_cast<double>(c.end_ns() - c.start_ns());
  const bool nvlink = peer && peer->kind == sim::ComponentKind::gpu && peer->host == id->host;
  const double gbps = ns > 0 && !nvlink ? wire_bytes(c, ring_size) * 8.0 / ns : 0.0;  // bytes/ns * 8 = Gbit/s
  const double cpu = cpu_share(id->host);
  const double clock = settings_.gpu_clock_mhz * gpu_clock(id->host, id->index);
  const double host_cpu = cpu < 1.0 ? 1.0 : settings_.cpu_busy;
  add(w, c.worker(), c.op(), ns * static_cast<double>(count), count, clock, 0.1, gbps, host_cpu, gbps);
}

void Profiler::add_records(const google::protobuf::RepeatedPtrField<telemetry::Record>& records, sim::Nanos period,
                           std::uint64_t count) {
  std::map<std::pair<std::string, std::uint64_t>, int> ring_sizes;
  for (const telemetry::Record& r : records)
    if (r.has_collective()) ++ring_sizes[{r.collective().communicator(), r.collective().sequence()}];
  for (Window& w : windows_) {
    for (const telemetry::Record& r : records) {
      sim::Nanos t0 = 0;
      if (r.has_iteration())
        t0 = r.iteration().start_ns();
      else if (r.has_collective())
        t0 = r.collective().start_ns();
      else
        continue;
      const sim::Nanos last_start = t0 + (count > 0 ? static_cast<sim::Nanos>(count - 1) * period : 0);
      // An iteration ending at or after the window's end: every later one starts after it.
      const sim::Nanos last_end = last_start + (r.has_iteration() ? r.iteration().end_ns() - t0 : 0);
      if (r.has_iteration() && last_end >= w.end) w.job_passed_end = true;
      const std::uint64_t k = repetitions_in(t0, period, count, w.start, w.end);
      if (k == 0) continue;
      if (r.has_iteration() && profiles(w, r.iteration().worker())) add_iteration(w, r.iteration(), k);
      if (r.has_collective() && profiles(w, r.collective().worker())) {
        const auto& c = r.collective();
        add_collective(w, c, ring_sizes[{c.communicator(), c.sequence()}], k);
      }
    }
  }
}

void Profiler::observe(const telemetry::Batch& batch) {
  if (windows_.empty()) return;
  add_records(batch.records(), 0, 1);
  for (const telemetry::SteadyRun& run : batch.steady())
    add_records(run.records(), run.period_ns(), run.last_iteration() - run.first_iteration() + 1);
  const sim::Nanos now = batch.until_ns();
  for (auto it = windows_.begin(); it != windows_.end();) {
    // Iterations that started in the window are all published once one that
    // ends at or after its end is (or, for a hung job, after max_lag).
    if (now >= it->end && (it->job_passed_end || now >= it->end + settings_.max_lag)) {
      publish(*it);
      it = windows_.erase(it);
    } else {
      ++it;
    }
  }
}

void Profiler::publish(const Window& w) {
  for (const auto& [key, f] : w.functions) {
    if (f.ns <= 0) continue;
    telemetry::Record record;
    auto* p = record.mutable_profile();
    p->set_worker(key.first);
    p->set_function(key.second);
    p->set_window_start_ns(w.start);
    p->set_window_end_ns(w.end);
    p->set_total_ns(static_cast<sim::Nanos>(jittered(f.ns)));
    p->set_calls(f.calls);
    p->set_gpu_clock_mhz(jittered(f.clock / f.ns));
    p->set_sm_utilization(std::min(1.0, jittered(f.sm / f.ns)));
    p->set_nic_gbps(jittered(f.nic / f.ns));
    p->set_cpu_utilization(std::min(1.0, jittered(f.cpu / f.ns)));
    p->set_pcie_gbps(jittered(f.pcie / f.ns));
    bus_.publish(std::move(record));
  }
}

}  // namespace gauntlet::models
