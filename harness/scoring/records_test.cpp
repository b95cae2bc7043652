#include "harness/scoring/records.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string_view>

#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

// As the built-in catalog's descriptors say: a reconfigure is benign by definition.
bool benign_type(std::string_view type) { return type == "reconfigure"; }

TEST(Records, FaultsRoundTrip) {
  FaultEpisode a;
  a.id = "f1";
  a.type = "link_loss";
  a.target = "leaf3~spine1";
  a.start_s = 300.0;
  a.end_s = 900.25;
  a.cause = "Network switch/cable";
  FaultEpisode b;
  b.id = "f2";
  b.type = "reconfigure";
  b.start_s = 0.1;
  b.benign = true;
  b.affected_job = false;
  std::stringstream io;
  write_fault_line(io, a);
  write_fault_line(io, b);
  EXPECT_NE(io.str().find(R"("id":"f1","type":"link_loss","target":"leaf3~spine1","start_s":300.0,"end_s":900.25)"),
            std::string::npos)
      << io.str();
  auto back = read_faults_jsonl(io, "faults.jsonl", benign_type);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].id, "f1");
  EXPECT_EQ(back[0].target, "leaf3~spine1");
  EXPECT_DOUBLE_EQ(back[0].start_s, 300.0);
  ASSERT_TRUE(back[0].end_s);
  EXPECT_DOUBLE_EQ(*back[0].end_s, 900.25);
  EXPECT_TRUE(back[0].affected_job);
  EXPECT_FALSE(back[0].benign);
  EXPECT_EQ(back[0].cause, "Network switch/cable");
  EXPECT_EQ(back[1].cause, "");
  EXPECT_EQ(back[1].target, "");
  EXPECT_FALSE(back[1].end_s);
  EXPECT_TRUE(back[1].benign);
  EXPECT_FALSE(back[1].affected_job);
}

TEST(Records, AlertsRoundTrip) {
  Alert a{312.5, "skeleton", "fail_slow", {{"leaf3~spine1", 0.93}, {"h1.nic0", 0.1}}};
  Alert b{400, "timeout", "fail_stop", {}};
  std::stringstream io;
  write_alert_line(io, a);
  write_alert_line(io, b);
  auto back = read_alerts_jsonl(io, "alerts.jsonl");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_DOUBLE_EQ(back[0].time_s, 312.5);
  EXPECT_EQ(back[0].detector, "skeleton");
  EXPECT_EQ(back[0].kind, "fail_slow");
  ASSERT_EQ(back[0].suspects.size(), 2u);
  EXPECT_EQ(back[0].suspects[0].id, "leaf3~spine1");
  EXPECT_DOUBLE_EQ(back[0].suspects[0].score, 0.93);
  EXPECT_TRUE(back[1].suspects.empty());
  EXPECT_EQ(back[1].kind, "fail_stop");
}

TEST(Records, ReadsHandWrittenLinesWithBlankLinesAndDefaults) {
  std::istringstream in(
      "{\"id\": \"f1\", \"type\": \"reconfigure\", \"target\": \"\", \"start_s\": 5}\n"
      "\n"
      "{\"id\": \"f2\", \"type\": \"gpu_fail\", \"target\": \"h1.gpu0\", \"start_s\": 7, \"extra\": 1}\r\n");
  auto f = read_faults_jsonl(in, "t", benign_type);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_TRUE(f[0].benign);  // a reconfigure is benign even when the file does not say so
  EXPECT_FALSE(f[1].benign);
  EXPECT_FALSE(f[1].end_s);
}

TEST(Records, ABenignTypeIsTheCatalogsCallNotTheReaders) {
  const std::string text = "{\"id\": \"f1\", \"type\": \"gpu_fail\", \"target\": \"h1.gpu0\", \"start_s\": 7}\n";
  std::istringstream plain(text), benign(text);
  EXPECT_FALSE(read_faults_jsonl(plain, "t", benign_type).at(0).benign);
  EXPECT_TRUE(read_faults_jsonl(benign, "t", [](std::string_view type) { return type == "gpu_fail"; }).at(0).benign);
}

