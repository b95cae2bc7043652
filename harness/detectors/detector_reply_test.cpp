#include "harness/detectors/detector_reply.hpp"

#include <gtest/gtest.h>

#include "harness/detectors/external_detector.hpp"

namespace gauntlet::harness {
namespace {

bool in_two_host_cluster(const std::string& id) { return id.starts_with("h0.") || id.starts_with("h1."); }

TEST(LengthPrefix, RoundTripsAcrossVarintByteCounts) {
  for (const std::size_t size : {0u, 1u, 127u, 128u, 16'383u, 16'384u, 300'000u}) {
    const std::string frame = length_prefixed(std::string(size, 'x'));
    std::uint64_t length = 0;
    std::size_t prefix = 0;
    ASSERT_EQ(read_length_prefix(frame, &length, &prefix), LengthPrefix::complete) << size;
    EXPECT_EQ(length, size);
    EXPECT_EQ(prefix + size, frame.size());
  }
}

TEST(LengthPrefix, TellsACutPrefixFromAMalformedOne) {
  std::uint64_t length = 0;
  std::size_t prefix = 0;
  EXPECT_EQ(read_length_prefix("", &length, &prefix), LengthPrefix::incomplete);
  EXPECT_EQ(read_length_prefix("\x80\x80", &length, &prefix), LengthPrefix::incomplete);
  EXPECT_EQ(read_length_prefix("\x80\x80\x80\x80\x80", &length, &prefix), LengthPrefix::malformed);
  EXPECT_EQ(read_length_prefix("\xff\xff\xff\xff\x0f", &length, &prefix), LengthPrefix::complete);
  EXPECT_EQ(length, 0xffffffffu);
}

TEST(StrayText, NamesPrintedTextButNotBinary) {
  EXPECT_NE(describe_stray_text("hello from my detector\n").find("\"hello from my detector\\n\""), std::string::npos);
  EXPECT_EQ(describe_stray_text(std::string("\x0a\x02\x08\x01\x12\x00", 6)), "");
  EXPECT_EQ(describe_stray_text("h"), "");
}

TEST(ParseReply, RefusesGarbageAndUnknownFields) {
  protocol::DetectorReply reply;
  std::string problem;
  EXPECT_FALSE(parse_reply("\xff\xff\xff", &reply, &problem));
  EXPECT_EQ(problem, "malformed reply: the bytes are not a DetectorReply (or one of its strings is not UTF-8)");
  // An alert whose kind is not UTF-8: refused, and nothing printed besides
  // the problem the caller reports.
  testing::internal::CaptureStderr();
  EXPECT_FALSE(parse_reply(std::string("\x0a\x04\x0a\x02\xff\xfe", 6), &reply, &problem));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  // Field 9, varint 1: well-formed protobuf, not a DetectorReply field.
  EXPECT_FALSE(parse_reply(std::string("\x48\x01", 2), &reply, &problem));
  EXPECT_EQ(problem, "malformed reply: fields a DetectorReply does not have");
  protocol::DetectorReply written;
  written.add_alerts()->set_kind("network");
  ASSERT_TRUE(parse_reply(written.SerializeAsString(), &reply, &problem));
  EXPECT_EQ(reply.alerts(0).kind(), "network");
}

TEST(ReplyProblem, ChecksKindsSuspectsProbesAndLimits) {
  protocol::DetectorReply reply;
  protocol::Alert* alert = reply.add_alerts();
  alert->set_kind("fail_slow");
  alert->add_suspects()->set_id("h1.gpu3");
  EXPECT_EQ(reply_problem(reply, in_two_host_cluster), "");
  alert->add_suspects()->set_id("h9.gpu0");
  EXPECT_EQ(reply_problem(reply, in_two_host_cluster), "alert suspect 'h9.gpu0' is not in the cluster");
  alert->mutable_suspects()->RemoveLast();
  alert->add_suspects()->set_id("../../etc/passwd");
  EXPECT_EQ(reply_problem(reply, in_two_host_cluster), "alert suspect '../../etc/passwd' is not a component id");
  alert->mutable_suspects()->RemoveLast();
  alert->set_kind("slow");
  EXPECT_NE(reply_problem(reply, in_two_host_cluster).find("alert kind 'slow'"), std::string::npos);
  alert->set_kind("network");

  protocol::ProbeRequest* probe = reply.add_probes();
  probe->set_src("h0.nic0");
  probe->set_dst("h1.gpu0");
  EXPECT_NE(reply_problem(reply, in_two_host_cluster).find("does not name two RNICs"), std::string::npos);
  probe->set_dst("h1.nic1");
  EXPECT_EQ(reply_problem(reply, in_two_host_cluster), "");

  for (int i = 0; i < kMaxAlertsPerReply; ++i) reply.add_alerts()->set_kind("network");
  EXPECT_NE(reply_problem(reply, in_two_host_cluster).find("alerts in one reply (limit"), std::string::npos);
}

}  // namespace
}  // namespace gauntlet::harness
