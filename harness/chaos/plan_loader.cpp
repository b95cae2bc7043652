#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "harness/chaos/plan.hpp"
#include "harness/scenario/fault_params_read.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "harness/scenario/yaml_document.hpp"
#include "harness/scenario/yaml_read.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {

namespace {

using injectors::real::Argv;
using sim::ComponentId;
using sim::ComponentKind;
using namespace yaml_read;

// The NIC a link-level target lives on: h12.nic3, h12.nic3.ft and
// h12.nic3~leaf3 all touch the interface mapped to h12.nic3.
std::optional<ComponentId> nic_of(const ComponentId& id) {
  if (id.kind == ComponentKind::nic || id.kind == ComponentKind::flow_table || id.kind == ComponentKind::host_link)
    return ComponentId::make_nic(id.host, id.index);
  return std::nullopt;
}

ComponentId read_component(const Source& source, const Field& field) {
  const std::string text = read_text(source, field);
  const auto id = ComponentId::parse(text);
  if (!id) source.fail(field.value_mark, "'" + field.name + "': '" + text + "' is not a component id");
  return *id;
}

Argv read_argv(const Source& source, const Field& field) {
  const std::vector<Field> items = read_sequence(source, field);
  if (items.empty())
    source.fail(field.value_mark, "'" + field.name + "' must be a non-empty list of arguments (no shell)");
  Argv out;
  for (const Field& item : items) out.push_back(read_text(source, item));
  return out;
}

std::vector<Argv> read_commands(const Source& source, const Field& field) {
  std::vector<Argv> out;
  for (const Field& item : read_sequence(source, field)) out.push_back(read_argv(source, item));
  return out;
}

}  // namespace

sim::Nanos ChaosPlan::end() const {
  sim::Nanos end = 0;
  for (const ChaosFault& f : faults) end = std::max(end, f.real.spec.start + f.real.spec.duration.value_or(0));
  return end;
}

