#include "injectors/real/drivers.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

namespace gauntlet::injectors::real {

namespace {

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  return s;
}

std::string fmt(double v, int precision = 2) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(precision);
  out << v;
  return out.str();
}

// tc's time and rate syntax, in units it has accepted for a decade.
std::string tc_time(sim::Nanos t) { return std::to_string(std::max<sim::Nanos>(1, t / sim::kMicrosecond)) + "us"; }
std::string tc_rate(double gbps) { return std::to_string(std::max<long long>(8, std::llround(gbps * 1e6))) + "kbit"; }

Argv tc(const DriverContext& c, std::initializer_list<std::string> args) {
  Argv a{"tc"};
  a.insert(a.end(), args);
  return wrap(c.prefix, a);
}
Argv nft(const DriverContext& c, const std::string& script) { return wrap(c.prefix, {"nft", script}); }

std::string nft_table(const DriverContext& c) { return "gauntlet_" + c.tag; }

// Replacing the root qdisc is only safe when the kernel's default sits there:
// deleting ours then brings the default back. A configured root (handle other
// than 0:) belongs to someone and is left alone.
void require_default_root_qdisc(const DriverContext& c, const std::string& dev) {
  CommandResult r = run_command(wrap(c.prefix, {"tc", "qdisc", "show", "dev", dev, "root"}));
  if (!r.ok()) {
    if (c.dry_run) return;
    throw InjectionError("cannot read the root qdisc of " + dev + ": " + trim(r.output));
  }
  std::istringstream words(r.output);
  std::string qdisc, kind, handle;
  words >> qdisc >> kind >> handle;
  if (!handle.empty() && handle != "0:")
    throw SafetyRefusal(dev + " has a configured root qdisc (" + kind + " " + handle +
                        "); gauntlet will not replace it");
}

std::string nft_match(const RealFault& f) {
  std::string expr;
  auto get = [&](const char* k) {
    auto it = f.match.find(k);
    return it == f.match.end() ? std::string() : it->second;
  };
  auto family = [](const std::string& addr) { return addr.find(':') != std::string::npos ? "ip6" : "ip"; };
  if (auto v = get("dst"); !v.empty()) expr += std::string(family(v)) + " daddr " + v + " ";
  if (auto v = get("src"); !v.empty()) expr += std::string(family(v)) + " saddr " + v + " ";
  std::string proto = get("proto");
  if (!proto.empty()) expr += "meta l4proto " + proto + " ";
  if (auto v = get("dport"); !v.empty()) expr += proto + " dport " + v + " ";
  if (auto v = get("sport"); !v.empty()) expr += proto + " sport " + v + " ";
  if (auto v = get("dscp"); !v.empty()) expr += "ip dscp " + v + " ";
  return expr;
}

Argv flower_filter(const DriverContext& c, const RealFault& f, const std::string& classid) {
  Argv a{"tc", "filter", "add", "dev", f.interface, "parent", "1:", "protocol", "ip", "prio", "1", "flower"};
  for (const auto& [key, value] : f.match) {
    if (key == "dst") a.insert(a.end(), {"dst_ip", value});
    if (key == "src") a.insert(a.end(), {"src_ip", value});
    if (key == "proto") a.insert(a.end(), {"ip_proto", value});
    if (key == "dport") a.insert(a.end(), {"dst_port", value});
    if (key == "sport") a.insert(a.end(), {"src_port", value});
    if (key == "dscp") a.insert(a.end(), {"ip_tos", std::to_string(std::stoi(value) << 2) + "/0xfc"});
  }
  a.insert(a.end(), {"classid", classid});
  return wrap(c.prefix, a);
}

// An OpenFlow match for the same fields, for a stale entry in an OVS bridge.
std::string openflow_match(const RealFault& f) {
  auto get = [&](const char* k) {
    auto it = f.match.find(k);
    return it == f.match.end() ? std::string() : it->second;
  };
  std::string proto = get("proto");
  std::string m = proto.empty() ? "ip" : proto;  // "udp"/"tcp" imply ip in OpenFlow's shorthand
  if (auto v = get("dst"); !v.empty()) m += ",nw_dst=" + v;
  if (auto v = get("src"); !v.empty()) m += ",nw_src=" + v;
  if (auto v = get("dport"); !v.empty()) m += ",tp_dst=" + v;
  if (auto v = get("sport"); !v.empty()) m += ",tp_src=" + v;
  if (auto v = get("dscp"); !v.empty()) m += ",ip_dscp=" + v;
  return m;
}

