// Training end to end on a tiny synthetic dataset: the loss falls, the run
// directory holds what Ultralytics users expect, and a stopped run resumes
// exactly where it stopped.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "ffyolo/results.h"
#include "ffyolo/output/run_directory.h"
#include "ffyolo/train.h"
#include "testing/test_env.h"
#include "tiny_training.h"

namespace ffyolo {
namespace {

namespace fs = std::filesystem;

using testing::LossRecorder;
using testing::TinyTrainOptions;

TEST(TrainTest, LossFallsAndTheRunDirectoryIsComplete) {
  testing::ScratchDir dir("train");
  // One batch of all 32 images an epoch at the nominal batch size: an optimizer step every iteration.
  TrainOptions o = TinyTrainOptions(dir / "runs", 60);
  o.batch_size = 64;
  o.img_size = 96;
  // A quick schedule for a short test: a high learning rate through the 100-iteration warmup, no mosaic.
  ASSERT_TRUE(testing::WriteStringToFile(dir / "hyp.yaml", "lr0: 0.1\nwarmup_epochs: 0\nmosaic: 0.0\nscale: 0.2\n"));
  o.hyp = dir / "hyp.yaml";
  LossRecorder recorder;
  TrainSummary summary;
  ffr::Status s = Train(o, &recorder, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<double> totals;
  for (const auto& items : recorder.items) totals.push_back(items[0] + items[1] + items[2]);
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

// Two runs with --exist-ok into one directory wrote into it at once: the second is refused while
// the first holds it, and may have it once the first is done.
TEST(TrainTest, ARunDirectoryIsHeldByOneRunAtATime) {
  testing::ScratchDir dir("run_directory_lock");
  const std::string run = dir / "runs/exp";
  std::unique_ptr<ffr::FileLock> first, second;
  ASSERT_TRUE(HoldRunDirectory(ffr::Env::Default(), run, &first).ok());
  EXPECT_TRUE(fs::is_directory(run));
  const ffr::Status s = HoldRunDirectory(ffr::Env::Default(), run, &second);
  EXPECT_TRUE(s.IsAlreadyExists()) << s.ToString();
  EXPECT_NE(s.message().find(run + ": another run is writing into this directory"), std::string::npos) << s.message();
  first.reset();
  EXPECT_TRUE(HoldRunDirectory(ffr::Env::Default(), run, &second).ok());
}

TEST(TrainTest, StoppedRunResumesExactly) {
  testing::ScratchDir dir("resume");
  // The uninterrupted reference.
  TrainOptions a = TinyTrainOptions(dir / "a", 2);
  LossRecorder uninterrupted;
  TrainSummary sa;
  ASSERT_TRUE(Train(a, &uninterrupted, &sa).ok());
  const std::vector<std::vector<double>>& ref = uninterrupted.items;
  ASSERT_EQ(ref.size(), 8u);

  // The same run, asked to stop during epoch 0 (as SIGTERM would).
  TrainOptions b = TinyTrainOptions(dir / "b", 2);
  LossRecorder stopped;
  stopped.on_batch = [](int64_t epoch, int64_t batch) {
    if (epoch == 0 && batch == 1) RequestTrainingStop();
  };
  const std::vector<std::vector<double>>& got = stopped.items;
  TrainSummary sb;
  ffr::Status s = Train(b, &stopped, &sb);
  ClearTrainingStop();
  ASSERT_TRUE(s.IsAborted()) << s.ToString();
  ASSERT_EQ(got.size(), 2u);  // stopped right after the optimizer step of batch 1

  TrainOptions c;
  c.resume = sb.save_dir + "/weights/last.pt";
  TrainSummary sc;
  s = Train(c, &stopped, &sc);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(got.size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(got[k][j], ref[k][j], 1e-6 * (1 + std::abs(ref[k][j]))) << "step " << k;
}

}  // namespace
}  // namespace ffyolo
