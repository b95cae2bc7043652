// hostile-detector: an exec: detector that breaks the protocol in one way,
// for the hostile corpus (tests/hostile/detectors_test.cpp). Usage:
//   hostile-detector MODE [ARG]
// MODE: probes N (N probe requests per reply), suspects A S (A alerts of S
// suspects each), nan (a NaN suspect score), extra (two replies per batch),
// nuke (a benchmark of an unknown kind), grandchild MARKER (starts `sleep`
// in a session of its own, named MARKER, then answers as asked by nothing).
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/proto/detector_protocol.pb.h"
#include "sim/proto/telemetry.pb.h"

namespace {

using gauntlet::protocol::DetectorReply;

void start_grandchild(const char* marker) {
  if (::fork() != 0) return;
  ::setsid();
  ::execlp("sleep", marker, "300", static_cast<char*>(nullptr));
  ::_exit(127);
}

// The reply to one batch; components from the DetectorStart's topology.
DetectorReply reply_for(const std::string& mode, int argc, char** argv, const std::vector<std::string>& gpus,
                        const std::vector<std::string>& nics) {
  DetectorReply reply;
  if (mode == "probes") {
    for (int i = 0; i < std::atoi(argv[2]); ++i) {
      auto* p = reply.add_probes();
      p->set_src(nics[0]);
      p->set_dst(nics[1 + static_cast<std::size_t>(i) % (nics.size() - 1)]);
    }
  } else if (mode == "suspects") {
    const int alerts = std::atoi(argv[2]), suspects = argc > 3 ? std::atoi(argv[3]) : 1;
    for (int a = 0; a < alerts; ++a) {
      auto* alert = reply.add_alerts();
      alert->set_kind("fail_slow");
      for (int s = 0; s < suspects; ++s) {
        auto* suspect = alert->add_suspects();
        suspect->set_id(gpus[static_cast<std::size_t>(s) % gpus.size()]);
        suspect->set_score(1.0 / (s + 1));
      }
    }
  } else if (mode == "nan") {
    auto* alert = reply.add_alerts();
    alert->set_kind("fail_slow");
    auto* suspect = alert->add_suspects();
    suspect->set_id(gpus[0]);
    suspect->set_score(std::nan(""));
  } else if (mode == "nuke") {
    auto* b = reply.add_benchmarks();
    b->set_kind("nuke");
  }
  return reply;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string mode = argv[1];
  google::protobuf::io::FileInputStream in(0);
  google::protobuf::io::FileOutputStream out(1);
  bool clean_eof = false;
  gauntlet::protocol::DetectorStart start;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&start, &in, &clean_eof)) return 1;
  std::vector<std::string> gpus, nics;
  for (const std::string& id : start.topology().components()) {
    if (id.find(".gpu") != std::string::npos) gpus.push_back(id);
    // RNICs alone, not their flow tables (h0.nic0.ft) or host links (h0.nic0~leaf0).
    if (id.find(".nic") != std::string::npos && id.find(".ft") == std::string::npos &&
        id.find('~') == std::string::npos)
      nics.push_back(id);
  }
  if (gpus.empty() || nics.size() < 2) return 1;
  if (mode == "grandchild" && argc > 2) start_grandchild(argv[2]);
  for (;;) {
    gauntlet::telemetry::Batch batch;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&batch, &in, &clean_eof)) break;
    const DetectorReply reply = reply_for(mode, argc, argv, gpus, nics);
    if (!google::protobuf::util::SerializeDelimitedToZeroCopyStream(reply, &out)) return 1;
    if (mode == "extra" && !google::protobuf::util::SerializeDelimitedToZeroCopyStream(reply, &out)) return 1;
    if (!out.Flush()) return 1;
  }
  return clean_eof ? 0 : 1;
}
