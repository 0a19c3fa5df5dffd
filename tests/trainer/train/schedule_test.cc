// train.py's schedule: accumulate, weight-decay scaling, warmup and the lr lambdas.
#include <gtest/gtest.h>

#include <cmath>

#include "ffyolo/schedule.h"

namespace ffyolo {
namespace {

ScheduleOptions Opts(int64_t batch, int64_t nb = 100, int64_t epochs = 300) {
  ScheduleOptions o;
  o.batch_size = batch;
  o.batches_per_epoch = nb;
  o.epochs = epochs;
  return o;
}

TEST(ScheduleTest, AccumulateAndWeightDecayFollowTheNominalBatch) {
  // The table of the spec (§3.3): total batch -> accumulate, weight decay.
  struct Row {
    int64_t batch;
    int accumulate;
    double wd;
  } rows[] = {{64, 1, 5e-4}, {16, 4, 5e-4}, {40, 2, 6.25e-4}, {24, 3, 5.625e-4}, {128, 1, 1e-3}};
  for (const Row& r : rows) {
    Schedule s(Opts(r.batch));
    EXPECT_EQ(s.base_accumulate(), r.accumulate) << "batch " << r.batch;
    EXPECT_NEAR(s.ScaledWeightDecay(5e-4), r.wd, 1e-12) << "batch " << r.batch;
  }
}

TEST(ScheduleTest, WarmupLastsThreeEpochsOrAHundredIterations) {
  EXPECT_EQ(Schedule(Opts(64, 1849)).warmup_iterations(), 5547);  // COCO at batch 64
  EXPECT_EQ(Schedule(Opts(64, 10)).warmup_iterations(), 100);
}

TEST(ScheduleTest, LinearAndCosineLambdas) {
  ScheduleOptions o = Opts(16, 10, 100);
  Schedule linear(o);
  EXPECT_DOUBLE_EQ(linear.LrFactor(0), 1.0);
  EXPECT_NEAR(linear.LrFactor(50), 0.505, 1e-12);  // (1 - 0.5) * 0.99 + 0.01
  EXPECT_NEAR(linear.LrFactor(100), 0.01, 1e-12);
  o.cosine = true;
  Schedule cosine(o);
  EXPECT_NEAR(cosine.LrFactor(0), 1.0, 1e-12);
  EXPECT_NEAR(cosine.LrFactor(50), 0.505, 1e-12);  // halfway: (1 + lrf) / 2
  EXPECT_NEAR(cosine.LrFactor(25), 1 - 0.99 * (1 - std::cos(M_PI / 4)) / 2, 1e-12);
}

TEST(ScheduleTest, WarmupRampsLrMomentumAndAccumulate) {
  Schedule s(Opts(16, 10, 300));  // nw = 100, nbs / bs = 4
  Schedule::Step a = s.At(0, 0);
  EXPECT_DOUBLE_EQ(a.lr[0], 0.1);  // bias group starts at warmup_bias_lr
  EXPECT_DOUBLE_EQ(a.lr[1], 0.0);
  EXPECT_DOUBLE_EQ(a.lr[2], 0.0);
  EXPECT_DOUBLE_EQ(a.momentum, 0.8);
  EXPECT_EQ(a.accumulate, 1);
  Schedule::Step m = s.At(50, 5);  // halfway through warmup, epoch 5
  const double lr = 0.01 * ((1 - 5.0 / 300) * 0.99 + 0.01);
  EXPECT_NEAR(m.lr[0], 0.1 + (lr - 0.1) / 2, 1e-15);
  EXPECT_NEAR(m.lr[1], lr / 2, 1e-15);
  EXPECT_NEAR(m.momentum, (0.8 + 0.937) / 2, 1e-15);
  EXPECT_EQ(m.accumulate, 2);  // round(2.5) = 2, Python's banker's rounding
  Schedule::Step after = s.At(101, 10);
  EXPECT_EQ(after.accumulate, 4);
  EXPECT_DOUBLE_EQ(after.momentum, 0.937);
  EXPECT_NEAR(after.lr[0], 0.01 * ((1 - 10.0 / 300) * 0.99 + 0.01), 1e-15);
}

// Past the warmup train.py's LambdaLR trails its lambda by an epoch (stepped once by its constructor, then
// last_epoch = start_epoch - 1): epoch e trains at lr0 * lf(e - 1), except the epoch in which the warmup
// ends, which keeps the warmup's lr0 * lf(epoch). Measured against train.py step by step (docs/bench.md).
TEST(ScheduleTest, LrAfterTheWarmupTrailsTheLambdaByAnEpoch) {
  auto lf = [](double e) { return (1 - e / 300) * 0.99 + 0.01; };
  Schedule s(Opts(16, 30, 300));  // nw = max(round(3 * 30), 100) = 100: the warmup ends in epoch 3
  EXPECT_NEAR(s.At(100, 3).lr[1], 0.01 * lf(3), 1e-15);  // the warmup's last iteration
  EXPECT_NEAR(s.At(119, 3).lr[1], 0.01 * lf(3), 1e-15);  // the rest of that epoch keeps it
  for (int64_t epoch : {4, 50, 299}) {
    const Schedule::Step step = s.At(epoch * 30, epoch);
    for (int g = 0; g < 3; ++g) EXPECT_NEAR(step.lr[g], 0.01 * lf(epoch - 1), 1e-15) << "epoch " << epoch;
  }
  Schedule long_epochs(Opts(16, 500, 300));  // nw = 1500 ends in epoch 3 too
  EXPECT_NEAR(long_epochs.At(1600, 3).lr[0], 0.01 * lf(3), 1e-15);
  EXPECT_NEAR(long_epochs.At(2000, 4).lr[0], 0.01 * lf(3), 1e-15);
  ScheduleOptions short_warmup = Opts(16, 500, 300);
  short_warmup.warmup_epochs = 0;  // nw = 100 ends in epoch 0, which keeps lf(0)
  EXPECT_NEAR(Schedule(short_warmup).At(400, 0).lr[1], 0.01 * lf(0), 1e-15);
  EXPECT_NEAR(Schedule(short_warmup).At(500, 1).lr[1], 0.01 * lf(0), 1e-15);
}

}  // namespace
}  // namespace ffyolo
