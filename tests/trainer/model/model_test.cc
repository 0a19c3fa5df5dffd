#include "ffyolo/model.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/utils.h>

#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ffyolo/loss.h"
#include "ffyolo/model_summary.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

std::string ShippedYaml(const std::string& name) {
  return testing::SourcePath("configs/models/" + name + ".yaml");
}

std::shared_ptr<YoloModel> BuildShipped(const std::string& name, int64_t nc = 0) {
  std::shared_ptr<YoloModel> model;
  const ffr::Status s = BuildModel(ShippedYaml(name), nc, &model);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return model;
}

// yolov5s.yaml with a different width: the full architecture, small enough to run often.
std::string NarrowYaml(const std::string& width = "0.125") {
  std::string yaml = testing::ReadFileToString(ShippedYaml("yolov5s"));
  yaml.replace(yaml.find("0.50  # layer channel multiple"), 4, width);
  return yaml;
}

std::shared_ptr<YoloModel> BuildText(const std::string& yaml, int64_t nc) {
  std::shared_ptr<YoloModel> model;
  const ffr::Status s = BuildModelFromString(yaml, "test.yaml", nc, &model);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return model;
}

std::map<std::string, torch::Tensor> StateDict(const torch::nn::Module& model) {
  std::map<std::string, torch::Tensor> entries;
  for (const auto& p : model.named_parameters()) entries[p.key()] = p.value();
  for (const auto& b : model.named_buffers()) entries[b.key()] = b.value();
  return entries;
}

double MaxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(ModelTest, StateDictKeysAreUltralytics) {
  const auto model = BuildShipped("yolov5s");
  const auto entries = StateDict(*model);
  EXPECT_EQ(entries.size(), 349u);  // "Transferred 349/349 items"
  const std::map<std::string, std::vector<int64_t>> shapes = {
      {"model.0.conv.weight", {32, 3, 6, 6}},
      {"model.0.bn.weight", {32}},
      {"model.0.bn.running_mean", {32}},
      {"model.0.bn.num_batches_tracked", {}},
      {"model.2.cv1.conv.weight", {32, 64, 1, 1}},
      {"model.2.cv3.conv.weight", {64, 64, 1, 1}},
      {"model.2.m.0.cv2.conv.weight", {32, 32, 3, 3}},
      {"model.4.m.1.cv1.bn.running_var", {64}},
      {"model.9.cv2.conv.weight", {512, 1024, 1, 1}},
      {"model.24.m.0.weight", {255, 128, 1, 1}},
      {"model.24.m.2.bias", {255}},
      {"model.24.anchors", {3, 3, 2}},
  };
  for (const auto& [key, shape] : shapes) {
    ASSERT_EQ(entries.count(key), 1u) << key;
    EXPECT_EQ(entries.at(key).sizes().vec(), shape) << key;
  }
  for (const auto& [key, value] : entries) {
    EXPECT_EQ(key.find("act"), std::string::npos) << key;
    EXPECT_EQ(key.find("stride"), std::string::npos) << key;
  }
}

