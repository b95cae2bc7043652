#include "harness/runner/containers_csv.hpp"

#include <cstdio>
#include <sstream>

#include "sim/component_id.hpp"

namespace gauntlet::harness {

std::string containers_csv(const models::ContainerSet& containers, const sim::Topology& topology) {
  std::ostringstream out;
  out << "id,host,rnics,start_s,stop_s,reason\n";
  char seconds[48];
  for (const models::Container& c : containers.lifetimes()) {
    out << c.id << ',' << sim::ComponentId::make_host(c.host).str() << ',';
    for (std::size_t i = 0; i < c.vfs.size(); ++i)
      out << (i ? " " : "")
          << sim::ComponentId::make_nic(topology.host_of(c.vfs[i].rnic), topology.nic_of(c.vfs[i].rnic)).str();
    std::snprintf(seconds, sizeof seconds, "%.9f", sim::to_seconds(c.started_at));
    out << ',' << seconds << ',';
    if (c.stopped_at) {
      std::snprintf(seconds, sizeof seconds, "%.9f", sim::to_seconds(*c.stopped_at));
      out << seconds << ',' << models::stop_reason_name(*c.stop_reason);
    } else {
      out << ',';
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace gauntlet::harness