// The OVS bridge that holds the interface as a port, or "" if none does.
std::string ovs_bridge_of(const DriverContext& c, const std::string& dev) {
  CommandResult r = run_command(wrap(c.prefix, {"ovs-vsctl", "port-to-br", dev}));
  return r.ok() ? trim(r.output) : std::string();
}

FaultProgram site_program(const RealFault& f) {
  // The operator's command for what the kernel cannot reach (hardware RoCE:
  // switch ACLs, NIC steering rules). Placeholders name the fault's values.
  auto expand = [&](Argv argv) {
    const std::map<std::string, std::string> values = {
        {"{interface}", f.interface},
        {"{target}", f.spec.target},
        {"{rate}", fmt(f.spec.params.number("rate"), 6)},
        {"{gpu}", std::to_string(f.gpu_index)},
        {"{duration_s}", fmt(sim::to_seconds(f.spec.duration.value_or(0)), 3)}};
    for (std::string& arg : argv)
      for (const auto& [key, value] : values)
        for (std::size_t p; (p = arg.find(key)) != std::string::npos;) arg.replace(p, key.size(), value);
    return argv;
  };
  if (f.site_apply.empty() || f.site_revert.empty())
    throw InjectionError("mechanism site needs both site.apply and site.revert commands");
  FaultProgram p;
  p.mechanism = "site-command";
  for (const Argv& a : f.site_apply) p.apply.push_back(expand(a));
  for (const Argv& a : f.site_revert) p.revert.push_back(expand(a));
  return p;
}

}  // namespace

FaultProgram link_loss_program(const RealFault& f, const DriverContext& c) {
  std::string mech = f.mechanism.empty() ? (c.caps.netem ? "netem" : c.caps.nft ? "nft" : "") : f.mechanism;
  FaultProgram p;
  if (mech == "netem") {
    if (!c.caps.netem) throw InjectionError("this kernel has no netem qdisc");
    require_default_root_qdisc(c, f.interface);
    p.mechanism = "tc-netem";
    p.apply.push_back(tc(c, {"qdisc", "replace", "dev", f.interface, "root", "netem", "loss",
                             fmt(f.spec.params.number("rate") * 100, 4) + "%"}));
    p.verify.push_back({tc(c, {"qdisc", "show", "dev", f.interface, "root"}), "netem"});
    p.revert.push_back(tc(c, {"qdisc", "del", "dev", f.interface, "root"}));
    p.verify_reverted.push_back({tc(c, {"qdisc", "show", "dev", f.interface, "root"}), ""});
  } else if (mech == "nft") {
    if (!c.caps.nft) throw InjectionError("nftables is not available (install the nftables package)");
    long threshold = std::lround(f.spec.params.number("rate") * 1'000'000);
    std::string t = nft_table(c);
    p.mechanism = "nft-numgen";
    p.apply.push_back(nft(c, "add table inet " + t + "; add chain inet " + t +
                                 " out { type filter hook postrouting priority -300; policy accept; }; add rule inet " +
                                 t + " out oifname \"" + f.interface + "\" numgen random mod 1000000 < " +
                                 std::to_string(threshold) + " counter drop"));
    p.verify.push_back({wrap(c.prefix, {"nft", "list", "table", "inet", t}), "numgen random"});
    p.revert.push_back(wrap(c.prefix, {"nft", "delete", "table", "inet", t}));
  } else if (mech == "site") {
    return site_program(f);
  } else {
    throw InjectionError(mech.empty() ? "no loss mechanism on this host: neither netem nor nftables is available"
                                      : "unknown link_loss mechanism '" + mech + "' (netem, nft, site)");
  }
  p.note = "egress loss " + fmt(f.spec.params.number("rate") * 100, 3) + "% on " + f.interface;
  return p;
}

