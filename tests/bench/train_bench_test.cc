// yolo-bench train and allreduce run the Trainer's step and count what they say they count.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ffyolo/dataset.h"
#include "ffyolo/train_bench.h"
#include "test_dataset.h"
#include "testing/test_env.h"

namespace ffyolo {
namespace {

TrainBenchOptions Tiny() {
  TrainBenchOptions o;
  o.cfg = "yolov5n";
  o.nc = 3;
  o.img_size = 64;
  o.batch_size = 2;
  o.device = "cpu";
  o.warmup_steps = 1;
  o.steps = 3;
  o.workers = 2;
  return o;
}

TEST(TrainBenchTest, CeilingTrainsTheTimedSteps) {
  TrainBenchResult r;
  const ffr::Status s = BenchTraining(Tiny(), &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.device, "cpu");
  EXPECT_FALSE(r.amp);  // never on the CPU
  EXPECT_EQ(r.images, 6);
  EXPECT_GT(r.images_per_second(), 0);
  EXPECT_EQ(r.data_wait_seconds, 0);
  EXPECT_EQ(r.peak_memory_gb, 0);
}

TEST(TrainBenchTest, ChannelsLastTrainsTheSameSteps) {
  TrainBenchOptions o = Tiny();
  o.warmup_steps = 0;  // the first step's loss, before any update: the same function of the same weights
  o.steps = 1;
  TrainBenchResult nchw, nhwc;
  ffr::Status s = BenchTraining(o, &nchw);
  ASSERT_TRUE(s.ok()) << s.ToString();
  o.channels_last = true;
  s = BenchTraining(o, &nhwc);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(nchw.last_loss, 0);
  // The same seeded model and batch: only the convolutions' summation order differs.
  EXPECT_NEAR(nhwc.last_loss, nchw.last_loss, 1e-5 * nchw.last_loss);
  o.data = testing::PackedSyntheticDataset();
  o.batch_size = 16;
  o.steps = 3;
  s = BenchTraining(o, &nhwc);  // the loader's NCHW batches, copied to NHWC
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(nhwc.images, 48);
}

TEST(TrainBenchTest, PartsTimesEachPartOfTheStepInOrder) {
  TrainBenchOptions o = Tiny();
  o.parts = true;
  TrainBenchResult r;
  const ffr::Status s = BenchTraining(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<std::string> names;
  double sum = 0;
  for (const auto& [part, seconds] : r.part_seconds) {
    names.push_back(part);
    EXPECT_GT(seconds, 0) << part;
    sum += seconds;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"forward", "loss", "backward", "unscale+clip", "step", "ema"}));
  EXPECT_LE(sum, r.seconds);  // the parts tile the timed steps
  EXPECT_GT(sum, 0.9 * r.seconds);
}

TEST(TrainBenchTest, PipelineCrossesEpochsAndTimesTheWaitForData) {
  TrainBenchOptions o = Tiny();
  o.data = testing::PackedSyntheticDataset();
  o.batch_size = 16;
  o.steps = 4;  // 48 training images: 3 batches per epoch, so the timed steps run into the next epochs
  TrainBenchResult r;
  const ffr::Status s = BenchTraining(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.images, 64);
  EXPECT_GT(r.data_wait_seconds, 0);
  EXPECT_LE(r.data_wait_seconds, r.seconds);
  EXPECT_GT(r.loader_cpu_seconds, 0);  // the workers decoded and augmented
}

TEST(TrainBenchTest, PipelineFromThePixelCacheBuildsItFirst) {
  testing::ScratchDir dir("train_bench_cache");
  TrainBenchOptions o = Tiny();
  o.data = testing::PackedSyntheticDataset();
  o.batch_size = 16;
  o.cache = "ram";
  o.cache_dir = dir / "cache";
  TrainBenchResult r;
  const ffr::Status s = BenchTraining(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.images, 48);
  EXPECT_FALSE(std::filesystem::is_empty(o.cache_dir));  // the cache it read was built there
}

TEST(TrainBenchTest, RefusesBadSizes) {
  TrainBenchOptions o = Tiny();
  o.img_size = 100;
  TrainBenchResult r;
  EXPECT_TRUE(BenchTraining(o, &r).IsInvalidArgument());
  o = Tiny();
  o.device = "cuda:99";
  EXPECT_FALSE(BenchTraining(o, &r).ok());
  o = Tiny();
  o.cache = "ram";  // without --data there is nothing to cache
  EXPECT_TRUE(BenchTraining(o, &r).IsInvalidArgument());
  o.data = testing::PackedSyntheticDataset();
  o.cache = "gpu";
  EXPECT_TRUE(BenchTraining(o, &r).IsInvalidArgument());
  o.cache = "";
  o.parts = true;  // the parts are timed on the ceiling only
  EXPECT_TRUE(BenchTraining(o, &r).IsInvalidArgument());
}

TEST(TrainBenchTest, AllReduceOfOneRankOverGloo) {
  TrainBenchOptions o = Tiny();
  AllReduceBenchResult r;
  const ffr::Status s = BenchGradientAllReduce(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.backend, "gloo");
  EXPECT_GT(r.bytes, 4 * 1000000);  // yolov5n has about 1.8 million parameters
  EXPECT_LT(r.bytes, 4 * 2000000);
  EXPECT_GT(r.seconds_per_all_reduce, 0);
}

}  // namespace
}  // namespace ffyolo