TEST(ModelTest, YoloV5sParametersPerLayer) {
  const auto model = BuildShipped("yolov5s");
  const std::vector<int64_t> expected = {3520,   18560, 18816,  73984,  115712, 295424,  625152, 1180672, 1182720,
                                         656896, 131584, 0,     0,      361984, 33024,   0,      0,       90880,
                                         147712, 0,      296448, 590336, 0,      1182720, 229245};
  ASSERT_EQ(model->config().layers.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(CountParameters(*model->row(i)), expected[i]) << "layer " << i;
}

TEST(ModelTest, StrideProbeLeavesBatchNormAtUltralyticsState) {
  const auto model = BuildShipped("yolov5s");
  EXPECT_EQ(model->strides(), (std::vector<double>{8, 16, 32}));
  int bn_count = 0;
  for (const auto& module : model->modules(/*include_self=*/false)) {
    const auto* bn = module->as<torch::nn::BatchNorm2dImpl>();
    if (!bn) continue;
    ++bn_count;
    EXPECT_EQ(MaxAbsDiff(bn->running_var, torch::full_like(bn->running_var, 0.9)), 0.0);
    EXPECT_EQ(bn->running_mean.abs().max().item<double>(), 0.0);
    EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
    EXPECT_DOUBLE_EQ(bn->options.eps(), 1e-3);
    EXPECT_DOUBLE_EQ(bn->options.momentum().value(), 0.03);
    EXPECT_EQ(MaxAbsDiff(bn->weight, torch::ones_like(bn->weight)), 0.0);
    EXPECT_EQ(bn->bias.abs().max().item<double>(), 0.0);
  }
  EXPECT_EQ(bn_count, 57);
}

TEST(ModelTest, AnchorsAreStoredInGridUnits) {
  const auto model = BuildShipped("yolov5s");
  const torch::Tensor pixels =
      torch::tensor({10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119, 116, 90, 156, 198, 373, 326}, torch::kFloat)
          .view({3, 3, 2});
  const torch::Tensor strides = torch::tensor({8.0f, 16.0f, 32.0f}).view({3, 1, 1});
  EXPECT_LT(MaxAbsDiff(model->detect().anchors, pixels / strides), 1e-6);
  EXPECT_FLOAT_EQ(model->detect().anchors[2][2][0].item<float>(), 373.0f / 32.0f);
}

TEST(ModelTest, AnchorOrderFollowsStride) {
  std::string reversed = NarrowYaml();
  const std::string p3 = "[10,13, 16,30, 33,23]", p5 = "[116,90, 156,198, 373,326]";
  reversed.replace(reversed.find(p3), p3.size(), p5);
  reversed.replace(reversed.find(p5, reversed.find(p5) + 1), p5.size(), p3);
  const auto model = BuildText(reversed, 3);
  EXPECT_NEAR(model->detect().anchors[0][0][0].item<double>(), 10.0 / 8, 1e-6);
  EXPECT_NEAR(model->detect().anchors[2][2][1].item<double>(), 326.0 / 32, 1e-6);
}

TEST(ModelTest, DetectBiasPriorsAreAddedToTheDefaultInit) {
  const auto model = BuildShipped("yolov5s");
  const DetectImpl& detect = model->detect();
  const double obj_prior[] = {-6.6846, -5.2983, -3.9120};  // log(8 / (640/s)^2)
  const double cls_prior = -4.8803;                        // log(0.6 / (80 - 0.99999))
  double cls_sum = 0;
  for (size_t i = 0; i < 3; ++i) {
    const auto& conv = detect.m->at<torch::nn::Conv2dImpl>(i);
    const double bound = 1.0 / std::sqrt(static_cast<double>(conv.options.in_channels())) + 1e-4;
    const torch::Tensor bias = conv.bias.view({3, 85});
    EXPECT_LE(bias.slice(1, 0, 4).abs().max().item<double>(), bound) << i;
    EXPECT_LE((bias.select(1, 4) - obj_prior[i]).abs().max().item<double>(), bound) << i;
    EXPECT_LE((bias.slice(1, 5) - cls_prior).abs().max().item<double>(), bound) << i;
    cls_sum += bias.slice(1, 5).sum().item<double>();
  }
  // 720 uniform draws around the prior: their mean is the prior within a few 0.001.
  EXPECT_NEAR(cls_sum / 720, cls_prior, 0.01);
}

TEST(ModelTest, OutputShapesAtYoloV5nAndEvalDecode) {
  const auto model = BuildShipped("yolov5n");
  torch::NoGradGuard no_grad;
  model->eval();
  const DetectOutput out = model->forward(torch::zeros({1, 3, 640, 640}));
  ASSERT_EQ(out.raw.size(), 3u);
  EXPECT_EQ(out.raw[0].sizes().vec(), (std::vector<int64_t>{1, 3, 80, 80, 85}));
  EXPECT_EQ(out.raw[1].sizes().vec(), (std::vector<int64_t>{1, 3, 40, 40, 85}));
  EXPECT_EQ(out.raw[2].sizes().vec(), (std::vector<int64_t>{1, 3, 20, 20, 85}));
  ASSERT_TRUE(out.decoded.defined());
  EXPECT_EQ(out.decoded.sizes().vec(), (std::vector<int64_t>{1, 25200, 85}));
  EXPECT_LT(MaxAbsDiff(out.decoded, model->detect().Decode(out.raw)), 1e-6);
}

TEST(ModelTest, TrainingForwardReturnsRawLevelsOnly) {
  const auto model = BuildText(NarrowYaml(), 3);
  model->train();
  const DetectOutput out = model->forward(torch::rand({2, 3, 256, 320}));
  ASSERT_EQ(out.raw.size(), 3u);
  EXPECT_EQ(out.raw[0].sizes().vec(), (std::vector<int64_t>{2, 3, 32, 40, 8}));
  EXPECT_EQ(out.raw[2].sizes().vec(), (std::vector<int64_t>{2, 3, 8, 10, 8}));
  EXPECT_FALSE(out.decoded.defined());
  EXPECT_TRUE(out.raw[0].requires_grad());
}

// Detect on its own: 2 levels of strides 8 and 16, 2 anchors, 2 classes.
Detect SmallDetect() {
  DetectArgs args;
  args.nc = 2;
  args.anchors = {{10, 14, 20, 30}, {40, 50, 60, 70}};
  args.ch = {4, 8};
  Detect detect(args);
  detect->set_strides({8, 16});
  detect->anchors.div_(torch::tensor({8.0f, 16.0f}).view({2, 1, 1}));
  detect->eval();
  return detect;
}

TEST(ModelTest, DecodeOfHandMadeRawOutputs) {
  Detect detect = SmallDetect();
  torch::Tensor level0 = torch::zeros({1, 2, 3, 5, 7});  // (bs, na, ny, nx, no)
  const torch::Tensor level1 = torch::zeros({1, 2, 2, 3, 7});
  level0[0][1][2][4] = torch::tensor({std::log(3.0f), 0.0f, 0.0f, 10.0f, -2.0f, 1.5f, -1.0f});
  const torch::Tensor decoded = detect->Decode({level0, level1});
  ASSERT_EQ(decoded.sizes().vec(), (std::vector<int64_t>{1, 2 * 3 * 5 + 2 * 2 * 3, 7}));

  // Anchor 1, row 2, column 4 of level 0: index 1*15 + 2*5 + 4.
  const torch::Tensor cell = decoded[0][29];
  EXPECT_NEAR(cell[0].item<double>(), (2 * 0.75 - 0.5 + 4) * 8, 1e-4);  // x
  EXPECT_NEAR(cell[1].item<double>(), (2 * 0.5 - 0.5 + 2) * 8, 1e-4);   // y
  EXPECT_NEAR(cell[2].item<double>(), 20, 1e-4);                        // w: (2*0.5)^2 * anchor
  EXPECT_NEAR(cell[3].item<double>(), std::pow(2 * Sigmoid(10), 2) * 30, 1e-3);
  EXPECT_NEAR(cell[4].item<double>(), Sigmoid(-2), 1e-6);
  EXPECT_NEAR(cell[5].item<double>(), Sigmoid(1.5), 1e-6);
  EXPECT_NEAR(cell[6].item<double>(), Sigmoid(-1), 1e-6);
  // Zeros elsewhere: the cell centre and the anchor itself.
  EXPECT_LT(MaxAbsDiff(decoded[0][0].slice(0, 0, 4), torch::tensor({4.0f, 4.0f, 10.0f, 14.0f})), 1e-4);
  // Level 1 starts after level 0's 30 rows: anchor 0, row 1, column 2.
  EXPECT_LT(MaxAbsDiff(decoded[0][30 + 1 * 3 + 2].slice(0, 0, 4), torch::tensor({40.0f, 24.0f, 40.0f, 50.0f})), 1e-4);
}

TEST(ModelTest, DetectForwardLaysOutChannelsAsAnchorTimesOutput) {
  Detect detect = SmallDetect();
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < 2; ++i) {
      auto& conv = detect->m->at<torch::nn::Conv2dImpl>(i);
      conv.weight.zero_();
      conv.bias.copy_(torch::arange(14, torch::kFloat) + 100 * static_cast<double>(i));
    }
  }
  const DetectOutput out = detect->forward({torch::rand({1, 4, 3, 5}), torch::rand({1, 8, 2, 3})});
  // Channel a*no + k is raw[..., a, y, x, k] in every cell.
  const torch::Tensor expected0 = torch::arange(14, torch::kFloat).view({1, 2, 1, 1, 7}).expand({1, 2, 3, 5, 7});
  EXPECT_EQ(MaxAbsDiff(out.raw[0], expected0), 0.0);
  EXPECT_EQ(MaxAbsDiff(out.raw[1][0][1][1][2], torch::arange(7, 14, torch::kFloat) + 100), 0.0);
  ASSERT_TRUE(out.decoded.defined());
  EXPECT_EQ(MaxAbsDiff(out.decoded, detect->Decode(out.raw)), 0.0);

  detect->train();
  EXPECT_FALSE(detect->forward({torch::rand({1, 4, 3, 5}), torch::rand({1, 8, 2, 3})}).decoded.defined());
}

