#include "harness/soak/scenario_generator.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include "sim/component_id.hpp"
#include "sim/rng.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness::soak {
namespace {

using sim::ComponentKind;

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  int between(int low, int high) {
    return low + static_cast<int>(rng_.below(static_cast<std::uint64_t>(high - low + 1)));
  }
  bool chance(double p) { return rng_.uniform() < p; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[rng_.below(items.size())];
  }

 private:
  sim::Rng rng_;
};

struct Shape {
  sim::ClusterShape cluster;
  int spare_hosts = 0;
};

Shape draw_shape(Draw& draw, bool needs_spare) {
  Shape s;
  sim::ClusterShape& c = s.cluster;
  c.rnics_per_host = draw.pick(std::vector<int>{1, 2, 4});
  c.gpus_per_host = c.rnics_per_host * draw.pick(std::vector<int>{1, 2});
  c.rail_optimized = draw.chance(0.5);
  const int pods = draw.between(1, 2);
  c.leaves = c.rail_optimized ? c.rnics_per_host * pods : draw.between(1, 4);
  c.spines = draw.between(1, 3);
  s.spare_hosts = needs_spare || draw.chance(0.3) ? 1 : 0;
  c.hosts = pods * draw.between(2, 4) + s.spare_hosts;
  c.host_link_gbps = draw.pick(std::vector<double>{100, 200, 400});
  c.fabric_link_gbps = draw.pick(std::vector<double>{100, 400});
  c.link_latency = draw.between(1, 5) * sim::kMicrosecond;
  return s;
}

std::vector<std::string> names_of(const sim::Topology& topology, ComponentKind kind) {
  std::vector<std::string> names;
  for (std::string& name : topology.component_names())
    if (const auto id = sim::ComponentId::parse(name); id && id->kind == kind) names.push_back(std::move(name));
  return names;
}

struct FaultDraw {
  std::string target;    // empty for an untargeted type
  std::string params;    // ", key: value" for each parameter
  bool possible = true;  // false: the cluster has nothing this type could target
};

FaultDraw draw_fault(Draw& draw, const std::string& type, const sim::Topology& topology, int job_hosts) {
  const auto any = [&](ComponentKind kind) { return names_of(topology, kind); };
  const auto on_job = [&](ComponentKind kind) {
    std::vector<std::string> names = names_of(topology, kind);
    std::erase_if(names, [&](const std::string& n) { return sim::ComponentId::parse(n)->host >= job_hosts; });
    return names;
  };
  const auto words = [&](std::vector<std::string> choices) { return draw.pick(choices); };
  FaultDraw f;
  std::vector<std::string> targets;
  if (type == "link_loss") {
    targets = any(draw.chance(0.5) ? ComponentKind::fabric_link : ComponentKind::host_link);
    f.params = ", rate: " + words({"0.001", "0.01", "0.05", "0.2"});
  } else if (type == "port_flap") {
    targets = on_job(ComponentKind::host_link);
    f.params = ", period: " + std::to_string(draw.between(5, 30)) + "s, down: " + words({"200ms", "1s", "3s"});
  } else if (type == "stale_flow_table") {
    targets = on_job(ComponentKind::flow_table);
    f.params = ", extra_latency: " + std::to_string(draw.between(5, 120)) + "us, cap_gbps: " + words({"50", "100"}) +
               ", loss: 0.0005";
  } else if (type == "gpu_throttle") {
    targets = on_job(ComponentKind::gpu);
    f.params = ", slowdown: " + words({"0.1", "0.3", "0.5"});
  } else if (type == "nic_down") {
    if (topology.shape().rnics_per_host > 1) targets = on_job(ComponentKind::nic);  // it needs a fallback RNIC
  } else if (type == "congestion") {
    targets = any(ComponentKind::spine);
    f.params = ", load: " + words({"0.3", "0.5", "0.8"});
  } else if (type == "cpu_contention") {
    targets = on_job(ComponentKind::cpu);
    f.params = ", slowdown: " + words({"0.1", "0.2"});
  } else if (type == "gpu_fail") {
    targets = on_job(ComponentKind::gpu);
  } else if (type == "node_crash") {
    targets = on_job(ComponentKind::host);
  } else if (type == "agent_hang") {
    targets = on_job(ComponentKind::agent);
  } else if (type == "clock_skew") {
    targets = on_job(ComponentKind::host);
    f.params = ", offset: " + words({"5ms", "-20ms", "50ms"});
  } else {
    return f;  // reconfigure: no target
  }
  if (targets.empty())
    f.possible = false;
  else
    f.target = draw.pick(targets);
  return f;
}

// A tenant on hosts [first, end): its own parallelism, collectives and
// timing; the neighbour sometimes sends an expert-parallel all-to-all.
std::string tenant_yaml(Draw& draw, const std::string& name, int first, int end, const sim::ClusterShape& c) {
  const int gpus = (end - first) * c.gpus_per_host;
  const int tp = draw.chance(0.5) ? c.gpus_per_host : 1;
  const int dp = gpus / tp;
  // A small expert-parallel group: an all-to-all over dozens of ranks,
  // simulated every iteration, costs a case tens of seconds.
  const int ep = dp % 4 == 0 ? 4 : dp % 2 == 0 ? 2 : 1;
  const bool alltoall = name == "neighbour" && ep > 1 && draw.chance(0.5);
  std::ostringstream y;
  y << "  - name: " << name << "\n    hosts: [";
  for (int h = first; h < end; ++h) y << (h > first ? ", " : "") << "h" << h;
  y << "]\n    gpus: " << gpus << "\n    parallelism: {tp: " << tp << ", dp: " << dp << ", ep: " << (alltoall ? ep : 1)
    << "}\n"
    << "    compute_per_iteration: " << draw.between(10, 30) * 100 << "ms\n"
    << "    gradient_bytes: " << draw.between(1, 20) * 100 << "MB\n";
  if (alltoall) y << "    alltoall_bytes: " << draw.between(1, 10) * 100 << "MB\n";
  y << "    checkpoint_interval: " << draw.between(1, 5) << "m\n"
    << "    restart_cost: " << draw.between(1, 6) * 10 << "s\n";
  return y.str();
}

}  // namespace

