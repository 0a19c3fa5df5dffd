// Ultralytics parity: YOLOv5 v7.0's own Python code (the reference environment of
// scripts/reference-venv.sh) and ffyolo compute the same outputs from the same weights.
// ultralytics_reference.py makes the reference side: random yolov5n/s models saved as
// Ultralytics saves them, imported with scripts/ultralytics_weights.py, and their outputs.
// Without the reference environment every test here skips.
#include <gtest/gtest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ffyolo/checkpoint.h"
#include "ffyolo/hyp.h"
#include "ffyolo/loss.h"
#include "ffyolo/model.h"
#include "ffyolo/model_config.h"
#include "ffyolo/multi_scale.h"
#include "ffyolo/nms.h"
#include "ffyolo/train.h"
#include "ffyolo/train_step.h"
#include "testing/test_env.h"
#include "tiny_training.h"

namespace ffyolo {
namespace {

const char* const kCases[] = {"yolov5n-nc80", "yolov5n-nc3", "yolov5s-nc80", "yolov5s-nc3"};
constexpr double kTolerance = 1e-4;  // relative to the largest magnitude compared

// Runs the reference driver, its output in `log`; true when it exits 0.
bool RunReference(const std::string& python, const std::string& args, const std::string& log) {
  const std::string command = python + " " + testing::SourcePath("tests/trainer/model/ultralytics_reference.py") + " " +
                              args + " > " + log + " 2>&1";
  return std::system(command.c_str()) == 0;
}

// The fixtures, made once per build tree and shared by the test processes ctest starts (flock), made
// again when the driver or the conversion script is newer.
std::string Fixtures(const std::string& python) {
  const std::string dir = testing::BinaryPath("ultralytics_parity");
  const std::string driver = testing::SourcePath("tests/trainer/model/ultralytics_reference.py");
  const std::string script = testing::SourcePath("scripts/ultralytics_weights.py");
  const std::string command = "mkdir -p " + dir + " && flock " + dir + ".lock sh -c '[ " + dir + "/done -nt " +
                              driver + " ] && [ " + dir + "/done -nt " + script + " ] || { " + python + " " +
                              driver + " models " + dir + " > " + dir + ".log 2>&1 && touch " + dir + "/done; }'";
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << "ultralytics_reference.py models failed:\n" << testing::ReadFileToString(dir + ".log");
    return "";
  }
  return dir;
}

// The tensors of a torch.save'd dict (LibTorch reads Python's zip format with pickle_load).
std::map<std::string, torch::Tensor> LoadTensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, torch::Tensor> out;
  for (const auto& entry : torch::pickle_load(bytes).toGenericDict())
    if (entry.value().isTensor()) out[entry.key().toStringRef()] = entry.value().toTensor();
  return out;
}

// max |actual - expected| / max |expected|.
double RelativeError(const torch::Tensor& actual, const torch::Tensor& expected) {
  EXPECT_EQ(actual.sizes(), expected.sizes());
  if (actual.sizes() != expected.sizes()) return INFINITY;
  if (expected.numel() == 0) return 0;
  return (actual - expected).abs().max().item<double>() / expected.abs().max().clamp_min(1e-30).item<double>();
}

// How far apart two sets of (n, 6) detections [box, conf, cls] are: each detection's distance to the
// nearest of the other set of its class (max |difference| over box and conf), the largest of these,
// relative to the largest magnitude; infinite when a class has no match.
double SetDistance(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.size(0) == 0 || b.size(0) == 0) return a.size(0) == b.size(0) ? 0 : INFINITY;
  const torch::Tensor same_class = a.select(1, 5).unsqueeze(1) == b.select(1, 5).unsqueeze(0);
  const torch::Tensor d = (a.slice(1, 0, 5).unsqueeze(1) - b.slice(1, 0, 5).unsqueeze(0)).abs().amax(-1)
                              .masked_fill(same_class.logical_not(), INFINITY);
  const double worst = std::max(d.amin(1).max().item<double>(), d.amin(0).max().item<double>());
  return worst / b.slice(1, 0, 5).abs().max().item<double>();
}

