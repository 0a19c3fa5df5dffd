#include "ffyolo/model_config.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

std::string ShippedYaml(const std::string& name) {
  return testing::SourcePath("configs/models/" + name + ".yaml");
}

ModelConfig LoadShipped(const std::string& name, int64_t nc = 0) {
  ModelConfig config;
  const ffr::Status s = LoadModelConfig(ShippedYaml(name), nc, &config);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return config;
}

// A small model YAML: `rows` replaces the backbone, the head is one Detect on
// the given layers; `extra` adds top-level keys.
std::string TinyYaml(const std::string& rows, const std::string& detect_from = "[1, 2]",
                     const std::string& extra = "") {
  return "nc: 2\ndepth_multiple: 1.0\nwidth_multiple: 1.0\n" + extra +
         "anchors:\n  - [10,13, 16,30]\n  - [30,61, 62,45]\n"
         "backbone:\n" +
         rows + "head:\n  [[" + detect_from + ", 1, Detect, [nc, anchors]]]\n";
}

const char kTinyRows[] =
    "  [[-1, 1, Conv, [16, 3, 2]],\n"
    "   [-1, 1, Conv, [32, 3, 2]],\n"
    "   [-1, 1, Conv, [64, 3, 2]]]\n";

ffr::Status Parse(const std::string& yaml, ModelConfig* config) {
  return ParseModelConfig(yaml, "tiny.yaml", 0, config);
}

TEST(ModelConfigTest, ShippedFilesDifferOnlyInTheirMultiples) {
  const std::string s = testing::ReadFileToString(ShippedYaml("yolov5s"));
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s.find("[[-1, 1, Conv, [64, 6, 2, 2]],  # 0-P1/2"), std::string::npos);
  EXPECT_NE(s.find("[[17, 20, 23], 1, Detect, [nc, anchors]],  # Detect(P3, P4, P5)"), std::string::npos);
  const std::vector<std::pair<std::string, std::string>> multiples = {
      {"yolov5n", "0.33  # model depth multiple|0.25  # layer channel multiple"},
      {"yolov5m", "0.67  # model depth multiple|0.75  # layer channel multiple"},
      {"yolov5l", "1.0  # model depth multiple|1.0  # layer channel multiple"},
      {"yolov5x", "1.33  # model depth multiple|1.25  # layer channel multiple"},
  };
  for (const auto& [name, values] : multiples) {
    std::string expected = s;
    const std::string gd = values.substr(0, values.find('|'));
    const std::string gw = values.substr(values.find('|') + 1);
    expected.replace(expected.find("0.33  # model depth multiple"), 28, gd);
    expected.replace(expected.find("0.50  # layer channel multiple"), 30, gw);
    EXPECT_EQ(testing::ReadFileToString(ShippedYaml(name)), expected) << name;
  }
}

TEST(ModelConfigTest, YoloV5sRowsAsParseModelResolvesThem) {
  const ModelConfig c = LoadShipped("yolov5s");
  EXPECT_EQ(c.name, "YOLOv5s");
  EXPECT_EQ(c.nc, 80);
  ASSERT_EQ(c.layers.size(), 25u);
  EXPECT_EQ(c.save, (std::vector<int>{4, 6, 10, 14, 17, 20, 23}));
  // Layers 0-9 and the Detect inputs, from the spec's shape list.
  const std::vector<int64_t> widths = {32, 64, 64, 128, 128, 256, 256, 512, 512, 512};
  for (size_t i = 0; i < widths.size(); ++i) EXPECT_EQ(c.layers[i].out_channels, widths[i]) << i;
  EXPECT_EQ(std::get<DetectArgs>(c.layers[24].args).ch, (std::vector<int64_t>{128, 256, 512}));
  EXPECT_EQ(c.layers[12].out_channels, 512);  // Concat: 256 + 256

  EXPECT_EQ(c.layers[0].args_text, "[3, 32, 6, 2, 2]");
  const ConvArgs conv0 = std::get<ConvArgs>(c.layers[0].args);
  EXPECT_EQ(conv0.k, 6);
  EXPECT_EQ(conv0.s, 2);
  EXPECT_EQ(conv0.p, 2);
  EXPECT_EQ(c.layers[2].args_text, "[64, 64, 1]");
  EXPECT_EQ(c.layers[9].args_text, "[512, 512, 5]");
  EXPECT_EQ(c.layers[11].args_text, "[None, 2, 'nearest']");
  EXPECT_EQ(c.layers[12].from_text, "[-1, 6]");
  EXPECT_EQ(c.layers[12].from, (std::vector<int>{-1, 6}));
  EXPECT_EQ(c.layers[12].args_text, "[1]");
  EXPECT_EQ(c.layers[13].args_text, "[512, 256, 1, False]");
  EXPECT_FALSE(std::get<C3Args>(c.layers[13].args).shortcut);
  EXPECT_TRUE(std::get<C3Args>(c.layers[2].args).shortcut);
  EXPECT_EQ(c.layers[24].from_text, "[17, 20, 23]");
  EXPECT_EQ(c.layers[24].args_text,
            "[80, [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]], "
            "[128, 256, 512]]");
}

