#include "harness/soak/scenario_generator.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "sim/component_id.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
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

// The engine a case runs on and the scale it affords. The packet engine, and
// the hybrid's batches while a packet fault lasts, simulate every frame, a
// congestion fault's background load included: their cases move kilobytes
// per step over seconds on a small cluster of slow links, with faults of
// hundreds of milliseconds, where flow-level cases move hundreds of
// megabytes over minutes; so each case stays within seconds.
struct Scale {
  std::string engine = "flow";
  int duration_s = 0;
  int compute_ms_low = 200, compute_ms_high = 2000, compute_ms_step = 100;
  std::string gradient_unit = "MB";
  int gradient_low = 100, gradient_high = 2000, gradient_step = 100;
  std::string checkpoint_unit = "m";
  int checkpoint_low = 1, checkpoint_high = 5;
  int restart_s_low = 10, restart_s_high = 60;
  // Faults start in [fault_at_low, duration - fault_margin] and end at least
  // fault_tail before the run does, all in fault_unit.
  std::string fault_unit = "s";
  int fault_at_low = 20, fault_margin = 40, fault_tail = 5, fault_length_low = 15, fault_length_high = 120;

  int scrape_s = 0;  // 0: the default monitoring.scrape_interval

  bool packets() const { return engine != "flow"; }
  sim::Nanos unit() const { return fault_unit == "s" ? sim::kSecond : sim::kMillisecond; }
  int duration_units() const { return duration_s * static_cast<int>(sim::kSecond / unit()); }
};

Scale draw_scale(Draw& draw) {
  Scale s;
  const int roll = draw.between(0, 9);
  if (roll < 6) {
    s.duration_s = 60 * draw.between(2, 6);
    return s;
  }
  s.engine = roll < 8 ? "packet" : "hybrid";
  s.duration_s = draw.between(6, 20);
  // Prometheus's default minute between scrapes is longer than these runs:
  // most scrape every few seconds, so that their bytes are balanced, and
  // some keep a scrape longer than the run (the check is skipped then).
  s.scrape_s = draw.pick(std::vector<int>{5, 5, 10, 30});
  s.compute_ms_low = 50, s.compute_ms_high = 200, s.compute_ms_step = 10;
  s.gradient_unit = "KB", s.gradient_low = 64, s.gradient_high = 512, s.gradient_step = 64;
  s.checkpoint_unit = "s", s.checkpoint_low = 3, s.checkpoint_high = 8;
  s.restart_s_low = 1, s.restart_s_high = 3;
  s.fault_unit = "ms";
  s.fault_at_low = 1000, s.fault_margin = 3000, s.fault_tail = 1000, s.fault_length_low = 100,
  s.fault_length_high = 500;
  return s;
}

struct Shape {
  sim::ClusterShape cluster;
  int spare_hosts = 0;
};

// Packet-level cases keep to one pod of a few hosts, one or two RNICs each,
// on 10 or 25 Gb/s links: a congested leaf's background load is then a
// million frames or so, not billions.
Shape draw_shape(Draw& draw, bool needs_spare, const Scale& scale) {
  Shape s;
  sim::ClusterShape& c = s.cluster;
  const bool small = scale.packets();
  c.rnics_per_host = draw.pick(small ? std::vector<int>{1, 2} : std::vector<int>{1, 2, 4});
  c.gpus_per_host = c.rnics_per_host * draw.pick(std::vector<int>{1, 2});
  c.rail_optimized = draw.chance(0.5);
  const int pods = small ? 1 : draw.between(1, 2);
  c.leaves = c.rail_optimized ? c.rnics_per_host * pods : draw.between(1, small ? 2 : 4);
  c.spines = draw.between(1, small ? 2 : 3);
  s.spare_hosts = needs_spare || draw.chance(0.3) ? 1 : 0;
  c.hosts = pods * draw.between(2, 4) + s.spare_hosts;
  c.host_link_gbps = draw.pick(small ? std::vector<double>{10, 25} : std::vector<double>{100, 200, 400});
  c.fabric_link_gbps = draw.pick(small ? std::vector<double>{10, 25} : std::vector<double>{100, 400});
  c.link_latency = draw.between(1, 5) * sim::kMicrosecond;
  return s;
}

