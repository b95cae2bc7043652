// iteration-watch: an example external detector for `gauntlet run
// --detectors exec:PATH`. It reads a DetectorStart and then telemetry
// batches from stdin and answers each batch with one reply on stdout, both
// length-delimited protobuf (docs/protocol.md).
//
// What it does: keeps the median of the job's recent iteration times (the
// slowest worker's, since synchronous training waits for it) and raises a
// fail_slow alert when an iteration is `--ratio` (default 1.1) above it. The
// suspect is the worker whose compute in that iteration stands out most
// from the median compute, when one stands out by 5% or more. One alert per
// slowdown episode: it re-arms once iterations are back near the baseline.
//
// Usage: iteration-watch [--ratio R] [--window N]
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "sim/proto/detector_protocol.pb.h"
#include "sim/proto/telemetry.pb.h"

namespace {

using gauntlet::protocol::DetectorReply;
using gauntlet::telemetry::Batch;
using gauntlet::telemetry::IterationRecord;

struct Options {
  double ratio = 1.1;
  std::size_t window = 8;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

class Watch {
 public:
  explicit Watch(Options options) : options_(options) {}

  // One iteration: every worker's record of it.
  void iteration(const std::vector<const IterationRecord*>& workers, DetectorReply* reply) {
    double longest = 0;
    std::vector<double> compute;
    for (const auto* w : workers) {
      longest = std::max(longest, static_cast<double>(w->end_ns() - w->start_ns()));
      compute.push_back(static_cast<double>(w->compute_ns()));
    }
    const bool ready = baseline_.size() >= options_.window;
    const double base = median({baseline_.begin(), baseline_.end()});
    if (ready && longest > options_.ratio * base) {
      if (!alerted_) {
        auto* alert = reply->add_alerts();
        alert->set_kind("fail_slow");
        const double typical = median(compute);
        const IterationRecord* worst = nullptr;
        for (const auto* w : workers)
          if (!worst || w->compute_ns() > worst->compute_ns()) worst = w;
        if (worst && typical > 0 && worst->compute_ns() >= 1.05 * typical) {
          auto* suspect = alert->add_suspects();
          suspect->set_id(worst->worker());
          suspect->set_score(worst->compute_ns() / typical - 1.0);
        }
        alerted_ = true;
      }
      return;
    }
    alerted_ = false;
    baseline_.push_back(longest);
    if (baseline_.size() > options_.window) baseline_.pop_front();
  }

 private:
  Options options_;
  std::deque<double> baseline_;
  bool alerted_ = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--ratio") && has_value) {
      o.ratio = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--window") && has_value) {
      o.window = static_cast<std::size_t>(std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: iteration-watch [--ratio R] [--window N]\n");
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Watch watch(parse(argc, argv));
  google::protobuf::io::FileInputStream in(0);
  google::protobuf::io::FileOutputStream out(1);
  bool clean_eof = false;
  // The first message describes the cluster and the cadence; this detector
  // needs only to know that it speaks the same protocol version.
  gauntlet::protocol::DetectorStart start;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&start, &in, &clean_eof)) return 1;
  if (start.protocol_version() != gauntlet::protocol::VERSION_CURRENT) {
    std::fprintf(stderr, "iteration-watch: protocol version %d, expected %d\n", start.protocol_version(),
                 gauntlet::protocol::VERSION_CURRENT);
    return 1;
  }
  for (;;) {
    Batch batch;  // parsing merges into a message, so each batch gets a fresh one
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&batch, &in, &clean_eof)) break;
    DetectorReply reply;
    std::map<std::uint64_t, std::vector<const IterationRecord*>> iterations;
    for (const auto& r : batch.records())
      if (r.has_iteration()) iterations[r.iteration().iteration()].push_back(&r.iteration());
    for (const auto& [index, workers] : iterations) watch.iteration(workers, &reply);
    // A steady run repeats one iteration: looking at it once is enough.
    for (const auto& run : batch.steady()) {
      std::vector<const IterationRecord*> workers;
      for (const auto& r : run.records())
        if (r.has_iteration()) workers.push_back(&r.iteration());
      if (!workers.empty()) watch.iteration(workers, &reply);
    }
    if (!google::protobuf::util::SerializeDelimitedToZeroCopyStream(reply, &out) || !out.Flush()) return 1;
  }
  return clean_eof ? 0 : 1;
}