FaultProgram port_flap_program(const RealFault& f, const DriverContext& c) {
  constexpr int kMaxCycles = 1000;
  const sim::Nanos period = f.spec.params.duration("period"), down_for = f.spec.params.duration("down");
  if (down_for <= 0 || down_for >= period) throw InjectionError("port_flap needs 0 < down < period");
  sim::Nanos duration = f.spec.duration.value_or(0);
  long long cycles = duration / period;
  if (cycles < 1) throw InjectionError("port_flap: duration is shorter than one period");
  if (cycles > kMaxCycles)
    throw SafetyRefusal("port_flap would flap " + std::to_string(cycles) + " times (limit 1000)");
  if (!c.dry_run && !interface_admin_up(c.prefix, f.interface))
    throw SafetyRefusal(f.interface + " is down already; flapping it would leave it up afterwards");
  FaultProgram p;
  p.mechanism = "ip-link";
  Argv down = wrap(c.prefix, {"ip", "link", "set", "dev", f.interface, "down"});
  Argv up = wrap(c.prefix, {"ip", "link", "set", "dev", f.interface, "up"});
  p.apply.push_back(down);
  for (long long k = 0; k < cycles; ++k) {
    p.during.push_back({k * period + down_for, up, "up (cycle " + std::to_string(k + 1) + ")"});
    if (k + 1 < cycles) p.during.push_back({(k + 1) * period, down, "down (cycle " + std::to_string(k + 2) + ")"});
  }
  p.revert.push_back(up);
  p.verify_reverted.push_back({wrap(c.prefix, {"ip", "-o", "link", "show", "dev", f.interface}), ",UP"});
  p.note = std::to_string(cycles) + " flap cycles of " + f.interface;
  return p;
}

// The classifier that steers the matched flows into the slow path: flower,
// nft or ovs (with the bridge holding the interface), checked on this host.
struct StaleClassifier {
  std::string kind;
  std::string bridge;  // ovs only
};

StaleClassifier stale_flow_classifier(const RealFault& f, const DriverContext& c) {
  StaleClassifier s{f.mechanism.empty() ? (c.caps.flower ? "flower" : "nft") : f.mechanism, ""};
  if (s.kind != "flower" && s.kind != "nft" && s.kind != "ovs")
    throw InjectionError("unknown stale_flow_table mechanism '" + s.kind + "' (flower, nft, ovs, site)");
  if (s.kind == "ovs") {
    s.bridge = ovs_bridge_of(c, f.interface);
    if (s.bridge.empty()) throw InjectionError(f.interface + " is not a port of any Open vSwitch bridge");
    if (!valid_interface_name(s.bridge)) throw InjectionError("unexpected OVS bridge name '" + s.bridge + "'");
  }
  if (s.kind == "flower" && !c.caps.flower) throw InjectionError("this kernel has no tc flower classifier");
  if (s.kind == "nft" && !c.caps.nft) throw InjectionError("nftables is not available (install nftables)");
  return s;
}

// The slow path: htb class 1:9 capped at `gbps`, with netem's delay (and
// loss) under it, or without netem a tbf whose latency bounds the queueing.
void add_slow_path(FaultProgram& p, const RealFault& f, const DriverContext& c, double gbps) {
  const FaultParams& q = f.spec.params;
  const std::string& dev = f.interface;
  p.apply.push_back(tc(c, {"qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb"}));
  // Small bursts make the cap bite per packet, as a software slow path does.
  p.apply.push_back(tc(c, {"class", "add", "dev", dev, "parent", "1:", "classid", "1:9", "htb", "rate", tc_rate(gbps),
                           "ceil", tc_rate(gbps), "burst", "1600", "cburst", "1600"}));
  if (c.caps.netem) {
    Argv leaf = tc(c, {"qdisc", "add", "dev", dev, "parent", "1:9", "handle", "9:", "netem", "delay",
                       tc_time(q.duration("extra_latency"))});
    if (q.number("loss") > 0) leaf.insert(leaf.end(), {"loss", fmt(q.number("loss") * 100, 4) + "%"});
    p.apply.push_back(leaf);
  } else {
    p.apply.push_back(
        tc(c, {"qdisc", "add", "dev", dev, "parent", "1:9", "handle", "9:", "tbf", "rate", tc_rate(gbps), "burst",
               "1600", "latency", tc_time(std::max(q.duration("extra_latency"), sim::kMillisecond))}));
  }
}

