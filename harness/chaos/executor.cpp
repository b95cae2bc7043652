#include "harness/chaos/executor.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "injectors/real/drivers.hpp"
#include "injectors/real/journal.hpp"
#include "injectors/real/watchdog.hpp"

namespace gauntlet::harness {

namespace real = injectors::real;

namespace {

volatile sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Slack after the plan's last revert before the watchdog steps in on a
// process that is alive but stuck.
constexpr double kWatchdogGraceS = 30;

struct Event {
  sim::Nanos at;
  int order;  // reverts first, then flaps, then applies: free before taking
  std::size_t fault;
  std::size_t during;  // index into program.during for flaps
};

bool check_passes(const real::Check& check) {
  real::CommandResult r = real::run_command(check.argv);
  return r.ok() && r.output.find(check.expect) != std::string::npos;
}

class Run {
 public:
  Run(const ChaosPlan& plan, const ChaosOptions& options, std::ostream& out, std::ostream& err)
      : plan_(plan), options_(options), out_(out), err_(err) {}

  int execute();

 private:
  bool refuse_for_host();
  bool build_programs();
  // Where the journal, ground truth and audit log go; an exit code when the
  // run cannot start there (a journal with pending faults), else nullopt.
  std::optional<int> open_records();
  std::vector<Event> schedule() const;
  // Applies, flaps and reverts on time; why it stopped early, or "".
  std::string run_events(const std::vector<Event>& events, double t0);
  int finish(const std::string& stop_reason);
  void print_dry_run();
  void audit(const std::string& line) { real::append_audit(audit_path_, line), out_ << line << "\n"; }
  bool apply_fault(std::size_t i);
  void revert_fault(std::size_t i, const std::string& by);
  void revert_all(const std::string& by);
  std::string abort_check();