TEST(ModelTest, FusedOutputMatchesUnfused) {
  torch::manual_seed(1);
  const auto model = BuildText(NarrowYaml(), 3);
  torch::NoGradGuard no_grad;
  for (const auto& module : model->modules(/*include_self=*/false)) {
    if (auto* bn = module->as<torch::nn::BatchNorm2dImpl>()) {  // BN far from identity
      bn->weight.uniform_(0.5, 1.5);
      bn->bias.uniform_(-0.2, 0.2);
      bn->running_mean.uniform_(-0.2, 0.2);
      bn->running_var.uniform_(0.5, 2.0);
    }
  }
  model->eval();
  const torch::Tensor images = torch::rand({2, 3, 128, 160});
  const DetectOutput before = model->forward(images);
  model->Fuse();
  EXPECT_TRUE(model->fused());
  const DetectOutput after = model->forward(images);
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(MaxAbsDiff(before.raw[i], after.raw[i]), 1e-4) << i;
  EXPECT_LT(MaxAbsDiff(before.decoded, after.decoded) / before.decoded.abs().max().item<double>(), 1e-4);

  const auto entries = StateDict(*model);
  EXPECT_EQ(entries.count("model.0.conv.bias"), 1u);
  EXPECT_EQ(entries.count("model.0.bn.weight"), 0u);
  EXPECT_FALSE(entries.at("model.0.conv.weight").requires_grad());
  for (const auto& module : model->modules(/*include_self=*/false)) {
    EXPECT_EQ(module->as<torch::nn::BatchNorm2dImpl>(), nullptr);
    if (const auto* conv = module->as<ConvImpl>()) {
      EXPECT_TRUE(conv->fused());
    }
  }
}