TEST(ModelConfigTest, DepthAndWidthPerModel) {
  struct Expected {
    const char* name;
    std::vector<int> backbone_c3, head_c3;
    std::vector<int64_t> widths;  // layers 0, 1, 3, 5, 7: the scaled 64, 128, 256, 512, 1024
  };
  const std::vector<Expected> models = {
      {"yolov5n", {1, 2, 3, 1}, {1, 1, 1, 1}, {16, 32, 64, 128, 256}},
      {"yolov5s", {1, 2, 3, 1}, {1, 1, 1, 1}, {32, 64, 128, 256, 512}},
      {"yolov5m", {2, 4, 6, 2}, {2, 2, 2, 2}, {48, 96, 192, 384, 768}},
      {"yolov5l", {3, 6, 9, 3}, {3, 3, 3, 3}, {64, 128, 256, 512, 1024}},
      {"yolov5x", {4, 8, 12, 4}, {4, 4, 4, 4}, {80, 160, 320, 640, 1280}},
  };
  for (const Expected& e : models) {
    const ModelConfig c = LoadShipped(e.name);
    ASSERT_EQ(c.layers.size(), 25u);
    const int backbone[] = {2, 4, 6, 8}, head[] = {13, 17, 20, 23}, convs[] = {0, 1, 3, 5, 7};
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(c.layers[backbone[k]].repeats, e.backbone_c3[k]) << e.name;
      EXPECT_EQ(std::get<C3Args>(c.layers[backbone[k]].args).n, e.backbone_c3[k]) << e.name;
      EXPECT_EQ(c.layers[backbone[k]].copies, 1) << e.name;
      EXPECT_EQ(std::get<C3Args>(c.layers[head[k]].args).n, e.head_c3[k]) << e.name;
    }
    for (int k = 0; k < 5; ++k) EXPECT_EQ(c.layers[convs[k]].out_channels, e.widths[k]) << e.name;
  }
}

TEST(ModelConfigTest, NcOverrideReachesDetectButNotTheHiddenWidths) {
  const ModelConfig c = LoadShipped("yolov5s", 3);
  EXPECT_EQ(c.nc, 3);
  EXPECT_EQ(std::get<DetectArgs>(c.layers[24].args).nc, 3);
  EXPECT_EQ(c.layers[24].args_text.substr(0, 5), "[3, [");
  EXPECT_EQ(c.layers[23].out_channels, 512);
}

