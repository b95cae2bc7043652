#pragma once
// The child process behind an `exec:` detector: its pipes, its process
// group, and the length-delimited frames it reads and writes. Knows nothing
// of the messages inside the frames (external_detector.hpp does).
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace gauntlet::harness {

class DetectorProcess {
 public:
  // How much of the child's stderr reaches ours before the rest is dropped,
  // and how much of its latest output is kept for a failure report.
  static constexpr std::size_t kStderrPassedThrough = 1u << 20;
  static constexpr std::size_t kStderrTailKept = 2048;

  // Starts argv[0] (searched on PATH) in a process group of its own, so
  // that whatever it starts is stopped with it, even what left the group
  // (setsid) while the detector lived. start_error() says why not.
  // reply_timeout only words the messages; each call takes its deadline.
  DetectorProcess(std::vector<std::string> argv, sim::Nanos reply_timeout);
  ~DetectorProcess();
  DetectorProcess(const DetectorProcess&) = delete;
  DetectorProcess& operator=(const DetectorProcess&) = delete;

  const std::string& start_error() const { return start_error_; }

  // Each returns false with *why set when the child fails to keep up by the
  // wall-clock deadline, ends, or writes what is not a frame.
  bool write_frame(const std::string& message, sim::Nanos deadline_ns, std::string* why);
  std::optional<std::string> read_frame(sim::Nanos deadline_ns, std::size_t max_bytes, std::string* why);

  // Whether it wrote bytes past the last frame read (at once, no waiting):
  // a reply nobody asked for.
  bool has_unread_output();

  // Closes its stdin (end of input) and lets it run on: its output can still be read.
  void close_input();
  // Closes its stdin and waits (up to a second when `patient`) for it to
  // exit, then kills its whole process group.
  void stop(bool patient);
  // Set when the last frame read, which did not parse, looked like text.
  std::string stray_text_in_last_frame() const { return describe_stray_bytes(); }
  // The last kStderrTailKept bytes it wrote to stderr.
  std::string stderr_tail() const { return stderr_tail_; }

 private:
  bool read_more(sim::Nanos deadline_ns, std::string* why);
  void drain_stderr();
  void keep_stderr(const char* bytes, std::size_t count);
  std::string exit_description();
  // What a frame that failed to parse looked like, when it was text.
  std::string describe_stray_bytes() const;

  std::string timeout_text_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int child_stderr_ = -1;
  std::string start_error_;
  std::string buffered_;     // stdout bytes read past the last frame
  std::string frame_start_;  // the first bytes of the frame being read
  std::size_t stderr_passed_ = 0;
  std::string stderr_tail_;
  std::optional<int> wait_status_;
};

// The wall clock deadlines are measured against.
sim::Nanos wall_clock_now();

}  // namespace gauntlet::harness
