#include "harness/runner/hybrid_telemetry.hpp"

#include <map>
#include <string>
#include <utility>

namespace gauntlet::harness {
namespace {

bool counts_anything(const telemetry::PortCounters& p) {
  return p.tx_packets() > 0 || p.crc_errors() > 0 || p.drops() > 0 || p.pause_sent() > 0 || p.pause_received() > 0 ||
         p.ecn_marked() > 0;
}

bool counts_anything(const telemetry::RnicTransportCounters& t) {
  return t.retransmitted_packets() > 0 || t.naks_sent() > 0 || t.naks_received() > 0 || t.out_of_sequence() > 0 ||
         t.cnp_sent() > 0 || t.cnp_handled() > 0 || t.timeouts() > 0 || t.qp_errors() > 0;
}

}  // namespace

void merge_packet_counts(const telemetry::Batch& packets, telemetry::Batch* out) {
  // The model's plain records, by port direction or RNIC and time.
  std::map<std::pair<std::string, std::int64_t>, telemetry::PortCounters*> ports;
  std::map<std::pair<std::string, std::int64_t>, telemetry::RnicTransportCounters*> rnics;
  for (telemetry::Record& r : *out->mutable_records()) {
    if (r.has_port())
      ports[{r.port().link() + (r.port().upward() ? "+" : "-"), r.port().time_ns()}] = r.mutable_port();
    else if (r.has_transport())
      rnics[{r.transport().nic(), r.transport().time_ns()}] = r.mutable_transport();
  }
  for (const telemetry::Record& r : packets.records()) {
    // A batch's all-zero record says it fell quiet, which the model knows.
    if (r.has_port() && counts_anything(r.port())) {
      const telemetry::PortCounters& p = r.port();
      auto it = ports.find({p.link() + (p.upward() ? "+" : "-"), p.time_ns()});
      if (it == ports.end()) {
        *out->add_records() = r;
        continue;
      }
      telemetry::PortCounters& model = *it->second;
      model.set_crc_errors(p.crc_errors());
      model.set_drops(p.drops());
      model.set_pause_sent(p.pause_sent());
      model.set_pause_received(p.pause_received());
      model.set_ecn_marked(p.ecn_marked());
    } else if (r.has_transport() && counts_anything(r.transport())) {
      const telemetry::RnicTransportCounters& t = r.transport();
      auto it = rnics.find({t.nic(), t.time_ns()});
      if (it == rnics.end()) {
        *out->add_records() = r;
        continue;
      }
      telemetry::RnicTransportCounters& model = *it->second;
      model.set_retransmitted_packets(t.retransmitted_packets());
      model.set_naks_sent(t.naks_sent());
      model.set_naks_received(t.naks_received());
      model.set_out_of_sequence(t.out_of_sequence());
      model.set_cnp_sent(t.cnp_sent());
      model.set_cnp_handled(t.cnp_handled());
      model.set_timeouts(t.timeouts());
      model.set_qp_errors(t.qp_errors());
    }
  }
}

}  // namespace gauntlet::harness
