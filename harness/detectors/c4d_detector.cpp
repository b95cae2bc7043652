#include "harness/detectors/c4d_detector.hpp"

#include <algorithm>

#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

sim::Nanos median_of(std::vector<sim::Nanos> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

// The RNIC a worker's traffic uses (GPU-RNIC affinity) and that RNIC's host
// link, in the operator's naming. Empty when the worker id is not a GPU.
struct WorkerPlace {
  std::string gpu, host, rnic, host_link;
  bool valid = false;
};

WorkerPlace place_of(const std::string& worker, const sim::Topology* topology) {
  WorkerPlace out;
  const auto id = sim::ComponentId::parse(worker);
  if (!id || id->kind != sim::ComponentKind::gpu) return out;
  out.valid = true;
  out.gpu = worker;
  out.host = sim::ComponentId::make_host(id->host).str();
  const int nic = topology ? topology->nic_of_gpu(id->index) : id->index;
  out.rnic = sim::ComponentId::make_nic(id->host, nic).str();
  if (topology && id->host < topology->hosts())
    out.host_link = topology->link_name(topology->host_link(topology->endpoint(id->host, nic)));
  return out;
}

void add_suspect(std::vector<Suspect>* out, const std::string& id, double score) {
  if (id.empty()) return;
  for (const Suspect& s : *out)
    if (s.id == id) return;
  out->push_back({id, score});
}

std::string signature(const std::string& kind, const std::vector<Suspect>& suspects) {
  std::string s = kind;
  for (const Suspect& suspect : suspects) s += "|" + suspect.id;
  return s;
}

}  // namespace

DetectorInfo C4dDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo c4d;
  c4d.name = "c4d";
  c4d.summary =
      "C4D: per-collective timing compared across the ranks of each communicator at every sync point; "
      "hang vs slow, communication vs computation, slow links from the sender x receiver latency matrix";
  c4d.params = {
      declare_param("hang_after", K::duration, "20s", "how long a sync point may stay unresolved before it is a hang",
                    0.001),
      declare_param("compute_slow", K::number, "0.05",
                    "entry lateness, as a fraction of the step, that makes a rank compute-slow", 0.0),
      declare_param("comm_slow", K::number, "1.5",
                    "ring-edge latency over its peers' median (and its own best) that makes it slow", 1.0),
  };
  c4d.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<C4dDetector>(C4dDetector::config_from(ctx.params), ctx.topology);
  };
  return c4d;
}

C4dConfig C4dDetector::config_from(const DetectorParams& params) {
  C4dConfig c;
  c.hang_after = params.duration("hang_after");
  c.compute_slow = params.number("compute_slow");
  c.comm_slow = params.number("comm_slow");
  return c;
}

std::vector<Suspect> c4d_localize_cells(const std::vector<C4dCell>& cells, const sim::Topology* topology) {
  std::vector<const C4dCell*> remaining;
  for (const C4dCell& c : cells)
    if (c.bad) remaining.push_back(&c);
  std::vector<Suspect> out;
  if (remaining.empty()) return out;
  const double total = static_cast<double>(remaining.size());
  while (!remaining.empty()) {
    std::map<std::string, int> touches;  // ordered: ties go to the smaller id, deterministically
    for (const C4dCell* c : remaining) {
      ++touches[c->sender];
      if (c->receiver != c->sender) ++touches[c->receiver];
    }
    std::string best;
    int best_count = 0;
    for (const auto& [worker, count] : touches)
      if (count > best_count) best = worker, best_count = count;
    if (best_count >= 2) {
      int out_cells = 0, in_cells = 0;
      for (const C4dCell* c : remaining) {
        out_cells += c->sender == best;
        in_cells += c->receiver == best;
      }
      const WorkerPlace p = place_of(best, topology);
      const double score = best_count / total;
      if (out_cells > 0 && in_cells > 0) {
        add_suspect(&out, p.host_link, score);  // both directions: the link carries both
        add_suspect(&out, p.rnic, score * 0.9);
      } else {
        add_suspect(&out, p.rnic, score);  // a slow row (sender) or a slow column (receiver)
        add_suspect(&out, p.host_link, score * 0.9);
      }
      add_suspect(&out, p.host, score * 0.5);
      std::erase_if(remaining, [&](const C4dCell* c) { return c->sender == best || c->receiver == best; });
      continue;
    }
    // Single cells: each is its own path.
    for (const C4dCell* c : remaining) {
      const WorkerPlace s = place_of(c->sender, topology), r = place_of(c->receiver, topology);
      const double score = 1.0 / total;
      if (s.valid && r.valid && s.host == r.host) {
        add_suspect(&out, s.gpu, score);
        continue;
      }
      add_suspect(&out, s.rnic, score);
      add_suspect(&out, s.host_link, score * 0.9);
      add_suspect(&out, r.host_link, score * 0.8);
    }
    remaining.clear();
  }
  return out;
}

C4dDetector::NameId C4dDetector::Names::intern(const std::string& name) {
  auto [it, fresh] = ids_.try_emplace(name, static_cast<NameId>(names_.size()));
  if (fresh) names_.push_back(name);
  return it->second;
}

