// train.py's data flags against YOLOv5 v7.0: the --rect batch shapes, the
// --image-weights weights, --quad's collate_fn4 (the reference package as the
// oracle; skipped without it), and short training runs with each flag.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ffyolo/checkpoint.h"
#include "ffyolo/image_weights.h"
#include "ffyolo/pack.h"
#include "ffyolo/quad_collate.h"
#include "ffyolo/random.h"
#include "ffyolo/rect_batches.h"
#include "ffyolo/train.h"
#include "ffyolo/val_run.h"
#include "testing/test_env.h"
#include "tiny_training.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Runs ultralytics_data_reference.py MODE ARGS; the parsed OUT json when `out_json` is set.
json RunReference(const std::string& python, const std::string& mode, const std::string& in, const std::string& out,
                  bool out_json = true) {
  const std::string log = out + ".log";
  const std::string command = python + " " + testing::SourcePath("tests/trainer/train/ultralytics_data_reference.py") + " " +
                              mode + " " + in + " " + out + " > " + log + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << command << " failed:\n" << testing::ReadFileToString(log);
    return json();
  }
  return out_json ? json::parse(testing::ReadFileToString(out)) : json();
}

TEST(DataFlagsReferenceTest, RectBatchShapesAreV70s) {
  FFYOLO_REQUIRE_REFERENCE(python);
  testing::ScratchDir dir("rect_ref");
  SampleRandom rng({3});
  std::vector<int> w, h;
  std::vector<std::vector<int>> sizes;
  for (int i = 0; i < 45; ++i) {  // ratios from wide to tall, ties included (every 5th is square)
    w.push_back(i % 5 == 0 ? 200 : 64 + static_cast<int>(rng.Below(400)));
    h.push_back(i % 5 == 0 ? 200 : 64 + static_cast<int>(rng.Below(400)));
    sizes.push_back({w.back(), h.back()});
  }
  const std::vector<std::pair<int, int>> cases = {{8, 640}, {5, 320}, {16, 256}};  // batch, --img
  const std::string in = dir / "rect.json";
  ASSERT_TRUE(testing::WriteStringToFile(in, json{{"sizes", sizes}, {"cases", cases}}.dump()));
  const json refs = RunReference(python, "rect", in, in + ".out");
  ASSERT_EQ(refs.size(), cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto [batch, img] = cases[c];
    const json& ref = refs[c];
    const RectBatches plan = PlanRectBatches(w, h, batch, img, 32, 0.0);
    std::vector<std::pair<int, int>> expected;
    for (const auto& s : ref["batch_shapes"]) expected.emplace_back(s[0].get<int>(), s[1].get<int>());
    EXPECT_EQ(plan.shapes, expected) << "batch " << batch << ", --img " << img;
    std::vector<double> ratios;
    for (int64_t i : plan.order) ratios.push_back(static_cast<double>(h[i]) / w[i]);
    EXPECT_EQ(ratios, ref["sorted_ratios"].get<std::vector<double>>());
  }
}

TEST(DataFlagsReferenceTest, ImageWeightsAreV70s) {
  FFYOLO_REQUIRE_REFERENCE(python);
  testing::ScratchDir dir("weights_ref");
  SampleRandom rng({4});
  const int nc = 7;  // class 6 never occurs: labels_to_class_weights counts it as 1
  std::vector<std::vector<int>> labels(30);
  for (size_t i = 0; i < labels.size(); ++i)
    for (uint64_t k = 0, n = i % 6 == 0 ? 0 : rng.Below(9); k < n; ++k)
      labels[i].push_back(static_cast<int>(rng.Below(k % 3 == 0 ? 2 : 6)));  // classes 0, 1 common
  const std::vector<double> maps = {0.0, 0.31, 0.9, 0.05, 1.0, 0.5, 0.2};
  const std::string in = dir / "weights.json";
  ASSERT_TRUE(testing::WriteStringToFile(in, json{{"labels", labels}, {"nc", nc}, {"maps", maps}}.dump()));
  const json ref = RunReference(python, "weights", in, in + ".out");
  ASSERT_FALSE(ref.is_null());
  const std::vector<float> cw = ModelClassWeights(labels, nc);
  const auto ref_cw = ref["class_weights"].get<std::vector<double>>();
  ASSERT_EQ(cw.size(), ref_cw.size());
  for (int c = 0; c < nc; ++c) EXPECT_EQ(cw[c], static_cast<float>(ref_cw[c])) << "class " << c;
  const std::vector<double> iw = ImageWeights(labels, cw, maps);
  const auto ref_iw = ref["image_weights"].get<std::vector<double>>();
  ASSERT_EQ(iw.size(), ref_iw.size());
  for (size_t i = 0; i < iw.size(); ++i) EXPECT_NEAR(iw[i], ref_iw[i], 1e-12 * ref_iw[i]) << "image " << i;
}

