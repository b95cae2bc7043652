#include "harness/detectors/timeout_detector.hpp"

#include <algorithm>
#include <tuple>

#include "harness/detectors/batch_order.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

// Keep per-sequence entry sets only for the latest few collectives of a
// communicator (plus any that are still pending), so memory stays bounded.
constexpr std::uint64_t kSequencesKept = 64;

}  // namespace

DetectorInfo TimeoutDetector::info() {
  using K = DetectorParamKind;
  DetectorInfo timeout;
  timeout.name = "timeout";
  timeout.summary =
      "status quo: only a collective hanging past the NCCL timeout or a job crash reveals a fault; "
      "a person then needs manual_diagnosis to name the node";
  timeout.params = {
      declare_param("collective_timeout", K::duration, "30m",
                    "how long a collective may hang before the watchdog fires", 0.0),
      declare_param("manual_diagnosis", K::duration, "3h", "time a person needs after the timeout to find the node",
                    0.0),
      declare_param("page_on_timeout", K::text, "true",
                    "raise an alert without suspects when the timeout fires, before the diagnosis names one",
                    std::nullopt, std::nullopt, {"true", "false"}),
      declare_param("suspect", K::text, "auto",
                    "what the diagnosis names: the hung GPU, its host, or auto (a host when several of its GPUs hung)",
                    std::nullopt, std::nullopt, {"auto", "gpu", "host"}),
  };
  timeout.make = [](const DetectorContext& ctx) -> std::unique_ptr<Detector> {
    return std::make_unique<TimeoutDetector>(TimeoutDetector::config_from(ctx.params));
  };
  return timeout;
}

TimeoutConfig TimeoutDetector::config_from(const DetectorParams& params) {
  TimeoutConfig c;
  c.collective_timeout = params.duration("collective_timeout");
  c.manual_diagnosis = params.duration("manual_diagnosis");
  c.page_on_timeout = params.text("page_on_timeout") == "true";
  const std::string& level = params.text("suspect");
  c.suspect = level == "gpu"    ? TimeoutConfig::Level::gpu
              : level == "host" ? TimeoutConfig::Level::host
                                : TimeoutConfig::Level::automatic;
  return c;
}

void TimeoutDetector::observe(const telemetry::Batch& batch) {
  // Steady runs come merged into the record stream by time; each is read
  // once (its collectives all finished, its workers all reached
  // last_iteration), never expanded.
  // Records it does not read change nothing but the clock, and the next
  // record read (or the batch's end) advances it as far.
  const auto wanted = [](const telemetry::Record& r) { return r.has_iteration() || r.has_collective() || r.has_job(); };
  for (const BatchItem& item : ordered_items(batch, +wanted)) {
    advance_to(item.time);
    if (item.record) {
      on_record(*item.record);
      continue;
    }
    on_steady(*item.steady);
  }
  advance_to(batch.until_ns());
}

void TimeoutDetector::on_steady(const telemetry::SteadyRun& run) {
  if (run.records_version() == 0) {  // records of their own: nothing to reuse
    for (const auto& r : run.records()) {
      if (r.has_iteration()) {
        last_iteration_[r.iteration().worker()] = run.last_iteration();
        tripped_ = false;
      } else {
        on_record(r);
      }
    }
    return;
  }
  // A run breaking its version's promise (other records) is planned afresh.
  if (plan_.version != run.records_version() ||
      plan_.communicator.size() != static_cast<std::size_t>(run.records_size()))
    plan_steady(run);
  // Nothing has changed a member since the plan last ran: its records name
  // the members they named then.
  const bool members_known = plan_.members_writes_when_applied == members_writes_;
  for (int i = 0; i < run.records_size(); ++i) {
    const auto index = static_cast<std::size_t>(i);
    const telemetry::Record& r = run.records(i);
    if (std::uint64_t* last = plan_.last_iteration[index]) {
      *last = run.last_iteration();
      tripped_ = false;
    } else if (plan_.communicator[index] != SteadyPlan::kNoCommunicator) {
      on_collective(comms_[plan_.communicator[index]], r.collective(), members_known);
    } else {
      on_record(r);
    }
  }
  plan_.members_writes_when_applied = members_writes_;
}