NmsOptions Setting(const std::string& name) {
  NmsOptions o;  // as ultralytics_reference.py's NMS_SETTINGS
  if (name == "detect") {
    o.conf_thres = 0.25, o.iou_thres = 0.45, o.multi_label = false, o.max_det = 1000;
  } else {
    o.conf_thres = 0.001, o.iou_thres = 0.6, o.multi_label = true, o.max_det = 300;
  }
  return o;
}

// ffyolo's eval and train outputs of `model` against the reference's in `expected` (ultralytics_reference.py),
// and with `compare_nms` NMS on both predictions against non_max_suppression's. That takes predictions
// without ties: the order of equal confidences is left open by PyTorch's unstable sort (nms.h).
void ExpectReferenceOutputs(YoloModel* model, std::map<std::string, torch::Tensor> expected, bool compare_nms) {
  torch::NoGradGuard no_grad;
  const torch::Tensor x = expected.at("input");
  model->eval();
  const torch::Tensor pred = model->forward(x).decoded;
  const torch::Tensor ref = expected.at("eval");
  const double box_err = RelativeError(pred.slice(-1, 0, 4), ref.slice(-1, 0, 4));
  const double score_err = RelativeError(pred.slice(-1, 4), ref.slice(-1, 4));
  EXPECT_LE(box_err, kTolerance);
  EXPECT_LE(score_err, kTolerance);
  std::printf("eval: boxes %.2e, scores %.2e relative\n", box_err, score_err);
  for (const std::string setting : {"detect", "val"}) {
    if (!compare_nms) break;
    const std::vector<torch::Tensor> from_ref = NonMaxSuppression(ref, Setting(setting));
    const std::vector<torch::Tensor> from_ours = NonMaxSuppression(pred, Setting(setting));
    for (int64_t i = 0; i < x.size(0); ++i) {
      SCOPED_TRACE(setting + " NMS, image " + std::to_string(i));
      const torch::Tensor want = expected.at("nms." + setting + "." + std::to_string(i));
      if (setting == "val") {
        ASSERT_GT(want.size(0), 0) << "the fixture has no detections to compare";
      }
      // The same predictions: the same detections, to the last bit.
      EXPECT_TRUE(torch::equal(from_ref[i], want)) << from_ref[i].sizes() << " vs " << want.sizes();
      // ffyolo's own predictions: the same detections within the tolerance. As a set: two whose
      // confidences differ by less than the predictions do may come in either order.
      ASSERT_EQ(from_ours[i].sizes(), want.sizes());
      const double err = SetDistance(from_ours[i], want);
      EXPECT_LE(err, kTolerance);
      std::printf("%s NMS image %lld: %lld detections, %.2e relative\n", setting.c_str(),
                  static_cast<long long>(i), static_cast<long long>(want.size(0)), err);
    }
  }
  model->train();
  const DetectOutput train = model->forward(x);
  ASSERT_EQ(train.raw.size(), 3u);
  for (size_t i = 0; i < train.raw.size(); ++i) {
    const double err = RelativeError(train.raw[i], expected.at("train." + std::to_string(i)));
    EXPECT_LE(err, kTolerance) << "train output " << i;
    std::printf("train output %zu: %.2e relative\n", i, err);
  }
}

class UltralyticsParityTest : public ::testing::TestWithParam<const char*> {};

TEST_P(UltralyticsParityTest, ImportedWeightsGiveTheReferenceOutputs) {
  FFYOLO_REQUIRE_REFERENCE(python);
  const std::string fixtures = Fixtures(python);
  ASSERT_FALSE(fixtures.empty());
  const std::string dir = fixtures + "/" + GetParam();
  std::shared_ptr<YoloModel> model;
  CheckpointInfo info;
  const ffr::Status s = LoadCheckpointModel(dir + "/imported.pt", /*prefer_ema=*/true, &model, &info);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(info.epoch, -1);
  ExpectReferenceOutputs(model.get(), LoadTensors(dir + "/expected.pt"), /*compare_nms=*/true);
}