TEST(DataFlagsTest, ClassMapsAreValPysMaps) {
  ValMetrics m;
  m.map = 0.4;
  m.classes.push_back({1, 0, 0, 0, 0, 0, 0.7});
  m.classes.push_back({3, 0, 0, 0, 0, 0, 0.1});
  // maps = np.zeros(nc) + map; maps[c] = ap[i] for the classes with a row.
  EXPECT_EQ(ClassMaps(m, 5), (std::vector<double>{0.4, 0.7, 0.4, 0.1, 0.4}));
}

// Both branches of collate_fn4 on fixed images and targets, the choice forced the same way on both sides.
TEST(DataFlagsReferenceTest, QuadCollateIsV70s) {
  FFYOLO_REQUIRE_REFERENCE(python);
  testing::ScratchDir dir("quad_ref");
  const int64_t n = 9, height = 6, width = 10;  // 2 groups; the 9th image is dropped
  torch::manual_seed(5);
  const torch::Tensor pixels = torch::randint(0, 256, {n, 3, height, width}, torch::kUInt8);
  std::vector<torch::Tensor> rows;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i == 2 ? 0 : 1 + i % 3;  // image 2 without targets
    torch::Tensor t = torch::rand({k, 6});
    t.select(1, 0).fill_(static_cast<double>(i));
    t.select(1, 1) = torch::randint(0, 5, {k}).to(torch::kFloat);
    rows.push_back(t);
  }
  const torch::Tensor targets = torch::cat(rows, 0).contiguous();
  std::ofstream(dir / "images.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(pixels.data_ptr<uint8_t>()), pixels.numel());
  std::ofstream(dir / "targets.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(targets.data_ptr<float>()), targets.numel() * sizeof(float));
  const std::vector<std::vector<bool>> choices = {{true, false}, {false, true}};
  std::vector<std::vector<double>> randoms;  // random.random() < 0.5: upsample
  for (const auto& upsample : choices) randoms.push_back({upsample[0] ? 0.25 : 0.75, upsample[1] ? 0.25 : 0.75});
  const std::string in = dir / "quad.json";
  ASSERT_TRUE(testing::WriteStringToFile(
      in, json{{"images", n}, {"height", height}, {"width", width}, {"randoms", randoms},
               {"images_file", dir / "images.bin"}, {"targets_file", dir / "targets.bin"}}
              .dump()));
  const std::string out = dir / "quad_out";
  RunReference(python, "quad", in, out, /*out_json=*/false);
  for (size_t k = 0; k < choices.size(); ++k) {
    const std::vector<bool>& upsample = choices[k];
    const std::string ref_images = testing::ReadFileToString(out + "." + std::to_string(k) + ".images");
    const std::string ref_targets = testing::ReadFileToString(out + "." + std::to_string(k) + ".targets");
    torch::Tensor images, quad_targets;
    QuadCollate(pixels.to(torch::kFloat).div(255), targets, upsample, &images, &quad_targets);
    ASSERT_EQ(images.sizes(), (std::vector<int64_t>{2, 3, 2 * height, 2 * width}));
    const torch::Tensor got = (images * 255).round().to(torch::kUInt8).contiguous();
    ASSERT_EQ(ref_images.size(), static_cast<size_t>(got.numel()));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(got.data_ptr<uint8_t>()), got.numel()), ref_images);
    const torch::Tensor t = quad_targets.contiguous();
    ASSERT_EQ(ref_targets.size(), t.numel() * sizeof(float));
    const torch::Tensor expected =
        torch::from_blob(const_cast<char*>(ref_targets.data()), {t.size(0), 6}, torch::kFloat);
    EXPECT_TRUE(torch::equal(t, expected)) << t << "\n" << expected;
  }
}