void TimeoutDetector::plan_steady(const telemetry::SteadyRun& run) {
  plan_.version = run.records_version();
  plan_.communicator.assign(static_cast<std::size_t>(run.records_size()), SteadyPlan::kNoCommunicator);
  plan_.last_iteration.assign(static_cast<std::size_t>(run.records_size()), nullptr);
  plan_.members_writes_when_applied = UINT64_MAX;
  for (int i = 0; i < run.records_size(); ++i) {
    const telemetry::Record& r = run.records(i);
    const auto index = static_cast<std::size_t>(i);
    if (r.has_iteration()) {
      plan_.last_iteration[index] = &last_iteration_[r.iteration().worker()];  // entries are never erased
    } else if (r.has_collective()) {
      communicator(r.collective().communicator());
      plan_.communicator[index] = last_comm_;  // communicators are never erased either
    }
  }
}

void TimeoutDetector::on_record(const telemetry::Record& record) {
  switch (record.body_case()) {
    case telemetry::Record::kIteration:
      last_iteration_[record.iteration().worker()] = record.iteration().iteration();
      // An iteration finishing means the job runs again: a later hang is a new incident.
      tripped_ = false;
      break;
    case telemetry::Record::kCollective:
      on_collective(record.collective());
      break;
    case telemetry::Record::kJob: {
      const auto& e = record.job();
      if (e.kind() == telemetry::JobEvent::CRASH) {
        if (!tripped_) fire(e.time_ns());
      } else if (e.kind() == telemetry::JobEvent::RESTART || e.kind() == telemetry::JobEvent::START) {
        // Communicators are rebuilt on restart; sequences start over.
        reset_collectives();
        tripped_ = false;
      }
      break;
    }
    default:
      break;
  }
}

TimeoutDetector::Communicator& TimeoutDetector::communicator(const std::string& name) {
  if (last_comm_ < comms_.size() && comms_[last_comm_].name == name) return comms_[last_comm_];
  auto [it, added] = comm_index_.emplace(name, comms_.size());
  if (added) comms_.push_back({name, {}, {}, 0, 0});
  last_comm_ = it->second;
  return comms_[last_comm_];
}

void TimeoutDetector::on_collective(const telemetry::CollectiveRecord& c) {
  on_collective(communicator(c.communicator()), c, false);
}

void TimeoutDetector::on_collective(Communicator& comm, const telemetry::CollectiveRecord& c, bool members_known) {
  const std::size_t rank = c.rank();
  if (!members_known) {
    if (comm.members.size() <= rank) comm.members.resize(rank + 1);
    if (comm.members[rank] != c.worker()) {
      comm.members[rank] = c.worker();
      ++members_writes_;
    }
  }
  if (comm.cached_entered == nullptr || comm.cached_sequence != c.sequence()) {
    comm.cached_entered = &comm.entered[c.sequence()];
    comm.cached_sequence = c.sequence();
  }
  std::vector<bool>& in = *comm.cached_entered;
  if (in.size() <= rank) in.resize(rank + 1, false);
  in[rank] = true;
  if (c.end_ns() == 0 || comm.pending > 0) {
    auto pkey = std::make_pair(CollKey{comm.name, c.sequence()}, c.rank());
    if (c.end_ns() == 0) {
      if (pending_.emplace(pkey, c.start_ns()).second) {
        pending_starts_.insert(c.start_ns());
        ++comm.pending;
      }
    } else if (auto it = pending_.find(pkey); it != pending_.end()) {
      pending_starts_.erase(pending_starts_.find(it->second));
      pending_.erase(it);
      --comm.pending;
    }
  }
  if (c.sequence() > comm.max_sequence) {
    comm.max_sequence = c.sequence();
    prune_sequences(comm);
  }
}

void TimeoutDetector::prune_sequences(Communicator& comm) {
  const std::uint64_t top = comm.max_sequence;
  if (top < kSequencesKept) return;
  comm.cached_entered = nullptr;  // its entry may go
  auto it = comm.entered.begin();
  auto stop = comm.entered.lower_bound(top - kSequencesKept);
  while (it != stop) {
    bool has_pending = false;
    if (comm.pending > 0) {
      auto p = pending_.lower_bound({{comm.name, it->first}, 0});
      has_pending = p != pending_.end() && p->first.first.first == comm.name && p->first.first.second == it->first;
    }
    it = has_pending ? std::next(it) : comm.entered.erase(it);
  }
}