int stepped(Draw& draw, int low, int high, int step) { return draw.between(low / step, high / step) * step; }

std::vector<std::string> names_of(const sim::Topology& topology, ComponentKind kind) {
  std::vector<std::string> names;
  for (std::string& name : topology.component_names())
    if (const auto id = sim::ComponentId::parse(name); id && id->kind == kind) names.push_back(std::move(name));
  return names;
}

// A fault drawn from a catalog entry: a target of one of the kinds its type
// takes (on the job's hosts, for host components), a sample of each required
// parameter and of some optional ones, checked by the type's own rules.
struct FaultDraw {
  std::string target;  // empty for an untargeted type
  std::string params;  // ", key: value" for each parameter
  bool possible = false;
};

void set_sample(const injectors::ParamInfo& p, const std::string& value, injectors::FaultSpec& spec) {
  if (p.kind == injectors::ParamKind::duration || p.kind == injectors::ParamKind::signed_duration)
    spec.params.set_duration(p.name, sim::parse_duration(value).value_or(0));
  else if (p.kind == injectors::ParamKind::fraction || p.kind == injectors::ParamKind::positive_number)
    spec.params.set_number(p.name, std::stod(value));
  else if (p.kind == injectors::ParamKind::choice)
    spec.params.set_text(p.name, value);
}

// A refused draw names the parameter at fault; a type whose default does
// not fit the case's scale (an HBM row's minutes of single-bit errors before
// a fault of a few hundred milliseconds ends) gets each of that parameter's
// samples in turn, from a drawn one, before it is given up.
bool try_other_samples(Draw& draw, const injectors::FaultTypeInfo& info, injectors::FaultSpec& spec,
                       std::map<std::string, std::string>& chosen) {
  const std::optional<injectors::ParamProblem> problem = info.check(spec);
  if (!problem) return true;
  const auto p = std::find_if(info.params.begin(), info.params.end(),
                              [&](const injectors::ParamInfo& q) { return q.name == problem->param; });
  if (p == info.params.end() || p->samples.empty()) return false;
  const int first = draw.between(0, static_cast<int>(p->samples.size()) - 1);
  for (std::size_t k = 0; k < p->samples.size(); ++k) {
    const std::string& value = p->samples[(static_cast<std::size_t>(first) + k) % p->samples.size()];
    set_sample(*p, value, spec);
    if (!info.check(spec)) {
      chosen[p->name] = value;
      return true;
    }
  }
  return false;
}

FaultDraw draw_fault(Draw& draw, const injectors::FaultTypeInfo& info, const sim::Topology& topology, int job_hosts,
                     sim::Nanos length) {
  FaultDraw f;
  injectors::FaultSpec spec;
  spec.type = info.name;
  spec.duration = length;
  if (!info.targets.empty()) {
    std::vector<std::string> targets = names_of(topology, draw.pick(info.targets));
    std::erase_if(targets, [&](const std::string& n) { return sim::ComponentId::parse(n)->host >= job_hosts; });
    if (targets.empty()) return f;
    f.target = spec.target = draw.pick(targets);
  }
  std::map<std::string, std::string> chosen;
  for (const injectors::ParamInfo& p : info.params) {
    if (p.samples.empty() || (!p.required && draw.chance(0.5))) {
      if (p.required) return f;  // a type the fuzzer cannot fill in
      continue;
    }
    chosen[p.name] = draw.pick(p.samples);
    set_sample(p, chosen[p.name], spec);
  }
  f.possible = !info.check || try_other_samples(draw, info, spec, chosen);
  for (const injectors::ParamInfo& p : info.params)  // in the catalog's order
    if (const auto it = chosen.find(p.name); it != chosen.end()) f.params += ", " + p.name + ": " + it->second;
  return f;
}