TEST(ModelTest, ParameterGroupsAsSmartOptimizer) {
  const auto model = BuildShipped("yolov5s");
  const ParameterGroups groups = SplitParameterGroups(*model);
  // tutorial.ipynb: "parameter groups 57 weight(decay=0.0), 60 weight(decay=0.0005), 60 bias".
  EXPECT_EQ(groups.biases.size(), 60u);
  EXPECT_EQ(groups.decayed_weights.size(), 60u);
  EXPECT_EQ(groups.bn_weights.size(), 57u);

  std::map<const void*, std::string> names;
  for (const auto& p : model->named_parameters()) names[p.value().data_ptr()] = p.key();
  const auto name_of = [&](const torch::Tensor& t) { return names.at(t.data_ptr()); };
  EXPECT_EQ(name_of(groups.biases.front()), "model.0.bn.bias");
  EXPECT_EQ(name_of(groups.biases.back()), "model.24.m.2.bias");
  EXPECT_EQ(name_of(groups.bn_weights.front()), "model.0.bn.weight");
  const std::vector<std::string> first_decayed = {"model.0.conv.weight",      "model.1.conv.weight",
                                                  "model.2.cv1.conv.weight",  "model.2.cv2.conv.weight",
                                                  "model.2.cv3.conv.weight",  "model.2.m.0.cv1.conv.weight"};
  for (size_t i = 0; i < first_decayed.size(); ++i) EXPECT_EQ(name_of(groups.decayed_weights[i]), first_decayed[i]);
  EXPECT_EQ(name_of(groups.decayed_weights.back()), "model.24.m.2.weight");
  for (const auto& t : groups.bn_weights) EXPECT_NE(name_of(t).find(".bn.weight"), std::string::npos);
  EXPECT_EQ(groups.biases.size() + groups.decayed_weights.size() + groups.bn_weights.size(),
            model->named_parameters().size());
}