void TimeoutDetector::reset_collectives() {
  for (Communicator& comm : comms_) {
    comm.entered.clear();
    comm.cached_entered = nullptr;
    comm.max_sequence = 0;
    comm.pending = 0;
  }
  pending_.clear();
  pending_starts_.clear();
}

void TimeoutDetector::advance_to(sim::Nanos now) {
  if (!tripped_ && !pending_starts_.empty()) {
    const sim::Nanos fire_at = *pending_starts_.begin() + config_.collective_timeout;
    if (fire_at <= now) {
      emit_diagnoses(fire_at);
      fire(fire_at);
    }
  }
  emit_diagnoses(now);
}

void TimeoutDetector::emit_diagnoses(sim::Nanos now) {
  std::size_t done = 0;
  for (; done < diagnoses_.size() && diagnoses_[done].due_ns <= now; ++done)
    raise({sim::to_seconds(diagnoses_[done].due_ns), kName, "fail_stop", diagnoses_[done].suspects});
  diagnoses_.erase(diagnoses_.begin(), diagnoses_.begin() + static_cast<std::ptrdiff_t>(done));
}

void TimeoutDetector::fire(sim::Nanos at) {
  tripped_ = true;
  if (config_.page_on_timeout) raise({sim::to_seconds(at), kName, "fail_stop", {}});
  diagnoses_.push_back({at + config_.manual_diagnosis, suspects()});
}

std::vector<Suspect> TimeoutDetector::suspects() const {
  std::set<std::string> workers;
  // Members of a hung communicator that never entered the hung collective.
  std::set<CollKey> hung;
  for (const auto& [pkey, start] : pending_) hung.insert(pkey.first);
  for (const CollKey& key : hung) {
    const Communicator& comm = comms_[comm_index_.at(key.first)];
    const std::vector<bool>& in = comm.entered.at(key.second);
    for (std::size_t rank = 0; rank < comm.members.size(); ++rank)
      if (!comm.members[rank].empty() && (rank >= in.size() || !in[rank])) workers.insert(comm.members[rank]);
  }
  // Otherwise whoever stopped finishing iterations before the rest did.
  if (workers.empty() && !last_iteration_.empty()) {
    std::uint64_t newest = 0;
    for (const auto& [w, it] : last_iteration_) newest = std::max(newest, it);
    for (const auto& [w, it] : last_iteration_)
      if (it < newest) workers.insert(w);
  }
  return to_components({workers.begin(), workers.end()});
}

std::vector<Suspect> TimeoutDetector::to_components(const std::vector<std::string>& workers) const {
  if (workers.empty()) return {};
  std::map<std::string, std::vector<std::string>> by_host;
  for (const auto& w : workers) {
    auto id = sim::ComponentId::parse(w);
    std::string host = id && id->host >= 0 ? sim::ComponentId::make_host(id->host).str() : w;
    by_host[host].push_back(w);
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> hosts(by_host.begin(), by_host.end());
  // Most hung GPUs first; ties by name so the output is deterministic.
  std::stable_sort(hosts.begin(), hosts.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  const double total = static_cast<double>(workers.size());

  std::vector<Suspect> out;
  auto level = config_.suspect;
  if (level == TimeoutConfig::Level::automatic && hosts.size() == 1) {
    const auto& [host, gpus] = hosts.front();
    if (gpus.size() == 1 && gpus.front() != host) {
      out.push_back({gpus.front(), 1.0});
      out.push_back({host, 0.5});
    } else {
      out.push_back({host, 1.0});
      for (const auto& g : gpus)
        if (g != host) out.push_back({g, 0.5});
    }
    return out;
  }
  if (level == TimeoutConfig::Level::gpu) {
    for (const auto& [host, gpus] : hosts)
      for (const auto& g : gpus) out.push_back({g, static_cast<double>(gpus.size()) / total});
    return out;
  }
  for (const auto& [host, gpus] : hosts) out.push_back({host, static_cast<double>(gpus.size()) / total});
  return out;
}

}  // namespace gauntlet::harness