FaultWindow window_of(const Scale& scale) {
  FaultWindow w;
  w.unit = scale.fault_unit;
  w.at_low = scale.fault_at_low;
  w.at_high = scale.duration_units() - scale.fault_margin;
  w.length_low = scale.fault_length_low;
  w.length_high = scale.fault_length_high;
  w.end = scale.duration_units() - scale.fault_tail;
  return w;
}

// Each target takes at most one fault, so no two overlap on one component
// and none follows a fail-stop on its host by accident. Types the engine
// cannot act out (packet-level ones on the flow engine) are not drawn.
std::string faults_yaml(Draw& draw, const injectors::FaultCatalog& catalog, const sim::Topology& topology,
                        int job_hosts, const FaultWindow& window, bool packets, int fewest, int most) {
  std::vector<const injectors::FaultTypeInfo*> types;
  for (const injectors::FaultDescriptor& d : catalog.all())
    if (d.simulated && (packets || !d.spec.needs_packets)) types.push_back(&d.spec);
  std::set<std::string> targets_used;
  std::set<int> hosts_used;
  const int faults = draw.between(fewest, most);
  const sim::Nanos unit = window.unit == "s" ? sim::kSecond : window.unit == "m" ? sim::kMinute : sim::kMillisecond;
  std::ostringstream y;
  y << "faults:" << (faults == 0 ? " []" : "") << "\n";
  for (int i = 0; i < faults; ++i) {
    const injectors::FaultTypeInfo& info = *draw.pick(types);
    const int at = draw.between(window.at_low, window.at_high);
    const int length = std::min(draw.between(window.length_low, window.length_high), window.end - at);
    const FaultDraw fault = draw_fault(draw, info, topology, job_hosts, length * unit);
    if (!fault.possible) continue;
    const auto id = sim::ComponentId::parse(fault.target);
    const int host = id ? id->host : -1;
    if (!fault.target.empty() && (targets_used.contains(fault.target) || (host >= 0 && hosts_used.contains(host))))
      continue;
    targets_used.insert(fault.target);
    if (host >= 0) hosts_used.insert(host);
    y << "  - {type: " << info.name << (fault.target.empty() ? "" : ", target: " + fault.target) << fault.params
      << ", at: " << at << window.unit << ", duration: " << length << window.unit << "}\n";
  }
  return y.str();
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

std::string cluster_yaml(const sim::ClusterShape& c) {
  std::ostringstream y;
  y << "cluster:\n"
    << "  spines: " << c.spines << "\n  leaves: " << c.leaves << "\n  hosts: " << c.hosts
    << "\n  gpus_per_host: " << c.gpus_per_host << "\n  rnics_per_host: " << c.rnics_per_host
    << "\n  rail_optimized: " << (c.rail_optimized ? "true" : "false") << "\n  host_link_gbps: " << c.host_link_gbps
    << "\n  fabric_link_gbps: " << c.fabric_link_gbps << "\n  link_latency: " << c.link_latency / sim::kMicrosecond
    << "us\n";
  return y.str();
}

// The job on every host but the spares, its volumes at the scale's units.
std::string job_yaml(Draw& draw, const Shape& shape, const Scale& scale) {
  const sim::ClusterShape& c = shape.cluster;
  const int gpus = (c.hosts - shape.spare_hosts) * c.gpus_per_host;
  const int tp = draw.chance(0.5) ? c.gpus_per_host : 1;
  const int pp = (gpus / tp) % 2 == 0 && draw.chance(0.3) ? 2 : 1;
  const int dp = gpus / (tp * pp);
  std::ostringstream y;
  y << "job:\n  name: fuzzjob\n  gpus: " << gpus << "\n  parallelism: {tp: " << tp << ", pp: " << pp << ", dp: " << dp
    << ", ep: 1}\n"
    << "  compute_per_iteration: " << stepped(draw, scale.compute_ms_low, scale.compute_ms_high, scale.compute_ms_step)
    << "ms\n"
    << "  gradient_bytes: " << stepped(draw, scale.gradient_low, scale.gradient_high, scale.gradient_step)
    << scale.gradient_unit << "\n"
    << "  checkpoint_interval: " << draw.between(scale.checkpoint_low, scale.checkpoint_high) << scale.checkpoint_unit
    << "\n"
    << "  restart_cost: " << stepped(draw, scale.restart_s_low, scale.restart_s_high, scale.restart_s_low) << "s\n";
  if (pp > 1) y << "  activation_bytes: " << draw.between(1, 50) << scale.gradient_unit << "\n";
  if (shape.spare_hosts > 0) y << "  spare_hosts: " << shape.spare_hosts << "\n";
  return y.str();
}

std::string detectors_yaml(Draw& draw, const std::string& mitigation) {
  const std::vector<std::string> all_detectors = {"timeout", "falcon", "c4d", "eroica", "skeleton", "pingmesh"};
  std::vector<std::string> detectors;
  for (const std::string& d : all_detectors)
    if (draw.chance(0.4)) detectors.push_back(d);
  if (detectors.empty()) detectors.push_back(draw.pick(all_detectors));
  std::ostringstream y;
  y << "detectors: [";
  for (std::size_t i = 0; i < detectors.size(); ++i) y << (i ? ", " : "") << detectors[i];
  y << "]\nmitigation: " << mitigation << "\n";
  return y.str();
}

}  // namespace