// train.py --freeze: one value N is layers 0..N-1 ('model.1.' is not in 'model.11.cv1...'), several values
// are those layers; every other parameter trains, and a second call undoes the first.
TEST(ModelTest, FreezeLayersAsTrainPy) {
  const auto model = BuildShipped("yolov5n");
  auto layer_of = [](const std::string& name) { return std::stoi(name.substr(6, name.find('.', 6) - 6)); };
  std::vector<std::string> frozen;
  ASSERT_TRUE(FreezeLayers(model.get(), {10}, &frozen).ok());  // the backbone
  EXPECT_FALSE(frozen.empty());
  for (const auto& p : model->named_parameters())
    EXPECT_EQ(p.value().requires_grad(), layer_of(p.key()) >= 10) << p.key();
  EXPECT_EQ(frozen.front(), "model.0.conv.weight");
  ASSERT_TRUE(FreezeLayers(model.get(), {1, 11}, &frozen).ok());
  for (const auto& p : model->named_parameters()) {
    const int layer = layer_of(p.key());
    EXPECT_EQ(p.value().requires_grad(), layer != 1 && layer != 11) << p.key();
  }
  size_t layer_one = 0;
  for (const std::string& name : frozen) layer_one += layer_of(name) == 1;
  EXPECT_EQ(layer_one, 3u);  // model.1.conv.weight, bn.weight, bn.bias
  ASSERT_TRUE(FreezeLayers(model.get(), {0}, &frozen).ok());
  EXPECT_TRUE(frozen.empty());
  for (const auto& p : model->named_parameters()) EXPECT_TRUE(p.value().requires_grad()) << p.key();
}

// --freeze 100 froze all 25 layers, and the first backward failed with "element 0 of tensors does
// not require grad": refused up front, the model untouched.
TEST(ModelTest, FreezingEveryLayerIsRefused) {
  const auto model = BuildShipped("yolov5n");
  std::vector<std::string> frozen;
  const ffr::Status s = FreezeLayers(model.get(), {100}, &frozen);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("--freeze 100 freezes every layer of this 25-layer model"), std::string::npos)
      << s.message();
  for (const auto& p : model->named_parameters()) EXPECT_TRUE(p.value().requires_grad()) << p.key();
}

TEST(ModelTest, CustomSmallModelWithFewClasses) {
  const auto model = BuildText(NarrowYaml(), 3);
  EXPECT_EQ(model->nc(), 3);
  EXPECT_EQ(model->config().layers[0].out_channels, 8);  // ceil(64 * 0.125 / 8) * 8
  EXPECT_EQ(model->detect().no(), 8);
  torch::NoGradGuard no_grad;
  model->eval();
  const DetectOutput out = model->forward(torch::rand({1, 3, 64, 96}));
  EXPECT_EQ(out.decoded.sizes().vec(), (std::vector<int64_t>{1, 3 * (8 * 12 + 4 * 6 + 2 * 3), 8}));
  EXPECT_EQ(out.raw[1].sizes().vec(), (std::vector<int64_t>{1, 3, 4, 6, 8}));
}

TEST(ModelTest, ActivationKeyReplacesTheSharedActivation) {
  std::string yaml = NarrowYaml();
  yaml.insert(yaml.find("anchors:"), "activation: nn.LeakyReLU(0.1)\n");
  const auto leaky = BuildText(yaml, 3);
  const auto act0 = leaky->row(0)->named_children()["act"];
  const auto act1 = leaky->row(1)->named_children()["act"];
  EXPECT_NE(act0->name().find("LeakyReLU"), std::string::npos) << act0->name();
  EXPECT_EQ(act0.get(), act1.get());  // one instance, as Conv.default_act
  EXPECT_EQ(CountModules(*leaky), 214);
  EXPECT_EQ(LayerTable(*leaky).substr(0, 30), "activation: nn.LeakyReLU(0.1)\n");
  torch::NoGradGuard no_grad;
  EXPECT_NEAR(act0->as<torch::nn::LeakyReLUImpl>()->forward(torch::tensor({-2.0f})).item<double>(), -0.2, 1e-6);

  const auto silu = BuildText(NarrowYaml(), 3);
  EXPECT_NE(silu->row(0)->named_children()["act"]->name().find("SiLU"), std::string::npos);
}

TEST(ModelTest, RepeatedRowsAndSingleLevelDetect) {
  const std::string yaml =
      "nc: 2\ndepth_multiple: 1.0\nwidth_multiple: 1.0\n"
      "anchors:\n  - [10,13, 16,30, 33,23]\n"
      "backbone:\n"
      "  [[-1, 1, Conv, [8, 3, 2]],\n"
      "   [-1, 2, Conv, [8, 3, 1]],\n"
      "   [-1, 1, Conv, [16, 3, 2]],\n"
      "   [-1, 1, Bottleneck, [16]]]\n"
      "head:\n  [[[3], 1, Detect, [nc, anchors]]]\n";
  const auto model = BuildText(yaml, 0);
  const auto entries = StateDict(*model);
  EXPECT_EQ(entries.count("model.1.0.conv.weight"), 1u);
  EXPECT_EQ(entries.count("model.1.1.conv.weight"), 1u);
  EXPECT_EQ(entries.count("model.3.cv2.conv.weight"), 1u);
  EXPECT_EQ(model->strides(), (std::vector<double>{4}));
  torch::NoGradGuard no_grad;
  model->eval();
  EXPECT_EQ(model->forward(torch::rand({1, 3, 64, 64})).decoded.sizes().vec(),
            (std::vector<int64_t>{1, 3 * 16 * 16, 7}));
}