TEST(DataFlagsTest, QuadDrawsAreAFunctionOfTheirKey) {
  const std::vector<bool> a = DrawQuadUpsample(1, 2, 0, 3, 64);
  EXPECT_EQ(a, DrawQuadUpsample(1, 2, 0, 3, 64));
  EXPECT_NE(a, DrawQuadUpsample(1, 2, 0, 4, 64));
  const auto ups = std::count(a.begin(), a.end(), true);
  EXPECT_GT(ups, 10);  // about half of 64
  EXPECT_LT(ups, 54);
}

// Records what the training tests check: the names, each batch's image size, the losses.
struct FlagRecorder : testing::LossRecorder {
  std::vector<std::string> names;
  std::vector<int> sizes;
  void OnTrainStart(const TrainStart& s) override { names = s.names; }
  void OnTrainBatchEnd(const TrainBatchEnd& b) override {
    sizes.push_back(b.size);
    LossRecorder::OnTrainBatchEnd(b);
  }
};

void ExpectFiniteLosses(const FlagRecorder& r) {
  ASSERT_FALSE(r.items.empty());
  for (const auto& items : r.items)
    for (double v : items) EXPECT_TRUE(std::isfinite(v));
}

TEST(DataFlagsTrainTest, RectTrainsOnRectBatches) {
  testing::ScratchDir dir("rect_train");
  TrainOptions o = testing::TinyTrainOptions(dir / "runs", 1);
  o.rect = true;
  FlagRecorder r;
  TrainSummary summary;
  ffr::Status s = Train(o, &r, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectFiniteLosses(r);
  EXPECT_EQ(r.sizes.size(), 4u);  // 32 images, batch 8
  // Rect shapes at pad 0 never exceed --img (the loader tests check the shapes themselves).
  for (int size : r.sizes) EXPECT_LE(size, 128);
  EXPECT_NE(testing::ReadFileToString(summary.save_dir + "/opt.yaml").find("rect: true"), std::string::npos);
}

struct SplitRecorder : FlagRecorder {
  std::string train_split, val_split;
  void OnTrainStart(const TrainStart& s) override {
    train_split = s.train_split;
    val_split = s.val_split;
  }
};

// A data YAML training on several folders (Ultralytics' VOC.yaml): yolo-train took the first train*
// split without a word. The lists recorded at pack time are trained on, every image of them.
TEST(DataFlagsTrainTest, TrainsOnEverySplitTheDataYamlLists) {
  testing::ScratchDir dir("yaml_splits");
  SyntheticOptions so;
  so.output_dir = dir / "src";
  so.train_images = 16;
  so.val_images = 8;
  so.train_split = "train2007";
  so.val_split = "test2007";
  so.num_classes = 3;
  so.min_size = 96;
  so.max_size = 128;
  so.yolo_layout = true;
  SyntheticSummary ss;
  ASSERT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  fs::remove_all(dir / "src/annotations");  // the Ultralytics tree alone
  fs::copy(dir / "src/images/train2007", dir / "src/images/train2012");
  fs::copy(dir / "src/labels/train2007", dir / "src/labels/train2012");
  ASSERT_TRUE(testing::WriteStringToFile(dir / "src/data.yaml",
                                         "train: [images/train2012, images/train2007]\nval: images/test2007\n"
                                         "names: [a, b, c]\n"));
  PackOptions po;
  po.source = dir / "src";
  po.output = dir / "voc.ffr";
  PackSummary ps;
  ASSERT_TRUE(Pack(po, &ps).ok());
  EXPECT_EQ(ps.manifest.train, (std::vector<std::string>{"train2012", "train2007"}));

  TrainOptions o = testing::TinyTrainOptions(dir / "runs", 1);
  o.data = dir / "voc.ffr";
  SplitRecorder r;
  TrainSummary summary;
  const ffr::Status s = Train(o, &r, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.train_split, "train2007+train2012");
  EXPECT_EQ(r.val_split, "test2007");
  EXPECT_EQ(r.sizes.size(), 4u);  // 32 images, batch 8: both training splits
}

TEST(DataFlagsTrainTest, SingleClsTrainsOneClassNamedItem) {
  testing::ScratchDir dir("single_cls");
  TrainOptions o = testing::TinyTrainOptions(dir / "runs", 1);
  o.single_cls = true;
  FlagRecorder r;
  TrainSummary summary;
  ffr::Status s = Train(o, &r, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectFiniteLosses(r);
  EXPECT_EQ(r.names, std::vector<std::string>{"item"});
  CheckpointInfo info;
  ASSERT_TRUE(ReadCheckpointInfo(summary.save_dir + "/weights/last.pt", &info).ok());
  EXPECT_EQ(info.nc, 1);
  for (const auto& items : r.items) EXPECT_EQ(items[2], 0.0);  // one class: no classification loss

  // yolo-val's way: the one-class model scores the multi-class data only with --single-cls.
  ValRunOptions vo;
  vo.data = o.data;
  vo.weights = summary.save_dir + "/weights/last.pt";
  vo.img_size = o.img_size;
  vo.workers = 1;
  vo.threads = 1;
  ValidationOutput out;
  std::vector<std::string> names;
  s = ValidateWeights(vo, &out, &names);
  ASSERT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("needs --single-cls here too"), std::string::npos) << s.message();
  vo.single_cls = true;
  s = ValidateWeights(vo, &out, &names);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(names, std::vector<std::string>{"item"});
  EXPECT_GT(out.result.images, 0);
}

TEST(DataFlagsTrainTest, QuadTrainsOnDoubleSizeImages) {
  testing::ScratchDir dir("quad_train");
  TrainOptions o = testing::TinyTrainOptions(dir / "runs", 1);
  o.quad = true;
  FlagRecorder r;
  TrainSummary summary;
  ffr::Status s = Train(o, &r, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectFiniteLosses(r);
  EXPECT_EQ(r.sizes, std::vector<int>(4, 256));
  // train_batch0.jpg shows what train.py's plot_images gets: the 2 collated 256 x 256 images side by side
  // (the loader's 8 images of 128 would make a 3 x 3 grid of 384 x 384).
  EXPECT_EQ(testing::TrainBatchGridSize(summary.save_dir), std::make_pair(2 * 256, 256));
  o.batch_size = 2;
  EXPECT_TRUE(Train(o, &r, &summary).IsInvalidArgument());
}

TEST(DataFlagsTrainTest, ImageWeightsRunResumesExactly) {
  testing::ScratchDir dir("image_weights");
  TrainOptions a = testing::TinyTrainOptions(dir / "a", 2);
  a.image_weights = true;
  a.noval = false;  // every epoch validated: the next epoch's weights use its mAPs
  testing::LossRecorder uninterrupted;
  TrainSummary sa;
  ffr::Status s = Train(a, &uninterrupted, &sa);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<std::vector<double>>& ref = uninterrupted.items;
  ASSERT_EQ(ref.size(), 8u);

  TrainOptions b = a;
  b.project = dir / "b";
  testing::LossRecorder stopped;
  stopped.on_batch = [](int64_t epoch, int64_t batch) {
    if (epoch == 1 && batch == 1) RequestTrainingStop();
  };
  TrainSummary sb;
  s = Train(b, &stopped, &sb);
  ClearTrainingStop();
  ASSERT_TRUE(s.IsAborted()) << s.ToString();
  CheckpointInfo info;
  ASSERT_TRUE(ReadCheckpointInfo(sb.save_dir + "/weights/last.pt", &info).ok());
  EXPECT_EQ(info.maps.size(), 3u);  // the mAPs epoch 1's weights came from travel with it

  TrainOptions c;
  c.resume = sb.save_dir + "/weights/last.pt";
  TrainSummary sc;
  s = Train(c, &stopped, &sc);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::vector<std::vector<double>>& got = stopped.items;
  ASSERT_EQ(got.size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(got[k][j], ref[k][j], 1e-6 * (1 + std::abs(ref[k][j]))) << "step " << k;
}

TEST(DataFlagsTrainTest, RectRefusesImageWeights) {
  testing::ScratchDir dir("rect_iw");
  TrainOptions o = testing::TinyTrainOptions(dir / "runs", 1);
  o.rect = true;
  o.image_weights = true;
  TrainSummary summary;
  EXPECT_TRUE(Train(o, nullptr, &summary).IsInvalidArgument());
}

}  // namespace
}  // namespace ffyolo