InputError read_error(const std::string& text, bool alerts) {
  std::istringstream in(text);
  try {
    if (alerts)
      read_alerts_jsonl(in, "a.jsonl");
    else
      read_faults_jsonl(in, "f.jsonl", benign_type);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << text;
  return InputError("", 0, 0, "");
}

TEST(Records, MalformedLinesNameLineAndColumn) {
  const std::string good = R"({"time_s": 1, "detector": "d", "kind": "network", "suspects": []})";
  InputError e = read_error(good + "\n" + good + "\n" + R"({"time_s": 1, "detector": x})" + "\n", true);
  EXPECT_EQ(e.file(), "a.jsonl");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 27);  // the 'x'
  EXPECT_NE(std::string(e.what()).find("a.jsonl:3:27: invalid JSON"), std::string::npos) << e.what();

  e = read_error(good + "\n" + R"({"time_s": 1, "detector": "d", "kind": "boom"})", true);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 32);  // at "kind"
  EXPECT_NE(e.message().find("'kind' must be one of"), std::string::npos);

  e = read_error(R"({"time_s": "soon", "detector": "d", "kind": "network"})", true);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), 2);

  e = read_error(R"({"time_s": 1, "kind": "network"})", true);
  EXPECT_EQ(e.column(), 1);
  EXPECT_NE(e.message().find("missing key 'detector'"), std::string::npos);

  e = read_error("\n" + std::string(R"({"id": "f", "type": "t", "start_s": 9, "end_s": 3})"), false);
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(e.message().find("before"), std::string::npos);

  e = read_error(R"([1, 2])", false);
  EXPECT_EQ(e.line(), 1);
  e = read_error(R"({"id": "f", "type": "t", "start_s": 1)", false);  // cut short
  EXPECT_EQ(e.line(), 1);
  EXPECT_GE(e.column(), 30);
}

TEST(Records, RepeatsAndNonComponentsAreRefused) {
  // A key given twice would silently keep one of the two values.
  InputError e = read_error(R"({"time_s": 1, "detector": "d", "kind": "network", "time_s": 900})", true);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), 51);  // the second "time_s"
  EXPECT_NE(e.message().find("'time_s' appears twice"), std::string::npos) << e.what();
  e = read_error(R"({"id": "f1", "type": "t", "start_s": 1})"
                 "\n"
                 R"({"id": "f1", "type": "t", "start_s": 5})",
                 false);
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(e.message().find("fault id 'f1' already used on line 1"), std::string::npos) << e.what();
  // A path is not a component: it must not count as a detection.
  e = read_error(R"({"time_s": 1, "detector": "d", "kind": "network", "suspects": [{"id": "../../etc/passwd"}]})",
                 true);
  EXPECT_NE(e.message().find("'../../etc/passwd' is not a component id"), std::string::npos) << e.what();
  // Out of a double's range: bad input, not an abort.
  e = read_error(R"({"time_s": 1e400, "detector": "d", "kind": "network"})", true);
  EXPECT_NE(e.message().find("invalid JSON"), std::string::npos) << e.what();
}

TEST(Records, ChaosTruthCarriesItsWallClockStart) {
  std::istringstream in(
      R"({"id": "f1", "type": "link_loss", "target": "h12.nic3", "start_s": 2.5, "end_s": 62.5, "t0_unix_s": 1700000000})"
      "\n"
      R"({"id": "f2", "type": "gpu_throttle", "target": "h12.gpu7", "start_s": 300, "end_s": 330, "t0_unix_s": 1700000000})");
  const FaultRecords records = read_fault_records(in, "faults.jsonl", benign_type);
  ASSERT_TRUE(records.t0_unix_s);
  EXPECT_DOUBLE_EQ(*records.t0_unix_s, 1700000000);
  EXPECT_DOUBLE_EQ(records.faults[0].start_s, 2.5);
  const InputError e = read_error(R"({"id": "a", "type": "t", "start_s": 1, "t0_unix_s": 5})"
                                  "\n"
                                  R"({"id": "b", "type": "t", "start_s": 1, "t0_unix_s": 6})",
                                  false);
  EXPECT_EQ(e.line(), 2);
  EXPECT_NE(e.message().find("differs"), std::string::npos);
}

}  // namespace
}  // namespace gauntlet::harness