// The parser's count (each module's Parameters) against the built modules, row by row,
// on every module and argument that changes a shape: groups, dilation, kernel,
// Bottleneck's e and g, C3's shortcut-free n, SPPF, repeated rows, Detect on
// one level with integer anchors and a class count of its own.
TEST(ModelTest, ParsedParameterCountsAreThoseOfTheBuiltRows) {
  const std::string yaml =
      "nc: 2\ndepth_multiple: 1.0\nwidth_multiple: 1.0\n"
      "anchors: 2\n"
      "backbone:\n"
      "  [[-1, 1, Conv, [16, 5, 2, None, 1, 2]],\n"
      "   [-1, 3, Conv, [16, 3, 1, 1, 4]],\n"
      "   [-1, 1, Conv, [24, 1, 2, 0, 1, 1, False]],\n"
      "   [-1, 2, Bottleneck, [24, True, 2, 0.25]],\n"
      "   [-1, 3, C3, [32, False, 1, 0.75]],\n"
      "   [-1, 1, SPPF, [40, 3]],\n"
      "   [[-1, 4], 1, Concat, [1]],\n"
      "   [-1, 1, nn.Upsample, [None, 2, nearest]]]\n"
      "head:\n  [[[7], 1, Detect, [5, anchors]]]\n";
  const auto model = BuildText(yaml, 0);
  const ModelConfig& config = model->config();
  for (size_t i = 0; i < config.layers.size(); ++i)
    EXPECT_EQ(config.layers[i].parameters, CountParameters(*model->row(i))) << "layer " << i;
  EXPECT_EQ(config.parameters, CountParameters(*model));
  EXPECT_GT(config.layers[4].parameters, 0);
}

// A model under kMaxModelParameters can still be more memory than there is.
// In a child process whose address space may grow by only 256 MiB, an
// 8192 x 8192 x 3 x 3 conv weight (2.25 GiB) cannot be allocated: BuildModel returns
// a Status naming the file and the size asked for, nothing is thrown.
TEST(ModelTest, RunningOutOfMemoryWhileBuildingIsAStatus) {
  const std::string yaml =
      "nc: 2\ndepth_multiple: 1.0\nwidth_multiple: 1.0\n"
      "anchors:\n  - [10,13, 16,30, 33,23]\n"
      "backbone:\n"
      "  [[-1, 1, Conv, [8192, 3, 2]],\n"
      "   [-1, 1, Conv, [8192, 3, 2]]]\n"
      "head:\n  [[[1], 1, Detect, [nc, anchors]]]\n";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::ifstream statm("/proc/self/statm");
        long long pages = 0;
        statm >> pages;
        rlimit limit{};
        limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(pages * 4096 + (256LL << 20));
        if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(2);
        std::shared_ptr<YoloModel> model;
        const ffr::Status s = BuildModelFromString(yaml, "big.yaml", 0, &model);
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        std::_Exit(s.ok() ? 0 : 3);
      },
      ::testing::ExitedWithCode(3),
      "big.yaml: building the model failed \\(604405781 parameters, 2.25 GiB as float32\\): .*(can't allocate|out of memory)");
}

TEST(ModelTest, SeedMakesModelsRepeatable) {
  torch::manual_seed(7);
  const auto a = BuildText(NarrowYaml(), 3);
  torch::manual_seed(7);
  const auto b = BuildText(NarrowYaml(), 3);
  const auto c = BuildText(NarrowYaml(), 3);
  const auto pa = a->parameters(), pb = b->parameters(), pc = c->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  double same = 0, different = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    same += MaxAbsDiff(pa[i], pb[i]);
    different += MaxAbsDiff(pa[i], pc[i]);
  }
  EXPECT_EQ(same, 0.0);
  EXPECT_GT(different, 0.0);
}