C4dDetector::RecordNames C4dDetector::intern(const telemetry::CollectiveRecord& c) {
  const RecordNames names{communicators_.intern(c.communicator()), workers_.intern(c.worker()),
                          workers_.intern(c.peer())};
  if (comms_.size() < communicators_.size()) comms_.resize(communicators_.size());
  return names;
}

void C4dDetector::add(const telemetry::CollectiveRecord& c, const RecordNames& names) {
  const Key key{names.communicator, c.sequence()};
  if (hang_reported_.count(key)) return;
  comms_[names.communicator].members[c.rank()] = names.worker;
  SyncPoint& point = open_[key];
  RankEntry& e = point.ranks[c.rank()];
  e.worker = names.worker;
  e.peer = names.peer;
  e.start = c.start_ns();
  e.end = c.end_ns();
  point.last_progress = std::max({point.last_progress, c.start_ns(), c.end_ns()});
}

void C4dDetector::add_steady(const telemetry::SteadyRun& run) {
  const bool repeat = run.records_version() != 0 && run.records_version() == interned_version_;
  if (!repeat) interned_.clear();
  interned_version_ = run.records_version();
  std::size_t i = 0;
  for (const telemetry::Record& r : run.records()) {
    if (!r.has_collective()) continue;
    if (i == interned_.size()) interned_.push_back(intern(r.collective()));
    add(r.collective(), interned_[i++]);
  }
}

bool C4dDetector::complete(const Key& key, const SyncPoint& point) const {
  const Communicator& comm = comms_[key.first];
  for (const auto& [rank, worker] : comm.members) {
    const RankEntry* e = point.ranks.find(rank);
    if (!e || e->end == 0) return false;
  }
  return true;
}

void C4dDetector::sort_by_name(std::vector<Key>* keys) const {
  std::sort(keys->begin(), keys->end(), [this](const Key& a, const Key& b) {
    if (a.first == b.first) return a.second < b.second;
    return communicators_.name(a.first) < communicators_.name(b.first);
  });
}

void C4dDetector::add_bad_edges(const SyncPoint& point, std::vector<C4dCell>* bad_cells) {
  entry_of_worker_.resize(workers_.size(), nullptr);
  for (const auto& [rank, e] : point.ranks) entry_of_worker_[e.worker] = &e;
  struct Edge {
    NameId sender, receiver;
    sim::Nanos latency;
  };
  std::vector<Edge> edges;
  std::vector<sim::Nanos> latencies;
  // A ring moves only once its last rank is in: a late rank's wait is not
  // its peers' edges being slow.
  sim::Nanos last_entry = 0;
  for (const auto& [rank, e] : point.ranks) last_entry = std::max(last_entry, e.start);
  for (const auto& [rank, e] : point.ranks) {
    const RankEntry* peer = entry_of_worker_[e.peer];
    if (e.peer == kNoName || !peer || e.peer == e.worker) continue;
    const sim::Nanos latency = peer->end - last_entry;
    edges.push_back({e.worker, e.peer, latency});
    latencies.push_back(latency);
  }
  for (const auto& [rank, e] : point.ranks) entry_of_worker_[e.worker] = nullptr;
  const sim::Nanos median = median_of(latencies);
  for (const Edge& edge : edges) {
    const std::uint64_t cell = static_cast<std::uint64_t>(edge.sender) << 32 | edge.receiver;
    auto [it, fresh] = best_edge_.try_emplace(cell, edge.latency);
    const double peer_ratio = median > 0 ? static_cast<double>(edge.latency) / static_cast<double>(median) : 1.0;
    const double own_ratio =
        fresh || it->second <= 0 ? peer_ratio : static_cast<double>(edge.latency) / static_cast<double>(it->second);
    const bool slow = peer_ratio >= config_.comm_slow && own_ratio >= config_.comm_slow;
    if (!fresh) it->second = std::min(it->second, edge.latency);
    if (slow) bad_cells->push_back({workers_.name(edge.sender), workers_.name(edge.receiver), true});
  }
}

void C4dDetector::evaluate(const Key& key, const SyncPoint& point, std::vector<C4dCell>* bad_cells,
                           std::vector<std::string>* late) {
  ++evaluated_;
  Communicator& comm = comms_[key.first];
  std::vector<sim::Nanos> entries;
  for (const auto& [rank, e] : point.ranks) entries.push_back(e.start);
  const sim::Nanos median_entry = median_of(entries);
  if (comm.last_median_entry >= 0 && key.second > comm.last_sequence)
    comm.step = (median_entry - comm.last_median_entry) / static_cast<sim::Nanos>(key.second - comm.last_sequence);
  if (key.second >= comm.last_sequence) {
    comm.last_sequence = key.second;
    comm.last_median_entry = median_entry;
  }

  if (comm.step > 0)
    for (const auto& [rank, e] : point.ranks)
      if (static_cast<double>(e.start - median_entry) > config_.compute_slow * static_cast<double>(comm.step))
        late->push_back(workers_.name(e.worker));

  add_bad_edges(point, bad_cells);
}

