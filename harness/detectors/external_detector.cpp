#include "harness/detectors/external_detector.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "sim/component_id.hpp"
#include "sim/proto/detector_protocol.pb.h"

extern char** environ;

namespace gauntlet::harness {
namespace {

constexpr std::size_t kMaxReplyBytes = 64u << 20;

sim::Nanos wall_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int poll_ms(sim::Nanos deadline_ns) {
  const sim::Nanos left = deadline_ns - wall_now();
  return left <= 0 ? 0 : static_cast<int>((left + 999'999) / 1'000'000);
}

std::string varint(std::uint64_t value) {
  std::string out;
  do {
    auto byte = static_cast<char>(value & 0x7f);
    value >>= 7;
    if (value) byte = static_cast<char>(byte | 0x80);
    out.push_back(byte);
  } while (value);
  return out;
}

bool has_unknown(const google::protobuf::Message& m) {
  return !m.GetReflection()->GetUnknownFields(m).empty();
}

bool valid_kind(const std::string& kind) {
  return kind == "fail_stop" || kind == "fail_slow" || kind == "network" || kind == "monitor";
}

}  // namespace

std::optional<std::vector<std::string>> split_command_line(const std::string& command, std::string* error) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else word.push_back(c);
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < command.size() && std::strchr("\"\\$`", command[i + 1])) {
        word.push_back(command[++i]);
      } else {
        word.push_back(c);
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 == command.size()) {
        if (error) *error = "trailing backslash";
        return std::nullopt;
      }
      word.push_back(command[++i]);
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (quote) {
    if (error) *error = std::string("unclosed ") + quote + " quote";
    return std::nullopt;
  }
  if (in_word) words.push_back(word);
  if (words.empty()) {
    if (error) *error = "empty command";
    return std::nullopt;
  }
  return words;
}

ExternalConfig external_config_from(const std::map<std::string, std::string>& params) {
  ExternalConfig config;
  for (const auto& [key, value] : params) {
    if (key == "name") continue;
    if (key != "reply_timeout")
      throw std::invalid_argument("unknown parameter '" + key + "' for an exec: detector (known: reply_timeout)");
    std::string why;
    auto ns = sim::parse_duration(value, &why);
    if (!ns || *ns <= 0) throw std::invalid_argument("exec: detector parameter 'reply_timeout': " + (ns ? "must be positive" : why));
    config.reply_timeout = *ns;
  }
  return config;
}

ExternalDetector::ExternalDetector(const std::string& name, ExternalConfig config) : name_(name), config_(config) {
  // A detector that dies makes our next write fail with EPIPE; the default
  // SIGPIPE would kill the whole run instead.
  ::signal(SIGPIPE, SIG_IGN);
  start(name.substr(std::string(kPrefix).size()));
}

ExternalDetector::~ExternalDetector() { stop(); }

void ExternalDetector::start(const std::string& command) {
  std::string error;
  auto argv_words = split_command_line(command, &error);
  if (!argv_words) return fail("cannot parse the command: " + error);
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return fail(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  std::vector<char*> argv;
  for (std::string& w : *argv_words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int rc = ::posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  if (rc != 0) {
    pid_ = -1;
    return fail("cannot start '" + (*argv_words)[0] + "': " + std::strerror(rc));
  }
  ::fcntl(to_child_, F_SETFL, ::fcntl(to_child_, F_GETFL) | O_NONBLOCK);
  ::fcntl(from_child_, F_SETFL, ::fcntl(from_child_, F_GETFL) | O_NONBLOCK);
}

void ExternalDetector::fail(const std::string& reason) {
  if (failed()) return;
  failure_ = reason;
  std::fprintf(stderr, "detector %s failed: %s; the run goes on without it\n", name_.c_str(), reason.c_str());
  stop();
}

void ExternalDetector::stop() {
  if (to_child_ >= 0) ::close(std::exchange(to_child_, -1));  // EOF: a well-behaved detector exits
  if (pid_ > 0 && !wait_status_) {
    int status = 0;
    // A failed detector is not waited for; a finished one gets a moment to exit.
    const sim::Nanos deadline = wall_now() + (failed() ? 0 : sim::kSecond);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (wall_now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    wait_status_ = status;
  }
  if (from_child_ >= 0) ::close(std::exchange(from_child_, -1));
}

std::string ExternalDetector::exit_description() {
  // The child closed its end; give it a moment to be reaped.
  if (pid_ > 0 && !wait_status_) {
    int status = 0;
    const sim::Nanos deadline = wall_now() + sim::kSecond;
    pid_t got = 0;
    while ((got = ::waitpid(pid_, &status, WNOHANG)) == 0 && wall_now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (got == pid_) wait_status_ = status;
  }
  if (!wait_status_) return "closed its stdout";
  const int status = *wait_status_;
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

bool ExternalDetector::write_all(const std::string& bytes, sim::Nanos deadline_ns) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(to_child_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{to_child_, POLLOUT, 0};
      if (::poll(&p, 1, poll_ms(deadline_ns)) == 0) {
        fail("did not read its batch within " + sim::format_duration(config_.reply_timeout));
        return false;
      }
      continue;
    }
    fail("stopped reading its stdin: " + exit_description());
    return false;
  }
  return true;
}

bool ExternalDetector::read_exact(std::size_t count, std::string* out, sim::Nanos deadline_ns) {
  char chunk[65536];
  while (buffered_.size() < count) {
    pollfd p{from_child_, POLLIN, 0};
    const int ready = ::poll(&p, 1, poll_ms(deadline_ns));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      fail("no reply within " + sim::format_duration(config_.reply_timeout));
      return false;
    }
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n > 0) {
      buffered_.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      fail(buffered_.empty() ? exit_description() : "reply cut short; " + exit_description());
      return false;
    } else if (errno != EAGAIN && errno != EINTR) {
      fail(std::string("reading its stdout: ") + std::strerror(errno));
      return false;
    }
  }
  *out = buffered_.substr(0, count);
  buffered_.erase(0, count);
  return true;
}

std::optional<std::string> ExternalDetector::read_reply(sim::Nanos deadline_ns) {
  std::uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    if (shift >= 35) {
      fail("malformed reply: the length prefix is not a varint under 2^32");
      return std::nullopt;
    }
    std::string byte;
    if (!read_exact(1, &byte, deadline_ns)) return std::nullopt;
    const auto b = static_cast<unsigned char>(byte[0]);
    length |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (length > kMaxReplyBytes) {
    fail("malformed reply: length prefix says " + std::to_string(length) + " bytes (limit " +
         std::to_string(kMaxReplyBytes) + ")");
    return std::nullopt;
  }
  std::string payload;
  if (!read_exact(static_cast<std::size_t>(length), &payload, deadline_ns)) return std::nullopt;
  return payload;
}

void ExternalDetector::apply(const std::string& payload, sim::Nanos now) {
  protocol::DetectorReply reply;
  if (!reply.ParseFromString(payload)) return fail("malformed reply: the bytes are not a DetectorReply");
  // Protobuf keeps unknown fields silently; in a reply they mean the detector
  // wrote something else (or another schema), so they are garbage here.
  bool unknown = has_unknown(reply);
  for (const auto& a : reply.alerts()) {
    unknown = unknown || has_unknown(a);
    for (const auto& s : a.suspects()) unknown = unknown || has_unknown(s);
  }
  for (const auto& p : reply.probes()) unknown = unknown || has_unknown(p);
  for (const auto& p : reply.profiling()) unknown = unknown || has_unknown(p);
  for (const auto& b : reply.benchmarks()) unknown = unknown || has_unknown(b);
  if (unknown) return fail("malformed reply: fields a DetectorReply does not have");
  for (const auto& a : reply.alerts()) {
    if (!valid_kind(a.kind()))
      return fail("alert kind '" + a.kind() + "' is not one of fail_stop, fail_slow, network, monitor");
    for (const auto& s : a.suspects())
      if (!sim::ComponentId::parse(s.id())) return fail("alert suspect '" + s.id() + "' is not a component id");
  }
  for (const auto& p : reply.probes())
    if (!sim::ComponentId::parse(p.src()) || !sim::ComponentId::parse(p.dst()))
      return fail("probe request '" + p.src() + "' -> '" + p.dst() + "' does not name two RNICs");
  for (const auto& p : reply.profiling())
    if (p.duration_ns() < 0) return fail("profiling request with a negative duration");

  for (const auto& a : reply.alerts()) {
    Alert alert;
    alert.time_s = sim::to_seconds(now);
    alert.detector = name_;
    alert.kind = a.kind();
    for (const auto& s : a.suspects()) alert.suspects.push_back({s.id(), s.score()});
    raise(std::move(alert));
  }
  for (const auto& p : reply.probes()) request_probe({p.src(), p.dst(), p.overlay()});
  for (const auto& p : reply.profiling())
    request_profiling({p.duration_ns(), {p.workers().begin(), p.workers().end()}});
  for (const auto& b : reply.benchmarks()) request_benchmark({b.kind(), {b.targets().begin(), b.targets().end()}});
}

void ExternalDetector::observe(const telemetry::Batch& batch) {
  if (failed()) return;
  const sim::Nanos deadline = wall_now() + config_.reply_timeout;
  const std::string body = batch.SerializeAsString();
  if (!write_all(varint(body.size()) + body, deadline)) return;
  auto payload = read_reply(deadline);
  if (!payload) return;
  apply(*payload, batch.until_ns());
}

}  // namespace gauntlet::harness
