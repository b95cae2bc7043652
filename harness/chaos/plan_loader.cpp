#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/chaos/plan.hpp"
#include "harness/scenario/input_error.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {

namespace {

using injectors::FaultType;
using injectors::ParamKind;
using injectors::real::Argv;
using sim::ComponentId;
using sim::ComponentKind;

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    YAML::Mark m = at.Mark();
    throw InputError(file_, m.line + 1, m.column + 1, message);
  }

  void only_keys(const YAML::Node& map, std::initializer_list<const char*> keys, const std::string& what) const {
    if (!map.IsMap()) fail(map, what + " must be a map");
    for (const auto& kv : map) {
      std::string key = kv.first.as<std::string>();
      if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; }))
        fail(kv.first, "unknown key '" + key + "' in " + what);
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, what + " must be a scalar");
    return n.Scalar();
  }

  sim::Nanos duration(const YAML::Node& n, const std::string& what) const {
    std::string error;
    auto d = sim::parse_duration(scalar(n, what), &error);
    if (!d) fail(n, what + ": " + error);
    return *d;
  }

  double number(const YAML::Node& n, const std::string& what) const {
    std::string text = scalar(n, what);
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != text.size()) fail(n, what + " must be a number, not '" + text + "'");
    return v;
  }

  int integer(const YAML::Node& n, const std::string& what) const {
    double v = number(n, what);
    if (v != static_cast<int>(v)) fail(n, what + " must be a whole number");
    return static_cast<int>(v);
  }

  Argv argv(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence() || n.size() == 0) fail(n, what + " must be a non-empty list of arguments (no shell)");
    Argv out;
    for (const auto& a : n) out.push_back(scalar(a, what));
    return out;
  }

  ComponentId component(const YAML::Node& n, const std::string& what) const {
    std::string text = scalar(n, what);
    auto id = ComponentId::parse(text);
    if (!id) fail(n, what + ": '" + text + "' is not a component id");
    return *id;
  }

  const std::string file_;
};

// The NIC a link-level target lives on: h12.nic3, h12.nic3.ft and
// h12.nic3~leaf3 all touch the interface mapped to h12.nic3.
std::optional<ComponentId> nic_of(const ComponentId& id) {
  switch (id.kind) {
    case ComponentKind::nic:
    case ComponentKind::flow_table:
    case ComponentKind::host_link: return ComponentId::make_nic(id.host, id.index);
    default: return std::nullopt;
  }
}

bool kind_allowed(FaultType type, ComponentKind kind) {
  switch (type) {
    case FaultType::link_loss:
    case FaultType::port_flap: return kind == ComponentKind::nic || kind == ComponentKind::host_link;
    case FaultType::stale_flow_table: return kind == ComponentKind::flow_table;
    case FaultType::gpu_throttle: return kind == ComponentKind::gpu;
    case FaultType::cpu_contention: return kind == ComponentKind::cpu || kind == ComponentKind::host;
    default: return false;
  }
}

}  // namespace

sim::Nanos ChaosPlan::end() const {
  sim::Nanos end = 0;
  for (const ChaosFault& f : faults) end = std::max(end, f.real.spec.start + f.real.spec.duration.value_or(0));
  return end;
}