std::vector<Suspect> C4dDetector::compute_suspects(const std::vector<std::string>& workers) const {
  std::map<std::string, std::vector<std::string>> by_host;  // host -> GPUs
  std::vector<std::string> hosts_in_order;
  for (const std::string& w : workers) {
    const WorkerPlace p = place_of(w, topology_);
    const std::string host = p.valid ? p.host : w;
    if (!by_host.count(host)) hosts_in_order.push_back(host);
    auto& gpus = by_host[host];
    if (std::find(gpus.begin(), gpus.end(), w) == gpus.end()) gpus.push_back(w);
  }
  // Hosts with the most stuck or late GPUs first.
  std::stable_sort(hosts_in_order.begin(), hosts_in_order.end(),
                   [&](const std::string& a, const std::string& b) { return by_host[a].size() > by_host[b].size(); });
  std::vector<Suspect> out;
  const double total = static_cast<double>(workers.size());
  for (const std::string& host : hosts_in_order) {
    const auto& gpus = by_host[host];
    const double score = static_cast<double>(gpus.size()) / total;
    if (gpus.size() >= 2) add_suspect(&out, host, score);
    for (const std::string& g : gpus) add_suspect(&out, g, score * 0.9);
    add_suspect(&out, host, score * 0.5);
  }
  return out;
}

void C4dDetector::check_hangs(sim::Nanos now, std::vector<Finding>* found) {
  std::vector<Key> hung;
  for (const auto& [key, point] : open_)
    if (now - point.last_progress >= config_.hang_after && !complete(key, point)) hung.push_back(key);
  sort_by_name(&hung);
  std::vector<std::string> never_entered;
  std::vector<C4dCell> stuck;
  bool comm_hang = false, unlocalized = false;
  for (const Key& key : hung) {
    const SyncPoint& point = open_.at(key);
    std::vector<std::string> missing;
    for (const auto& [rank, worker] : comms_[key.first].members)
      if (!point.ranks.count(rank)) missing.push_back(workers_.name(worker));
    if (!missing.empty()) {
      never_entered.insert(never_entered.end(), missing.begin(), missing.end());
    } else {
      comm_hang = true;
      std::unordered_map<NameId, bool> finished;
      for (const auto& [rank, e] : point.ranks) finished[e.worker] = e.end != 0;
      std::vector<C4dCell> cells;
      bool all_stuck = true;
      for (const auto& [rank, e] : point.ranks) {
        auto peer = finished.find(e.peer);
        if (e.peer == kNoName || peer == finished.end()) continue;
        cells.push_back({workers_.name(e.worker), workers_.name(e.peer), !peer->second});
        all_stuck = all_stuck && !peer->second;
      }
      // When every rank is stuck the ring gives no contrast to localize with.
      if (all_stuck)
        unlocalized = true;
      else
        stuck.insert(stuck.end(), cells.begin(), cells.end());
    }
    hang_reported_.insert(key);
    open_.erase(key);
  }
  if (!never_entered.empty()) found->push_back({"fail_stop", compute_suspects(never_entered)});
  // Rings where everyone waits are the echo of a rank that never entered
  // elsewhere, when there is one: that is the hang to report.
  if (!never_entered.empty()) unlocalized = false;
  if (comm_hang && (!stuck.empty() || unlocalized))
    found->push_back({"fail_stop", c4d_localize_cells(stuck, topology_)});
}

void C4dDetector::observe(const telemetry::Batch& batch) {
  const sim::Nanos now = batch.until_ns();
  for (const telemetry::Record& r : batch.records())
    if (r.has_collective()) add(r.collective(), intern(r.collective()));
  // A steady run repeats its first iteration: that one carries all it can say.
  for (const telemetry::SteadyRun& run : batch.steady()) add_steady(run);

  std::vector<Finding> hangs, slow;
  std::vector<C4dCell> cells;
  std::vector<std::string> late;
  std::vector<Key> completed;
  for (const auto& [key, point] : open_)
    if (complete(key, point)) completed.push_back(key);
  sort_by_name(&completed);
  for (const Key& key : completed) {
    auto it = open_.find(key);
    evaluate(key, it->second, &cells, &late);
    open_.erase(it);
  }
  const bool evaluated_any = !completed.empty();
  // One round's late ranks and slow cells, over every communicator, make one
  // finding each: a host's GPUs sit in different rings.
  if (!late.empty()) slow.push_back({"fail_slow", compute_suspects(late)});
  std::vector<Suspect> network = c4d_localize_cells(cells, topology_);
  if (!network.empty()) slow.push_back({"network", std::move(network)});
  check_hangs(now, &hangs);

  for (const Finding& f : hangs) raise({sim::to_seconds(now), kName, f.kind, f.suspects});
  if (!evaluated_any) return;
  std::set<std::string> seen;
  for (const Finding& f : slow) {
    const std::string sig =
        signature(f.kind, {f.suspects.begin(), f.suspects.begin() + std::min<std::size_t>(1, f.suspects.size())});
    seen.insert(sig);
    if (!active_.count(sig)) raise({sim::to_seconds(now), kName, f.kind, f.suspects});
  }
  active_ = std::move(seen);
}

}  // namespace gauntlet::harness