TEST(ModelConfigTest, PythonRoundingOfDepthAndCeilingOfWidth) {
  // gd 0.5: round(2.5) = 2 and round(3.5) = 4 (half to even); n = 1 is never scaled.
  // gw 0.3: 64 * 0.3 = 19.2 -> 24; 255 is na*(nc+5) for nc 80 and stays.
  const std::string yaml =
      "nc: 80\ndepth_multiple: 0.5\nwidth_multiple: 0.3\n"
      "anchors:\n  - [10,13, 16,30, 33,23]\n"
      "backbone:\n"
      "  [[-1, 1, Conv, [64, 3, 2]],\n"
      "   [-1, 5, C3, [64]],\n"
      "   [-1, 7, C3, [64]],\n"
      "   [-1, 1, C3, [64]],\n"
      "   [-1, 1, Conv, [255, 1]]]\n"
      "head:\n  [[[4], 1, Detect, [nc, anchors]]]\n";
  ModelConfig c;
  ASSERT_TRUE(Parse(yaml, &c).ok());
  EXPECT_EQ(c.layers[1].repeats, 2);
  EXPECT_EQ(c.layers[2].repeats, 4);
  EXPECT_EQ(c.layers[3].repeats, 1);
  EXPECT_EQ(c.layers[0].out_channels, 24);
  EXPECT_EQ(c.layers[4].out_channels, 255);

  ModelConfig by4;
  ASSERT_TRUE(Parse("channel_multiple: 4\n" + yaml, &by4).ok());
  EXPECT_EQ(by4.layers[0].out_channels, 20);
}

TEST(ModelConfigTest, OptionalKeys) {
  ModelConfig c;
  ASSERT_TRUE(Parse(TinyYaml(kTinyRows, "[1, 2]", "activation: nn.LeakyReLU(0.1)\nch: 1\n"), &c).ok());
  EXPECT_EQ(c.activation.kind, ActivationConfig::Kind::kLeakyReLU);
  EXPECT_DOUBLE_EQ(c.activation.negative_slope, 0.1);
  EXPECT_EQ(c.activation_text, "nn.LeakyReLU(0.1)");
  EXPECT_EQ(c.ch, 1);
  EXPECT_EQ(std::get<ConvArgs>(c.layers[0].args).c1, 1);

  ASSERT_TRUE(Parse(TinyYaml(kTinyRows, "[1, 2]", "activation: nn.ReLU()\n"), &c).ok());
  EXPECT_EQ(c.activation.kind, ActivationConfig::Kind::kReLU);
  ASSERT_TRUE(Parse(TinyYaml(kTinyRows), &c).ok());
  EXPECT_EQ(c.activation.kind, ActivationConfig::Kind::kSiLU);
  EXPECT_EQ(c.name, "Model");
}

TEST(ModelConfigTest, IntegerAnchorsGivePlaceholders) {
  std::string yaml = TinyYaml(kTinyRows);
  yaml.replace(yaml.find("anchors:\n"), yaml.find("backbone:") - yaml.find("anchors:\n"), "anchors: 3\n");
  ModelConfig c;
  const ffr::Status s = Parse(yaml, &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const DetectArgs& detect = std::get<DetectArgs>(c.layers.back().args);
  ASSERT_EQ(detect.anchors.size(), 2u);
  EXPECT_EQ(detect.anchors[1], (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(ModelConfigTest, RepeatedPlainModulesAreCopies) {
  ModelConfig c;
  ASSERT_TRUE(Parse(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [-1, 2, Conv, [16, 3, 1]],\n"
                             "   [-1, 1, Conv, [32, 3, 2]]]\n"),
                    &c)
                  .ok());
  EXPECT_EQ(c.layers[1].repeats, 2);
  EXPECT_EQ(c.layers[1].copies, 2);
}

// Every failure names the file and, for a row, its line, section, row and layer.
void ExpectError(const std::string& yaml, const std::vector<std::string>& fragments) {
  ModelConfig c;
  const ffr::Status s = Parse(yaml, &c);
  ASSERT_FALSE(s.ok()) << yaml;
  for (const std::string& f : fragments) EXPECT_NE(s.message().find(f), std::string::npos) << s.ToString();
}

TEST(ModelConfigTest, RowErrorsNameTheFileAndRow) {
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [-1, 1, Focus, [32, 3]],\n   [-1, 1, Conv, [64, 3, 2]]]\n"),
              {"tiny.yaml:9:", "backbone row 1 (layer 1)", "unknown module 'Focus'"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [5, 1, Conv, [32, 3, 2]],\n   [-1, 1, Conv, [64, 3, 2]]]\n"),
              {"tiny.yaml:9:", "layer 1", "from 5 is not an earlier layer"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [-3, 1, Conv, [32, 3, 2]],\n   [-1, 1, Conv, [64, 3, 2]]]\n"),
              {"from -3 is not an earlier layer"});
  ExpectError(TinyYaml("  [[0, 1, Conv, [16, 3, 2]],\n   [-1, 1, Conv, [32, 3, 2]],\n   [-1, 1, Conv, [64, 3, 2]]]\n"),
              {"layer 0 reads the image"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [[-1, 0], 1, Conv, [32, 3, 2]],\n   [-1, 1, Conv, [64]]]\n"),
              {"Conv takes one input"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, abc, 2]],\n   [-1, 1, Conv, [32, 3, 2]],\n   [-1, 1, Conv, [64]]]\n"),
              {"backbone row 0 (layer 0)", "args[1] (k) must be an integer"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [-1, 1, Conv],\n   [-1, 1, Conv, [64]]]\n"),
              {"a row is [from, number, module, args]"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [-1, 1, nn.Upsample, [None, 2, 'bilinear']],\n"
                       "   [-1, 1, Conv, [64]]]\n"),
              {"only mode 'nearest'"});
  ExpectError(TinyYaml(kTinyRows, "[0, 1, 2]"), {"head row 0 (layer 3)", "Detect reads 3 layers but has 2 anchor levels"});
}