// Steers the matched flows into class 1:9, checks it and removes it (before
// the qdisc, so matched packets never point at a class that is already
// gone); returns the classifier's name.
std::string add_steering(FaultProgram& p, const RealFault& f, const DriverContext& c, const StaleClassifier& s) {
  const FaultParams& q = f.spec.params;
  const std::string& dev = f.interface;
  const std::string t = nft_table(c);
  // The OVS entry's cookie identifies it for removal; the tag is unique per
  // plan and fault.
  const std::string cookie = "0x" + std::to_string(std::hash<std::string>{}(c.tag) & 0xffffffffffffULL);
  if (s.kind == "flower") {
    p.apply.push_back(flower_filter(c, f, "1:9"));
    return "tc-flower";
  }
  if (s.kind == "ovs") {
    // set_queue:8 sets the packet's priority to 1:9, the slow class above; the
    // highest priority puts the stale entry ahead of the bridge's own rules.
    p.apply.push_back(
        wrap(c.prefix, {"ovs-ofctl", "add-flow", s.bridge,
                        "cookie=" + cookie + ",priority=65535," + openflow_match(f) + ",actions=set_queue:8,normal"}));
    p.verify.push_back(
        {wrap(c.prefix, {"ovs-ofctl", "dump-flows", s.bridge, "cookie=" + cookie + "/-1"}), "set_queue:8"});
    p.revert.push_back(wrap(c.prefix, {"ovs-ofctl", "del-flows", s.bridge, "cookie=" + cookie + "/-1"}));
    return "ovs-openflow";
  }
  std::string rules = "add table inet " + t + "; add chain inet " + t +
                      " steer { type filter hook postrouting priority -300; policy accept; }; ";
  const std::string m = "oifname \"" + dev + "\" " + nft_match(f);
  if (!c.caps.netem && q.number("loss") > 0)
    rules += "add rule inet " + t + " steer " + m + "numgen random mod 1000000 < " +
             std::to_string(std::lround(q.number("loss") * 1e6)) + " counter drop; ";
  rules += "add rule inet " + t + " steer " + m + "counter meta priority set 1:9";
  p.apply.push_back(nft(c, rules));
  p.verify.push_back({wrap(c.prefix, {"nft", "list", "table", "inet", t}), "meta priority set 1:9"});
  p.revert.push_back(wrap(c.prefix, {"nft", "delete", "table", "inet", t}));
  return "nft-meta-priority";
}

FaultProgram stale_flow_program(const RealFault& f, const DriverContext& c) {
  if (f.match.empty())
    throw InjectionError(
        "stale_flow_table needs a match (dst, src, proto, dport, sport, dscp): "
        "a stale entry steers some flows, not the whole port");
  if (f.mechanism == "site") return site_program(f);
  const StaleClassifier classifier = stale_flow_classifier(f, c);
  const FaultParams& q = f.spec.params;
  if (!c.caps.htb) throw InjectionError("this kernel has no htb qdisc");
  if (!c.caps.netem && q.number("cap_gbps") <= 0)
    throw InjectionError(
        "without netem the slow path can only be rate-capped: set cap_gbps "
        "(extra_latency then bounds the queueing delay)");
  require_default_root_qdisc(c, f.interface);
  const double gbps = q.number("cap_gbps") > 0 ? q.number("cap_gbps") : 100.0;
  FaultProgram p;
  add_slow_path(p, f, c, gbps);
  const std::string steering = add_steering(p, f, c, classifier);
  p.verify.push_back({tc(c, {"class", "show", "dev", f.interface}), "1:9"});
  p.mechanism = steering + "+htb+" + (c.caps.netem ? "netem" : "tbf");
  p.revert.push_back(tc(c, {"qdisc", "del", "dev", f.interface, "root"}));
  p.note = "stale entry on " + f.interface + " steering [" + nft_match(f) + "] into a " + tc_rate(gbps) + " slow path";
  return p;
}

namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) out.push_back(trim(field));
  return out;
}

}  // namespace

