#pragma once
// `exec:COMMAND`: a detector written by the user, in any language, run as a
// child process (sim/proto/detector_protocol.proto has the wire format).
// COMMAND is split into argv the way a shell splits words (quotes and
// backslashes work; no variables, globs or redirections) and started without
// a shell. Every batch goes to its stdin length-delimited; the runner then
// waits for exactly one DetectorReply on its stdout before simulated time
// moves on, so a run with external detectors is as deterministic as the
// detector itself. Its stderr is passed through.
//
// A detector that cannot be started, exits or dies, takes longer than
// reply_timeout (wall time) to answer one batch, or writes anything that is
// not a well-formed reply (bad length, unparsable bytes, unknown fields, an
// unknown alert kind, a suspect that is not a component id) is failed: it is
// stopped, the reason goes to stderr and to status(), and it sees no more
// batches. The run and the other detectors go on.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/detector.hpp"

namespace gauntlet::harness {

struct ExternalConfig {
  sim::Nanos reply_timeout = 10 * sim::kSecond;  // wall time per batch
};

// Shell-like word splitting; nullopt with *error set on an unclosed quote or
// a trailing backslash.
std::optional<std::vector<std::string>> split_command_line(const std::string& command, std::string* error);

// The parameters an exec: detector takes (scenario map form), checked.
ExternalConfig external_config_from(const std::map<std::string, std::string>& params);

class ExternalDetector : public Detector {
 public:
  static constexpr const char* kPrefix = "exec:";
  // `name` is the scenario's detector name, "exec:COMMAND".
  ExternalDetector(const std::string& name, ExternalConfig config);
  ~ExternalDetector() override;
  ExternalDetector(const ExternalDetector&) = delete;
  ExternalDetector& operator=(const ExternalDetector&) = delete;

  void observe(const telemetry::Batch& batch) override;
  // Sees everything a reference detector may read.
  bool reads_flow_tables() const override { return true; }

  bool failed() const { return !failure_.empty(); }
  // "ok", or "failed: <reason>".
  std::string status() const { return failed() ? "failed: " + failure_ : "ok"; }

 private:
  void start(const std::string& command);
  void fail(const std::string& reason);
  void stop();
  bool write_all(const std::string& bytes, sim::Nanos deadline_ns);
  std::optional<std::string> read_reply(sim::Nanos deadline_ns);
  bool read_exact(std::size_t count, std::string* out, sim::Nanos deadline_ns);
  std::string exit_description();
  void apply(const std::string& payload, sim::Nanos now);

  std::string name_;
  ExternalConfig config_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffered_;  // bytes read past the last reply
  std::string failure_;
  std::optional<int> wait_status_;
};

}  // namespace gauntlet::harness
