// Folding the hybrid engine's packet counts into the flow model's records.
#include "harness/runner/hybrid_telemetry.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

telemetry::PortCounters* port(telemetry::Batch& b, const std::string& link, bool upward, std::int64_t at) {
  telemetry::PortCounters* p = b.add_records()->mutable_port();
  p->set_link(link);
  p->set_upward(upward);
  p->set_time_ns(at);
  return p;
}

TEST(HybridTelemetry, PacketCountsTakeTheModelsPlaceOnThePortsBatchesCrossed) {
  telemetry::Batch model;
  telemetry::PortCounters* lossy = port(model, "h0.nic0~leaf0", true, 1000);
  lossy->set_tx_bytes(5'000'000);
  lossy->set_tx_packets(1221);
  port(model, "h0.nic0~leaf0", false, 1000)->set_tx_bytes(70'000);
  telemetry::RnicTransportCounters* t = model.add_records()->mutable_transport();
  t->set_nic("h0.nic0");
  t->set_time_ns(1000);
  t->set_retransmitted_packets(40);

  telemetry::Batch packets;
  telemetry::PortCounters* counted = port(packets, "h0.nic0~leaf0", true, 1000);
  counted->set_tx_packets(1300);
  counted->set_tx_bytes(5'300'000);
  counted->set_crc_errors(13);
  port(packets, "h0.nic0~leaf0", false, 1000);                   // fell quiet: all zero
  port(packets, "leaf0~spine1", true, 1000)->set_ecn_marked(7);  // the model had no record
  telemetry::RnicTransportCounters* resent = packets.add_records()->mutable_transport();
  resent->set_nic("h0.nic0");
  resent->set_time_ns(1000);
  resent->set_retransmitted_packets(310);
  resent->set_naks_received(12);

  PacketCountMerge().merge(packets, &model);
  ASSERT_EQ(model.records_size(), 4);
  // The model's bytes stay; the packets' errors replace its estimate.
  EXPECT_EQ(model.records(0).port().tx_bytes(), 5'000'000u);
  EXPECT_EQ(model.records(0).port().crc_errors(), 13u);
  EXPECT_EQ(model.records(1).port().tx_bytes(), 70'000u);
  EXPECT_EQ(model.records(2).transport().retransmitted_packets(), 310u);
  EXPECT_EQ(model.records(2).transport().naks_received(), 12u);
  EXPECT_EQ(model.records(3).port().link(), "leaf0~spine1");
  EXPECT_EQ(model.records(3).port().ecn_marked(), 7u);
  EXPECT_EQ(model.records(3).port().tx_bytes(), 0u);  // no data of the model's crossed it
}

// The model publishes a port's record when it changes. A batch crossing a
// port in a second the model kept quiet shows the model's bytes still
// (an RNIC's byte counters are the model's too, so the two balance), not
// the batch's frames, its acknowledgements and CNPs among them; when the
// batch falls quiet, the model's own record is shown again.
TEST(HybridTelemetry, APortTheModelKeptQuietShowsItsLastBytesUnderTheBatchsCounts) {
  PacketCountMerge merge;
  telemetry::Batch first;
  telemetry::PortCounters* steady = port(first, "h1.nic0~leaf0", false, 1000);
  steady->set_tx_bytes(80'000);
  steady->set_tx_packets(20);
  steady->set_crc_errors(1);
  merge.merge(telemetry::Batch(), &first);

  telemetry::Batch model, packets;
  telemetry::PortCounters* counted = port(packets, "h1.nic0~leaf0", false, 2000);
  counted->set_tx_bytes(150'000);  // data, acknowledgements and CNPs
  counted->set_tx_packets(90);
  counted->set_ecn_marked(4);
  merge.merge(packets, &model);
  ASSERT_EQ(model.records_size(), 1);
  EXPECT_EQ(model.records(0).port().time_ns(), 2000);
  EXPECT_EQ(model.records(0).port().tx_bytes(), 80'000u);
  EXPECT_EQ(model.records(0).port().tx_packets(), 20u);
  EXPECT_EQ(model.records(0).port().ecn_marked(), 4u);
  EXPECT_EQ(model.records(0).port().crc_errors(), 0u);  // the packets' count, not the model's estimate

  telemetry::Batch later, quiet;
  port(quiet, "h1.nic0~leaf0", false, 3000);
  merge.merge(quiet, &later);
  ASSERT_EQ(later.records_size(), 1);
  EXPECT_EQ(later.records(0).port().tx_bytes(), 80'000u);
  EXPECT_EQ(later.records(0).port().ecn_marked(), 0u);
  EXPECT_EQ(later.records(0).port().crc_errors(), 1u);

  telemetry::Batch after, still_quiet;
  port(still_quiet, "h1.nic0~leaf0", false, 4000);
  merge.merge(still_quiet, &after);
  EXPECT_EQ(after.records_size(), 0);  // the model's record stands
}

// RNICs' transport counters too are published by the model only when they
// change: a batch's resends in a second the model kept quiet show over the
// model's held record, and the held record returns when the batch falls
// quiet.
TEST(HybridTelemetry, AnRnicTheModelKeptQuietShowsTheBatchsResendsThenItsOwnRecordAgain) {
  PacketCountMerge merge;
  telemetry::Batch first;
  telemetry::RnicTransportCounters* held = first.add_records()->mutable_transport();
  held->set_nic("h2.nic1");
  held->set_time_ns(1000);
  held->set_retransmitted_packets(6);
  held->set_ecn_marked_received(9);  // packets do not count it: stays the model's
  merge.merge(telemetry::Batch(), &first);

  const auto counted = [](std::int64_t at, std::uint64_t resent) {
    telemetry::Batch b;
    telemetry::RnicTransportCounters* t = b.add_records()->mutable_transport();
    t->set_nic("h2.nic1");
    t->set_time_ns(at);
    t->set_retransmitted_packets(resent);
    return b;
  };
  telemetry::Batch during;
  merge.merge(counted(2000, 250), &during);
  ASSERT_EQ(during.records_size(), 1);
  EXPECT_EQ(during.records(0).transport().time_ns(), 2000);
  EXPECT_EQ(during.records(0).transport().retransmitted_packets(), 250u);
  EXPECT_EQ(during.records(0).transport().ecn_marked_received(), 9u);

  telemetry::Batch later;
  merge.merge(counted(3000, 0), &later);
  ASSERT_EQ(later.records_size(), 1);
  EXPECT_EQ(later.records(0).transport().time_ns(), 3000);
  EXPECT_EQ(later.records(0).transport().retransmitted_packets(), 6u);

  telemetry::Batch after;
  merge.merge(counted(4000, 0), &after);
  EXPECT_EQ(after.records_size(), 0);  // the model's record stands
}

TEST(HybridTelemetry, RecordsOfAnotherInstantAreNotMerged) {
  telemetry::Batch model;
  port(model, "h0.nic0~leaf0", true, 1000)->set_tx_bytes(1);
  telemetry::Batch packets;
  port(packets, "h0.nic0~leaf0", true, 2000)->set_crc_errors(3);
  PacketCountMerge().merge(packets, &model);
  ASSERT_EQ(model.records_size(), 2);
  EXPECT_EQ(model.records(0).port().crc_errors(), 0u);
  EXPECT_EQ(model.records(1).port().crc_errors(), 3u);
}

}  // namespace
}  // namespace gauntlet::harness