FaultProgram gpu_throttle_program(const RealFault& f, const DriverContext& c) {
  if (f.gpu_index < 0) throw InjectionError("gpu_throttle: target is not mapped to a GPU index");
  std::string gpu = std::to_string(f.gpu_index);
  std::string method = f.method.empty() ? "power" : f.method;
  double keep = 1.0 - f.spec.params.number("slowdown");
  auto query = [&](const std::string& fields, std::size_t n) -> std::vector<std::string> {
    CommandResult r = run_command({"nvidia-smi", "-i", gpu, "--query-gpu=" + fields, "--format=csv,noheader,nounits"});
    std::vector<std::string> values = split_csv(trim(r.output));
    if (r.ok() && values.size() == n) return values;
    if (c.dry_run) return std::vector<std::string>(n, "");
    throw InjectionError("nvidia-smi query of GPU " + gpu + " failed: " + trim(r.output));
  };
  auto num = [](const std::string& s) {
    try {
      return std::stod(s);
    } catch (...) {
      return -1.0;
    }
  };
  FaultProgram p;
  if (method == "power") {
    auto v = query("power.limit,power.min_limit", 2);
    double now = num(v[0]), floor = num(v[1]);
    std::string prev = v[0].empty() ? "<queried power.limit>" : v[0];
    std::string target = now < 0 ? "<" + fmt(keep * 100, 0) + "% of power.limit>" : fmt(std::max(floor, now * keep));
    p.mechanism = "nvidia-smi-power-limit";
    p.apply.push_back({"nvidia-smi", "-i", gpu, "-pl", target});
    p.revert.push_back({"nvidia-smi", "-i", gpu, "-pl", prev});
    p.note = "GPU " + gpu + " power limit " + prev + " W -> " + target + " W";
  } else if (method == "clocks") {
    auto v = query("clocks.applications.graphics,clocks.applications.memory,clocks.max.graphics", 3);
    double max_gr = num(v[2]);
    std::string prev_gr = v[0].empty() ? "<queried graphics clock>" : v[0];
    std::string mem = v[1].empty() ? "<queried memory clock>" : v[1];
    std::string target = max_gr < 0 ? "<reduced graphics clock>" : std::to_string(std::lround(max_gr * keep));
    p.mechanism = "nvidia-smi-application-clocks";
    p.apply.push_back({"nvidia-smi", "-i", gpu, "-ac", mem + "," + target});
    p.revert.push_back({"nvidia-smi", "-i", gpu, "-ac", mem + "," + prev_gr});
    p.note = "GPU " + gpu + " application clocks " + mem + "," + prev_gr + " -> " + mem + "," + target;
  } else if (method == "locked_clocks") {
    auto v = query("clocks.max.sm", 1);
    double max_sm = num(v[0]);
    std::string target = max_sm < 0 ? "<reduced sm clock>" : std::to_string(std::lround(max_sm * keep));
    p.mechanism = "nvidia-smi-locked-clocks";
    p.apply.push_back({"nvidia-smi", "-i", gpu, "-lgc", target + "," + target});
    p.revert.push_back({"nvidia-smi", "-i", gpu, "-rgc"});
    p.note = "GPU " + gpu + " SM clock locked at " + target + " MHz";
  } else {
    throw InjectionError("unknown gpu_throttle method '" + method + "' (power, clocks, locked_clocks)");
  }
  return p;
}

namespace {

std::string cgroup2_root() {
  std::ifstream mounts("/proc/mounts");
  for (std::string dev, dir, type, rest; mounts >> dev >> dir >> type && std::getline(mounts, rest);)
    if (type == "cgroup2") return dir;
  return "";
}

}  // namespace

FaultProgram cpu_contention_program(const RealFault& f, const DriverContext& c) {
  if (!tool_exists("stress-ng")) throw InjectionError("cpu_contention needs stress-ng (install the stress-ng package)");
  std::string root = cgroup2_root();
  if (root.empty()) throw InjectionError("cpu_contention needs a cgroup v2 hierarchy; none is mounted");
  double s = f.spec.params.number("slowdown");
  long load = s >= 0.5 ? 100 : std::clamp(std::lround(100 * s / (1 - s)), 1L, 100L);
  long workers = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  // stress-ng's own timeout is a second, independent bound on the fault.
  long seconds = std::max<long>(1, std::lround(std::ceil(sim::to_seconds(f.spec.duration.value_or(sim::kSecond)))));
  std::string dir = root + "/gauntlet-" + c.tag;
  FaultProgram p;
  p.mechanism = "stress-ng-cgroup";
  p.apply.push_back({"@mkdir", dir});
  p.apply.push_back({"@spawn", dir, "stress-ng", "--cpu", std::to_string(workers), "--cpu-load", std::to_string(load),
                     "--timeout", std::to_string(seconds) + "s", "--quiet"});
  p.revert.push_back({"@cgroup-kill", dir});
  p.note = std::to_string(workers) + " stress-ng workers at " + std::to_string(load) + "% in " + dir;
  return p;
}

