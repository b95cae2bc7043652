#include "injectors/real/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

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
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InjectionError("cannot open journal " + path_);
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

JournalState read_journal(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InjectionError("cannot read journal " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);

  JournalState state;
  std::map<std::string, PendingStep> open;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json e = nlohmann::json::parse(lines[i], nullptr, false);
    if (e.is_discarded() || !e.is_object()) {
      if (i + 1 == lines.size()) break;  // torn final write
      throw InjectionError(path + ":" + std::to_string(i + 1) + ": not a journal entry");
    }
    std::string event = e.value("event", "");
    if (event == "begin") {
      state.plan = e.value("plan", "");
      state.faults_file = e.value("faults_file", "");
      state.audit_file = e.value("audit_file", "");
      state.t0_unix_s = e.value("t0_unix_s", e.value("time_s", 0.0));
    } else if (event == "intent") {
      PendingStep step;
      step.step = e.value("step", "");
      step.fault = e.value("fault", "");
      step.type = e.value("type", "");
      step.target = e.value("target", "");
      step.intent_s = e.value("time_s", 0.0);
      for (const auto& argv : e.at("revert")) step.revert.push_back(argv.get<Argv>());
      if (!open.contains(step.step)) order.push_back(step.step);
      open[step.step] = step;
    } else if (event == "reverted") {
      open.erase(e.value("step", ""));
    }
  }
  for (const std::string& s : order)
    if (open.contains(s)) state.pending.push_back(open[s]);
  return state;
}

int revert_pending(const std::string& journal_path, const std::string& by, std::string* report) {
  JournalState state = read_journal(journal_path);
  if (state.pending.empty()) return 0;
  Journal journal(journal_path);
  int count = 0;
  for (auto it = state.pending.rbegin(); it != state.pending.rend(); ++it) {
    nlohmann::json commands = nlohmann::json::array();
    for (const Argv& argv : it->revert) {
      CommandResult r = run_command(argv);
      commands.push_back(command_record(argv, r));
      if (report) *report += "revert " + it->step + ": " + display(argv) + " -> exit " + std::to_string(r.exit_code) + "\n";
    }
    double now = unix_now();
    journal.append({{"event", "reverted"}, {"step", it->step}, {"by", by}, {"commands", commands}, {"time_s", now}});
    if (!state.faults_file.empty() && it->step == it->fault)
      append_truth_line(state.faults_file, it->fault, it->type, it->target, state.t0_unix_s, it->intent_s, now);
    if (!state.audit_file.empty())
      append_audit(state.audit_file, "reverted " + it->fault + " (" + it->type + " on " + it->target + ") by " + by);
    ++count;
  }
  return count;
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
