#pragma once
// The chaos journal: one JSON object per line, fsync'd before every apply, so
// that whoever reads it after a crash (the watchdog, `gauntlet recover`) knows
// the exact commands that undo what may have been done.
//
// Events: begin {plan, pid, faults_file, audit_file}, intent {step, fault,
// type, target, mechanism, revert: [argv...]} (written BEFORE the apply),
// applied / apply_failed {step, commands}, action {step, commands},
// reverted {step, by, commands}, revert_failed {step, by, commands} (the step
// stays pending), watchdog {pid, deadline_s}, end {status}.
// Every event carries time_s (Unix seconds).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "injectors/real/process.hpp"

namespace gauntlet::injectors::real {

double unix_now();

class Journal {
 public:
  // Opens for appending, creating parent directories. A torn last line (a
  // crash mid-write) is ended first, so the next entry starts a line of its
  // own. Throws InjectionError.
  explicit Journal(std::string path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Adds time_s when missing; with sync the line is on disk on return.
  void append(nlohmann::json entry, bool sync = true);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

nlohmann::json command_record(const Argv& argv, const CommandResult& result);

struct PendingStep {
  std::string step;
  std::string fault;
  std::string type;
  std::string target;
  std::vector<Argv> revert;
  double intent_s = 0;
  bool applied = false;  // its apply completed: a revert that fails leaves the fault in place
};

struct JournalState {
  std::string plan;
  std::string faults_file;  // where ground truth lines go ("" = none)
  std::string audit_file;
  double t0_unix_s = 0;              // when the run began
  std::vector<PendingStep> pending;  // intents without a reverted entry, oldest first
};

// A journal that is not one: "file:line:col: message".
class JournalError : public InjectionError {
 public:
  using InjectionError::InjectionError;
};

// Throws InjectionError when the file cannot be read and JournalError when
// it holds anything but journal entries. A torn line (a prefix of an entry,
// left by a crash in the middle of a write) is skipped wherever it is.
JournalState read_journal(const std::string& path);

// Runs a revert command, retrying a failure a few times (a busy device, a
// lock held by another tool); every attempt is added to `records`.
CommandResult run_revert_command(const Argv& argv, nlohmann::json& records);

struct RecoverResult {
  int reverted = 0;
  int failed = 0;  // applied steps whose revert kept failing; still pending
};

// Runs the revert of every pending step, newest first. A step whose revert
// fails after its apply had completed is recorded as revert_failed and stays
// pending; one that never finished applying is recorded as reverted anyway,
// since its reverts are idempotent and "already gone" errors are expected.
RecoverResult revert_pending(const std::string& journal_path, const std::string& by, std::string* report = nullptr);

// One ground-truth line in the simulator's faults.jsonl schema.
// One ground-truth line; start and end are Unix times, written as seconds
// since the run's start t0 (the same base as a simulated run's) with t0 itself
// as t0_unix_s, so alerts stamped by a wall clock can be aligned.
void append_truth_line(const std::string& path, const std::string& id, const std::string& type,
                       const std::string& target, double t0_unix_s, double start_unix_s, double end_unix_s);

void append_audit(const std::string& path, const std::string& line);

}  // namespace gauntlet::injectors::real