TEST(ModelConfigTest, FileErrors) {
  ExpectError("nc: 2\n", {"tiny.yaml: missing key 'depth_multiple'"});
  std::string no_anchors = TinyYaml(kTinyRows);
  no_anchors.erase(no_anchors.find("anchors:"), no_anchors.find("backbone:") - no_anchors.find("anchors:"));
  ExpectError(no_anchors, {"missing key 'anchors'"});
  ExpectError(TinyYaml(kTinyRows, "[1, 2]", "width_multple: 0.5\n"), {"tiny.yaml:4: unknown key 'width_multple'"});
  ExpectError(TinyYaml(kTinyRows, "[1, 2]", "activation: nn.Hardswish()\n"),
              {"activation 'nn.Hardswish()' is not supported"});
  ExpectError("nc: [2\n", {"tiny.yaml: not valid YAML"});
  ExpectError("nc: 2\ndepth_multiple: 1\nwidth_multiple: 1\nanchors: 3\nbackbone: []\nhead: []\n",
              {"tiny.yaml: no rows in backbone and head"});
  std::string zero_nc = TinyYaml(kTinyRows);
  zero_nc.replace(0, 5, "nc: 0");
  ExpectError(zero_nc, {"tiny.yaml:1: nc must be an integer from 1 to 65536"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [-1, 1, Conv, [32, 3, 2]],\n"
                       "   [[0, 1], 1, Detect, [nc, anchors]]]\n",
                       "[0, 1]"),
              {"tiny.yaml: layer 2 (Detect): the last row, and only it, must be Detect"});
  std::string odd_anchors = TinyYaml(kTinyRows);
  odd_anchors.replace(odd_anchors.find("[30,61, 62,45]"), 14, "[30,61, 62]");
  ExpectError(odd_anchors, {"anchors must be a list of levels"});

  ModelConfig c;
  const ffr::Status missing = LoadModelConfig("/nonexistent/yolov5q.yaml", 0, &c);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("/nonexistent/yolov5q.yaml"), std::string::npos) << missing.ToString();
}

