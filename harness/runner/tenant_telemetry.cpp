#include "harness/runner/tenant_telemetry.hpp"

#include <algorithm>
#include <string>

#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

// The host a sample belongs to, or -1 for the shared fabric and for records
// that are the tenant's own whatever they name (its job's iterations and
// collectives, its detectors' probes, profiles and benchmarks).
int sampled_host(const telemetry::Record& r) {
  const std::string* component = nullptr;
  switch (r.body_case()) {
    case telemetry::Record::kGpu:
      component = &r.gpu().gpu();
      break;
    case telemetry::Record::kNic:
      component = &r.nic().nic();
      break;
    case telemetry::Record::kHeartbeat:
      component = &r.heartbeat().agent();
      break;
    case telemetry::Record::kPort:
      component = &r.port().link();
      break;  // a host link names its host
    case telemetry::Record::kCpu:
      component = &r.cpu().cpu();
      break;
    case telemetry::Record::kFlowTable:
      component = &r.flow_table().table();
      break;
    case telemetry::Record::kTransport:
      component = &r.transport().nic();
      break;
    case telemetry::Record::kFlow:
      component = &r.flow().exporter();
      break;
    default:
      return -1;
  }
  const auto id = sim::ComponentId::parse(*component);
  return id ? id->host : -1;
}

template <typename Repeated, typename HostOf>
void keep_visible(Repeated& items, const std::set<int>& hosts, HostOf host_of) {
  items.erase(std::remove_if(items.begin(), items.end(),
                             [&](const auto& item) {
                               const int host = host_of(item);
                               return host >= 0 && !hosts.count(host);
                             }),
              items.end());
}

}  // namespace

void keep_tenant_telemetry(telemetry::Batch& batch, const std::set<int>& hosts) {
  keep_visible(*batch.mutable_records(), hosts, sampled_host);
  for (telemetry::SteadySamples& block : *batch.mutable_steady_samples())
    keep_visible(*block.mutable_samples(), hosts, sampled_host);
  auto& blocks = *batch.mutable_steady_samples();
  blocks.erase(std::remove_if(blocks.begin(), blocks.end(),
                              [](const telemetry::SteadySamples& block) { return block.samples().empty(); }),
               blocks.end());
  for (telemetry::FlowTableRun& run : *batch.mutable_flow_table_runs())
    keep_visible(*run.mutable_bursts(), hosts, [](const telemetry::FlowBurst& burst) {
      const auto id = sim::ComponentId::parse(burst.table());
      return id ? id->host : -1;
    });
}

}  // namespace gauntlet::harness
