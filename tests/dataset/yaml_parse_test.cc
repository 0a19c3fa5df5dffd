// ParseYaml: every YAML ffyolo reads goes through it.
#include "ffyolo/yaml_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace ffyolo {
namespace {

TEST(ParseYamlTest, ReadsWhatYamlCppReads) {
  YAML::Node root;
  const ffr::Status s = ParseYaml("a: 1\nb: [x, {c: 2}]\nd: &anchor {e: 3}\nf: *anchor\n", "x.yaml", &root);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(root["b"][1]["c"].as<int>(), 2);
  EXPECT_EQ(root["f"]["e"].as<int>(), 3);
}

TEST(ParseYamlTest, InvalidYamlNamesTheFile) {
  YAML::Node root;
  const ffr::Status s = ParseYaml("a: [1\n", "x.yaml", &root);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("x.yaml: not valid YAML"), std::string::npos) << s.message();
}

// At any depth: in a map, in a map inside a list, in a flow map.
TEST(ParseYamlTest, ARepeatedKeyIsRefusedNamingItAndBothLines) {
  for (const auto& [text, says] : std::initializer_list<std::pair<std::string, std::string>>{
           {"names: [a]\nnc: 1\nnames: [b]\n", "x.yaml:3: key 'names' appears twice (first on line 1)"},
           {"splits:\n  - {lr: 1, lr: 2}\n", "x.yaml:2: key 'lr' appears twice (first on line 2)"},
           {"top:\n  inner:\n    k: 1\n    j: 2\n    k: 3\n", "x.yaml:5: key 'k' appears twice (first on line 3)"}}) {
    YAML::Node root;
    const ffr::Status s = ParseYaml(text, "x.yaml", &root);
    EXPECT_TRUE(s.IsInvalidArgument()) << text;
    EXPECT_NE(s.message().find(says), std::string::npos) << text << " -> " << s.message();
  }
}

// Aliases repeat a node without copying it; each node is checked once, so that nested aliases
// (a "billion laughs" text) cost the size of the text, not of its expansion.
TEST(ParseYamlTest, NestedAliasesAreCheckedOnce) {
  std::string text = "l0: &l0 {a: 1, b: 2}\n";
  for (int level = 1; level <= 40; ++level) {
    const std::string previous = "*l" + std::to_string(level - 1);
    text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [" + previous + ", " + previous + "]\n";
  }
  YAML::Node root;
  const ffr::Status s = ParseYaml(text, "x.yaml", &root);
  EXPECT_TRUE(s.ok()) << s.ToString();  // 2^40 maps if expanded: this test would not end
}

}  // namespace
}  // namespace ffyolo