ChaosPlan parse_chaos_plan(const std::string& text, const std::string& file_name) {
  Loader L(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(file_name, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root.IsMap()) throw InputError(file_name, 1, 1, "a chaos plan must be a map");
  L.only_keys(root, {"name", "host", "map", "safety", "faults"}, "the plan");
  for (const char* key : {"name", "host", "map", "safety", "faults"})
    if (!root[key]) throw InputError(file_name, 1, 1, std::string("missing required key '") + key + "'");

  ChaosPlan plan;
  plan.source_path = file_name;
  plan.name = L.scalar(root["name"], "name");
  if (plan.name.empty() || plan.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
    L.fail(root["name"], "name may hold only a-z, 0-9, '-' and '_' (it names files and nft tables)");
  ComponentId host = L.component(root["host"], "host");
  if (host.kind != ComponentKind::host) L.fail(root["host"], "host must be a host id like h12");
  plan.host = host.str();

  auto on_host = [&](const YAML::Node& n, const ComponentId& id) {
    if (id.host != host.host) L.fail(n, "'" + id.str() + "' is not on this host (" + plan.host + ")");
  };

  const YAML::Node map = root["map"];
  L.only_keys(map, {"interfaces", "gpus"}, "map");
  std::map<std::string, std::string> nic_to_interface;
  if (map["interfaces"] && !map["interfaces"].IsMap()) L.fail(map["interfaces"], "map.interfaces must be a map");
  if (map["gpus"] && !map["gpus"].IsMap()) L.fail(map["gpus"], "map.gpus must be a map");
  for (const auto& kv : map["interfaces"] ? map["interfaces"] : YAML::Node(YAML::NodeType::Map)) {
    std::string dev = L.scalar(kv.first, "interface name");
    if (!injectors::real::valid_interface_name(dev)) L.fail(kv.first, "'" + dev + "' is not a valid interface name");
    ComponentId id = L.component(kv.second, "map.interfaces." + dev);
    auto nic = nic_of(id);
    if (!nic || id.kind == ComponentKind::flow_table) L.fail(kv.second, "an interface maps to a NIC or host link id");
    on_host(kv.second, id);
    if (nic_to_interface.contains(nic->str())) L.fail(kv.second, nic->str() + " is mapped twice");
    nic_to_interface[nic->str()] = dev;
    plan.interfaces[dev] = id.str();
  }
  for (const auto& kv : map["gpus"] ? map["gpus"] : YAML::Node(YAML::NodeType::Map)) {
    int index = L.integer(kv.first, "GPU index");
    if (index < 0) L.fail(kv.first, "GPU index must be >= 0");
    ComponentId id = L.component(kv.second, "map.gpus");
    if (id.kind != ComponentKind::gpu) L.fail(kv.second, "a GPU index maps to a GPU id like h12.gpu7");
    on_host(kv.second, id);
    plan.gpus[index] = id.str();
  }

  const YAML::Node safety = root["safety"];
  L.only_keys(safety, {"allow", "max_concurrent", "max_duration", "abort_command", "abort_interval",
                       "allow_default_route"}, "safety");
  if (!safety["allow"] || !safety["max_duration"])
    L.fail(safety, "safety needs 'allow' and 'max_duration': there is no unbounded chaos");
  if (!safety["allow"].IsSequence()) L.fail(safety["allow"], "safety.allow must be a list of component ids");
  for (const auto& a : safety["allow"]) plan.safety.allow.push_back(L.component(a, "safety.allow").str());
  plan.safety.max_duration = L.duration(safety["max_duration"], "safety.max_duration");
  if (safety["max_concurrent"]) {
    plan.safety.max_concurrent = L.integer(safety["max_concurrent"], "safety.max_concurrent");
    if (plan.safety.max_concurrent < 1) L.fail(safety["max_concurrent"], "safety.max_concurrent must be >= 1");
  }
  if (safety["abort_command"]) plan.safety.abort_command = L.argv(safety["abort_command"], "safety.abort_command");
  if (safety["abort_interval"]) {
    plan.safety.abort_interval = L.duration(safety["abort_interval"], "safety.abort_interval");
    if (plan.safety.abort_interval < sim::kSecond) L.fail(safety["abort_interval"], "abort_interval must be >= 1s");
  }
  if (safety["allow_default_route"]) {
    if (!safety["allow_default_route"].IsSequence())
      L.fail(safety["allow_default_route"], "safety.allow_default_route must be a list of interface names");
    for (const auto& a : safety["allow_default_route"])
      plan.safety.allow_default_route.push_back(L.scalar(a, "safety.allow_default_route"));
  }

  const YAML::Node faults = root["faults"];
  if (!faults.IsSequence() || faults.size() == 0) L.fail(faults, "faults must be a non-empty list");
  int n = 0;
  for (const auto& fn : faults) {
    if (!fn.IsMap()) L.fail(fn, "a fault must be a map");
    if (!fn["type"]) L.fail(fn, "fault without 'type'");
    std::string type_name = L.scalar(fn["type"], "type");
    const injectors::FaultTypeInfo* info = injectors::find_fault_type(type_name);
    if (!info) L.fail(fn["type"], "unknown fault type '" + type_name + "'");
    std::set<std::string> keys = {"type", "target", "at", "duration", "mechanism", "site"};
    for (const auto& p : info->params) keys.insert(std::string(p.name));
    if (info->type == FaultType::stale_flow_table) keys.insert("match");
    if (info->type == FaultType::gpu_throttle) keys.insert("method");
    for (const auto& kv : fn)
      if (!keys.contains(kv.first.as<std::string>()))
        L.fail(kv.first, "unknown key '" + kv.first.as<std::string>() + "' for " + type_name);
    for (const char* key : {"target", "at", "duration"})
      if (!fn[key]) L.fail(fn, std::string("a real fault needs '") + key + "' (nothing runs open-ended on a real host)");

    ChaosFault cf;
    cf.line = fn.Mark().line + 1;
    cf.column = fn.Mark().column + 1;
    injectors::real::RealFault& rf = cf.real;
    rf.spec.type = info->type;
    rf.spec.id = "f" + std::to_string(++n);
    ComponentId target = L.component(fn["target"], "target");
    if (!kind_allowed(info->type, target.kind))
      L.fail(fn["target"], type_name + " cannot target a " + std::string(sim::kind_name(target.kind)) +
                               " on a real host");
    on_host(fn["target"], target);
    rf.spec.target = target.str();
    rf.spec.start = L.duration(fn["at"], "at");
    rf.spec.duration = L.duration(fn["duration"], "duration");
    if (*rf.spec.duration <= 0) L.fail(fn["duration"], "duration must be positive");
    if (*rf.spec.duration > plan.safety.max_duration)
      L.fail(fn["duration"], "duration " + sim::format_duration(*rf.spec.duration) + " exceeds safety.max_duration " +
                                 sim::format_duration(plan.safety.max_duration));

    for (const auto& p : info->params) {
      YAML::Node v = fn[std::string(p.name)];
      std::string what = type_name + "." + std::string(p.name);
      if (!v) {
        if (p.required) L.fail(fn, type_name + " needs '" + std::string(p.name) + "'");
        continue;
      }
      if (p.name == "invalidate_after")
        L.fail(v, what + " is simulated only: on a real host, start the fault that much later");
      injectors::FaultParams& q = rf.spec.params;
      double x = 0;
      sim::Nanos d = 0;
      if (p.kind == ParamKind::fraction || p.kind == ParamKind::positive_number) {
        x = L.number(v, what);
        if (p.kind == ParamKind::fraction && (x < 0 || x > 1)) L.fail(v, what + " must be within 0..1");
        if (p.kind == ParamKind::positive_number && x <= 0) L.fail(v, what + " must be positive");
      } else if (p.kind == ParamKind::duration) {
        d = L.duration(v, what);
      } else {
        L.fail(v, what + " is not supported on a real host");
      }
      if (p.name == "rate") q.rate = x;
      if (p.name == "cap_gbps") q.cap_gbps = x;
      if (p.name == "loss") q.loss = x;
      if (p.name == "slowdown") q.slowdown = x;
      if (p.name == "period") q.period = d;
      if (p.name == "down") q.down = d;
      if (p.name == "extra_latency") q.extra_latency = d;
    }
    if (info->type == FaultType::port_flap && (rf.spec.params.down <= 0 || rf.spec.params.down >= rf.spec.params.period))
      L.fail(fn["down"], "port_flap needs 0 < down < period");
    if ((info->type == FaultType::gpu_throttle || info->type == FaultType::cpu_contention) &&
        rf.spec.params.slowdown >= 1)
      L.fail(fn["slowdown"], "slowdown must be below 1");

    if (fn["mechanism"]) rf.mechanism = L.scalar(fn["mechanism"], "mechanism");
    if (fn["method"]) rf.method = L.scalar(fn["method"], "method");
    if (fn["site"]) {
      L.only_keys(fn["site"], {"apply", "revert"}, "site");
      if (!fn["site"]["apply"] || !fn["site"]["revert"]) L.fail(fn["site"], "site needs both apply and revert");
      for (const auto& c : fn["site"]["apply"]) rf.site_apply.push_back(L.argv(c, "site.apply"));
      for (const auto& c : fn["site"]["revert"]) rf.site_revert.push_back(L.argv(c, "site.revert"));
      if (rf.mechanism.empty()) rf.mechanism = "site";
    }
    if (fn["match"]) {
      L.only_keys(fn["match"], {"dst", "src", "proto", "dport", "sport", "dscp"}, "match");
      for (const auto& kv : fn["match"]) {
        std::string key = kv.first.as<std::string>(), value = L.scalar(kv.second, "match." + key);
        if (!injectors::real::valid_match_value(key, value)) L.fail(kv.second, "bad match." + key + " '" + value + "'");
        rf.match[key] = value;
      }
      if ((rf.match.contains("dport") || rf.match.contains("sport")) && !rf.match.contains("proto"))
        L.fail(fn["match"], "match on ports needs proto: tcp or udp");
    }
    if (info->type == FaultType::stale_flow_table && rf.match.empty() && rf.mechanism != "site")
      L.fail(fn, "stale_flow_table needs 'match': a stale entry steers some flows, not the whole port");

    // Map to the real thing and check the allow-list against both names.
    std::string touched = rf.spec.target;
    if (auto nic = nic_of(target)) {
      auto it = nic_to_interface.find(nic->str());
      if (it == nic_to_interface.end()) L.fail(fn["target"], rf.spec.target + " is not mapped to an interface in map.interfaces");
      rf.interface = it->second;
      touched = nic->str();
    } else if (target.kind == ComponentKind::gpu) {
      auto it = std::find_if(plan.gpus.begin(), plan.gpus.end(), [&](auto& g) { return g.second == rf.spec.target; });
      if (it == plan.gpus.end()) L.fail(fn["target"], rf.spec.target + " is not mapped to a GPU index in map.gpus");
      rf.gpu_index = it->first;
    }
    const auto& allow = plan.safety.allow;
    if (std::find(allow.begin(), allow.end(), rf.spec.target) == allow.end() &&
        std::find(allow.begin(), allow.end(), touched) == allow.end())
      L.fail(fn["target"], rf.spec.target + " is not in safety.allow");
    plan.faults.push_back(std::move(cf));
  }

  std::stable_sort(plan.faults.begin(), plan.faults.end(),
                   [](const ChaosFault& a, const ChaosFault& b) { return a.real.spec.start < b.real.spec.start; });
  n = 0;
  for (ChaosFault& f : plan.faults) f.real.spec.id = "f" + std::to_string(++n);  // ids in onset order
  if (plan.end() > plan.safety.max_duration)
    throw InputError(file_name, 1, 1, "the plan runs " + sim::format_duration(plan.end()) +
                                          ", longer than safety.max_duration " +
                                          sim::format_duration(plan.safety.max_duration));
  // Concurrency and collisions: two faults on the same interface or GPU at
  // once would fight over one root qdisc or one power limit.
  for (std::size_t i = 0; i < plan.faults.size(); ++i) {
    const auto& a = plan.faults[i];
    int concurrent = 1;
    for (std::size_t j = 0; j < plan.faults.size(); ++j) {
      const auto& b = plan.faults[j];
      if (i == j) continue;
      bool overlap = b.real.spec.start <= a.real.spec.start && a.real.spec.start < *b.real.spec.end();
      if (!overlap) continue;
      ++concurrent;
      bool same_thing = (!a.real.interface.empty() && a.real.interface == b.real.interface) ||
                        (a.real.gpu_index >= 0 && a.real.gpu_index == b.real.gpu_index) ||
                        (a.real.spec.type == FaultType::cpu_contention && b.real.spec.type == FaultType::cpu_contention);
      if (same_thing)
        throw InputError(file_name, a.line, a.column, a.real.spec.id + " overlaps " + b.real.spec.id + " on the same " +
                                                          (a.real.gpu_index >= 0 ? "GPU" : "interface"));
    }
    if (concurrent > plan.safety.max_concurrent)
      throw InputError(file_name, a.line, a.column, std::to_string(concurrent) +
                                                        " faults would be active at once; safety.max_concurrent is " +
                                                        std::to_string(plan.safety.max_concurrent));
  }
  return plan;
}

ChaosPlan load_chaos_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 1, 1, "cannot read the chaos plan");
  std::stringstream text;
  text << in.rdbuf();
  return parse_chaos_plan(text.str(), path);
}

}  // namespace gauntlet::harness