// train.py's intersect_dicts: all of the same model; at another nc all but Detect's three output convs
// (weight and bias), and the anchors too when they are excluded (--cfg given).
TEST_P(UltralyticsParityTest, TransferCountsAsUltralytics) {
  FFYOLO_REQUIRE_REFERENCE(python);
  const std::string fixtures = Fixtures(python);
  ASSERT_FALSE(fixtures.empty());
  const std::string path = fixtures + "/" + GetParam() + "/imported.pt";
  CheckpointInfo info;
  ASSERT_TRUE(ReadCheckpointInfo(path, &info).ok());
  int64_t in_file = 0;
  for (const auto& entry : LoadTensors(path)) in_file += entry.first.rfind("model.", 0) == 0;
  for (const int64_t nc : {info.nc, info.nc + 7}) {
    for (const bool exclude_anchors : {false, true}) {
      SCOPED_TRACE("nc " + std::to_string(nc) + (exclude_anchors ? ", anchors excluded" : ""));
      std::shared_ptr<YoloModel> model;
      ASSERT_TRUE(BuildModelFromString(info.model_yaml, path, nc, &model).ok());
      int64_t transferred = 0, total = 0;
      ASSERT_TRUE(TransferWeights(path, exclude_anchors, model.get(), &transferred, &total).ok());
      EXPECT_EQ(total, in_file);  // len(model.state_dict())
      EXPECT_EQ(transferred, total - (nc != info.nc ? 6 : 0) - (exclude_anchors ? 1 : 0));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, UltralyticsParityTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = p.param;
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

// An Ultralytics .pt itself (pickled Python classes) is refused with the way to convert it.
TEST(UltralyticsWeightsTest, UnconvertedCheckpointIsRefusedWithAHint) {
  FFYOLO_REQUIRE_REFERENCE(python);
  const std::string fixtures = Fixtures(python);
  ASSERT_FALSE(fixtures.empty());
  const std::string path = fixtures + "/yolov5n-nc3/ultralytics.pt";
  std::shared_ptr<YoloModel> model;
  CheckpointInfo info;
  const ffr::Status s = LoadCheckpointModel(path, true, &model, &info);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("ultralytics_weights.py import"), std::string::npos) << s.ToString();
}

// Fine-tuning at another class count (train.py --weights yolov5n.pt on 3 classes): ffyolo transfers the
// items intersect_dicts transfers (all but Detect's output convs), and from the same starting weights
// the first batch's loss equals ComputeLoss's.
TEST(UltralyticsWeightsTest, FineTuningAtAnotherClassCountStartsWithTheReferenceLoss) {
  FFYOLO_REQUIRE_REFERENCE(python);
  const std::string fixtures = Fixtures(python);
  ASSERT_FALSE(fixtures.empty());
  testing::ScratchDir dir("ultralytics_finetune");
  constexpr int64_t kNc = 3, kImgSize = 224;
  ASSERT_TRUE(RunReference(python,
                           "finetune " + fixtures + "/yolov5n-nc80/ultralytics.pt " + std::to_string(kNc) + " " +
                               std::to_string(kImgSize) + " " + dir.path(),
                           dir / "reference.log"))
      << testing::ReadFileToString(dir / "reference.log");
  std::map<std::string, torch::Tensor> expected = LoadTensors(dir / "expected.pt");

  CheckpointInfo info;
  const std::string pretrained = fixtures + "/yolov5n-nc80/imported.pt";
  ASSERT_TRUE(ReadCheckpointInfo(pretrained, &info).ok());
  std::shared_ptr<YoloModel> fresh;
  ASSERT_TRUE(BuildModelFromString(info.model_yaml, pretrained, kNc, &fresh).ok());
  int64_t transferred = 0, total = 0;
  ASSERT_TRUE(TransferWeights(pretrained, /*exclude_anchors=*/false, fresh.get(), &transferred, &total).ok());
  EXPECT_EQ(transferred, expected.at("transferred").item<int64_t>());  // 343
  EXPECT_EQ(total, expected.at("total").item<int64_t>());              // 349

  // The reference's starting model, its new Detect convs included, and ffyolo's loss on its batch.
  std::shared_ptr<YoloModel> model;
  ASSERT_TRUE(LoadCheckpointModel(dir / "start.pt", false, &model, &info).ok());
  model->train();
  const ComputeLoss loss(ScaleLossGains(Hyp(), kNc, 3, kImgSize), /*label_smoothing=*/0, kNc,
                         model->detect().anchors);
  const LossOutput out = loss(model->forward(expected.at("input")).raw, expected.at("targets"));
  const double total_err = RelativeError(out.total.reshape({1}), expected.at("loss"));
  EXPECT_LE(total_err, kTolerance);
  for (int64_t i = 0; i < 3; ++i) {
    const double err = RelativeError(out.items[i], expected.at("items")[i]);
    EXPECT_LE(err, kTolerance) << "loss item " << i;
    std::printf("loss item %lld: %.6g vs %.6g, %.2e relative\n", static_cast<long long>(i),
                out.items[i].item<double>(), expected.at("items")[i].item<double>(), err);
  }
}

// An ffyolo-trained checkpoint exported with scripts/ultralytics_weights.py export loads in Ultralytics'
// own code (attempt_load, as detect.py and val.py) and computes what ffyolo computes with the same weights:
// the checkpoint's EMA in fp16, as v7.0 stores a model. After one epoch of training most scores still
// tie, so NMS is left to the random models above.
TEST(UltralyticsWeightsTest, ExportedCheckpointGivesFfyolosOutputsInTheReference) {
  FFYOLO_REQUIRE_REFERENCE(python);
  testing::ScratchDir dir("ultralytics_export");
  TrainSummary summary;
  const ffr::Status trained = Train(testing::TinyTrainOptions(dir.path(), 1), nullptr, &summary);
  ASSERT_TRUE(trained.ok()) << trained.ToString();
  const std::string last = summary.save_dir + "/weights/last.pt";
  const std::string exported = dir / "last.ultralytics.pt";
  ASSERT_EQ(std::system((python + " " + testing::SourcePath("scripts/ultralytics_weights.py") + " export " + last + " -o " +
                         exported + " > " + (dir / "export.log") + " 2>&1")
                            .c_str()),
            0)
      << testing::ReadFileToString(dir / "export.log");
  ASSERT_TRUE(RunReference(python, "exported " + exported + " " + (dir / "expected.pt"), dir / "reference.log"))
      << testing::ReadFileToString(dir / "reference.log");
  std::shared_ptr<YoloModel> model;
  CheckpointInfo info;
  ASSERT_TRUE(LoadCheckpointModel(last, /*prefer_ema=*/true, &model, &info).ok());
  {
    torch::NoGradGuard no_grad;
    for (torch::Tensor t : model->parameters()) t.copy_(t.to(torch::kHalf).to(torch::kFloat));
    for (torch::Tensor t : model->buffers())
      if (t.is_floating_point()) t.copy_(t.to(torch::kHalf).to(torch::kFloat));
  }
  ExpectReferenceOutputs(model.get(), LoadTensors(dir / "expected.pt"), /*compare_nms=*/false);
}

// --optimizer: train.py's smart_optimizer on a yolov5n of 3 classes puts every parameter in the group ffyolo
// puts it in, with the same hyper-parameters and console line; two steps on the same gradients, the lr and
// momentum set as the warmup sets them, leave the same weights as torch.optim's.
class OptimizerParityTest : public ::testing::TestWithParam<const char*> {};

TEST_P(OptimizerParityTest, GroupsAndStepsAreSmartOptimizers) {
  FFYOLO_REQUIRE_REFERENCE(python);
  const std::string name = GetParam();
  testing::ScratchDir dir(std::string("optimizer_parity_") + name);
  Hyp hyp;  // hyp.scratch-low: lr0 0.01, momentum 0.937
  const double decay = 0.001;  // hyp weight_decay scaled as train.py scales it for batch 128
  char args[128];
  std::snprintf(args, sizeof(args), "optimizer %s %.17g %.17g %.17g ", name.c_str(), hyp.lr0, hyp.momentum, decay);
  ASSERT_TRUE(RunReference(python, args + (dir / "expected.pt"), dir / "reference.log"))
      << testing::ReadFileToString(dir / "reference.log");
  std::map<std::string, torch::Tensor> expected = LoadTensors(dir / "expected.pt");

  std::shared_ptr<YoloModel> model;
  ASSERT_TRUE(BuildModel(ResolveModelYaml("yolov5n"), 3, &model).ok());
  const auto params = model->named_parameters();
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : params) p.value().copy_(expected.at("before." + p.key()));
  }
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::string line;
  const ffr::Status made = MakeOptimizer(*model, name, hyp, decay, &optimizer, &line);
  ASSERT_TRUE(made.ok()) << made.ToString();
  const torch::Tensor want_line = expected.at("line");
  EXPECT_EQ(line, std::string(reinterpret_cast<const char*>(want_line.data_ptr<uint8_t>()), want_line.numel()));

  // Membership: each parameter by its state-dict name (the same in both models).
  std::map<const void*, int64_t> group_of;
  ASSERT_EQ(optimizer->param_groups().size(), 3u);
  for (size_t g = 0; g < 3; ++g)
    for (const torch::Tensor& p : optimizer->param_groups()[g].params()) group_of[p.unsafeGetTensorImpl()] = g;
  int64_t in_reference = 0;
  for (const auto& e : expected) in_reference += e.first.rfind("group.", 0) == 0;
  EXPECT_EQ(in_reference, static_cast<int64_t>(params.size()));
  EXPECT_EQ(group_of.size(), params.size());
  for (const auto& p : params) {
    ASSERT_TRUE(expected.count("group." + p.key())) << p.key() << " is not in the reference model";
    EXPECT_EQ(group_of[p.value().unsafeGetTensorImpl()], expected.at("group." + p.key()).item<int64_t>()) << p.key();
  }

  // Hyper-parameters: those of the group's kind, and only those.
  for (size_t g = 0; g < 3; ++g) {
    SCOPED_TRACE("group " + std::to_string(g));
    const std::string k = "hp." + std::to_string(g) + ".";
    auto& options = optimizer->param_groups()[g].options();
    EXPECT_DOUBLE_EQ(options.get_lr(), expected.at(k + "lr").item<double>());
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
      ASSERT_TRUE(expected.count(k + "momentum")) << "the reference group is not SGD's";
      EXPECT_DOUBLE_EQ(sgd->weight_decay(), expected.at(k + "weight_decay").item<double>());
      EXPECT_DOUBLE_EQ(sgd->momentum(), expected.at(k + "momentum").item<double>());
      EXPECT_EQ(sgd->nesterov(), expected.at(k + "nesterov").item<double>() != 0);
      EXPECT_EQ(sgd->dampening(), 0);
    } else {
      ASSERT_FALSE(expected.count(k + "momentum")) << "the reference group is SGD's";
      const bool adamw = name == "AdamW";
      auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options);
      auto* adamw_options = dynamic_cast<torch::optim::AdamWOptions*>(&options);
      ASSERT_TRUE(adamw ? adamw_options != nullptr : adam != nullptr);
      const auto betas = adamw ? adamw_options->betas() : adam->betas();
      EXPECT_DOUBLE_EQ(std::get<0>(betas), expected.at(k + "betas")[0].item<double>());
      EXPECT_DOUBLE_EQ(std::get<1>(betas), expected.at(k + "betas")[1].item<double>());
      EXPECT_DOUBLE_EQ(adamw ? adamw_options->eps() : adam->eps(), expected.at(k + "eps").item<double>());
      EXPECT_DOUBLE_EQ(adamw ? adamw_options->weight_decay() : adam->weight_decay(),
                       expected.at(k + "weight_decay").item<double>());
    }
  }

  // Two steps.
  for (int step = 0; step < 2; ++step) {
    const std::string k = "step." + std::to_string(step) + ".";
    const torch::Tensor lr = expected.at(k + "lr");
    for (size_t g = 0; g < 3; ++g)
      SetGroupLrMomentum(optimizer->param_groups()[g], lr[g].item<double>(), expected.at(k + "momentum").item<double>());
    for (const auto& p : params) p.value().mutable_grad() = expected.at("grad." + std::to_string(step) + "." + p.key());
    optimizer->step();
  }
  // The weights, and the steps' changes alone (small beside the weights: a looser bound in float32).
  double worst = 0, worst_change = 0;
  for (const auto& p : params) {
    const torch::Tensor before = expected.at("before." + p.key()), after = expected.at("after." + p.key());
    ASSERT_FALSE(torch::equal(before, after)) << p.key() << " did not move in the reference";
    const double err = RelativeError(p.value().detach(), after);
    const double change_err = RelativeError(p.value().detach() - before, after - before);
    EXPECT_LE(err, 1e-6) << p.key();
    EXPECT_LE(change_err, 1e-3) << p.key();
    worst = std::max(worst, err);
    worst_change = std::max(worst_change, change_err);
  }
  std::printf("%s: %zu parameters after two steps: weights %.2e, changes %.2e relative\n", name.c_str(),
              params.size(), worst, worst_change);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerParityTest, ::testing::Values("SGD", "Adam", "AdamW"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// --multi-scale: ffyolo's sizes take the values train.py's rule takes, as often (100000 draws each, against
// the reference's 100000), and its resize of a batch to a size is train.py's F.interpolate.
TEST(MultiScaleParityTest, SizesAndResizeAreTrainPys) {
  FFYOLO_REQUIRE_REFERENCE(python);
  testing::ScratchDir dir("multiscale_parity");
  ASSERT_TRUE(RunReference(python, "multiscale " + (dir / "expected.pt"), dir / "reference.log"))
      << testing::ReadFileToString(dir / "reference.log");
  std::map<std::string, torch::Tensor> expected = LoadTensors(dir / "expected.pt");
  constexpr int kGs = 32, kDraws = 100000;
  for (const int img_size : {128, 224, 640}) {
    SCOPED_TRACE("imgsz " + std::to_string(img_size));
    const torch::Tensor sizes = expected.at("sizes." + std::to_string(img_size));
    const torch::Tensor counts = expected.at("counts." + std::to_string(img_size));
    std::map<int, int> ours;
    for (int64_t ni = 0; ni < kDraws; ++ni) ours[MultiScaleSize(img_size, kGs, /*seed=*/7, ni)]++;
    ASSERT_EQ(ours.size(), static_cast<size_t>(sizes.numel()));
    for (int64_t j = 0; j < sizes.numel(); ++j) {
      const int size = static_cast<int>(sizes[j].item<int64_t>());
      ASSERT_TRUE(ours.count(size)) << size << " never drawn";
      // Two samples of one frequency p differ by sqrt(2 p (1 - p) / n) in standard deviation: 5 of those.
      const double p = counts[j].item<double>() / kDraws, q = ours[size] / static_cast<double>(kDraws);
      EXPECT_NEAR(q, p, 5 * std::sqrt(2 * p * (1 - p) / kDraws)) << "size " << size;
    }
  }
  for (int c = 0; expected.count("resize." + std::to_string(c) + ".input"); ++c) {
    const std::string k = "resize." + std::to_string(c) + ".";
    const torch::Tensor input = expected.at(k + "input"), want = expected.at(k + "output");
    const int size = static_cast<int>(expected.at(k + "size").item<int64_t>());
    SCOPED_TRACE("resize " + c10::str(input.sizes()) + " to " + std::to_string(size));
    const torch::Tensor got = MultiScaleResize(input, size, kGs);
    ASSERT_EQ(got.sizes(), want.sizes());
    // Pixels in [0, 1]; LibTorch 1.13's kernel and the reference's torch 2.x round differently (3.5e-6 seen).
    EXPECT_LE((got - want).abs().max().item<double>(), 1e-5);
  }
}

}  // namespace
}  // namespace ffyolo
