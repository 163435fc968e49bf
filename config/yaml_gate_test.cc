#include "config/yaml_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "config/config.h"

namespace neardup {
namespace {

using ::testing::HasSubstr;

std::string error_of(std::string_view text, const YamlLimits& limits = {}) {
  auto shape = check_yaml(text, limits);
  return shape ? std::string() : shape.error();
}

TEST(YamlGate, CountsDocuments) {
  EXPECT_EQ(check_yaml("")->documents, 0u);
  EXPECT_EQ(check_yaml("# only a comment\n")->documents, 0u);
  EXPECT_EQ(check_yaml("a: 1\n")->documents, 1u);
  auto two = check_yaml("a: 1\n---\nb: 2\n");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->documents, 2u);
  EXPECT_EQ(two->second_document_line, 2u);
}

// yaml-cpp 0.7's LoadAll loops forever, allocating, on these: they must be refused first.
TEST(YamlGate, FlowIndicatorAtDocumentStartIsASyntaxError) {
  for (std::string_view text : {",", "---\n,", ",\n", "a: 1\n---\n,"}) {
    EXPECT_THAT(error_of(text), HasSubstr("YAML syntax error")) << text;
  }
}

TEST(YamlGate, AliasesAreRefusedWithTheirLine) {
  EXPECT_THAT(error_of("a: &x 1\nb: *x\n"), HasSubstr("line 2, column 4: aliases (*x)"));
}

TEST(YamlGate, DeepNestingIsRefused) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_THAT(error_of(deep), HasSubstr("nested deeper than 32 levels"));
}

TEST(YamlGate, SizeAndNodeLimitsAreEnforced) {
  EXPECT_THAT(error_of(std::string(2 << 20, '#')), HasSubstr("a config is at most 1048576"));
  EXPECT_THAT(error_of("[1, 2, 3, 4, 5]", {.max_nodes = 3}), HasSubstr("more than 3 values"));
}

// The whole loader, on the inputs that used to hang it: a clear error, at once.
TEST(YamlGate, ConfigLoaderRejectsHangingInputsFast) {
  for (std::string text : {",", "---\n,", "kafka:\n  properties: &p {}\nx: *p\n"}) {
    auto start = std::chrono::steady_clock::now();
    auto config = parse_config(text);
    ASSERT_FALSE(config) << text;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << text;
    EXPECT_THAT(config.error(), HasSubstr("line ")) << text;
  }
}

}  // namespace
}  // namespace neardup