std::string random_scenario_yaml(std::uint64_t seed, std::uint64_t case_number) {
  Draw draw(sim::mix_seed(seed, "scenario-fuzz", case_number));
  const std::vector<std::string> policies = {"none", "none", "isolate-restart", "falcon-ladder"};
  const std::string mitigation = draw.pick(policies);
  const Shape shape = draw_shape(draw, mitigation != "none");
  const sim::ClusterShape& c = shape.cluster;
  const sim::Topology topology(c);
  const int job_hosts = c.hosts - shape.spare_hosts;
  const int gpus = job_hosts * c.gpus_per_host;
  const int tp = draw.chance(0.5) ? c.gpus_per_host : 1;
  const int pp = (gpus / tp) % 2 == 0 && draw.chance(0.3) ? 2 : 1;
  const int dp = gpus / (tp * pp);
  const int duration_s = 60 * draw.between(2, 6);

  std::ostringstream y;
  y << "name: fuzz-" << seed << "-" << case_number << "\n"
    << "seed: " << draw.between(1, 1000) << "\n"
    << "duration: " << duration_s << "s\n"
    << "cluster:\n"
    << "  spines: " << c.spines << "\n  leaves: " << c.leaves << "\n  hosts: " << c.hosts
    << "\n  gpus_per_host: " << c.gpus_per_host << "\n  rnics_per_host: " << c.rnics_per_host
    << "\n  rail_optimized: " << (c.rail_optimized ? "true" : "false") << "\n  host_link_gbps: " << c.host_link_gbps
    << "\n  fabric_link_gbps: " << c.fabric_link_gbps << "\n  link_latency: " << c.link_latency / sim::kMicrosecond
    << "us\n"
    << "job:\n  name: fuzzjob\n  gpus: " << gpus << "\n  parallelism: {tp: " << tp << ", pp: " << pp << ", dp: " << dp
    << ", ep: 1}\n"
    << "  compute_per_iteration: " << draw.between(2, 20) * 100 << "ms\n"
    << "  gradient_bytes: " << draw.between(1, 20) * 100 << "MB\n"
    << "  checkpoint_interval: " << draw.between(1, 5) << "m\n"
    << "  restart_cost: " << draw.between(1, 6) * 10 << "s\n";
  if (pp > 1) y << "  activation_bytes: " << draw.between(1, 50) << "MB\n";
  if (shape.spare_hosts > 0) y << "  spare_hosts: " << shape.spare_hosts << "\n";
  // Some cases split the hosts between two tenants instead; drawn from a
  // stream of their own, so the single-job cases stay as they were.
  Draw tenant_draw(sim::mix_seed(seed, "scenario-fuzz-tenants", case_number));
  if (mitigation == "none" && job_hosts >= 4 && tenant_draw.chance(0.25)) {  // two hosts each: both use the fabric
    std::string text = y.str();
    text.erase(text.find("job:\n"));
    y.str(text);
    y.seekp(0, std::ios_base::end);
    y << "jobs:\n"
      << tenant_yaml(tenant_draw, "victim", 0, job_hosts / 2, c)
      << tenant_yaml(tenant_draw, "neighbour", job_hosts / 2, job_hosts, c);
  }

  // Each target takes at most one fault, so no two overlap on one component
  // and none follows a fail-stop on its host by accident.
  const std::vector<std::string> types = {"link_loss",  "port_flap",  "stale_flow_table", "gpu_throttle",
                                          "nic_down",   "congestion", "cpu_contention",   "gpu_fail",
                                          "node_crash", "agent_hang", "clock_skew",       "reconfigure"};
  std::set<std::string> targets_used;
  std::set<int> hosts_used;
  const int faults = draw.between(0, 3);
  y << "faults:" << (faults == 0 ? " []" : "") << "\n";
  for (int i = 0; i < faults; ++i) {
    const std::string& type = draw.pick(types);
    const FaultDraw fault = draw_fault(draw, type, topology, job_hosts);
    if (!fault.possible) continue;
    const auto id = sim::ComponentId::parse(fault.target);
    const int host = id ? id->host : -1;
    if (!fault.target.empty() && (targets_used.contains(fault.target) || (host >= 0 && hosts_used.contains(host))))
      continue;
    targets_used.insert(fault.target);
    if (host >= 0) hosts_used.insert(host);
    const int at = draw.between(20, duration_s - 40);
    const int length = std::min(draw.between(15, 120), duration_s - at - 5);
    y << "  - {type: " << type << (fault.target.empty() ? "" : ", target: " + fault.target) << fault.params
      << ", at: " << at << "s";
    if (type != "reconfigure") y << ", duration: " << length << "s";
    y << "}\n";
  }

  const std::vector<std::string> all_detectors = {"timeout", "falcon", "c4d", "eroica", "skeleton", "pingmesh"};
  std::vector<std::string> detectors;
  for (const std::string& d : all_detectors)
    if (draw.chance(0.4)) detectors.push_back(d);
  if (detectors.empty()) detectors.push_back(draw.pick(all_detectors));
  y << "detectors: [";
  for (std::size_t i = 0; i < detectors.size(); ++i) y << (i ? ", " : "") << detectors[i];
  y << "]\nmitigation: " << mitigation << "\n";
  return y.str();
}

}  // namespace gauntlet::harness::soak
