#pragma once
// `c4d` (after C4's diagnosis half): every rank of every communicator writes
// a record per collective (C4-style: communicator, rank, sequence, when the
// rank entered, when it finished, its ring next hop). The ranks of one
// communicator meet at each sequence number, so comparing them there needs
// no fixed threshold on absolute times: a broken or slow rank is the one that
// behaves differently from its peers at the same sync point.
//
// Hangs (alert kind fail_stop). A sync point that some members have entered
// but that stays unresolved hang_after past the last sign of progress:
//  * members that never entered: non-communication hang; their compute or
//    host is stuck. Suspects: the GPU (its host second); several GPUs of one
//    host name the host first.
//  * everyone entered but some never finished: communication hang. Each
//    unfinished rank's incoming ring edge (sender -> it) is stuck; the edges
//    are localized like slow ones (below).
//
// Slowness, evaluated on every completed sync point:
//  * computation slow (fail_slow): a rank entering later than its peers'
//    median by more than compute_slow of the communicator's step; suspects
//    the late GPUs (or their host when several of one host are late).
//  * communication slow (network): the sender x receiver latency matrix. A
//    ring edge sender -> peer lasts from the sync point's last entry (the
//    ring moves only once every rank is in) to the receiver's finish; a cell is slow when it exceeds comm_slow times
//    the median edge of its sync point and, once it has a history, comm_slow times its own best (so structurally longer
//    edges, e.g. cross-pod ones, are not flagged). Slow cells are explained greedily by the worker that touches most of
//    them: a slow row (only outgoing cells) names the sender's RNIC, a slow column (only incoming) the receiver's RNIC,
//    both directions name the RNIC's host link first (it carries both), then the RNIC. A cell left alone is that path:
//    the two ranks share a host (NVLink)
//    -> the sender GPU; otherwise the topology cannot single out one link of
//    an inter-host path (it crosses at least both host links, and the spine
//    is an ECMP choice the operator view does not know), so the sender's
//    RNIC is named, then the sender's and the receiver's host links.
//
// Steady runs are consumed as their first iteration: identical iterations
// add no anomaly. An anomaly is alerted once and again only after it has
// vanished from an evaluation round in between.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {

struct C4dConfig {
  sim::Nanos hang_after = 20 * sim::kSecond;
  double compute_slow = 0.05;  // entry lateness as a fraction of the step
  double comm_slow = 1.5;      // edge latency over its sync point's median (and its own best)
};

// One directed ring edge with its state at a sync point.
struct C4dCell {
  std::string sender;  // worker ids
  std::string receiver;
  bool bad = false;
};

// The localization of bad cells, shared by hangs and slowness; exposed for tests.
std::vector<Suspect> c4d_localize_cells(const std::vector<C4dCell>& cells, const sim::Topology* topology);

