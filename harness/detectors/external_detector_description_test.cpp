#include "harness/detectors/external_detector_description.hpp"

#include <gtest/gtest.h>

namespace gauntlet::harness {
namespace {

protocol::ParameterDeclaration declaration(const std::string& name, protocol::ParameterDeclaration::Kind kind,
                                           const std::string& default_value) {
  protocol::ParameterDeclaration d;
  d.set_name(name);
  d.set_kind(kind);
  d.set_default_value(default_value);
  return d;
}

TEST(DeclaredParams, BecomeRegistryParametersWithTheirBounds) {
  protocol::DetectorDescription description;
  *description.add_parameters() = declaration("ratio", protocol::ParameterDeclaration::NUMBER, "1.1");
  description.mutable_parameters(0)->set_min(1);
  *description.add_parameters() = declaration("window", protocol::ParameterDeclaration::DURATION, "30s");
  description.mutable_parameters(1)->set_max(3600);
  std::string error;
  const auto params = declared_params(description, &error);
  ASSERT_TRUE(params) << error;
  ASSERT_EQ(params->size(), 2u);
  EXPECT_EQ((*params)[0].kind, DetectorParamKind::number);
  EXPECT_EQ((*params)[0].min_value, 1.0);
  EXPECT_FALSE((*params)[0].max_value);
  EXPECT_EQ((*params)[1].kind, DetectorParamKind::duration);
  EXPECT_EQ((*params)[1].default_value, "30s");
  // Checked as a reference detector's values are.
  DetectorInfo info;
  info.name = "exec:d";
  info.params = *params;
  EXPECT_FALSE(DetectorRegistry().resolve(info, {{"ratio", "0.5"}}, &error));
  EXPECT_NE(error.find("'ratio' must be at least 1, got 0.5"), std::string::npos) << error;
  EXPECT_TRUE(DetectorRegistry().resolve(info, {{"window", "1m"}}, &error)) << error;
}

TEST(DeclaredParams, MalformedDeclarationsAreRefused) {
  const auto refused = [](std::vector<protocol::ParameterDeclaration> list, const std::string& why) {
    protocol::DetectorDescription description;
    for (auto& d : list) *description.add_parameters() = d;
    std::string error;
    EXPECT_FALSE(declared_params(description, &error)) << why;
    EXPECT_NE(error.find(why), std::string::npos) << error;
  };
  const auto number = protocol::ParameterDeclaration::NUMBER;
  refused({declaration("Ratio", number, "1")}, "a name is 1 to 64 of a-z");
  refused({declaration("reply_timeout", number, "1")}, "the name is gauntlet's");
  refused({declaration("ratio", number, "1"), declaration("ratio", number, "2")}, "declared twice");
  refused({declaration("ratio", protocol::ParameterDeclaration::KIND_UNSPECIFIED, "1")}, "its kind is not");
  refused({declaration("ratio", number, "fast")}, "a default is not a value it accepts");
  auto bounded = declaration("ratio", number, "5");
  bounded.set_max(2);
  refused({bounded}, "a default is not a value it accepts");
  bounded.set_min(3);
  refused({bounded}, "min above max");
}

}  // namespace
}  // namespace gauntlet::harness