Capabilities probe_capabilities() {
  Capabilities caps;
  if (is_root() && tool_exists("ip") && tool_exists("tc")) {
    // Kernel features are global, so a private namespace with a dummy link
    // answers for the whole host without touching anything of it.
    std::string ns = "gauntlet-probe-" + std::to_string(::getpid());
    if (run_command({"ip", "netns", "add", ns}).ok()) {
      Argv in{"ip", "netns", "exec", ns};
      bool link = run_command(wrap(in, {"ip", "link", "add", "gp0", "type", "veth", "peer", "name", "gp1"})).ok() &&
                  run_command(wrap(in, {"ip", "link", "set", "gp0", "up"})).ok();
      if (link) {
        caps.netem = run_command(wrap(in, {"tc", "qdisc", "add", "dev", "gp0", "root", "netem", "loss", "1%"})).ok();
        run_command(wrap(in, {"tc", "qdisc", "del", "dev", "gp0", "root"}));
        caps.htb = run_command(wrap(in, {"tc", "qdisc", "add", "dev", "gp0", "root", "handle", "1:", "htb"})).ok();
        caps.flower =
            caps.htb && run_command(wrap(in, {"tc", "filter", "add", "dev", "gp0", "parent", "1:", "protocol", "ip",
                                              "prio", "1", "flower", "dst_ip", "192.0.2.1", "classid", "1:9"}))
                            .ok();
      }
      caps.nft = tool_exists("nft") && run_command(wrap(in, {"nft", "add", "table", "inet", "gauntlet_probe"})).ok();
      run_command({"ip", "netns", "del", ns});
      caps.method = "trial";
      return caps;
    }
  }
  // Without root only loaded modules and the kernel's built-in list can tell.
  utsname uts{};
  ::uname(&uts);
  auto module = [&](const std::string& name) {
    if (::access(("/sys/module/" + name).c_str(), F_OK) == 0) return true;
    std::ifstream builtin(std::string("/lib/modules/") + uts.release + "/modules.builtin");
    for (std::string line; std::getline(builtin, line);)
      if (line.ends_with("/" + name + ".ko")) return true;
    return false;
  };
  caps.netem = module("sch_netem");
  caps.flower = module("cls_flower");
  caps.htb = module("sch_htb");
  caps.nft = tool_exists("nft");
  caps.method = "modules";
  return caps;
}

FaultProgram build_program(const RealFault& fault, const DriverContext& context) {
  if (!fault.interface.empty() && !valid_interface_name(fault.interface))
    throw SafetyRefusal("'" + fault.interface + "' is not a valid interface name");
  for (const auto& [key, value] : fault.match)
    if (!valid_match_value(key, value)) throw InjectionError("bad match " + key + ": '" + value + "'");
  if (!fault.interface.empty() && !context.dry_run && !interface_exists(context.prefix, fault.interface))
    throw InjectionError("interface " + fault.interface + " does not exist on this host");
  if (fault.mechanism == "site" && !fault.driver.handles_site) return site_program(fault);
  if (!fault.driver.build) throw InjectionError(fault.spec.type + " has no real driver");
  return fault.driver.build(fault, context);
}

std::vector<std::string> default_route_interfaces(const Argv& prefix) {
  std::vector<std::string> out;
  for (const char* family : {"-4", "-6"}) {
    CommandResult r = run_command(wrap(prefix, {"ip", family, "route", "show", "default"}));
    std::istringstream words(r.output);
    for (std::string w, prev; words >> w; prev = w)
      if (prev == "dev" && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}

bool interface_exists(const Argv& prefix, const std::string& name) {
  return run_command(wrap(prefix, {"ip", "-o", "link", "show", "dev", name})).ok();
}

bool interface_admin_up(const Argv& prefix, const std::string& name) {
  CommandResult r = run_command(wrap(prefix, {"ip", "-o", "link", "show", "dev", name}));
  auto open = r.output.find('<'), close = r.output.find('>');
  if (!r.ok() || open == std::string::npos || close == std::string::npos) return false;
  std::string flags = "," + r.output.substr(open + 1, close - open - 1) + ",";
  return flags.find(",UP,") != std::string::npos;
}

bool valid_interface_name(const std::string& name) {
  static const std::regex kName("[A-Za-z0-9_.@-]{1,15}");
  return std::regex_match(name, kName);
}

bool valid_match_value(const std::string& key, const std::string& value) {
  static const std::regex kAddr("[0-9A-Fa-f:.]+(/[0-9]{1,3})?");
  static const std::regex kPort("[0-9]{1,5}");
  if (key == "dst" || key == "src") return std::regex_match(value, kAddr);
  if (key == "proto") return value == "tcp" || value == "udp";
  if (key == "dport" || key == "sport") return std::regex_match(value, kPort) && std::stoi(value) <= 65535;
  if (key == "dscp") return std::regex_match(value, kPort) && std::stoi(value) <= 63;
  return false;
}

}  // namespace gauntlet::injectors::real