namespace {

// The keys a fault of this type takes, here and in the simulator, and
// those a real fault must have.
void check_fault_keys(const Source& source, const MapView& fault, const injectors::FaultDescriptor& descriptor) {
  const std::string& type_name = descriptor.spec.name;
  std::vector<std::string> keys = {"type", "target", "at", "duration", "mechanism", "site"};
  for (const auto& p : descriptor.spec.params) keys.push_back(p.name);
  if (descriptor.real) keys.insert(keys.end(), descriptor.real->keys.begin(), descriptor.real->keys.end());
  for (const Field& field : fault.entries())
    if (std::find(keys.begin(), keys.end(), key_of(field)) == keys.end())
      source.fail(field.key_mark, "unknown key '" + key_of(field) + "' for " + type_name);
  for (const char* key : {"target", "at", "duration"})
    if (!fault.has(key))
      source.fail(fault.mark(),
                  std::string("a real fault needs '") + key + "' (nothing runs open-ended on a real host)");
}

// How the fault is applied: mechanism, method, site commands, traffic match.
void read_mechanism(const Source& source, const MapView& fault, injectors::real::RealFault& rf) {
  if (fault.has("mechanism")) rf.mechanism = read_text(source, fault.field("mechanism"));
  if (fault.has("method")) rf.method = read_text(source, fault.field("method"));
  if (fault.has("site")) {
    const MapView site(source, fault.field("site"));
    site.allow_only({"apply", "revert"});
    if (!site.has("apply") || !site.has("revert")) source.fail(site.mark(), "site needs both apply and revert");
    rf.site_apply = read_commands(source, site.field("apply"));
    rf.site_revert = read_commands(source, site.field("revert"));
    if (rf.mechanism.empty()) rf.mechanism = "site";
  }
  if (fault.has("match")) {
    const MapView match(source, fault.field("match"));
    match.allow_only({"dst", "src", "proto", "dport", "sport", "dscp"});
    for (const Field& field : match.entries()) {
      const std::string key = key_of(field), value = read_text(source, field);
      if (!injectors::real::valid_match_value(key, value))
        source.fail(field.value_mark, "bad match." + key + " '" + value + "'");
      rf.match[key] = value;
    }
    if ((rf.match.contains("dport") || rf.match.contains("sport")) && !rf.match.contains("proto"))
      source.fail(match.mark(), "match on ports needs proto: tcp or udp");
  }
}

// Maps the target to the real thing and checks the allow-list against both names.
void map_to_host(const Source& source, const Field& target_field, const ComponentId& target, const ChaosPlan& plan,
                 const std::map<std::string, std::string>& nic_to_interface, injectors::real::RealFault& rf) {
  std::string touched = rf.spec.target;
  if (auto nic = nic_of(target)) {
    auto it = nic_to_interface.find(nic->str());
    if (it == nic_to_interface.end())
      source.fail(target_field.value_mark, rf.spec.target + " is not mapped to an interface in map.interfaces");
    rf.interface = it->second;
    touched = nic->str();
  } else if (target.kind == ComponentKind::gpu) {
    auto it = std::find_if(plan.gpus.begin(), plan.gpus.end(), [&](auto& g) { return g.second == rf.spec.target; });
    if (it == plan.gpus.end())
      source.fail(target_field.value_mark, rf.spec.target + " is not mapped to a GPU index in map.gpus");
    rf.gpu_index = it->first;
  }
  const auto& allow = plan.safety.allow;
  if (std::find(allow.begin(), allow.end(), rf.spec.target) == allow.end() &&
      std::find(allow.begin(), allow.end(), touched) == allow.end())
    source.fail(target_field.value_mark, rf.spec.target + " is not in safety.allow");
}

// One entry of `faults:`, read through its type's descriptor: the spec part
// for its parameters (the same reader as a scenario's), the real driver for
// what it can target here and the keys it takes.
ChaosFault read_fault(const Source& source, const Field& item, const injectors::FaultCatalog& types,
                      const ChaosPlan& plan, const ComponentId& host,
                      const std::map<std::string, std::string>& nic_to_interface) {
  const MapView fault(source, item);
  const Field type_field = fault.require("type");
  const std::string type_name = read_text(source, type_field);
  const injectors::FaultDescriptor* descriptor = types.find(type_name);
  if (!descriptor)
    source.fail(type_field.value_mark, "unknown fault type '" + type_name + "' (known: " + types.names() + ")");
  const injectors::FaultTypeInfo& info = descriptor->spec;
  check_fault_keys(source, fault, *descriptor);

  ChaosFault cf;
  const SourcePos pos = to_pos(fault.mark());
  cf.line = pos.line;
  cf.column = pos.column;
  injectors::real::RealFault& rf = cf.real;
  rf.spec.type = info.name;
  const Field target_field = fault.field("target");
  const ComponentId target = read_component(source, target_field);
  if (!descriptor->real || std::find(descriptor->real->targets.begin(), descriptor->real->targets.end(), target.kind) ==
                               descriptor->real->targets.end())
    source.fail(target_field.value_mark,
                type_name + " cannot target a " + std::string(sim::kind_name(target.kind)) + " on a real host");
  rf.driver = *descriptor->real;
  if (target.host != host.host)
    source.fail(target_field.value_mark, "'" + target.str() + "' is not on this host (" + plan.host + ")");
  rf.spec.target = target.str();
  rf.spec.start = read_duration(source, fault.field("at"), true);
  const Field duration = fault.field("duration");
  rf.spec.duration = read_duration(source, duration, false);
  if (*rf.spec.duration > plan.safety.max_duration)
    source.fail(duration.value_mark, "duration " + sim::format_duration(*rf.spec.duration) +
                                         " exceeds safety.max_duration " +
                                         sim::format_duration(plan.safety.max_duration));

  for (const auto& p : info.params)
    if (p.simulated_only && fault.has(p.name))
      source.fail(fault.field(p.name).value_mark,
                  type_name + "." + p.name + " is simulated only: on a real host, start the fault that much later");
  rf.spec.params = read_fault_params(source, fault, info, nullptr);
  check_fault_rules(source, fault, info, rf.spec);
  read_mechanism(source, fault, rf);
  if (rf.driver.check)
    if (auto problem = rf.driver.check(rf)) source.fail(fault.mark(), *problem);
  map_to_host(source, target_field, target, plan, nic_to_interface, rf);
  return cf;
}

void read_map(const Source& source, const Field& field, const ComponentId& host, ChaosPlan& plan,
              std::map<std::string, std::string>& nic_to_interface) {
  const MapView map(source, field);
  map.allow_only({"interfaces", "gpus"});
  auto on_host = [&](const Field& f, const ComponentId& id) {
    if (id.host != host.host) source.fail(f.value_mark, "'" + id.str() + "' is not on this host (" + plan.host + ")");
  };
  if (map.has("interfaces")) {
    const MapView interfaces(source, map.field("interfaces"));
    for (const Field& f : interfaces.entries()) {
      const std::string dev = key_of(f);
      if (!injectors::real::valid_interface_name(dev))
        source.fail(f.key_mark, "'" + dev + "' is not a valid interface name");
      const ComponentId id = read_component(source, f);
      auto nic = nic_of(id);
      if (!nic || id.kind == ComponentKind::flow_table)
        source.fail(f.value_mark, "an interface maps to a NIC or host link id");
      on_host(f, id);
      if (nic_to_interface.contains(nic->str())) source.fail(f.value_mark, nic->str() + " is mapped twice");
      nic_to_interface[nic->str()] = dev;
      plan.interfaces[dev] = id.str();
    }
  }
  if (map.has("gpus")) {
    const MapView gpus(source, map.field("gpus"));
    for (const Field& f : gpus.entries()) {
      const std::string key = key_of(f);
      int index = -1;
      const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), index);
      if (error != std::errc() || end != key.data() + key.size() || index < 0)
        source.fail(f.key_mark, "a GPU index is a whole number >= 0, got '" + key + "'");
      const ComponentId id = read_component(source, f);
      if (id.kind != ComponentKind::gpu) source.fail(f.value_mark, "a GPU index maps to a GPU id like h12.gpu7");
      on_host(f, id);
      plan.gpus[index] = id.str();
    }
  }
}

