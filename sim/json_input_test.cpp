#include "sim/json_input.hpp"

#include <gtest/gtest.h>

#include <string>

#include "sim/input_error.hpp"

namespace gauntlet::sim {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json_input(text, "f.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonInput, ReadsOrdinaryJson) {
  const auto j = parse_json_input(R"({"a": [1, {"b": "]]]{{{"}], "c": 2.5})", "f.json");
  EXPECT_EQ(j["a"][1]["b"], "]]]{{{");
  EXPECT_EQ(j["c"], 2.5);
}

TEST(JsonInput, RefusesNestingPastTheLimitWhereItStarts) {
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(parse_json_input(at_limit, "f.json"));
  const std::string deep = std::string(150000, '[') + std::string(150000, ']');
  EXPECT_EQ(error_of(deep), "f.json:1:" + std::to_string(kMaxJsonDepth + 1) + ": JSON nested deeper than " +
                                std::to_string(kMaxJsonDepth) + " levels, the limit");
  // Brackets inside strings, escaped quotes included, do not count.
  EXPECT_NO_THROW(parse_json_input("{\"k\": \"\\\"" + std::string(1000, '[') + "\"}", "f.json"));
}

TEST(JsonInput, ReportsSyntaxRepeatedKeysHugeNumbersAndBadBytes) {
  EXPECT_NE(error_of("{\"a\": 1,\n \"a\": 2}").find("f.json:2:2: key 'a' appears twice"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": }").find("f.json:1:7: invalid JSON"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": 1e400}").find("f.json:1:7: invalid JSON: number overflow"), std::string::npos);
  EXPECT_NE(error_of("{\"a\": \"\xff\"}").find("f.json:1:8: not UTF-8"), std::string::npos);
}

}  // namespace
}  // namespace gauntlet::sim

namespace gauntlet::sim {
namespace {

TEST(JsonPathOffset, FindsTheValueAtAPath) {
  const std::string text = "{\"a\": {\"b\": [1, {\"c\": \"x,]\"}, [2, 3]], \"d\": 4},\n \"e\": [ {\"f\": null} ]}";
  EXPECT_EQ(json_path_offset(text, ""), 0u);
  EXPECT_EQ(text.substr(json_path_offset(text, "a.b[1].c"), 5), "\"x,]\"");
  EXPECT_EQ(text.substr(json_path_offset(text, "a.b[2][1]"), 1), "3");
  EXPECT_EQ(text.substr(json_path_offset(text, "a.d"), 1), "4");
  EXPECT_EQ(text.substr(json_path_offset(text, "e[0].f"), 4), "null");
  // Past what the text holds: the nearest enclosing value.
  EXPECT_EQ(text.substr(json_path_offset(text, "a.b[7]"), 2), "[1");
  EXPECT_EQ(text.substr(json_path_offset(text, "e[0].g"), 5), "{\"f\":");
}

}  // namespace
}  // namespace gauntlet::sim

namespace gauntlet::sim {
namespace {

TEST(JsonInput, RefusesAnObjectPastTheKeyLimitAtTheKeyPastIt) {
  auto object = [](std::size_t keys) {
    std::string text = "{";
    for (std::size_t k = 0; k < keys; ++k) text += (k ? ",\"k" : "\"k") + std::to_string(k) + "\":[1,2]";
    return text + "}";
  };
  EXPECT_NO_THROW(parse_json_input(object(kMaxJsonObjectKeys), "f.json"));
  try {
    parse_json_input(object(kMaxJsonObjectKeys + 1), "f.json");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 10000 keys"), std::string::npos) << e.what();
    EXPECT_EQ(e.line(), 1);
  }
  // Arrays of any length are a list, not a scan.
  std::string list = "[0";
  for (int i = 0; i < 50000; ++i) list += ",0";
  EXPECT_NO_THROW(parse_json_input(list + "]", "f.json"));
}

}  // namespace
}  // namespace gauntlet::sim
