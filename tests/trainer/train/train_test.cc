// Training end to end on a tiny synthetic dataset: the loss falls, the run
// directory holds what Ultralytics users expect, and a stopped run resumes
// exactly where it stopped.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <numeric>

#include "ffyolo/pack.h"
#include "ffyolo/results.h"
#include "ffyolo/synthetic.h"
#include "ffyolo/train.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;

// 32 small images of 3 classes, packed once per process.
const std::string& TinyDataset() {
  static std::string path;
  if (!path.empty()) return path;
  const std::string root = std::string(FFYOLO_BINARY_DIR) + "/test_scratch/train_data." + std::to_string(::getpid());
  fs::remove_all(root);
  SyntheticOptions so;
  so.output_dir = root + "/src";
  so.train_images = 32;
  so.val_images = 8;
  so.num_classes = 3;
  so.min_size = 96;
  so.max_size = 128;
  so.max_objects = 3;
  so.min_object_fraction = 0.2;
  SyntheticSummary ss;
  EXPECT_TRUE(GenerateSyntheticCoco(so, &ss).ok());
  PackOptions po;
  po.source = so.output_dir;
  po.output = root + "/tiny.ffr";
  PackSummary ps;
  EXPECT_TRUE(Pack(po, &ps).ok());
  return path = po.output;
}

TrainOptions Options(const std::string& project, int epochs) {
  TrainOptions o;
  o.data = TinyDataset();
  o.cfg = "yolov5n";
  o.img_size = 128;
  o.batch_size = 8;
  o.epochs = epochs;
  o.workers = 2;
  o.threads = 2;
  o.project = project;
  o.noval = true;
  return o;
}

TEST(TrainTest, LossFallsAndTheRunDirectoryIsComplete) {
  testing::ScratchDir dir("train");
  // One batch of all 32 images an epoch at the nominal batch size: an optimizer step every iteration.
  TrainOptions o = Options(dir / "runs", 60);
  o.batch_size = 64;
  o.img_size = 96;
  // A quick schedule for a short test: a high learning rate through the 100-iteration warmup, no mosaic.
  ASSERT_TRUE(testing::WriteStringToFile(dir / "hyp.yaml", "lr0: 0.1\nwarmup_epochs: 0\nmosaic: 0.0\nscale: 0.2\n"));
  o.hyp = dir / "hyp.yaml";
  std::vector<double> totals;
  o.on_batch = [&](int64_t, int64_t, const double items[3]) { totals.push_back(items[0] + items[1] + items[2]); };
  TrainSummary summary;
  ffr::Status s = Train(o, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(totals.size(), 60u);
  const double first = std::accumulate(totals.begin(), totals.begin() + 5, 0.0) / 5;
  const double last = std::accumulate(totals.end() - 5, totals.end(), 0.0) / 5;
  EXPECT_LT(last, 0.8 * first) << "loss " << first << " -> " << last;  // measured: 0.171 -> 0.124
  const std::string run = dir / "runs/exp";
  EXPECT_EQ(summary.save_dir, run);
  for (const char* f : {"weights/last.pt", "weights/best.pt", "results.csv", "hyp.yaml", "opt.yaml",
                        "train_batch0.jpg", "predictions.json"})
    EXPECT_TRUE(fs::exists(run + "/" + f)) << f;
  std::vector<EpochResult> rows;
  ASSERT_TRUE(ReadResultsCsv(run + "/results.csv", &rows).ok());
  EXPECT_EQ(rows.size(), 60u);
  // A second run increments the name, as Ultralytics' increment_path.
  EXPECT_EQ(IncrementPath(dir / "runs/exp", false), dir / "runs/exp2");
}

TEST(TrainTest, StoppedRunResumesExactly) {
  testing::ScratchDir dir("resume");
  // The uninterrupted reference.
  TrainOptions a = Options(dir / "a", 2);
  std::vector<std::vector<double>> ref;
  a.on_batch = [&](int64_t, int64_t, const double items[3]) { ref.push_back({items[0], items[1], items[2]}); };
  TrainSummary sa;
  ASSERT_TRUE(Train(a, &sa).ok());
  ASSERT_EQ(ref.size(), 8u);

  // The same run, asked to stop during epoch 0 (as SIGTERM would).
  TrainOptions b = Options(dir / "b", 2);
  std::vector<std::vector<double>> got;
  b.on_batch = [&](int64_t epoch, int64_t batch, const double items[3]) {
    got.push_back({items[0], items[1], items[2]});
    if (epoch == 0 && batch == 1) RequestTrainingStop();
  };
  TrainSummary sb;
  ffr::Status s = Train(b, &sb);
  ClearTrainingStop();
  ASSERT_TRUE(s.IsAborted()) << s.ToString();
  ASSERT_EQ(got.size(), 2u);  // stopped right after the optimizer step of batch 1

  TrainOptions c;
  c.resume = sb.save_dir + "/weights/last.pt";
  c.on_batch = b.on_batch;
  TrainSummary sc;
  s = Train(c, &sc);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(got.size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(got[k][j], ref[k][j], 1e-6 * (1 + std::abs(ref[k][j]))) << "step " << k;
}

}  // namespace
}  // namespace ffyolo
