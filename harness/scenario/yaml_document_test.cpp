#include "harness/scenario/yaml_document.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness::yaml_read {
namespace {

// Where load_one_document refuses text, as "line:col: message".
std::string refusal(const std::string& text) {
  try {
    load_one_document(Source("t.yaml"), text, "a test file");
  } catch (const InputError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
  }
  return "accepted";
}

TEST(LoadOneDocument, ReturnsTheDocument) {
  const YAML::Node node = load_one_document(Source("t.yaml"), "a: 1\nb: [2, 3]\n", "a test file");
  ASSERT_TRUE(node.IsMap());
  EXPECT_EQ(node["b"][1].as<int>(), 3);
}

TEST(LoadOneDocument, EmptyTextIsANullDocument) {
  EXPECT_TRUE(load_one_document(Source("t.yaml"), "", "a test file").IsNull());
  EXPECT_TRUE(load_one_document(Source("t.yaml"), "# only a comment\n", "a test file").IsNull());
}

TEST(LoadOneDocument, RefusesASecondDocumentAtItsFirstValue) {
  EXPECT_EQ(refusal("a: 1\n---\nb: 2\n"), "3:1: a test file holds exactly one YAML document");
}

// yaml-cpp's LoadAll never returns on these: each leaves a token no node can
// begin with in place.
TEST(LoadOneDocument, RefusesAStrayCommaAtItsPosition) {
  EXPECT_EQ(refusal(",b\n"), "1:1: unexpected ',': no YAML value can begin here (a ',' outside [...] or {...}?)");
  EXPECT_EQ(refusal("[1]\n,b\n").substr(0, 19), "2:1: unexpected ','");
  EXPECT_EQ(refusal("a: 1\n---\n,b\n").substr(0, 4), "3:1:");
}

// A mangled copy of scenarios/incidents/rtt-margin.yaml on which the loader
// used to hang, growing without bound.
TEST(LoadOneDocument, RefusesTheMangledScenarioThatHungTheLoader) {
  std::ifstream in(std::string(GAUNTLET_SOURCE_DIR) + "/fuzz/regressions/scenario_loader/stray-comma-hang.yaml");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_GT(text.str().size(), 1000u);
  EXPECT_EQ(refusal(text.str()).substr(0, 20), "12:1: unexpected ','");
}

TEST(LoadOneDocument, ReportsMalformedYamlAtItsPosition) { EXPECT_EQ(refusal("a: 1\n]\n"), "2:1: illegal flow end"); }

}  // namespace
}  // namespace gauntlet::harness::yaml_read