  const ChaosPlan& plan_;
  const ChaosOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  std::vector<real::FaultProgram> programs_;
  std::vector<bool> active_;
  std::vector<bool> applied_;  // the apply completed, so a failing revert leaves the fault in place
  std::vector<double> started_s_;
  double t0_ = 0;  // Unix time the plan's clock starts at
  int failed_reverts_ = 0;
  std::unique_ptr<real::Journal> journal_;
  std::string out_dir_, journal_path_, faults_path_, audit_path_;
};

bool Run::refuse_for_host() {
  if (options_.apply && !real::is_root()) {
    err_ << "gauntlet chaos: --apply needs root (it changes qdiscs, nftables, links and GPU limits); "
            "nothing was changed\n";
    return true;
  }
  std::vector<std::string> defaults = real::default_route_interfaces(options_.prefix);
  const auto& allowed = plan_.safety.allow_default_route;
  for (const ChaosFault& f : plan_.faults) {
    const std::string& dev = f.real.interface;
    if (dev.empty() || std::find(defaults.begin(), defaults.end(), dev) == defaults.end()) continue;
    if (std::find(allowed.begin(), allowed.end(), dev) != allowed.end()) continue;
    err_ << plan_.source_path << ":" << f.line << ":" << f.column << ": refused: " << dev
         << " carries the default route (list it in safety.allow_default_route to allow it); nothing was changed\n";
    return true;
  }
  return false;
}

bool Run::build_programs() {
  real::DriverContext context;
  context.prefix = options_.prefix;
  context.caps = real::probe_capabilities();
  context.dry_run = !options_.apply;
  out_ << "kernel: netem=" << context.caps.netem << " flower=" << context.caps.flower << " htb=" << context.caps.htb
       << " nft=" << context.caps.nft << " (probed by " << context.caps.method << ")\n";
  for (const ChaosFault& f : plan_.faults) {
    // The pid makes names (nft tables, cgroups, OVS cookies) unique per run,
    // so one run's revert cannot remove another run's fault.
    context.tag = plan_.name + "_" + f.real.spec.id + "_" + std::to_string(::getpid());
    std::replace(context.tag.begin(), context.tag.end(), '-', '_');
    try {
      programs_.push_back(real::build_program(f.real, context));
    } catch (const real::SafetyRefusal& e) {
      err_ << plan_.source_path << ":" << f.line << ":" << f.column << ": refused: " << e.what()
           << "; nothing was changed\n";
      return false;
    } catch (const real::InjectionError& e) {
      err_ << plan_.source_path << ":" << f.line << ":" << f.column << ": cannot inject here: " << e.what()
           << "; nothing was changed\n";
      return false;
    }
  }
  return true;
}

void Run::print_dry_run() {
  out_ << "dry run of plan '" << plan_.name << "' (" << plan_.faults.size() << " faults, "
       << sim::format_duration(plan_.end()) << "); nothing will be changed. Pass --apply to inject.\n";
  for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
    const auto& spec = plan_.faults[i].real.spec;
    const auto& p = programs_[i];
    out_ << "\n"
         << spec.id << " " << spec.type << " on " << spec.target << " at +" << sim::format_duration(spec.start)
         << " for " << sim::format_duration(*spec.duration) << " via " << p.mechanism
         << (p.note.empty() ? "" : " (" + p.note + ")") << "\n";
    for (const auto& a : p.apply)
      out_ << "  apply  +" << sim::format_duration(spec.start) << "  " << real::display(a) << "\n";
    for (const auto& d : p.during)
      out_ << "  flap   +" << sim::format_duration(spec.start + d.offset) << "  " << real::display(d.argv) << "\n";
    for (const auto& r : p.revert)
      out_ << "  revert +" << sim::format_duration(*spec.end()) << "  " << real::display(r) << "\n";
  }
}

std::string Run::abort_check() {
  if (plan_.safety.abort_command.empty()) return "";
  real::CommandResult r = real::run_command(plan_.safety.abort_command);
  journal_->append({{"event", "abort_check"}, {"commands", {real::command_record(plan_.safety.abort_command, r)}}},
                   false);
  return r.ok() ? "" : "abort command exited " + std::to_string(r.exit_code);
}

bool Run::apply_fault(std::size_t i) {
  const auto& spec = plan_.faults[i].real.spec;
  const auto& p = programs_[i];
  // The revert is on disk before anything is changed.
  journal_->append({{"event", "intent"},
                    {"step", spec.id},
                    {"fault", spec.id},
                    {"type", spec.type},
                    {"target", spec.target},
                    {"mechanism", p.mechanism},
                    {"revert", p.revert}});
  active_[i] = true;
  started_s_[i] = real::unix_now();
  nlohmann::json commands = nlohmann::json::array();
  bool ok = true;
  for (const auto& argv : p.apply) {
    real::CommandResult r = real::run_command(argv);
    commands.push_back(real::command_record(argv, r));
    if (!r.ok()) {
      err_ << "apply of " << spec.id << " failed: " << real::display(argv) << ": " << r.output << "\n";
      ok = false;
      break;
    }
  }
  for (std::size_t c = 0; ok && c < p.verify.size(); ++c)
    if (!check_passes(p.verify[c])) {
      err_ << "verify of " << spec.id << " failed: " << real::display(p.verify[c].argv) << "\n";
      ok = false;
    }
  journal_->append({{"event", ok ? "applied" : "apply_failed"}, {"step", spec.id}, {"commands", commands}});
  applied_[i] = ok;
  audit((ok ? "applied " : "FAILED to apply ") + spec.id + " " + spec.type + " on " + spec.target + " via " +
        p.mechanism + (p.note.empty() ? "" : " (" + p.note + ")"));
  return ok;
}

void Run::revert_fault(std::size_t i, const std::string& by) {
  if (!active_[i]) return;
  const auto& spec = plan_.faults[i].real.spec;
  const auto& p = programs_[i];
  nlohmann::json commands = nlohmann::json::array();
  std::string failure;
  for (const auto& argv : p.revert) {
    const real::CommandResult r = real::run_revert_command(argv, commands);
    if (!r.ok() && failure.empty()) failure = real::display(argv) + " exited " + std::to_string(r.exit_code);
  }
  double now = real::unix_now();
  active_[i] = false;
  if (applied_[i] && !failure.empty()) {
    // The fault may still be in place: it stays pending in the journal for
    // `gauntlet recover`, and the run fails.
    journal_->append(
        {{"event", "revert_failed"}, {"step", spec.id}, {"by", by}, {"commands", commands}, {"time_s", now}});
    ++failed_reverts_;
    err_ << "revert of " << spec.id << " failed: " << failure << "; run 'gauntlet recover --journal " << journal_path_
         << "' once it can succeed\n";
    audit("FAILED to revert " + spec.id + " (" + by + "): " + failure + "; it is still in place");
    return;
  }
  journal_->append({{"event", "reverted"}, {"step", spec.id}, {"by", by}, {"commands", commands}, {"time_s", now}});
  real::append_truth_line(faults_path_, spec.id, spec.type, spec.target, t0_, started_s_[i], now);
  bool clean = std::all_of(p.verify_reverted.begin(), p.verify_reverted.end(), check_passes);
  audit("reverted " + spec.id + " (" + by + ")" + (clean ? "" : " -- WARNING: post-revert check failed"));
}

void Run::revert_all(const std::string& by) {
  for (std::size_t i = plan_.faults.size(); i-- > 0;) revert_fault(i, by);
}

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  g_stop_signal = 0;
}

std::optional<int> Run::open_records() {
  out_dir_ = options_.out_dir;
  if (out_dir_.empty())
    out_dir_ = options_.journal_path.empty() ? "results/chaos/" + plan_.name
                                             : std::filesystem::path(options_.journal_path).parent_path().string();
  if (out_dir_.empty()) out_dir_ = ".";
  journal_path_ = options_.journal_path.empty() ? out_dir_ + "/journal.jsonl" : options_.journal_path;
  faults_path_ = out_dir_ + "/faults.jsonl";
  audit_path_ = out_dir_ + "/audit.log";
  try {
    if (std::filesystem::exists(journal_path_) && !real::read_journal(journal_path_).pending.empty()) {
      err_ << journal_path_ << " still lists applied faults; run 'gauntlet recover --journal " << journal_path_
           << "' first\n";
      return 2;
    }
    journal_ = std::make_unique<real::Journal>(journal_path_);
    std::ofstream(faults_path_, std::ios::trunc).close();  // this run's ground truth only
  } catch (const real::JournalError& e) {
    err_ << e.what() << "; nothing was changed\n";
    return 2;
  } catch (const std::exception& e) {
    err_ << e.what() << "\n";
    return 1;
  }
  return std::nullopt;
}