// Hand-made inputs run through model_config_fuzz (UBSan, its 1 s limit):
// numbers this large overflowed int64 and int arithmetic (undefined
// behaviour), and a huge integer `anchors` made placeholders until memory ran out.
TEST(ModelConfigTest, HugeNumbersAreRefused) {
  auto with = [](const std::string& line) {
    std::string yaml = TinyYaml(kTinyRows);
    const std::string key = line.substr(0, line.find(':') + 1);
    const size_t at = yaml.find(key + " ");
    yaml.replace(at, yaml.find('\n', at) - at, line);
    return yaml;
  };
  ExpectError(with("nc: 9223372036854775807"), {"tiny.yaml:1: nc must be an integer from 1 to 65536"});
  ExpectError(with("width_multiple: 1e300"), {"backbone row 0 (layer 0)", "times width_multiple is over 1048576"});
  ExpectError(with("depth_multiple: 1e300"), {"backbone row 0 (layer 0)", "times depth_multiple is over 1024"});
  ExpectError(TinyYaml(kTinyRows, "[1, 2]", "ch: 9223372036854775807\n"), {"ch must be an integer from 1 to"});
  ExpectError(TinyYaml(kTinyRows, "[1, 2]", "channel_multiple: 9223372036854775807\n"),
              {"channel_multiple must be an integer from 1 to"});
  ExpectError(TinyYaml("  [[-1, 1, Conv, [16, 3, 2]],\n   [-1, 1, C3, [32, True, 1, 1e300]],\n"
                       "   [-1, 1, Conv, [64, 3, 2]]]\n"),
              {"backbone row 1 (layer 1)", "C3 needs g >= 1, e > 0"});
  std::string many_anchors = TinyYaml(kTinyRows);
  many_anchors.replace(many_anchors.find("anchors:\n"), many_anchors.find("backbone:") - many_anchors.find("anchors:\n"),
                       "anchors: 1000000000000\n");
  ExpectError(many_anchors, {"anchors must be a list of levels"});
  ModelConfig c;
  EXPECT_FALSE(ParseModelConfig(TinyYaml(kTinyRows), "tiny.yaml", 9223372036854775807, &c).ok());
}

// The per-key limits multiply: yolov5s.yaml with width_multiple 1000 has
// every width under 2^20 but asks for 4.7e10 parameters. It is refused before
// anything is built, with the count, the limit, the multiples and the row that
// weighs most; ModelSizesTest checks the count against the built models.
TEST(ModelConfigTest, ModelsOverTheParameterLimitAreRefused) {
  const std::vector<std::pair<std::string, int64_t>> published = {
      {"yolov5n", 1872157}, {"yolov5s", 7235389}, {"yolov5m", 21190557}, {"yolov5l", 46563709}, {"yolov5x", 86749405}};
  for (const auto& [name, params] : published) EXPECT_EQ(LoadShipped(name).parameters, params) << name;

  const std::string s = testing::ReadFileToString(ShippedYaml("yolov5s"));
  const auto with = [&s](const std::string& key, const std::string& value) {
    std::string yaml = s;
    const size_t at = yaml.find(key + ": ") + key.size() + 2;
    yaml.replace(at, yaml.find(' ', at) - at, value);
    return yaml;
  };
  ModelConfig config;
  ffr::Status status = ParseModelConfig(with("width_multiple", "1000"), "wide.yaml", 0, &config);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(status.IsInvalidArgument());
  const std::string& message = status.message();
  EXPECT_EQ(message.find("wide.yaml: the model has "), 0u) << message;
  EXPECT_NE(message.find("over the limit of 1073741824 (2^30); with depth_multiple 0.33 and width_multiple 1000, "
                         "its largest row is layer "),
            std::string::npos)
      << message;
  const double count = std::stod(message.substr(std::string("wide.yaml: the model has ").size()));
  // Every conv weight but the first (on the image) grows 2000^2 times from yolov5s' (width 0.5); those
  // that grow 2000 times (the first conv, BN, Detect: 3.4% of yolov5s) matter little.
  EXPECT_GT(count, 7235389.0 * 2000 * 2000 * 0.95);
  EXPECT_LT(count, 7235389.0 * 2000 * 2000);

  // Depth: C3's n (3 x 100 = 300 Bottlenecks per stage) keeps yolov5s under the limit, yolov5x over it,
  // and its largest row is a C3.
  ASSERT_TRUE(ParseModelConfig(with("depth_multiple", "100"), "deep.yaml", 0, &config).ok());
  EXPECT_LT(config.parameters, kMaxModelParameters);
  std::string deep_x = testing::ReadFileToString(ShippedYaml("yolov5x"));
  deep_x.replace(deep_x.find("1.33  # model depth multiple"), 4, "100");
  status = ParseModelConfig(deep_x, "deep_x.yaml", 0, &config);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("with depth_multiple 100 and width_multiple 1.25, its largest row is layer "),
            std::string::npos)
      << status.ToString();
  EXPECT_NE(status.message().find(" (C3 ["), std::string::npos) << status.ToString();
}

