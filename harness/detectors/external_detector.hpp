#pragma once
// `exec:COMMAND`: a detector written by the user, in any language, run as a
// child process (docs/protocol.md; sim/proto/detector_protocol.proto has the
// wire format). COMMAND is split into argv the way a shell splits words
// (quotes and backslashes work; no variables, globs or redirections) and
// started without a shell. It first gets a DetectorStart (the topology, the
// job as a scheduler shows it, the cadence), then every batch on its stdin,
// length-delimited; the runner waits for exactly one DetectorReply on its
// stdout before simulated time moves on, so a run with external detectors is
// as deterministic as the detector itself. Its stderr is passed through up to
// a limit, and its tail is kept for the failure report.
//
// A detector that cannot be started, exits or dies, takes longer than
// reply_timeout (wall time) to answer one batch, or writes anything that is
// not a well-formed reply (bad length, unparsable bytes, unknown fields, an
// unknown alert kind, a suspect or probe endpoint the cluster does not have,
// more alerts, suspects or probes than the limits below) is failed: it is
// stopped with everything it started, the reason (with the reply's number)
// goes to stderr and to status(), and it sees no more batches. The run and
// the other detectors go on.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "sim/proto/detector_protocol.pb.h"

namespace gauntlet::harness {

class DetectorProcess;

struct ExternalConfig {
  sim::Nanos reply_timeout = 10 * sim::kSecond;  // wall time per batch
  bool flow_records = false;                     // the detector asked for FlowRecords
  // Values for parameters the detector declares (external_detector_description.hpp),
  // as written; sent in DetectorStart.parameters.
  std::map<std::string, std::string> params;
};

// The keys of an exec: detector's entry that are gauntlet's own; any other
// key is a value for a parameter the detector declares.
bool is_gauntlet_exec_key(const std::string& key);

// Limits on one reply; past them the detector is failed, not trimmed.
inline constexpr int kMaxAlertsPerReply = 100;
inline constexpr int kMaxSuspectsPerAlert = 64;
// Over all alerts of a reply: a detector naming every suspect it may in every
// batch would otherwise keep millions of them by the run's end.
inline constexpr int kMaxSuspectsPerReply = 256;
// Each RNIC runs one probe every 2 s, so a batch's worth of requests past a
// few per RNIC only builds a queue that outlives the run.
inline constexpr int kMaxProbesPerReply = 1'000;
inline constexpr int kMaxBenchmarksPerReply = 64;
// Each RNIC runs one probe at a time and publishes its result 2 s after it
// starts (docs/protocol.md), so requests for one source RNIC queue behind
// each other. A detector whose requests would queue more than this much
// probe time on one RNIC asks faster than probes run: the queue would only
// grow, so it is failed instead.
inline constexpr sim::Nanos kProbeTrainTime = 2 * sim::kSecond;
inline constexpr sim::Nanos kMaxProbeBacklog = 10 * sim::kMinute;
// The longest wall time a detector may take over one batch.
inline constexpr sim::Nanos kMaxReplyTimeout = sim::kHour;

// What the runner tells an external detector before the first batch.
struct ExternalRunInfo {
  const sim::Topology* topology = nullptr;  // null: no topology to offer or check against
  std::string job_name;
  int job_gpus = 0;
  int job_hosts = 0;
  int spare_hosts = 0;
  sim::Nanos batch_period = sim::kSecond;
  sim::Nanos heartbeat_period = 10 * sim::kSecond;
  sim::Nanos duration = 0;
};

// Shell-like word splitting; nullopt with *error set on an unclosed quote or
// a trailing backslash.
std::optional<std::vector<std::string>> split_command_line(const std::string& command, std::string* error);

// The parameters an exec: detector takes (scenario map form), checked:
// nullopt with *error and *bad_key (the offending parameter) set. Keys
// other than gauntlet's own go to `params` unchecked: only the detector's
// description can say what they may be.
std::optional<ExternalConfig> parse_external_config(const std::map<std::string, std::string>& params,
                                                    std::string* error, std::string* bad_key);
// The same, throwing std::invalid_argument.
ExternalConfig external_config_from(const std::map<std::string, std::string>& params);

class ExternalDetector : public Detector {
 public:
  static constexpr const char* kPrefix = "exec:";
  // `name` is the scenario's detector name, "exec:COMMAND".
  ExternalDetector(const std::string& name, ExternalConfig config, ExternalRunInfo run = {});
  ~ExternalDetector() override;
  ExternalDetector(const ExternalDetector&) = delete;
  ExternalDetector& operator=(const ExternalDetector&) = delete;

  void observe(const telemetry::Batch& batch) override;
  // Sees everything a reference detector may read.
  bool reads_flow_tables() const override { return true; }
  // Flow records cost a metering pass per connection: only when asked for.
  bool reads_flow_records() const override { return config_.flow_records; }

  bool failed() const { return !failure_.empty(); }
  // "ok", or "failed: <reason>".
  std::string status() const override { return failed() ? "failed: " + failure_ : "ok"; }

 private:
  void fail(const std::string& reason);
  std::string start_message() const;
  // The reply's problem, or empty when it may be applied.
  std::string check(const std::string& payload, protocol::DetectorReply* reply) const;
  bool known_component(const std::string& id) const;
  void apply(const protocol::DetectorReply& reply, sim::Nanos now);
  // Queues the reply's probes behind those asked before; the problem when a
  // source RNIC's queue grows past kMaxProbeBacklog, else empty.
  std::string queue_probes(const protocol::DetectorReply& reply, sim::Nanos now);

  std::string name_;
  ExternalConfig config_;
  ExternalRunInfo run_;
  std::unique_ptr<DetectorProcess> process_;
  bool started_ = false;  // DetectorStart written
  long long replies_ = 0;
  std::map<std::string, sim::Nanos> probe_queue_end_;  // per source RNIC: when its last queued probe ends
  std::string failure_;
};

}  // namespace gauntlet::harness
