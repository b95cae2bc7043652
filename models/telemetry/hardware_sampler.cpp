#include "models/telemetry/hardware_sampler.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "sim/component_id.hpp"

namespace gauntlet::models {
namespace {

double round_to(double value, double step) { return std::round(value / step) * step; }

void set_time(telemetry::Record& r, sim::Nanos at) {
  if (r.has_gpu()) r.mutable_gpu()->set_time_ns(at);
  if (r.has_cpu()) r.mutable_cpu()->set_time_ns(at);
  if (r.has_nic()) r.mutable_nic()->set_time_ns(at);
}

bool same_health(const telemetry::GpuSample& x, const telemetry::GpuSample& y) {
  return x.mem_clock_mhz() == y.mem_clock_mhz() && x.fb_used_mib() == y.fb_used_mib() &&
         x.fb_free_mib() == y.fb_free_mib() && x.row_remap_failure() == y.row_remap_failure() &&
         x.ecc_sbe() == y.ecc_sbe() && x.ecc_dbe() == y.ecc_dbe() && x.retired_pages_sbe() == y.retired_pages_sbe() &&
         x.retired_pages_dbe() == y.retired_pages_dbe() &&
         x.remapped_rows_correctable() == y.remapped_rows_correctable() &&
         x.remapped_rows_uncorrectable() == y.remapped_rows_uncorrectable() &&
         x.nvlink_crc_flit_errors() == y.nvlink_crc_flit_errors() &&
         x.nvlink_crc_data_errors() == y.nvlink_crc_data_errors() &&
         x.nvlink_replay_errors() == y.nvlink_replay_errors() &&
         x.nvlink_recovery_errors() == y.nvlink_recovery_errors() && x.pcie_replays() == y.pcie_replays();
}

// Equal apart from the sample time.
bool same_values(const telemetry::Record& a, const telemetry::Record& b) {
  if (a.body_case() != b.body_case()) return false;
  if (a.has_gpu()) {
    const auto &x = a.gpu(), &y = b.gpu();
    return x.gpu() == y.gpu() && x.sm_utilization() == y.sm_utilization() && x.clock_mhz() == y.clock_mhz() &&
           x.temperature_c() == y.temperature_c() && x.power_w() == y.power_w() &&
           x.clock_throttle_reasons() == y.clock_throttle_reasons() && x.xid() == y.xid() && same_health(x, y);
  }
  if (a.has_cpu()) return a.cpu().cpu() == b.cpu().cpu() && a.cpu().utilization() == b.cpu().utilization();
  const auto &x = a.nic(), &y = b.nic();
  return x.nic() == y.nic() && x.tx_bytes() == y.tx_bytes() && x.rx_bytes() == y.rx_bytes() &&
         x.tx_packets() == y.tx_packets() && x.rx_packets() == y.rx_packets() && x.cnp() == y.cnp() &&
         x.link_up() == y.link_up();
}

// Collectives whose wire bytes depend on the communicator's size.
constexpr std::size_t kSizedOps = 4;
int sized_op(const std::string& op) {
  if (op == "allreduce") return 0;
  if (op == "reduce_scatter") return 1;
  if (op == "allgather") return 2;
  if (op == "alltoall") return 3;
  return -1;
}

// Bytes a collective record puts on the wire from its worker, given its
// communicator's size: a ring edge carries 2(n-1)/n of an allreduce's buffer
// and (n-1)/n of a reduce-scatter's or allgather's; an all-to-all sends
// (n-1)/n of its buffer to the other members; a send carries its bytes.
double wire_bytes(const telemetry::CollectiveRecord& c, int n) {
  const double bytes = static_cast<double>(c.bytes());
  const double share = n > 0 ? static_cast<double>(n - 1) / n : 0.0;
  if (c.op() == "allreduce") return 2 * share * bytes;
  if (c.op() == "reduce_scatter" || c.op() == "allgather" || c.op() == "alltoall") return share * bytes;
  if (c.op() == "send") return bytes;
  return 0;  // a recv is the other side of a send
}

}  // namespace

HardwareSamplerParams HardwareSamplerParams::from(const sim::Calibration& c) {
  namespace k = calibration;
  HardwareSamplerParams p;
  p.clock_mhz = c.value(k::kGpuClock);
  p.sm_busy = c.value(k::kGpuSmBusy);
  p.idle_power_w = c.value(k::kGpuIdlePower);
  p.busy_power_w = c.value(k::kGpuBusyPower);
  p.idle_temperature_c = c.value(k::kGpuIdleTemperature);
  p.busy_temperature_c = c.value(k::kGpuBusyTemperature);
  p.hot_temperature_c = c.value(k::kGpuHotTemperature);
  p.hot_slowdown = c.value(k::kGpuHotSlowdown);
  p.thermal_time_constant = c.duration(k::kGpuThermalTimeConstant);
  p.cpu_idle = c.value(k::kCpuIdle);
  p.cpu_busy = c.value(k::kCpuBusy);
  p.cpu_contended = c.value(k::kCpuContended);
  p.mtu_bytes = c.value(k::kRnicMtu);
  p.memory_clock_mhz = c.value(k::kGpuMemoryClock);
  p.framebuffer_mib = c.value(k::kGpuFramebuffer) / 1048576;
  p.framebuffer_in_use = c.value(k::kGpuFramebufferInUse);
  return p;
}

HardwareSampler::HardwareSampler(const sim::Topology& topology, const TelemetryEffects& effects,
                                 HardwareSamplerParams params, const HealthyGpus* healthy)
    : topology_(topology), effects_(effects), params_(params), healthy_(healthy) {
  if (!healthy_) {
    HealthyGpuParams clean;
    clean.max_clock_mhz = params.clock_mhz;
    clean.busy_power_w = params.busy_power_w;
    clean.busy_temperature_c = params.busy_temperature_c;
    clean.idle_temperature_c = params.idle_temperature_c;
    clean_ = std::make_unique<HealthyGpus>(topology.hosts(), topology.shape().gpus_per_host, clean);
    healthy_ = clean_.get();
  }
  const auto gpus = static_cast<std::size_t>(topology.hosts() * topology.shape().gpus_per_host);
  const auto hosts = static_cast<std::size_t>(topology.hosts());
  const auto nics = static_cast<std::size_t>(topology.endpoints());
  temperature_.assign(gpus, -1.0);
  compute_share_.assign(gpus, 1.0);
  tx_rate_.assign(nics, 0.0);
  rx_rate_.assign(nics, 0.0);
  components_.resize(gpus + hosts + nics);
  names_.reserve(components_.size());
  for (int h = 0; h < topology.hosts(); ++h)
    for (int g = 0; g < topology.shape().gpus_per_host; ++g) {
      gpu_index_.emplace(sim::ComponentId::make_gpu(h, g).str(), static_cast<int>(names_.size()));
      names_.push_back(sim::ComponentId::make_gpu(h, g).str());
    }
  for (int h = 0; h < topology.hosts(); ++h) names_.push_back(sim::ComponentId::make_cpu(h).str());
  for (sim::EndpointId e = 0; e < topology.endpoints(); ++e)
    names_.push_back(sim::ComponentId::make_nic(topology.host_of(e), topology.nic_of(e)).str());
}

int HardwareSampler::gpu_of(const std::string& name) const {
  if (auto it = gpu_index_.find(name); it != gpu_index_.end()) return it->second;
  // Not a canonical GPU name of this cluster: read it the long way.
  const auto id = sim::ComponentId::parse(name);
  if (!id || id->kind != sim::ComponentKind::gpu) return -1;
  return id->host * topology_.shape().gpus_per_host + id->index;
}

double HardwareSampler::tx_rate(sim::EndpointId endpoint) const { return tx_rate_[static_cast<std::size_t>(endpoint)]; }
double HardwareSampler::rx_rate(sim::EndpointId endpoint) const { return rx_rate_[static_cast<std::size_t>(endpoint)]; }

struct HardwareSampler::LatestIteration {
  const google::protobuf::RepeatedPtrField<telemetry::Record>* records = nullptr;
  std::uint64_t iteration = 0, version = 0;
  sim::Nanos duration = 0;
};

// The latest iteration in the batch, from single records or a steady run
// (whose records are one iteration repeated every period).
HardwareSampler::LatestIteration HardwareSampler::latest_iteration(const telemetry::Batch& batch) {
  LatestIteration latest;
  sim::Nanos latest_end = -1;
  for (const auto& r : batch.records())
    if (r.has_iteration() && r.iteration().end_ns() >= latest_end) {
      latest_end = r.iteration().end_ns();
      latest = {&batch.records(), r.iteration().iteration(), 0, r.iteration().end_ns() - r.iteration().start_ns()};
    }
  for (const auto& s : batch.steady())
    for (const auto& r : s.records())
      if (r.has_iteration()) {
        const sim::Nanos end =
            r.iteration().end_ns() + static_cast<sim::Nanos>(s.last_iteration() - s.first_iteration()) * s.period_ns();
        if (end >= latest_end) {
          latest_end = end;
          latest = {&s.records(), r.iteration().iteration(), s.records_version(), s.period_ns()};
        }
        break;
      }
  return latest;
}

void HardwareSampler::learn_compute_shares(const LatestIteration& latest) {
  std::vector<double> share = compute_share_;
  for (const auto& r : *latest.records) {
    if (!r.has_iteration() || r.iteration().iteration() != latest.iteration) continue;
    const int gpu = gpu_of(r.iteration().worker());
    const sim::Nanos step = r.iteration().end_ns() - r.iteration().start_ns();
    if (gpu < 0 || step <= 0 || r.iteration().compute_ns() <= 0)
      continue;  // not a GPU worker, or no compute time reported
    share[static_cast<std::size_t>(gpu)] =
        std::min(1.0, static_cast<double>(r.iteration().compute_ns()) / static_cast<double>(step));
  }
  if (share != compute_share_) traffic_changed_ = true;
  compute_share_ = std::move(share);
}

void HardwareSampler::count_wire_bytes(const LatestIteration& latest, const EndpointOf& endpoint_of,
                                       std::vector<double>* tx, std::vector<double>* rx) const {
  // Ranks per (communicator, op) for the collectives whose wire bytes
  // depend on the communicator's size; records of one communicator come in
  // runs, so the last one looked up is tried first.
  std::unordered_map<std::string, std::array<int, kSizedOps>> members;
  const std::string* last_name = nullptr;
  std::array<int, kSizedOps>* last_counts = nullptr;
  auto counts_of = [&](const std::string& communicator) -> std::array<int, kSizedOps>& {
    if (!last_name || *last_name != communicator) {
      last_counts = &members.try_emplace(communicator).first->second;
      last_name = &communicator;
    }
    return *last_counts;
  };
  for (const auto& r : *latest.records)
    if (r.has_collective() && r.collective().sequence() == latest.iteration) {
      const int op = sized_op(r.collective().op());
      if (op >= 0) ++counts_of(r.collective().communicator())[static_cast<std::size_t>(op)];
    }
  last_name = nullptr;
  const int gpus_per_host = topology_.shape().gpus_per_host;
  for (const auto& r : *latest.records) {
    if (!r.has_collective() || r.collective().sequence() != latest.iteration) continue;
    const telemetry::CollectiveRecord& c = r.collective();
    const int from = gpu_of(c.worker());
    if (from < 0) continue;
    const int op = sized_op(c.op());
    const double bytes = wire_bytes(c, op >= 0 ? counts_of(c.communicator())[static_cast<std::size_t>(op)] : 0);
    if (bytes <= 0) continue;
    const int from_host = from / gpus_per_host;
    const int to = gpu_of(c.peer());
    std::optional<sim::ComponentId> other;  // a peer that is not one of the cluster's GPUs
    if (to < 0) other = sim::ComponentId::parse(c.peer());
    if (to >= 0 ? to / gpus_per_host == from_host : other && other->host == from_host)
      continue;  // NVLink, not the fabric
    const auto src = static_cast<std::size_t>(endpoint_of(from_host, from % gpus_per_host));
    // Without a named peer (all-to-all) the RNIC receives as much as it sends.
    std::size_t dst = src;
    if (to >= 0)
      dst = static_cast<std::size_t>(endpoint_of(to / gpus_per_host, to % gpus_per_host));
    else if (other)
      dst = static_cast<std::size_t>(endpoint_of(other->host, other->index));
    (*tx)[src] += bytes;
    (*rx)[dst] += bytes;
  }
}

void HardwareSampler::observe_traffic(const telemetry::Batch& batch, const std::function<EndpointOf()>& endpoints,
                                      std::size_t source_index) {
  const LatestIteration latest = latest_iteration(batch);
  if (!latest.records || latest.duration <= 0) return;
  if (sources_.size() <= source_index) sources_.resize(source_index + 1);
  TrafficSource& own = sources_[source_index];
  // The same iteration's records over the same period give the same rates.
  if (latest.version != 0 && latest.version == own.version && latest.duration == own.period) return;
  own.version = latest.version;
  own.period = latest.duration;
  learn_compute_shares(latest);
  std::vector<double> tx(tx_rate_.size(), 0.0), rx(rx_rate_.size(), 0.0);
  count_wire_bytes(latest, endpoints(), &tx, &rx);
  const double seconds = sim::to_seconds(latest.duration);
  for (std::size_t e = 0; e < tx.size(); ++e) {
    tx[e] /= seconds;
    rx[e] /= seconds;
  }
  own.tx = tx;
  own.rx = rx;
  if (sources_.size() > 1) {  // jobs sharing the cluster: an RNIC carries all of theirs
    tx.assign(tx_rate_.size(), 0.0);
    rx.assign(rx_rate_.size(), 0.0);
    for (const TrafficSource& heard : sources_)
      for (std::size_t e = 0; e < heard.tx.size(); ++e) {
        tx[e] += heard.tx[e];
        rx[e] += heard.rx[e];
      }
  }
  if (tx != tx_rate_ || rx != rx_rate_) traffic_changed_ = true;
  tx_rate_ = std::move(tx);
  rx_rate_ = std::move(rx);
}

telemetry::Record HardwareSampler::gpu_sample(int host, int gpu, sim::Nanos at, const SampleInputs& inputs) {
  const double clock = effects_.clock_factor(host, gpu, at);
  const std::uint32_t fault_reasons = effects_.throttle_reasons(host, gpu, at);
  const bool busy = inputs.gpu_busy(host, gpu);
  const auto index = static_cast<std::size_t>(host * topology_.shape().gpus_per_host + gpu);
  const double sm = busy ? params_.sm_busy * effects_.cpu_factor(host, at) * compute_share_[index] : 0.0;
  double target = busy ? healthy_->busy_temperature_c(index, at) : healthy_->idle_temperature_c(index, at);
  // A thermal throttle is a hot GPU; a throttle of unknown cause (no bits) is
  // taken as one.
  const bool thermal = fault_reasons == 0 || (fault_reasons & throttle_reason::kThermal) != 0;
  if (busy && clock < 1.0 && thermal)
    target +=
        (params_.hot_temperature_c - params_.busy_temperature_c) * std::min(1.0, (1.0 - clock) / params_.hot_slowdown);
  double& temperature = temperature_[index];
  if (temperature < 0)
    temperature = target;
  else
    temperature += (target - temperature) *
                   (1.0 - std::exp(-static_cast<double>(period_) / static_cast<double>(params_.thermal_time_constant)));
  if (std::round(temperature) != std::round(target)) settling_ = true;

  // A throttle takes the clock down from the GPU's own healthy clock; the
  // power cap no longer holds it then.
  std::uint32_t reasons = healthy_->throttle_reasons(index, busy);
  if (fault_reasons != 0) reasons = (reasons & ~throttle_reason::kSwPowerCap) | fault_reasons;
  const double healthy_clock = busy ? healthy_->loaded_clock_mhz(index, at) : healthy_->idle_clock_mhz();
  telemetry::Record r;
  auto* g = r.mutable_gpu();
  g->set_gpu(names_[index]);
  g->set_time_ns(at);
  g->set_sm_utilization(round_to(sm, 0.001));
  g->set_clock_mhz(std::round(healthy_clock * clock));
  g->set_temperature_c(std::round(temperature));
  g->set_power_w(std::round(params_.idle_power_w +
                            (healthy_->busy_power_w(index) - params_.idle_power_w) * (sm / params_.sm_busy) * clock));
  g->set_clock_throttle_reasons(reasons);
  g->set_xid(effects_.last_xid(host, gpu, at));
  set_gpu_health(host, gpu, busy, at, g);
  return r;
}

void HardwareSampler::set_gpu_health(int host, int gpu, bool busy, sim::Nanos at, telemetry::GpuSample* g) {
  g->set_mem_clock_mhz(params_.memory_clock_mhz);
  const double used = busy ? std::round(params_.framebuffer_mib * params_.framebuffer_in_use) : 0.0;
  g->set_fb_used_mib(used);
  g->set_fb_free_mib(std::round(params_.framebuffer_mib) - used);
  if (!effects_.any_gpu_errors()) return;
  const GpuErrorEvent e = effects_.gpu_errors(host, gpu, at - period_, at);
  g->set_row_remap_failure(e.row_remap_failure);
  g->set_ecc_sbe(e.ecc_sbe);
  g->set_ecc_dbe(e.ecc_dbe);
  g->set_retired_pages_sbe(e.retired_pages_sbe);
  g->set_retired_pages_dbe(e.retired_pages_dbe);
  g->set_remapped_rows_correctable(e.remapped_rows_correctable);
  g->set_remapped_rows_uncorrectable(e.remapped_rows_uncorrectable);
  g->set_nvlink_crc_flit_errors(e.nvlink_crc_flit_errors);
  g->set_nvlink_crc_data_errors(e.nvlink_crc_data_errors);
  g->set_nvlink_replay_errors(e.nvlink_replay_errors);
  g->set_nvlink_recovery_errors(e.nvlink_recovery_errors);
  g->set_pcie_replays(e.pcie_replays);
  // The counts are this period's: the next sample counts afresh.
  if (e.counts_anything()) settling_ = true;
}

telemetry::Record HardwareSampler::cpu_sample(int host, sim::Nanos at, const SampleInputs& inputs) const {
  bool busy = false;
  for (int g = 0; g < topology_.shape().gpus_per_host && !busy; ++g) busy = inputs.gpu_busy(host, g);
  double utilization = busy ? params_.cpu_busy : params_.cpu_idle;
  // A contended CPU is saturated: processor sharing slows tenants only then.
  if (effects_.cpu_factor(host, at) < 1.0) utilization = params_.cpu_contended;
  telemetry::Record r;
  auto* c = r.mutable_cpu();
  c->set_cpu(names_[static_cast<std::size_t>(topology_.hosts() * topology_.shape().gpus_per_host + host)]);
  c->set_time_ns(at);
  c->set_utilization(utilization);
  return r;
}

telemetry::Record HardwareSampler::nic_sample(sim::EndpointId endpoint, sim::Nanos at,
                                              const SampleInputs& inputs) const {
  const double seconds = sim::to_seconds(period_);
  const bool flowing = inputs.traffic_flowing;
  // Bytes per second toward the leaf (upward) or toward the RNIC.
  const auto rate = [&](bool upward) {
    if (inputs.host_link_bytes_per_second) return inputs.host_link_bytes_per_second(endpoint, upward);
    if (!flowing) return 0.0;
    return upward ? tx_rate(endpoint) : rx_rate(endpoint);
  };
  const double tx = std::round(rate(true) * seconds);
  const double rx = std::round(rate(false) * seconds);
  telemetry::Record r;
  auto* n = r.mutable_nic();
  n->set_nic(names_[static_cast<std::size_t>(topology_.hosts() * (topology_.shape().gpus_per_host + 1) + endpoint)]);
  n->set_time_ns(at);
  n->set_tx_bytes(static_cast<std::uint64_t>(tx));
  n->set_rx_bytes(static_cast<std::uint64_t>(rx));
  n->set_tx_packets(static_cast<std::uint64_t>(std::ceil(tx / params_.mtu_bytes)));
  n->set_rx_packets(static_cast<std::uint64_t>(std::ceil(rx / params_.mtu_bytes)));
  if (flowing && inputs.cnp_per_second)
    n->set_cnp(static_cast<std::uint64_t>(std::llround(inputs.cnp_per_second(endpoint) * seconds)));
  n->set_link_up(inputs.link_up(endpoint));
  return r;
}

bool HardwareSampler::quiet(sim::Nanos at, const SampleInputs& inputs) const {
  return previous_ >= 0 && at - previous_ == period_ && !settling_ && !traffic_changed_ &&
         inputs.version == last_version_ && inputs.traffic_flowing == last_flowing_ &&
         healthy_->step_of(previous_) == healthy_->step_of(at);
}

void HardwareSampler::sample(sim::Nanos at, const SampleInputs& inputs, telemetry::Batch* out) {
  if (quiet(at, inputs)) {
    const std::vector<int> changed = effects_.hosts_changed(previous_, at);
    if (changed.empty())
      repeat_all(at);
    else
      resample_hosts(changed, at, inputs, out);
    previous_ = at;
    if (at % params_.hold == 0) {
      fold_quiet_span();
      close_all();
    }
    emit_closed(out);
    return;
  }
  fold_quiet_span();
  settling_ = false;
  traffic_changed_ = false;
  last_version_ = inputs.version;
  last_flowing_ = inputs.traffic_flowing;
  if (previous_ >= 0) {
    period_ = at - previous_;
    // A block never straddles a telemetry-effect edge of its host, so a
    // clock skew starting there applies to whole blocks.
    for (int host : effects_.hosts_changed(previous_, at)) close_host(host);
  }
  const int gpus = topology_.shape().gpus_per_host;
  std::size_t index = 0;
  for (int h = 0; h < topology_.hosts(); ++h)
    for (int g = 0; g < gpus; ++g) offer_gpu(index++, h, g, at, inputs, out);
  for (int h = 0; h < topology_.hosts(); ++h) offer(index++, cpu_sample(h, at, inputs), at, out);
  for (sim::EndpointId e = 0; e < topology_.endpoints(); ++e) offer(index++, nic_sample(e, at, inputs), at, out);
  previous_ = at;
  if (at % params_.hold == 0) close_all();
  emit_closed(out);
}

// Nothing any sample reads has changed: every component repeats.
void HardwareSampler::repeat_all(sim::Nanos at) {
  if (quiet_from_ < 0) quiet_from_ = at;
  quiet_until_ = at;
  represented_samples_ += components_.size();
}

// Only some hosts' effects changed (a GPU's XID, a throttle's start): their
// components are sampled afresh, every other one repeats. A healthy fleet's
// month logs tens of thousands of XIDs, each on one GPU.
void HardwareSampler::resample_hosts(const std::vector<int>& hosts, sim::Nanos at, const SampleInputs& inputs,
                                     telemetry::Batch* out) {
  fold_quiet_span();
  std::vector<bool> fresh(components_.size(), false);
  for (int host : hosts) {
    close_host(host);
    for (std::size_t index : components_of(host)) fresh[index] = true;
  }
  for (std::size_t i = 0; i < components_.size(); ++i) {
    if (fresh[i]) continue;
    ++represented_samples_;
    Component& c = components_[i];
    if (!c.has_last) continue;  // a silent GPU repeats nothing
    if (c.repeat_from < 0) c.repeat_from = at;
    c.repeat_until = at;
  }
  const int gpus = topology_.shape().gpus_per_host;
  for (int host : hosts) {
    const std::vector<std::size_t> indices = components_of(host);
    std::size_t k = 0;
    for (int g = 0; g < gpus; ++g) offer_gpu(indices[k++], host, g, at, inputs, out);
    offer(indices[k++], cpu_sample(host, at, inputs), at, out);
    for (int n = 0; n < topology_.shape().rnics_per_host; ++n)
      offer(indices[k++], nic_sample(topology_.endpoint(host, n), at, inputs), at, out);
  }
}

// A host's GPUs, then its CPU, then its RNICs, as indices of components_.
std::vector<std::size_t> HardwareSampler::components_of(int host) const {
  const auto gpus = static_cast<std::size_t>(topology_.shape().gpus_per_host);
  const auto hosts = static_cast<std::size_t>(topology_.hosts());
  const auto h = static_cast<std::size_t>(host);
  std::vector<std::size_t> out;
  for (std::size_t g = 0; g < gpus; ++g) out.push_back(h * gpus + g);
  out.push_back(hosts * gpus + h);
  for (int n = 0; n < topology_.shape().rnics_per_host; ++n)
    out.push_back(hosts * (gpus + 1) + static_cast<std::size_t>(topology_.endpoint(host, n)));
  return out;
}

void HardwareSampler::close_host(int host) {
  for (std::size_t index : components_of(host)) close(index, true);
}

void HardwareSampler::fold_quiet_span() {
  if (quiet_from_ < 0) return;
  for (Component& c : components_) {
    if (!c.has_last) continue;  // a silent GPU repeats nothing
    if (c.repeat_from < 0) c.repeat_from = quiet_from_;
    c.repeat_until = quiet_until_;
  }
  quiet_from_ = quiet_until_ = -1;
}

void HardwareSampler::flush(telemetry::Batch* out) {
  fold_quiet_span();
  close_all();
  emit_closed(out);
}

void HardwareSampler::offer(std::size_t index, telemetry::Record sample, sim::Nanos at, telemetry::Batch* out) {
  Component& c = components_[index];
  ++represented_samples_;
  if (c.has_last && same_values(c.last, sample)) {
    if (c.repeat_from < 0) c.repeat_from = at;
    c.repeat_until = at;
    return;
  }
  close(index, true);
  c.last = std::move(sample);
  c.has_last = true;
  published_bytes_ += c.last.ByteSizeLong();
  *out->add_records() = c.last;
}

void HardwareSampler::offer_gpu(std::size_t index, int host, int gpu, sim::Nanos at, const SampleInputs& inputs,
                                telemetry::Batch* out) {
  // A silent GPU's state (its temperature) moves on unseen.
  telemetry::Record sample = gpu_sample(host, gpu, at, inputs);
  if (effects_.any_gpu_silence() && effects_.gpu_silent(host, gpu, at))
    silence(index);
  else
    offer(index, std::move(sample), at, out);
}

// A GPU that stopped answering: its last value's repeats end here and the
// next sample it gives is published afresh.
void HardwareSampler::silence(std::size_t index) {
  close(index, true);
  components_[index].has_last = false;
}

void HardwareSampler::close(std::size_t index, bool keep_value) {
  Component& c = components_[index];
  if (c.repeat_from < 0) return;
  ClosedRepeat closed{index, c.repeat_from, nullptr};
  if (keep_value) closed.value = std::make_unique<telemetry::Record>(c.last);
  closed_[{c.repeat_from, c.repeat_until}].push_back(std::move(closed));
  c.repeat_from = c.repeat_until = -1;
}

// Every component's value stays put until the blocks are emitted.
void HardwareSampler::close_all() {
  for (std::size_t i = 0; i < components_.size(); ++i) close(i);
}

void HardwareSampler::emit_closed(telemetry::Batch* out) {
  for (auto& [span, repeats] : closed_) {
    telemetry::SteadySamples* block = out->add_steady_samples();
    block->set_from_ns(span.first);
    block->set_until_ns(span.second);
    block->set_period_ns(period_);
    block->mutable_samples()->Reserve(static_cast<int>(repeats.size()));
    for (const ClosedRepeat& r : repeats) {
      telemetry::Record* sample = block->add_samples();
      *sample = r.value ? *r.value : components_[r.component].last;
      set_time(*sample, r.from);
    }
    published_bytes_ += block->ByteSizeLong();
  }
  closed_.clear();
}

}  // namespace gauntlet::models
