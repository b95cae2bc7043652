#include "harness/scenario/trace_faults.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "harness/scenario/fault_conflicts.hpp"
#include "harness/scenario/fault_params_read.hpp"
#include "harness/scenario/fault_trace.hpp"
#include "harness/scenario/input_error.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness::detail {
namespace {

using injectors::FaultCatalog;
using injectors::FaultSpec;
using injectors::FaultTypeInfo;
using sim::ComponentKind;
using sim::Nanos;
using namespace yaml_read;

// What one key of map.types turns a trace category into.
struct TypeChoice {
  std::string key;
  const FaultTypeInfo* info = nullptr;  // null: the category is skipped
  injectors::FaultParams params;
  Field value;
  std::optional<MapView> map;  // the {type: ..., PARAM: ...} form
  ComponentKind kind = ComponentKind::host;
  bool used = false;
};

bool owned_by_host(ComponentKind kind) {
  return kind != ComponentKind::leaf && kind != ComponentKind::spine && kind != ComponentKind::fabric_link;
}

TypeChoice read_type_choice(const Source& source, const Field& field, const sim::Topology& topology,
                            const FaultCatalog& types) {
  TypeChoice choice;
  choice.key = key_of(field);
  choice.value = field;
  Field type_field = field;
  if (field.value.IsMap()) {
    choice.map.emplace(source, field);
    type_field = choice.map->require("type");
  }
  const std::string name = read_text(source, type_field);
  if (name == "skip") {
    if (choice.map) choice.map->allow_only({"type"}, " (skip takes no parameters)");
    return choice;
  }
  const injectors::FaultDescriptor* descriptor = types.find(name);
  if (!descriptor)
    source.fail(type_field.value_mark, "unknown fault type '" + name + "' (known: " + types.names() + ", or skip)");
  choice.info = &descriptor->spec;
  const auto kind = std::find_if(choice.info->targets.begin(), choice.info->targets.end(), owned_by_host);
  if (kind == choice.info->targets.end())
    source.fail(type_field.value_mark, "a trace fault happens on a server, and " + name + " targets no part of a host");
  choice.kind = *kind;
  if (choice.map) {
    std::vector<std::string> allowed = {"type"};
    for (const injectors::ParamInfo& param : choice.info->params) allowed.push_back(param.name);
    choice.map->allow_only(allowed, " (parameters of " + name + ")");
    choice.params = read_fault_params(source, *choice.map, *choice.info, &topology);
  } else {
    for (const injectors::ParamInfo& param : choice.info->params)
      if (param.required)
        source.fail(field.value_mark, name + " needs its parameter '" + param.name + "': write {type: " + name + ", " +
                                          param.name + ": ...}");
  }
  return choice;
}

std::vector<std::string> split_segments(const std::string& category) {
  std::vector<std::string> segments;
  std::size_t from = 0;
  while (true) {
    const std::size_t slash = category.find('/', from);
    segments.push_back(category.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
    if (slash == std::string::npos) return segments;
    from = slash + 1;
  }
}

// How deep into the category a key reaches: its prefix of d segments ranks
// 2d, segment d alone 2d - 1, "*" 0; no match is -1.
int match_rank(const std::string& key, const std::vector<std::string>& segments) {
  if (key == "*") return 0;
  int best = -1;
  std::string prefix;
  for (std::size_t d = 0; d < segments.size(); ++d) {
    prefix += (d ? "/" : "") + segments[d];
    if (key == prefix) best = std::max(best, 2 * static_cast<int>(d + 1));
    if (key == segments[d]) best = std::max(best, 2 * static_cast<int>(d + 1) - 1);
  }
  return best;
}

class TypeMap {
 public:
  TypeMap(const Source& source, const Field& field, const sim::Topology& topology, const FaultCatalog& types) {
    const MapView map(source, field);
    for (const Field& entry : map.entries()) choices_.push_back(read_type_choice(source, entry, topology, types));
    if (choices_.empty()) source.fail(field.value_mark, "'" + field.name + "' maps no trace category to a fault type");
  }

  TypeChoice& choice_for(const FaultTrace& trace, const TraceFault& fault) {
    auto cached = by_category_.find(fault.category);
    if (cached != by_category_.end()) return choices_[cached->second];
    const auto segments = split_segments(fault.category);
    int best_rank = -1;
    std::size_t best = 0;
    for (std::size_t i = 0; i < choices_.size(); ++i) {
      const int rank = match_rank(choices_[i].key, segments);
      if (rank > best_rank) best_rank = rank, best = i;
    }
    if (best_rank < 0)
      throw InputError(trace.file, fault.pos.line, fault.pos.column,
                       "category '" + fault.category +
                           "' has no fault type in the scenario's map.types "
                           "(name it, one of its segments, or \"*\")");
    by_category_.emplace(fault.category, best);
    choices_[best].used = true;
    return choices_[best];
  }

  void check_all_used(const Source& source, const std::string& trace_file) const {
    for (const TypeChoice& choice : choices_)
      if (!choice.used && choice.key != "*")
        source.fail(choice.value.key_mark, "'" + choice.key + "' names no category of " + trace_file);
  }

 private:
  std::vector<TypeChoice> choices_;
  std::map<std::string, std::size_t> by_category_;
};

// Trace server index -> host, or -1 when the server does not replay.
std::vector<int> read_host_map(const Source& source, const MapView& map, const FaultTrace& trace,
                               const sim::Topology& topology) {
  std::vector<int> hosts(trace.servers.size(), -1);
  if (!map.has("hosts") || map.field("hosts").value.IsScalar()) {
    if (map.has("hosts") && read_text(source, map.field("hosts")) != "modulo")
      source.fail(map.field("hosts").value_mark, "'map.hosts' must be modulo or a map of trace servers to hosts");
    for (std::size_t k = 0; k < hosts.size(); ++k) hosts[k] = static_cast<int>(k % topology.hosts());
    return hosts;
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < trace.servers.size(); ++k) index.emplace(trace.servers[k], k);
  const MapView servers(source, map.field("hosts"));
  for (const Field& entry : servers.entries()) {
    const auto server = index.find(key_of(entry));
    if (server == index.end())
      source.fail(entry.key_mark, "server '" + key_of(entry) + "' has no fault in " + trace.file);
    const std::string host = read_text(source, entry);
    const auto id = sim::ComponentId::parse(host);
    if (!id || id->kind != ComponentKind::host || !topology.contains(*id))
      source.fail(entry.value_mark,
                  "'" + host + "' is not a host of this cluster (h0 .. h" + std::to_string(topology.hosts() - 1) + ")");
    hosts[server->second] = id->host;
  }
  return hosts;
}

std::vector<std::string> candidates_on(const sim::Topology& topology, int host, ComponentKind kind) {
  const sim::ClusterShape& shape = topology.shape();
  std::vector<std::string> names;
  const int parts =
      kind == ComponentKind::gpu ? shape.gpus_per_host
      : (kind == ComponentKind::nic || kind == ComponentKind::flow_table || kind == ComponentKind::host_link)
          ? shape.rnics_per_host
          : 1;
  for (int k = 0; k < parts; ++k) {
    switch (kind) {
      case ComponentKind::host:
        names.push_back(sim::ComponentId::make_host(host).str());
        break;
      case ComponentKind::gpu:
        names.push_back(sim::ComponentId::make_gpu(host, k).str());
        break;
      case ComponentKind::nic:
        names.push_back(sim::ComponentId::make_nic(host, k).str());
        break;
      case ComponentKind::flow_table:
        names.push_back(sim::ComponentId::make_flow_table(host, k).str());
        break;
      case ComponentKind::cpu:
        names.push_back(sim::ComponentId::make_cpu(host).str());
        break;
      case ComponentKind::agent:
        names.push_back(sim::ComponentId::make_agent(host).str());
        break;
      case ComponentKind::host_link:
        names.push_back(topology.link_name(topology.host_link(topology.endpoint(host, k))));
        break;
      default:
        break;
    }
  }
  return names;
}

// Places mapped faults in onset order, merging overlaps of one type on one
// target and dropping what follows an open-ended fail-stop on its host.
class Placement {
 public:
  Placement(const FaultCatalog& types, sim::Rng rng) : types_(types), rng_(std::move(rng)) {}

  // The target the fault lands on, one of the host's candidates without
  // such a fault open if any; none when its host is out of service.
  std::optional<std::string> choose_target(const FaultSpec& fault, const std::vector<std::string>& candidates) {
    const auto out = out_since_.find(owning_host(candidates.front()));
    if (out != out_since_.end() && fault.start > out->second) return std::nullopt;
    std::vector<const std::string*> free;
    for (const std::string& target : candidates)
      if (!open_at(fault.type, target, fault.start)) free.push_back(&target);
    if (free.empty()) return candidates[rng_.below(candidates.size())];
    return *free[rng_.below(free.size())];
  }

  void add(FaultSpec fault) {
    const auto key = std::make_pair(fault.type, fault.target);
    if (open_at(fault.type, fault.target, fault.start)) {
      FaultSpec& earlier = faults_[last_.at(key)];
      const auto end = fault.end(), earlier_end = earlier.end();
      earlier.duration =
          end && earlier_end ? std::optional(std::max(*end, *earlier_end) - earlier.start) : std::nullopt;
      note_fail_stop(earlier);
      return;
    }
    last_[key] = faults_.size();
    note_fail_stop(fault);
    faults_.push_back(std::move(fault));
  }

  std::vector<FaultSpec> take() { return std::move(faults_); }

 private:
  bool open_at(const std::string& type, const std::string& target, Nanos at) const {
    const auto last = last_.find({type, target});
    if (last == last_.end()) return false;
    const auto end = faults_[last->second].end();
    return !end || *end > at;
  }
  void note_fail_stop(const FaultSpec& fault) {
    if (!fault.duration && types_.spec(fault.type).fail_stop)
      out_since_.try_emplace(owning_host(fault.target), fault.start);
  }

  const FaultCatalog& types_;
  sim::Rng rng_;
  std::vector<FaultSpec> faults_;
  std::map<std::pair<std::string, std::string>, std::size_t> last_;
  std::map<int, Nanos> out_since_;
};

void check_rules(const Source& source, const TypeChoice& choice, const FaultSpec& fault) {
  if (choice.map) return check_fault_rules(source, *choice.map, *choice.info, fault);
  if (!choice.info->check) return;
  if (const auto problem = choice.info->check(fault))
    source.fail(choice.value.value_mark, choice.info->name + ": '" + problem->param + "' " + problem->message);
}

FaultTrace load_entry_trace(const Source& source, const MapView& map) {
  const std::string path = source.resolve(read_text(source, map.require("from_trace")));
  const Field format_field = map.require("format");
  const auto format = trace_format_named(read_text(source, format_field));
  if (!format) source.fail(format_field.value_mark, "'format' must be infinitehbd or csv");
  return load_fault_trace(path, *format);
}

}  // namespace

std::vector<FaultSpec> read_trace_entry(const Source& source, const MapView& map, std::size_t index,
                                        const sim::Topology& topology, Nanos run_duration, std::uint64_t seed,
                                        const FaultCatalog& types) {
  map.allow_only({"from_trace", "format", "start", "map"}, " (keys of a from_trace entry)");
  const FaultTrace trace = load_entry_trace(source, map);
  const Nanos offset = map.has("start") ? read_duration(source, map.field("start"), true) : 0;

  const MapView mapping(source, map.require("map"));
  mapping.allow_only({"hosts", "types"});
  const std::vector<int> hosts = read_host_map(source, mapping, trace, topology);
  TypeMap type_map(source, mapping.require("types"), topology, types);

  // Every category of the trace needs a mapping, whatever part of it the run replays.
  std::vector<const TypeChoice*> choices;
  for (const TraceFault& record : trace.faults) choices.push_back(&type_map.choice_for(trace, record));
  type_map.check_all_used(source, trace.file);

  Placement placement(types, sim::RngStreams(seed).stream("faults/" + std::to_string(index)));
  for (std::size_t n = 0; n < trace.faults.size(); ++n) {
    const TraceFault& record = trace.faults[n];
    const TypeChoice& choice = *choices[n];
    if (record.start >= offset + run_duration) break;
    const std::optional<Nanos> repair =
        record.repair ? std::optional(std::max(*record.repair, kTraceResolution)) : std::nullopt;
    if (repair && record.start + *repair <= offset) continue;  // repaired before the run
    const int host = hosts[record.server];
    if (host < 0 || !choice.info) continue;
    FaultSpec fault;
    fault.type = choice.info->name;
    fault.start = std::max(record.start - offset, Nanos{0});
    if (repair) fault.duration = record.start + *repair - offset - fault.start;
    fault.params = choice.params;
    const auto target = placement.choose_target(fault, candidates_on(topology, host, choice.kind));
    if (!target) continue;
    fault.target = *target;
    check_rules(source, choice, fault);
    placement.add(std::move(fault));
  }
  return placement.take();
}

std::vector<FailureRate> fit_trace_entry(const Source& source, const MapView& map, const sim::Topology& topology,
                                         const FaultCatalog& types) {
  map.allow_only({"from_trace", "format", "fit", "map"}, " (keys of a fitted from_trace entry)");
  const FaultTrace trace = load_entry_trace(source, map);
  const MapView fit(source, map.require("fit"));
  fit.allow_only({"fleet"});
  const Field fleet_field = fit.require("fleet");
  const long long fleet = read_integer(source, fleet_field, 1, 10'000'000);
  if (static_cast<std::size_t>(fleet) < trace.servers.size())
    source.fail(fleet_field.value_mark, "the trace has faults on " + std::to_string(trace.servers.size()) +
                                            " servers, more than a fleet of " + std::to_string(fleet));
  if (trace.span <= 0) source.fail(map.field("from_trace").value_mark, trace.file + " spans no time to fit rates over");
  const MapView mapping(source, map.require("map"));
  mapping.allow_only({"types"}, " (a fitted trace lands on no particular host)");
  TypeMap type_map(source, mapping.require("types"), topology, types);

  struct Observed {
    std::vector<Nanos> onsets, repairs;
  };
  std::map<const TypeChoice*, Observed> per_choice;
  std::vector<const TypeChoice*> order;
  for (const TraceFault& record : trace.faults) {
    const TypeChoice* choice = &type_map.choice_for(trace, record);
    if (!per_choice.count(choice)) order.push_back(choice);
    Observed& observed = per_choice[choice];
    observed.onsets.push_back(record.start);
    if (record.repair) observed.repairs.push_back(*record.repair);
  }
  type_map.check_all_used(source, trace.file);

  const double host_days =
      static_cast<double>(fleet) * static_cast<double>(trace.span) / static_cast<double>(sim::kDay);
  std::vector<FailureRate> rates;
  for (const TypeChoice* choice : order) {
    if (!choice->info) continue;
    const Observed& observed = per_choice.at(choice);
    FailureRate rate;
    rate.category = choice->key;
    rate.type = choice->info->name;
    rate.per = RatePer::host;
    rate.per_day = static_cast<double>(observed.onsets.size()) / host_days;
    rate.params = choice->params;
    rate.repair = fit_repair(observed.repairs, kTraceResolution);
    rate.observed = static_cast<int>(observed.onsets.size());
    rate.interarrival_cv = interarrival_cv(observed.onsets);
    rates.push_back(std::move(rate));
  }
  return rates;
}

}  // namespace gauntlet::harness::detail