class C4dDetector : public Detector {
 public:
  static constexpr const char* kName = "c4d";
  C4dDetector(C4dConfig config, const sim::Topology* topology) : config_(config), topology_(topology) {}
  // Its name, summary, parameters and how to make one: its registry entry.
  static DetectorInfo info();
  static C4dConfig config_from(const DetectorParams& params);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }
  bool reads_samples() const override { return false; }

  // Sync points still waiting to complete (bounded: resolved ones are dropped).
  std::size_t open_sync_points() const { return open_.size(); }
  // Sync points evaluated so far; a steady run counts once.
  std::uint64_t evaluated_sync_points() const { return evaluated_; }

 private:
  // Communicator and worker names are interned: a month at 4,096 GPUs adds
  // hundreds of millions of records, and ids compare and hash in one step.
  using NameId = std::uint32_t;
  class Names {
   public:
    Names() { intern(""); }  // id 0: no name (a record without a peer)
    NameId intern(const std::string& name);
    const std::string& name(NameId id) const { return names_[id]; }
    std::size_t size() const { return names_.size(); }

   private:
    std::unordered_map<std::string, NameId> ids_;
    std::vector<std::string> names_;
  };
  static constexpr NameId kNoName = 0;
  // Entries by rank, in rank order: a sorted vector, since records mostly
  // come in rank order and a sync point of 64 ranks is met millions of times.
  template <typename T>
  class ByRank {
   public:
    using Entry = std::pair<std::uint32_t, T>;
    T& operator[](std::uint32_t rank) {
      if (entries_.empty() || entries_.back().first < rank) return entries_.emplace_back(rank, T{}).second;
      auto it = std::lower_bound(entries_.begin(), entries_.end(), rank,
                                 [](const Entry& e, std::uint32_t r) { return e.first < r; });
      if (it == entries_.end() || it->first != rank) it = entries_.insert(it, Entry{rank, T{}});
      return it->second;
    }
    const T* find(std::uint32_t rank) const {
      auto it = std::lower_bound(entries_.begin(), entries_.end(), rank,
                                 [](const Entry& e, std::uint32_t r) { return e.first < r; });
      return it == entries_.end() || it->first != rank ? nullptr : &it->second;
    }
    bool count(std::uint32_t rank) const { return find(rank) != nullptr; }
    std::size_t size() const { return entries_.size(); }
    typename std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
    typename std::vector<Entry>::const_iterator end() const { return entries_.end(); }

   private:
    std::vector<Entry> entries_;
  };
  using Key = std::pair<NameId, std::uint64_t>;  // communicator, sequence
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>{}(k.second * 0x9E3779B97F4A7C15ull ^ k.first);
    }
  };
  struct RankEntry {
    NameId worker = kNoName;
    NameId peer = kNoName;
    sim::Nanos start = 0;
    sim::Nanos end = 0;  // 0: not finished
  };
  struct SyncPoint {
    ByRank<RankEntry> ranks;
    sim::Nanos last_progress = 0;
  };
  struct Communicator {
    ByRank<NameId> members;  // rank -> worker
    std::uint64_t last_sequence = 0;
    sim::Nanos last_median_entry = -1;
    sim::Nanos step = 0;  // median entry spacing between consecutive sync points
  };
  struct Finding {
    std::string kind;
    std::vector<Suspect> suspects;
  };

  struct RecordNames {
    NameId communicator, worker, peer;
  };
  RecordNames intern(const telemetry::CollectiveRecord& c);
  void add(const telemetry::CollectiveRecord& c, const RecordNames& names);
  // A steady run repeating the last one's records reuses their interned names.
  void add_steady(const telemetry::SteadyRun& run);
  bool complete(const Key& key, const SyncPoint& point) const;
  // Open sync points are kept unordered; those acted on are taken in
  // (communicator name, sequence) order, so findings list suspects the same
  // way whatever order the records came in.
  void sort_by_name(std::vector<Key>* keys) const;
  void evaluate(const Key& key, const SyncPoint& point, std::vector<C4dCell>* bad_cells,
                std::vector<std::string>* late);
  void add_bad_edges(const SyncPoint& point, std::vector<C4dCell>* bad_cells);
  void check_hangs(sim::Nanos now, std::vector<Finding>* found);
  std::vector<Suspect> compute_suspects(const std::vector<std::string>& workers) const;

  C4dConfig config_;
  const sim::Topology* topology_;
  Names communicators_, workers_;
  std::vector<Communicator> comms_;     // by communicator id
  std::uint64_t interned_version_ = 0;  // records_version of the last steady run read
  std::vector<RecordNames> interned_;   // the names of its collective records, in order
  std::unordered_map<Key, SyncPoint, KeyHash> open_;
  std::unordered_map<std::uint64_t, sim::Nanos> best_edge_;  // sender << 32 | receiver -> best latency
  std::unordered_set<Key, KeyHash> hang_reported_;
  std::vector<const RankEntry*> entry_of_worker_;  // by worker id, while add_bad_edges reads one sync point
  std::set<std::string> active_;                   // signatures of the anomalies seen in the last evaluation round
  std::uint64_t evaluated_ = 0;
};

}  // namespace gauntlet::harness