std::vector<Event> Run::schedule() const {
  std::vector<Event> events;
  for (std::size_t i = 0; i < plan_.faults.size(); ++i) {
    const auto& spec = plan_.faults[i].real.spec;
    events.push_back({spec.start, 2, i, 0});
    for (std::size_t d = 0; d < programs_[i].during.size(); ++d)
      events.push_back({spec.start + programs_[i].during[d].offset, 1, i, d});
    events.push_back({*spec.end(), 0, i, 0});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; });
  return events;
}

std::string Run::run_events(const std::vector<Event>& events, double t0) {
  std::string stop_reason = abort_check();
  double next_abort_check = real::unix_now() + sim::to_seconds(plan_.safety.abort_interval);
  for (std::size_t e = 0; e < events.size() && stop_reason.empty();) {
    double due = t0 + sim::to_seconds(events[e].at);
    double now = real::unix_now();
    if (g_stop_signal) return "signal " + std::to_string(g_stop_signal);
    if (now >= next_abort_check) {
      stop_reason = abort_check();
      next_abort_check = now + sim::to_seconds(plan_.safety.abort_interval);
      continue;
    }
    if (now < due) {
      double nap = std::min({due - now, next_abort_check - now, 0.05});
      std::this_thread::sleep_for(std::chrono::duration<double>(std::max(nap, 0.0)));
      continue;
    }
    const Event& ev = events[e++];
    if (ev.order == 2) {
      if (!apply_fault(ev.fault)) stop_reason = "apply of " + plan_.faults[ev.fault].real.spec.id + " failed";
    } else if (ev.order == 1) {
      if (!active_[ev.fault]) continue;
      const auto& step = programs_[ev.fault].during[ev.during];
      real::CommandResult r = real::run_command(step.argv);
      journal_->append({{"event", "action"},
                        {"step", plan_.faults[ev.fault].real.spec.id},
                        {"what", step.what},
                        {"commands", {real::command_record(step.argv, r)}}},
                       false);
    } else {
      revert_fault(ev.fault, "schedule");
    }
  }
  return stop_reason;
}

int Run::finish(const std::string& stop_reason) {
  int code = 0;
  if (!stop_reason.empty()) {
    err_ << "aborting plan " << plan_.name << ": " << stop_reason << "; reverting everything\n";
    revert_all("abort: " + stop_reason);
    code = 1;
  }
  std::string status = code == 0 ? "completed" : "aborted: " + stop_reason;
  if (failed_reverts_ > 0) {
    status += (code == 0 ? "" : "; ") + std::string("with ") + std::to_string(failed_reverts_) + " failed revert(s)";
    code = 1;
  }
  journal_->append({{"event", "end"}, {"status", status}});
  real::append_audit(audit_path_, "plan " + status);
  return code;
}

int Run::execute() {
  if (refuse_for_host() || !build_programs()) return 2;
  if (!options_.apply) {
    print_dry_run();
    return 0;
  }
  if (const std::optional<int> refused = open_records()) return *refused;
  catch_stop_signals();
  active_.assign(plan_.faults.size(), false);
  applied_.assign(plan_.faults.size(), false);
  started_s_.assign(plan_.faults.size(), 0);
  const std::vector<Event> events = schedule();

  t0_ = real::unix_now();
  const double t0 = t0_;
  journal_->append({{"event", "begin"},
                    {"plan", plan_.name},
                    {"source", plan_.source_path},
                    {"pid", ::getpid()},
                    {"faults_file", faults_path_},
                    {"audit_file", audit_path_},
                    {"t0_unix_s", t0}});
  real::append_audit(audit_path_, "begin plan " + plan_.name + " from " + plan_.source_path + " (pid " +
                                      std::to_string(::getpid()) + ")");
  double deadline = t0 + sim::to_seconds(plan_.end()) + kWatchdogGraceS;
  std::optional<real::Watchdog> watchdog;
  try {
    watchdog.emplace(real::Watchdog::start(journal_path_, deadline));
  } catch (const std::exception& e) {
    err_ << "refusing to inject without a watchdog: " << e.what() << "\n";
    return 1;
  }
  journal_->append({{"event", "watchdog"}, {"pid", watchdog->pid()}, {"deadline_s", deadline}});
  const int code = finish(run_events(events, t0));
  watchdog->release();
  out_ << "ground truth: " << faults_path_ << "\njournal: " << journal_path_ << "\naudit log: " << audit_path_ << "\n";
  return code;
}

}  // namespace

int execute_chaos_plan(const ChaosPlan& plan, const ChaosOptions& options, std::ostream& out, std::ostream& err) {
  return Run(plan, options, out, err).execute();
}

}  // namespace gauntlet::harness