void read_safety(const Source& source, const Field& field, ChaosSafety& safety) {
  const MapView map(source, field);
  map.allow_only({"allow", "max_concurrent", "max_duration", "abort_command", "abort_interval", "allow_default_route"});
  if (!map.has("allow") || !map.has("max_duration"))
    source.fail(map.mark(), "safety needs 'allow' and 'max_duration': there is no unbounded chaos");
  for (const Field& f : read_sequence(source, map.field("allow")))
    safety.allow.push_back(read_component(source, f).str());
  safety.max_duration = read_duration(source, map.field("max_duration"), true);
  if (map.has("max_concurrent"))
    safety.max_concurrent = static_cast<int>(read_integer(source, map.field("max_concurrent"), 1, 1000));
  if (map.has("abort_command")) safety.abort_command = read_argv(source, map.field("abort_command"));
  if (map.has("abort_interval")) {
    safety.abort_interval = read_duration(source, map.field("abort_interval"), true);
    if (safety.abort_interval < sim::kSecond)
      source.fail(map.field("abort_interval").value_mark, "abort_interval must be >= 1s");
  }
  if (map.has("allow_default_route"))
    for (const Field& f : read_sequence(source, map.field("allow_default_route")))
      safety.allow_default_route.push_back(read_text(source, f));
}

}  // namespace

ChaosPlan parse_chaos_plan(const std::string& text, const std::string& file_name,
                           const injectors::FaultCatalog& types) {
  const Source source(file_name);
  const YAML::Node root = load_one_document(source, text, "a chaos plan");
  if (!root.IsMap()) throw InputError(file_name, 1, 1, "a chaos plan must be a map");
  const MapView top(source, Field{"", root, root.Mark(), root.Mark()});
  top.allow_only({"name", "host", "map", "safety", "faults"});

  ChaosPlan plan;
  plan.source_path = file_name;
  const Field name = top.require("name");
  plan.name = read_text(source, name);
  if (plan.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos)
    source.fail(name.value_mark, "name may hold only a-z, 0-9, '-' and '_' (it names files and nft tables)");
  const Field host_field = top.require("host");
  const ComponentId host = read_component(source, host_field);
  if (host.kind != ComponentKind::host) source.fail(host_field.value_mark, "host must be a host id like h12");
  plan.host = host.str();
  std::map<std::string, std::string> nic_to_interface;
  read_map(source, top.require("map"), host, plan, nic_to_interface);
  read_safety(source, top.require("safety"), plan.safety);

  const Field faults = top.require("faults");
  const std::vector<Field> items = read_sequence(source, faults);
  if (items.empty()) source.fail(faults.value_mark, "faults must be a non-empty list");
  for (const Field& item : items) plan.faults.push_back(read_fault(source, item, types, plan, host, nic_to_interface));

  std::stable_sort(plan.faults.begin(), plan.faults.end(),
                   [](const ChaosFault& a, const ChaosFault& b) { return a.real.spec.start < b.real.spec.start; });
  int n = 0;
  for (ChaosFault& f : plan.faults) f.real.spec.id = "f" + std::to_string(++n);  // ids in onset order
  if (plan.end() > plan.safety.max_duration)
    throw InputError(file_name, 1, 1,
                     "the plan runs " + sim::format_duration(plan.end()) + ", longer than safety.max_duration " +
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
                        (a.real.driver.host_wide && a.real.spec.type == b.real.spec.type);
      if (same_thing)
        throw InputError(file_name, a.line, a.column,
                         a.real.spec.id + " overlaps " + b.real.spec.id + " on the same " +
                             (a.real.gpu_index >= 0 ? "GPU" : "interface"));
    }
    if (concurrent > plan.safety.max_concurrent)
      throw InputError(file_name, a.line, a.column,
                       std::to_string(concurrent) + " faults would be active at once; safety.max_concurrent is " +
                           std::to_string(plan.safety.max_concurrent));
  }
  return plan;
}

ChaosPlan parse_chaos_plan(const std::string& text, const std::string& file_name) {
  return parse_chaos_plan(text, file_name, injectors::builtin_fault_catalog());
}

ChaosPlan load_chaos_plan(const std::string& path) { return parse_chaos_plan(read_input_file(path), path); }

}  // namespace gauntlet::harness
