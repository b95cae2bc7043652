// Several jobs on one cluster (`jobs:`): placement, names and the errors
// of a tenant list.
#include "harness/scenario/job_entries.hpp"

#include <gtest/gtest.h>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::harness {
namespace {

Scenario parse(const std::string& text) { return parse_scenario(text, "test.yaml", DetectorRegistry{}); }

// Two leaves of four hosts each; one GPU and one RNIC per host.
const std::string kCluster =
    "name: t\n"                                                                         // 1
    "seed: 1\n"                                                                         // 2
    "duration: 10m\n"                                                                   // 3
    "cluster: {spines: 1, leaves: 2, hosts: 8, gpus_per_host: 1, rnics_per_host: 1}\n"  // 4
    "jobs:\n";                                                                          // 5

std::string tenant(const std::string& name, int gpus, const std::string& extra = "") {
  return "  - {name: " + name + ", gpus: " + std::to_string(gpus) + ", parallelism: {dp: " + std::to_string(gpus) +
         "}, compute_per_iteration: 1s, gradient_bytes: 1GB" + extra + "}\n";
}

TEST(Jobs, TenantsTakeTheHostsTheyNameThenTheLowestFreeOnes) {
  const Scenario s = parse(kCluster + tenant("victim", 2, ", spare_hosts: 1") +
                           tenant("neighbour", 2, ", hosts: [h1, h5]") + tenant("third", 3));
  ASSERT_EQ(s.jobs.size(), 3u);
  EXPECT_TRUE(s.shared());
  EXPECT_EQ(s.job.name, "victim");                       // the first tenant is observed unless a view picks another
  EXPECT_EQ(s.jobs[0].hosts, (std::vector<int>{0, 2}));  // h1 is named by the neighbour
  EXPECT_EQ(s.jobs[0].spares, (std::vector<int>{3}));
  EXPECT_EQ(s.jobs[1].hosts, (std::vector<int>{1, 5}));
  EXPECT_EQ(s.jobs[2].hosts, (std::vector<int>{4, 6, 7}));
  EXPECT_EQ(s.detectors_scope, DetectorScope::tenant);
  const Scenario view = tenant_view(s, 1);
  EXPECT_EQ(view.job.name, "neighbour");
  EXPECT_EQ(view.observed_job, 1u);
}

TEST(Jobs, OneTenantIsAJobAloneOnTheHostsItNamed) {
  const Scenario s = parse(kCluster + tenant("solo", 2, ", hosts: [h4, h6]"));
  EXPECT_FALSE(s.shared());
  EXPECT_EQ(s.job.hosts, (std::vector<int>{4, 6}));
}

TEST(Jobs, DetectorsMayWatchTheWholeCluster) {
  const Scenario s = parse(kCluster + tenant("a", 2) + tenant("b", 2) + "detectors_scope: cluster\n");
  EXPECT_EQ(s.detectors_scope, DetectorScope::cluster);
}

struct BadTenants {
  const char* label;
  std::string text;
  int line;
  int column;
  const char* message_part;
};

void PrintTo(const BadTenants& c, std::ostream* out) { *out << c.label; }

class BadTenantList : public testing::TestWithParam<BadTenants> {};

TEST_P(BadTenantList, IsRejectedAtTheRightPosition) {
  const BadTenants& c = GetParam();
  try {
    parse(c.text);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_NE(e.message().find(c.message_part), std::string::npos) << e.what();
  }
}

const BadTenants kBadTenants[] = {
    {"duplicate name", kCluster + tenant("a", 2) + tenant("a", 2), 7, 12, "job 'a' is listed twice (first on line 6)"},
    {"overlapping placements", kCluster + tenant("a", 2, ", hosts: [h0, h1]") + tenant("b", 2, ", hosts: [h2, h1]"), 7,
     102, "h1 is already job 'a''s"},
    {"too many hosts", kCluster + tenant("a", 5) + tenant("b", 4), 7, 21,
     "job 'b' needs 4 hosts but only 3 of the cluster's 8 hosts are free"},
    {"spares beyond the cluster", kCluster + tenant("a", 4) + tenant("b", 3, ", spare_hosts: 2"), 7, 107,
     "needs 2 spare hosts but only 1"},
    {"host list of the wrong length", kCluster + tenant("a", 2, ", hosts: [h0]"), 6, 101, "runs on 2 hosts"},
    {"not a host", kCluster + tenant("a", 2, ", hosts: [h0, h9]"), 6, 106, "'h9' is not a host of the cluster"},
    {"host listed twice", kCluster + tenant("a", 2, ", hosts: [h0, h0]"), 6, 106, "listed twice"},
    {"tenant without a name", kCluster + "  - {gpus: 1, parallelism: {dp: 1}, compute_per_iteration: 1s}\n", 6, 5,
     "missing required key 'name'"},
    {"unsafe tenant name", kCluster + tenant("a/b", 2), 6, 12, "a job's name must be"},
    {"empty list", kCluster.substr(0, kCluster.size() - 1) + " []\n", 5, 7, "'jobs' lists no job"},
    {"job and jobs", kCluster + tenant("a", 2) + "job: {gpus: 1, parallelism: {dp: 1}, compute_per_iteration: 1s}\n", 5,
     1, "either 'job'"},
    {"per_pod beside others", kCluster + tenant("a", 2, ", spare_layout: per_pod") + tenant("b", 2), 6, 108,
     "jobs sharing it take tail spares"},
    {"hosts for a job alone",
     std::string("name: t\nseed: 1\nduration: 10m\n"
                 "cluster: {spines: 1, leaves: 2, hosts: 8, gpus_per_host: 1, rnics_per_host: 1}\n"
                 "job: {gpus: 1, parallelism: {dp: 1}, compute_per_iteration: 1s, hosts: [h3]}\n"),
     5, 65, "a job alone runs from h0 on"},
    {"scope with one job", kCluster + tenant("a", 2) + "detectors_scope: cluster\n", 7, 1, "this scenario has one job"},
    {"unknown scope", kCluster + tenant("a", 2) + tenant("b", 2) + "detectors_scope: tenants\n", 8, 18,
     "tenant | cluster"},
    {"a tenant's limits", kCluster + tenant("a", 2, ", channels: 65"), 6, 104, "channels"},
};

std::string case_name(const testing::TestParamInfo<BadTenants>& info) {
  std::string name;
  for (const char* p = info.param.label; *p; ++p) name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Jobs, BadTenantList, testing::ValuesIn(kBadTenants), case_name);

}  // namespace
}  // namespace gauntlet::harness