std::string random_scenario_yaml(std::uint64_t seed, std::uint64_t case_number,
                                 const injectors::FaultCatalog& catalog) {
  Draw draw(sim::mix_seed(seed, "scenario-fuzz", case_number));
  const std::vector<std::string> policies = {"none", "none", "isolate-restart", "falcon-ladder"};
  const std::string mitigation = draw.pick(policies);
  Draw engine_draw(sim::mix_seed(seed, "scenario-fuzz-engine", case_number));
  const Scale scale = draw_scale(engine_draw);
  const Shape shape = draw_shape(draw, mitigation != "none", scale);
  const sim::Topology topology(shape.cluster);
  const int job_hosts = shape.cluster.hosts - shape.spare_hosts;

  std::ostringstream y;
  y << "name: fuzz-" << seed << "-" << case_number << "\n"
    << "seed: " << draw.between(1, 1000) << "\n"
    << "duration: " << scale.duration_s << "s\n";
  if (scale.packets()) y << "engine: " << scale.engine << "\n";
  if (scale.scrape_s > 0) y << "calibration:\n  monitoring.scrape_interval: " << scale.scrape_s << "s\n";
  y << cluster_yaml(shape.cluster);
  // Some flow-level cases split the hosts between two tenants instead (two
  // hosts each: both use the fabric); the hybrid takes one job only.
  Draw tenant_draw(sim::mix_seed(seed, "scenario-fuzz-tenants", case_number));
  if (!scale.packets() && mitigation == "none" && job_hosts >= 4 && tenant_draw.chance(0.25)) {
    y << "jobs:\n"
      << tenant_yaml(tenant_draw, "victim", 0, job_hosts / 2, shape.cluster)
      << tenant_yaml(tenant_draw, "neighbour", job_hosts / 2, job_hosts, shape.cluster);
    job_yaml(draw, shape, scale);  // drawn all the same, so the draws after it do not depend on tenants
  } else {
    y << job_yaml(draw, shape, scale);
  }
  y << faults_yaml(draw, catalog, topology, job_hosts, window_of(scale), scale.packets(), 0, 3)
    << detectors_yaml(draw, mitigation);
  return y.str();
}

std::string random_faults_yaml(std::uint64_t seed, const injectors::FaultCatalog& catalog,
                               const sim::Topology& topology, int job_hosts, const FaultWindow& window, int fewest,
                               int most) {
  Draw draw(seed);
  return faults_yaml(draw, catalog, topology, job_hosts, window, false, fewest, most);
}

std::string random_scenario_yaml(std::uint64_t seed, std::uint64_t case_number) {
  return random_scenario_yaml(seed, case_number, injectors::builtin_fault_catalog());
}

}  // namespace gauntlet::harness::soak