// A hand-made input run through model_config_fuzz (its 1 s limit): `from` was
// printed before it was checked, and aliases nested eight deep spell 10^8 numbers.
TEST(ModelConfigTest, AliasBombInFromIsRefusedQuickly) {
  std::string bomb = "&a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]";
  for (int level = 1; level < 8; ++level) {
    std::string row = "&a" + std::to_string(level) + " [";
    for (int k = 0; k < 10; ++k) row += (k ? ", *a" : "*a") + std::to_string(level - 1);
    bomb += ", " + row + "]";
  }
  const auto start = std::chrono::steady_clock::now();
  ExpectError(TinyYaml("  [[[-1, [" + bomb + "]], 1, Conv, [16, 3, 2]],\n   [-1, 1, Conv, [32, 3, 2]],\n"
                       "   [-1, 1, Conv, [64, 3, 2]]]\n"),
              {"backbone row 0 (layer 0)", "from must be a layer index or a list of them"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// Found by model_config_fuzz (the 30-s check): an anchor of 1.1e77 pixels was
// cast to int64 for the table (undefined behaviour; INT64_MIN on x86).
TEST(ModelConfigTest, HugeWholeAnchorPrintsAsAFloat) {
  std::string yaml = TinyYaml(kTinyRows);
  yaml.replace(yaml.find("62,45"), 5, "62,111111111111111111111111111111111111111111111111111111111111111111111111111119");
  ModelConfig c;
  const ffr::Status s = Parse(yaml, &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(c.layers.back().args_text.find("1.1111111111111111e+77"), std::string::npos) << c.layers.back().args_text;
  EXPECT_NE(c.layers.back().args_text.find("[10, 13, 16, 30]"), std::string::npos) << c.layers.back().args_text;
}

TEST(ModelConfigTest, ResolvesShippedNames) {
  EXPECT_EQ(ResolveModelYaml("yolov5m"), ShippedYaml("yolov5m"));
  EXPECT_EQ(ResolveModelYaml("yolov5m.yaml"), ShippedYaml("yolov5m"));
  EXPECT_EQ(ResolveModelYaml("no_such_model"), "no_such_model");
  EXPECT_EQ(ResolveModelYaml(ShippedYaml("yolov5n")), ShippedYaml("yolov5n"));
}

TEST(CheckImgSizeTest, RoundsUpToTheStrideWithUltralyticsWarning) {
  int rounded = 0;
  std::string warning = "stale";
  ASSERT_TRUE(CheckImgSize(640, kMaxStride, &rounded, &warning).ok());
  EXPECT_EQ(rounded, 640);
  EXPECT_EQ(warning, "");
  ASSERT_TRUE(CheckImgSize(33, kMaxStride, &rounded, &warning).ok());
  EXPECT_EQ(rounded, 64);
  EXPECT_EQ(warning, "--img-size 33 must be multiple of max stride 32, updating to 64");
  ASSERT_TRUE(CheckImgSize(1, 64, &rounded, &warning).ok());
  EXPECT_EQ(rounded, 64);
  EXPECT_TRUE(CheckImgSize(0, kMaxStride, &rounded, &warning).IsInvalidArgument());
  EXPECT_TRUE(CheckImgSize(-32, kMaxStride, &rounded, &warning).IsInvalidArgument());
}

}  // namespace
}  // namespace ffyolo
