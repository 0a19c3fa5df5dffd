#include "ffyolo/model_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "testing/test_env.h"

namespace ffyolo {
namespace {

std::string ShippedYaml(const std::string& name) {
  return testing::SourcePath("configs/models/" + name + ".yaml");
}

std::string OneDecimal(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

// Published sizes (yolov5-spec.md §1.6: tutorial.ipynb, training and inference logs, README).
// yolov5l's "109.3 GFLOPs" training log came from an older thop (2 ops per BN
// element), so it is left out; n's and s's logs use today's 4.
struct Sizes {
  const char* name;
  int64_t params, modules, detect_params;
  int64_t fused_params, fused_modules;
  double conv_gflops;        // conv MACs x2 at 640, to the spec's 2 decimals
  const char* gflops;        // the unfused summary's, where a log with thop >= 0.1 shows it
  const char* fused_gflops;  // the fused summary's
};

void PrintTo(const Sizes& sizes, std::ostream* os) { *os << sizes.name; }

class ModelSizesTest : public ::testing::TestWithParam<Sizes> {};

TEST_P(ModelSizesTest, MatchUltralytics) {
  const Sizes& e = GetParam();
  std::shared_ptr<YoloModel> model;
  const ffr::Status s = BuildModel(ShippedYaml(e.name), 0, &model);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(CountParameters(*model), e.params);
  EXPECT_EQ(CountParameters(*model, /*trainable_only=*/true), e.params);
  EXPECT_EQ(CountModules(*model), e.modules);
  EXPECT_EQ(CountParameters(*model->row(24)), e.detect_params);
  // What the parser counted (and checked against kMaxModelParameters) before building.
  EXPECT_EQ(model->config().parameters, e.params);
  for (size_t i = 0; i < model->config().layers.size(); ++i)
    EXPECT_EQ(model->config().layers[i].parameters, CountParameters(*model->row(i))) << "layer " << i;
  const OpCounts ops = CountModelOps(*model);
  EXPECT_NEAR(ops.conv_gflops(), e.conv_gflops, 0.01);
  if (e.gflops) {
    EXPECT_EQ(OneDecimal(ops.gflops()), e.gflops);
  }

  model->eval();
  model->Fuse();
  EXPECT_EQ(CountParameters(*model), e.fused_params);
  EXPECT_EQ(CountModules(*model), e.fused_modules);
  const OpCounts fused_ops = CountModelOps(*model);
  EXPECT_EQ(fused_ops.bn_elements, 0.0);
  EXPECT_EQ(fused_ops.conv_macs, ops.conv_macs);
  EXPECT_EQ(OneDecimal(fused_ops.gflops()), e.fused_gflops);
}

INSTANTIATE_TEST_SUITE_P(
    Shipped, ModelSizesTest,
    ::testing::Values(Sizes{"yolov5n", 1872157, 214, 115005, 1867405, 157, 4.47, "4.6", "4.5"},
                      Sizes{"yolov5s", 7235389, 214, 229245, 7225885, 157, 16.43, "16.6", "16.4"},
                      Sizes{"yolov5m", 21190557, 291, 343485, 21172173, 212, 48.87, nullptr, "48.9"},
                      Sizes{"yolov5l", 46563709, 368, 457725, 46533693, 267, 109.00, nullptr, "109.0"},
                      Sizes{"yolov5x", 86749405, 445, 571965, 86705005, 322, 205.45, nullptr, "205.5"}),
    [](const ::testing::TestParamInfo<Sizes>& info) { return std::string(info.param.name); });

// parse_model's format: f'{i:>3}{str(f):>18}{n_:>3}{np:10.0f}  {t:<40}{str(args):<30}'.
std::string Row(const std::string& i, const std::string& from, const std::string& n, const std::string& params,
                const std::string& module, const std::string& args) {
  const auto right = [](const std::string& s, size_t width) { return std::string(width - std::min(width, s.size()), ' ') + s; };
  const auto left = [](const std::string& s, size_t width) { return s + std::string(width - std::min(width, s.size()), ' '); };
  return right(i, 3) + right(from, 18) + right(n, 3) + right(params, 10) + "  " + left(module, 40) + left(args, 30) + "\n";
}

TEST(ModelSummaryTest, YoloV5sTableAndSummaryLines) {
  std::shared_ptr<YoloModel> from_file, from_text;
  ASSERT_TRUE(BuildModel(ShippedYaml("yolov5s"), 0, &from_file).ok());
  ASSERT_TRUE(BuildModelFromString(testing::ReadFileToString(ShippedYaml("yolov5s")), "text", 0, &from_text).ok());

  const std::string table = LayerTable(*from_file);
  EXPECT_EQ(table.substr(0, table.find('\n') + 1), Row("", "from", "n", "params", "module", "arguments"));
  const std::vector<std::string> rows = {
      Row("0", "-1", "1", "3520", "models.common.Conv", "[3, 32, 6, 2, 2]"),
      Row("2", "-1", "1", "18816", "models.common.C3", "[64, 64, 1]"),
      Row("9", "-1", "1", "656896", "models.common.SPPF", "[512, 512, 5]"),
      Row("11", "-1", "1", "0", "torch.nn.modules.upsampling.Upsample", "[None, 2, 'nearest']"),
      Row("12", "[-1, 6]", "1", "0", "models.common.Concat", "[1]"),
      Row("13", "-1", "1", "361984", "models.common.C3", "[512, 256, 1, False]"),
      Row("24", "[17, 20, 23]", "1", "229245", "models.yolo.Detect",
          "[80, [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]], [128, 256, 512]]"),
  };
  for (const std::string& row : rows) EXPECT_NE(table.find(row), std::string::npos) << row << "in\n" << table;
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 26);

  EXPECT_NEAR(CountModelOps(*from_file).conv_macs * 1e-9, 8.217, 5e-4);  // "8.217 GMACs at 640"

  // tutorial.ipynb builds from a checkpoint's dict, hence "Model"; a file gives its stem.
  EXPECT_EQ(SummaryLine(*from_text), "Model summary: 214 layers, 7235389 parameters, 7235389 gradients, 16.6 GFLOPs");
  EXPECT_EQ(SummaryLine(*from_file), "YOLOv5s summary: 214 layers, 7235389 parameters, 7235389 gradients, 16.6 GFLOPs");
  // Fusing freezes the folded convs (fuse_conv_and_bn); Detect's 229245 keep their gradients.
  from_text->Fuse();
  EXPECT_EQ(SummaryLine(*from_text), "Model summary: 157 layers, 7225885 parameters, 229245 gradients, 16.4 GFLOPs");
  // Work scales with the image area: 320 is a quarter of 640.
  EXPECT_NEAR(CountModelOps(*from_text, 320).conv_gflops() * 4, CountModelOps(*from_text).conv_gflops(), 1e-9);
}

}  // namespace
}  // namespace ffyolo
