#include "models/host/host_clock.hpp"

#include <string>

#include "sim/component_id.hpp"

namespace gauntlet::models {
namespace {

class Clocks {
 public:
  explicit Clocks(const TelemetryEffects& effects) : effects_(effects) {}
  // `at` as the clock of the host `component` belongs to reads it.
  sim::Nanos read(const std::string& component, sim::Nanos at) const {
    const auto id = sim::ComponentId::parse(component);
    if (!id || id->host < 0 || at == 0) return at;  // 0: not stamped (a hung collective's end)
    return at + effects_.clock_offset(id->host, at);
  }
  // Offset the same for every timestamp: the one at `reference`.
  sim::Nanos offset(const std::string& component, sim::Nanos reference) const {
    const auto id = sim::ComponentId::parse(component);
    return id && id->host >= 0 ? effects_.clock_offset(id->host, reference) : 0;
  }

 private:
  const TelemetryEffects& effects_;
};

void restamp(const Clocks& clocks, telemetry::Record& r) {
  switch (r.body_case()) {
    case telemetry::Record::kIteration: {
      auto* it = r.mutable_iteration();
      it->set_start_ns(clocks.read(it->worker(), it->start_ns()));
      it->set_end_ns(clocks.read(it->worker(), it->end_ns()));
      break;
    }
    case telemetry::Record::kCollective: {
      auto* c = r.mutable_collective();
      c->set_start_ns(clocks.read(c->worker(), c->start_ns()));
      c->set_end_ns(clocks.read(c->worker(), c->end_ns()));
      break;
    }
    case telemetry::Record::kGpu:
      r.mutable_gpu()->set_time_ns(clocks.read(r.gpu().gpu(), r.gpu().time_ns()));
      break;
    case telemetry::Record::kCpu:
      r.mutable_cpu()->set_time_ns(clocks.read(r.cpu().cpu(), r.cpu().time_ns()));
      break;
    case telemetry::Record::kNic:
      r.mutable_nic()->set_time_ns(clocks.read(r.nic().nic(), r.nic().time_ns()));
      break;
    case telemetry::Record::kHeartbeat:
      r.mutable_heartbeat()->set_time_ns(clocks.read(r.heartbeat().agent(), r.heartbeat().time_ns()));
      break;
    case telemetry::Record::kProbe:
      r.mutable_probe()->set_sent_ns(clocks.read(r.probe().src(), r.probe().sent_ns()));
      break;
    case telemetry::Record::kFlow: {
      auto* f = r.mutable_flow();  // the exporting RNIC's host stamps it
      f->set_start_ns(clocks.read(f->exporter(), f->start_ns()));
      f->set_end_ns(clocks.read(f->exporter(), f->end_ns()));
      break;
    }
    case telemetry::Record::kProfile: {
      auto* p = r.mutable_profile();
      p->set_window_start_ns(clocks.read(p->worker(), p->window_start_ns()));
      p->set_window_end_ns(clocks.read(p->worker(), p->window_end_ns()));
      break;
    }
    default:
      break;  // switch ports, job events, benchmarks: not stamped by a host
  }
}

std::string stamping_component(const telemetry::Record& r) {
  if (r.has_gpu()) return r.gpu().gpu();
  if (r.has_cpu()) return r.cpu().cpu();
  if (r.has_nic()) return r.nic().nic();
  return {};
}

}  // namespace

void apply_host_clocks(const TelemetryEffects& effects, telemetry::Batch* batch) {
  const Clocks clocks(effects);
  for (auto& r : *batch->mutable_records()) restamp(clocks, r);
  for (auto& run : *batch->mutable_steady())
    for (auto& r : *run.mutable_records()) restamp(clocks, r);
  for (auto& block : *batch->mutable_steady_samples())
    for (auto& r : *block.mutable_samples()) {
      const sim::Nanos shift = clocks.offset(stamping_component(r), block.from_ns());
      if (r.has_gpu()) r.mutable_gpu()->set_time_ns(r.gpu().time_ns() + shift);
      if (r.has_cpu()) r.mutable_cpu()->set_time_ns(r.cpu().time_ns() + shift);
      if (r.has_nic()) r.mutable_nic()->set_time_ns(r.nic().time_ns() + shift);
    }
}

}  // namespace gauntlet::models
