#include "injectors/real/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

namespace gauntlet::injectors::real {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

namespace {

void write_all_synced(const std::string& path, const std::string& text, bool sync) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InjectionError("cannot open " + path + " for appending");
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (sync) ok = ::fsync(fd) == 0 && ok;
  ::close(fd);
  if (!ok) throw InjectionError("cannot write " + path);
}

void make_parent(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

}  // namespace

Journal::Journal(std::string path) : path_(std::move(path)) {
  try {
    make_parent(path_);
  } catch (const std::filesystem::filesystem_error& e) {
    throw InjectionError("cannot create the journal's directory: " + std::string(e.what()));
  }
  // O_APPEND: the watchdog and `recover` may append to the same file.
  fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InjectionError("cannot open journal " + path_);
  char last = '\n';
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  if (size > 0 && ::pread(fd_, &last, 1, size - 1) == 1 && last != '\n') {
    // A crash tore the last line: end it, or the next entry would be glued
    // to it and lost with it.
    if (::write(fd_, "\n", 1) != 1 || ::fsync(fd_) != 0) throw InjectionError("cannot write journal " + path_);
  }
  // The directory entry must survive a crash too, not only the data.
  std::string dir = std::filesystem::path(path_).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) ::fsync(dfd), ::close(dfd);
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(nlohmann::json entry, bool sync) {
  if (!entry.contains("time_s")) entry["time_s"] = unix_now();
  std::string line = entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  bool ok = ::write(fd_, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (sync) ok = ::fsync(fd_) == 0 && ok;
  if (!ok) throw InjectionError("cannot write journal " + path_);
}

nlohmann::json command_record(const Argv& argv, const CommandResult& result) {
  return {{"argv", argv}, {"exit", result.exit_code}, {"output", result.output}};
}

namespace {

using OpenSteps = std::map<std::string, PendingStep>;

[[noreturn]] void bad_entry(const std::string& path, std::size_t line, std::size_t column, const std::string& what) {
  throw JournalError(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
}

// nullopt for a torn line: the start of an entry whose write was cut short.
std::optional<nlohmann::json> parse_entry(const std::string& path, std::size_t number, const std::string& line) {
  nlohmann::json e;
  try {
    e = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& error) {
    // The parser stops just past the offending byte; past the end means the
    // text ran out (a torn write) rather than into garbage.
    if (line.front() == '{' && error.byte > line.size()) return std::nullopt;
    bad_entry(path, number, std::clamp<std::size_t>(error.byte, 1, line.size()), "not a journal entry");
  } catch (const nlohmann::json::exception& error) {
    // A number past a double's range ("number overflow parsing '1e400'"): the
    // parser says which text, not where; point at its first occurrence.
    const std::string what = error.what();
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    const std::size_t at = open < close ? line.find(what.substr(open + 1, close - open - 1)) : std::string::npos;
    bad_entry(path, number, at == std::string::npos ? 1 : at + 1, "not a journal entry: a number out of range");
  }
  if (!e.is_object() || !e.contains("event") || !e["event"].is_string())
    bad_entry(path, number, 1, "not a journal entry (an object with an \"event\")");
  return e;
}

void read_event(const nlohmann::json& e, JournalState& state, OpenSteps& open, std::vector<std::string>& order) {
  const std::string event = e.at("event").get<std::string>();
  if (event == "begin") {
    state.plan = e.value("plan", "");
    state.faults_file = e.value("faults_file", "");
    state.audit_file = e.value("audit_file", "");
    state.t0_unix_s = e.value("t0_unix_s", e.value("time_s", 0.0));
  } else if (event == "intent") {
    PendingStep step;
    step.step = e.at("step").get<std::string>();
    step.fault = e.value("fault", "");
    step.type = e.value("type", "");
    step.target = e.value("target", "");
    step.intent_s = e.value("time_s", 0.0);
    for (const auto& argv : e.at("revert")) step.revert.push_back(argv.get<Argv>());
    if (!open.contains(step.step)) order.push_back(step.step);
    open[step.step] = step;
  } else if (event == "applied") {
    if (auto it = open.find(e.at("step").get<std::string>()); it != open.end()) it->second.applied = true;
  } else if (event == "reverted") {
    open.erase(e.at("step").get<std::string>());
  }
}

}  // namespace

JournalState read_journal(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    throw InjectionError("cannot read journal " + path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InjectionError("cannot read journal " + path);

  JournalState state;
  OpenSteps open;
  std::vector<std::string> order;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty()) continue;
    const std::optional<nlohmann::json> entry = parse_entry(path, number, line);
    if (!entry) continue;
    try {
      read_event(*entry, state, open, order);
    } catch (const nlohmann::json::exception& e) {
      bad_entry(path, number, 1, "malformed " + (*entry)["event"].get<std::string>() + " entry: " + e.what());
    }
  }
  for (const std::string& s : order)
    if (open.contains(s)) state.pending.push_back(open[s]);
  return state;
}

CommandResult run_revert_command(const Argv& argv, nlohmann::json& records) {
  constexpr int kAttempts = 3;
  CommandResult result;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    result = run_command(argv);
    records.push_back(command_record(argv, result));
    if (result.ok()) break;
    if (attempt < kAttempts) std::this_thread::sleep_for(std::chrono::milliseconds(200 * attempt));
  }
  return result;
}

RecoverResult revert_pending(const std::string& journal_path, const std::string& by, std::string* report) {
  const JournalState state = read_journal(journal_path);
  RecoverResult result;
  if (state.pending.empty()) return result;
  Journal journal(journal_path);
  for (auto it = state.pending.rbegin(); it != state.pending.rend(); ++it) {
    nlohmann::json commands = nlohmann::json::array();
    bool all_ok = true;
    for (const Argv& argv : it->revert) {
      const CommandResult r = run_revert_command(argv, commands);
      all_ok = all_ok && r.ok();
      if (report)
        *report += "revert " + it->step + ": " + display(argv) + " -> exit " + std::to_string(r.exit_code) + "\n";
    }
    const double now = unix_now();
    const bool failed = it->applied && !all_ok;
    journal.append({{"event", failed ? "revert_failed" : "reverted"},
                    {"step", it->step},
                    {"by", by},
                    {"commands", commands},
                    {"time_s", now}});
    if (failed) {
      ++result.failed;
      if (!state.audit_file.empty())
        append_audit(state.audit_file, "FAILED to revert " + it->fault + " (" + it->type + " on " + it->target +
                                           ") by " + by + "; it is still in place");
      continue;
    }
    if (!state.faults_file.empty() && it->step == it->fault)
      append_truth_line(state.faults_file, it->fault, it->type, it->target, state.t0_unix_s, it->intent_s, now);
    if (!state.audit_file.empty())
      append_audit(state.audit_file, "reverted " + it->fault + " (" + it->type + " on " + it->target + ") by " + by);
    ++result.reverted;
  }
  return result;
}

void append_truth_line(const std::string& path, const std::string& id, const std::string& type,
                       const std::string& target, double t0_unix_s, double start_unix_s, double end_unix_s) {
  nlohmann::json line = {{"id", id},
                         {"type", type},
                         {"target", target},
                         {"start_s", start_unix_s - t0_unix_s},
                         {"end_s", end_unix_s - t0_unix_s},
                         {"t0_unix_s", t0_unix_s}};
  make_parent(path);
  write_all_synced(path, line.dump() + "\n", true);
}

void append_audit(const std::string& path, const std::string& line) {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  make_parent(path);
  write_all_synced(path, std::string(stamp) + " " + line + "\n", false);
}

}  // namespace gauntlet::injectors::real
