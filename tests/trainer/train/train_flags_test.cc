// Training-level checks of train.py's flags that change how a step trains:
// --freeze keeps the frozen layers' weights where they started while every
// other weight trains, and --multi-scale trains each batch at its own size.
// Their rules are tested against YOLOv5 v7.0 in tests/trainer/model
// (ultralytics_parity_test.cc) and model_test.cc.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ffyolo/model.h"
#include "ffyolo/multi_scale.h"
#include "ffyolo/trainer.h"
#include "testing/test_env.h"
#include "tiny_training.h"

namespace ffyolo {
namespace {

using testing::LossRecorder;
using testing::TinyTrainOptions;

// --freeze 3 (layers 0-2) for one epoch: the optimizer steps every batch of it (warmup's accumulation is 1
// at first), and with SGD or AdamW, whose decoupled decay would move a weight that has no gradient.
class FreezeTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FreezeTest, FrozenLayersKeepTheirWeightsAndTheOthersTrain) {
  testing::ScratchDir dir(std::string("freeze_") + GetParam());
  TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  o.freeze = {3};
  o.optimizer = GetParam();
  std::unique_ptr<Trainer> t;
  const ffr::Status s = Trainer::Create(o, nullptr, &t);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::map<std::string, torch::Tensor> start;
  for (const auto& p : t->model().named_parameters()) start[p.key()] = p.value().detach().clone();
  ASSERT_TRUE(t->RunEpoch().ok());
  EXPECT_GT(t->position().last_opt_step, 0);
  int frozen = 0, trained = 0;
  for (const auto& p : t->model().named_parameters()) {
    const bool in_frozen_layer = p.key().rfind("model.0.", 0) == 0 || p.key().rfind("model.1.", 0) == 0 ||
                                 p.key().rfind("model.2.", 0) == 0;
    const bool moved = !torch::equal(p.value(), start.at(p.key()));
    if (in_frozen_layer) {
      ++frozen;
      EXPECT_FALSE(moved) << p.key() << " is frozen but moved";
    } else {
      ++trained;
      EXPECT_TRUE(moved) << p.key() << " did not train";
    }
  }
  EXPECT_GT(frozen, 0);
  EXPECT_GT(trained, frozen);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, FreezeTest, ::testing::Values("SGD", "AdamW"),
                         [](const ::testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

// Records each batch's Size column too.
class SizeRecorder : public LossRecorder {
 public:
  std::vector<int> sizes;
  void OnTrainBatchEnd(const TrainBatchEnd& b) override {
    LossRecorder::OnTrainBatchEnd(b);
    sizes.push_back(b.size);
  }
};

// An epoch of --multi-scale at --img 128: each batch at MultiScaleSize's size for its iteration (0.5-1.5x 128,
// multiples of 32), not all at one size, with finite losses, and the flag saved in opt.yaml.
TEST(MultiScaleTrainingTest, EachBatchTrainsAtItsSize) {
  testing::ScratchDir dir("multi_scale");
  TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  o.multi_scale = true;
  o.seed = 3;
  SizeRecorder recorder;
  std::unique_ptr<Trainer> t;
  const ffr::Status s = Trainer::Create(o, &recorder, &t);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(t->RunEpoch().ok());
  ASSERT_EQ(recorder.sizes.size(), 4u);
  std::set<int> seen;
  for (size_t ni = 0; ni < recorder.sizes.size(); ++ni) {
    EXPECT_EQ(recorder.sizes[ni], MultiScaleSize(128, 32, o.seed, static_cast<int64_t>(ni))) << "batch " << ni;
    EXPECT_GE(recorder.sizes[ni], 64);
    EXPECT_LE(recorder.sizes[ni], 192);
    EXPECT_EQ(recorder.sizes[ni] % 32, 0);
    seen.insert(recorder.sizes[ni]);
  }
  EXPECT_GE(seen.size(), 2u);
  // train_batch0.jpg shows the first batch as it trained, resized (train.py plots after the --multi-scale block):
  // its 8 images in a 3 x 3 grid of that size.
  const int first = recorder.sizes[0];
  ASSERT_NE(first, 128) << "the check below needs a first batch not at --img";
  EXPECT_EQ(testing::TrainBatchGridSize(t->summary().save_dir), std::make_pair(3 * first, 3 * first));
  for (const auto& items : recorder.items)
    for (double v : items) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NE(testing::ReadFileToString(t->summary().save_dir + "/opt.yaml").find("multi_scale: true"),
            std::string::npos);
}

// A training-step variant of issue #30 trains as the eager NCHW step does: an epoch's batch losses
// equal (1e-4 relative: sums round otherwise, and four steps carry it on).
struct StepVariant {
  const char* name;
  void (*set)(TrainOptions* o, bool on);
};

class StepVariantTest : public ::testing::TestWithParam<StepVariant> {};

TEST_P(StepVariantTest, AnEpochHasTheSameLosses) {
  std::vector<std::vector<double>> items[2];
  for (int way = 0; way < 2; ++way) {
    testing::ScratchDir dir(std::string(GetParam().name) + (way == 1 ? "_on" : "_off"));
    TrainOptions o = TinyTrainOptions(dir / "runs", 1);
    GetParam().set(&o, way == 1);
    LossRecorder recorder;
    std::unique_ptr<Trainer> t;
    const ffr::Status s = Trainer::Create(o, &recorder, &t);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(t->RunEpoch().ok());
    items[way] = recorder.items;
  }
  ASSERT_EQ(items[1].size(), items[0].size());
  ASSERT_FALSE(items[0].empty());
  for (size_t batch = 0; batch < items[0].size(); ++batch)
    for (size_t k = 0; k < 3; ++k)
      EXPECT_NEAR(items[1][batch][k], items[0][batch][k], 1e-4 * std::abs(items[0][batch][k]) + 1e-9)
          << "batch " << batch << ", loss item " << k;
}

INSTANTIATE_TEST_SUITE_P(Variants, StepVariantTest,
                         ::testing::Values(StepVariant{"sync_free_loss",
                                                       [](TrainOptions* o, bool on) {
                                                         o->sync_free_loss = on ? "on" : "off";
                                                       }},
                                           StepVariant{"fused_bn_silu",
                                                       [](TrainOptions* o, bool on) {
                                                         o->fused_bn_silu = on ? "on" : "off";
                                                       }},
                                           StepVariant{"channels_last",
                                                       [](TrainOptions* o, bool on) {
                                                         o->channels_last = on ? "on" : "off";
                                                       }}),
                         [](const ::testing::TestParamInfo<StepVariant>& p) { return std::string(p.param.name); });

// A split whose images carry EXIF orientations that it does not apply (packed with --exif ignore, or before
// yolo-pack applied them) trains, and the trainer says once that those images train as stored.
TEST(ExifWarningTest, ASplitPackedWithoutOrientationsSaysSo) {
  testing::ScratchDir dir("exif_warning");
  const std::string data = dir / "data.ffr";
  std::filesystem::copy(testing::TinyDataset(), data, std::filesystem::copy_options::recursive);
  std::string yaml = testing::ReadFileToString(data + "/dataset.yaml");
  for (const std::string& key : {std::string("    exif_applied: true\n")}) {
    for (size_t at; (at = yaml.find(key)) != std::string::npos;) yaml.erase(at, key.size());
  }
  for (size_t at = 0; (at = yaml.find("exif_oriented: 0", at)) != std::string::npos;) yaml.replace(at, 16, "exif_oriented: 3");
  ASSERT_TRUE(testing::WriteStringToFile(data + "/dataset.yaml", yaml));
  struct Messages : TrainObserver {
    std::vector<std::string> warnings;
    void OnMessage(TrainMessage kind, const std::string& text) override {
      if (kind == TrainMessage::kWarning) warnings.push_back(text);
    }
  } messages;
  TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  o.data = data;
  std::unique_ptr<Trainer> t;
  const ffr::Status s = Trainer::Create(o, &messages, &t);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int said = 0;
  for (const std::string& w : messages.warnings)
    said += w.find("3 images carry an EXIF orientation but train as stored") != std::string::npos;
  EXPECT_EQ(said, 2) << "once for the training split, once for the validation split";
}

// --cuda-graph on needs a CUDA device: a CPU run is refused before anything is made, saying so (no run
// folder left behind); left to auto, the CPU trains eagerly without a word.
TEST(CudaGraphFlagTest, ACpuRunIsRefusedBeforeItMakesAnything) {
  testing::ScratchDir dir("cuda_graph_cpu");
  TrainOptions o = TinyTrainOptions(dir / "runs", 1);
  o.cuda_graph = "on";
  LossRecorder recorder;
  std::unique_ptr<Trainer> t;
  const ffr::Status s = Trainer::Create(o, &recorder, &t);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("--cuda-graph: a CUDA graph needs a CUDA device"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir / "runs")) << "the refusal left a run folder";
}

// The size depends on the seed and the iteration only: every rank draws the same, and other seeds other sizes.
TEST(MultiScaleTrainingTest, SizesFollowTheSeed) {
  std::vector<int> a, b, c;
  for (int64_t ni = 0; ni < 64; ++ni) {
    a.push_back(MultiScaleSize(640, 32, 0, ni));
    b.push_back(MultiScaleSize(640, 32, 0, ni));
    c.push_back(MultiScaleSize(640, 32, 1, ni));
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace ffyolo