// --channels-last computes what NCHW computes: the same raw outputs, loss and weight gradients, with every
// activation and every weight gradient in NHWC. In double, so that the kernels' other summation orders
// stay far below the tolerance (in float a deep net's BatchNorm gradients differ by 1e-4 relative).
TEST(ModelTest, ChannelsLastForwardLossAndGradientsEqualNchw) {
  torch::manual_seed(9);
  const auto nchw = BuildText(NarrowYaml(), 3);
  torch::manual_seed(9);
  const auto nhwc = BuildText(NarrowYaml(), 3);
  nchw->to(torch::kDouble);
  nhwc->to(torch::kDouble);
  nhwc->SetMemoryFormat(c10::MemoryFormat::ChannelsLast);
  EXPECT_EQ(nhwc->memory_format(), c10::MemoryFormat::ChannelsLast);
  const torch::Tensor images = torch::rand({2, 3, 96, 128}, torch::kDouble);
  const torch::Tensor targets = torch::tensor({0.f, 1.f, 0.4f, 0.5f, 0.3f, 0.4f, 1.f, 2.f, 0.7f, 0.3f, 0.2f, 0.3f})
                                    .view({2, 6});
  const ComputeLoss loss(Hyp{}, 0.0, 3, nchw->detect().anchors);
  nchw->train();
  nhwc->train();
  const DetectOutput a = nchw->forward(images);
  const DetectOutput b = nhwc->forward(images.contiguous(c10::MemoryFormat::ChannelsLast));
  for (size_t i = 0; i < a.raw.size(); ++i) EXPECT_LT(MaxAbsDiff(a.raw[i], b.raw[i]), 1e-10) << "level " << i;
  const LossOutput la = loss(a.raw, targets), lb = loss(b.raw, targets);
  EXPECT_TRUE(torch::allclose(la.items, lb.items, 1e-6, 1e-9)) << la.items << lb.items;
  la.total.backward();
  lb.total.backward();
  const auto pa = nchw->named_parameters(), pb = nhwc->named_parameters();
  for (const auto& p : pa) {
    const torch::Tensor& ga = p.value().grad();
    const torch::Tensor& gb = pb[p.key()].grad();
    EXPECT_LT(MaxAbsDiff(ga, gb), 1e-9 * (ga.abs().max().item<double>() + 1e-6)) << p.key();
    if (gb.dim() == 4) {
      EXPECT_TRUE(gb.is_contiguous(c10::MemoryFormat::ChannelsLast)) << p.key();
    }
  }
}

// A row whose output leaves the model's memory format (here the first convolution's weight put back in
// NCHW, fed an NCHW batch) stops the forward pass naming it, instead of costing two silent copies.
TEST(ModelTest, ARowLeavingChannelsLastIsAnError) {
  const auto model = BuildText(NarrowYaml(), 3);
  model->SetMemoryFormat(c10::MemoryFormat::ChannelsLast);
  model->train();
  for (auto& p : model->row(0)->named_parameters())
    if (p.value().dim() == 4) p.value().set_data(p.value().contiguous());
  try {
    model->forward(torch::rand({1, 3, 64, 64}));
    ADD_FAILURE() << "an NCHW activation passed";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 0 (Conv) gave its output in another memory format"), std::string::npos)
        << e.what();
  }
  model->eval();  // inference takes any format
  EXPECT_NO_THROW(model->forward(torch::rand({1, 3, 64, 64})));
}

TEST(ModelTest, BuildErrorsAreStatuses) {
  std::shared_ptr<YoloModel> model;
  ffr::Status s = BuildModel("/nonexistent/yolov5s.yaml", 0, &model);
  EXPECT_FALSE(s.ok());
  std::string yaml = NarrowYaml();
  yaml.replace(yaml.find("SPPF"), 4, "SPPX");
  s = BuildModelFromString(yaml, "custom.yaml", 3, &model);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("custom.yaml:24: backbone row 9 (layer 9)"), std::string::npos) << s.ToString();
  // Valid YAML that torch rejects: a 300-pixel kernel without padding on the 256-pixel probe.
  yaml = NarrowYaml();
  yaml.replace(yaml.find("[64, 6, 2, 2]"), 13, "[64, 300, 1, 0]");
  s = BuildModelFromString(yaml, "custom.yaml", 3, &model);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("custom.yaml: building the model failed"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace ffyolo
