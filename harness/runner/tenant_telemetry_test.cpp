#include "harness/runner/tenant_telemetry.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

TEST(TenantTelemetry, HidesOtherTenantsHostsAndKeepsTheFabric) {
  telemetry::Batch batch;
  batch.add_records()->mutable_gpu()->set_gpu("h0.gpu1");
  batch.add_records()->mutable_gpu()->set_gpu("h2.gpu1");
  batch.add_records()->mutable_port()->set_link("h2.nic0~leaf0");  // another tenant's host link
  batch.add_records()->mutable_port()->set_link("leaf0~spine0");   // the shared fabric
  batch.add_records()->mutable_collective()->set_worker("h0.gpu0");
  telemetry::SteadySamples* held = batch.add_steady_samples();
  held->add_samples()->mutable_cpu()->set_cpu("h2.cpu");  // all hidden: the block goes
  telemetry::SteadySamples* mixed = batch.add_steady_samples();
  mixed->add_samples()->mutable_nic()->set_nic("h0.nic0");
  mixed->add_samples()->mutable_nic()->set_nic("h3.nic0");
  telemetry::FlowBurst* burst = batch.add_flow_table_runs()->add_bursts();
  burst->set_table("h3.nic0.ft");

  keep_tenant_telemetry(batch, {0, 1});
  ASSERT_EQ(batch.records_size(), 3);
  EXPECT_EQ(batch.records(0).gpu().gpu(), "h0.gpu1");
  EXPECT_EQ(batch.records(1).port().link(), "leaf0~spine0");
  EXPECT_TRUE(batch.records(2).has_collective());
  ASSERT_EQ(batch.steady_samples_size(), 1);
  ASSERT_EQ(batch.steady_samples(0).samples_size(), 1);
  EXPECT_EQ(batch.steady_samples(0).samples(0).nic().nic(), "h0.nic0");
  EXPECT_EQ(batch.flow_table_runs(0).bursts_size(), 0);
}

}  // namespace
}  // namespace gauntlet::harness
