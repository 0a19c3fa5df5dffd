// yolo-bench train and allreduce run the Trainer's step and count what they say they count.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ffyolo/dataset.h"
#include "ffyolo/kernel_profile.h"
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
  o.variants.channels_last = "on";
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

TEST(TrainBenchTest, ProfileRecordsTheProfiledStepsOperators) {
  TrainBenchOptions o = Tiny();
  o.profile_steps = 2;
  TrainBenchResult r;
  const ffr::Status s = BenchTraining(o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const auto named = [&](const std::string& name) {
    return std::find_if(r.kernels.begin(), r.kernels.end(), [&](const KernelTime& k) { return k.name == name; });
  };
  // yolov5n has 60 convolutions, each run once forward and once backward per step.
  ASSERT_NE(named("aten::conv2d"), r.kernels.end());
  EXPECT_EQ(named("aten::conv2d")->calls, 2 * 60);
  ASSERT_NE(named("aten::convolution_backward"), r.kernels.end());
  EXPECT_EQ(named("aten::convolution_backward")->calls, 2 * 60);
  for (const KernelTime& k : r.kernels) EXPECT_GE(k.seconds, 0) << k.name;
  EXPECT_NE(r.profiled.find("CPU operators"), std::string::npos);
  o.profile_steps = 0;
  ASSERT_TRUE(BenchTraining(o, &r).ok());
  EXPECT_TRUE(r.kernels.empty());
}

TEST(KernelProfileTest, CategoriesFromKernelNames) {
  EXPECT_STREQ(KernelCategory("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc"), "convolution");
  EXPECT_STREQ(KernelCategory("void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false>"), "layout change");
  EXPECT_STREQ(KernelCategory("void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float>"), "batch norm");
  EXPECT_STREQ(KernelCategory("void at::native::batch_norm_collect_statistics_kernel<float>"), "batch norm");
  EXPECT_STREQ(KernelCategory("void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel>"),
               "elementwise");
  EXPECT_STREQ(KernelCategory("void at::native::multi_tensor_apply_kernel<FusedSgd>"), "multi-tensor");
  EXPECT_STREQ(KernelCategory("void at::native::reduce_kernel<512, 1>"), "reduction");
  EXPECT_STREQ(KernelCategory("void at::native::(anonymous)::CatArrayBatchedCopy<float>"), "copy");
  EXPECT_STREQ(KernelCategory("Memcpy HtoD (Pinned -> Device)"), "copy");
  EXPECT_STREQ(KernelCategory("void at::native::index_elementwise_kernel_gather"), "elementwise");
  EXPECT_STREQ(KernelCategory("void at::native::radixSortKVInPlace"), "other");
}

TEST(KernelProfileTest, MarkdownSumsByKindAndListsTheTopKernels) {
  std::vector<KernelTime> kernels;
  AddKernelTime("sm90_xmma_fprop", 0.004, &kernels);
  AddKernelTime("nchwToNhwcKernel", 0.002, &kernels);
  AddKernelTime("sm90_xmma_fprop", 0.002, &kernels);
  AddKernelTime("bn_fw_kernel", 0.001, &kernels);
  AddKernelTime("some|kernel", 0.001, &kernels);
  ASSERT_EQ(kernels.size(), 4u);
  EXPECT_EQ(kernels[0].calls, 2);
  EXPECT_DOUBLE_EQ(kernels[0].seconds, 0.006);
  const std::string md = KernelProfileMarkdown(kernels, "CUDA kernels", 2, 3);
  EXPECT_NE(md.find("Profiled: CUDA kernels, 5.00 ms per step over 2 steps."), std::string::npos) << md;
  EXPECT_NE(md.find("| convolution | 1 | 3.00 | 60.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| layout change | 0 | 1.00 | 20.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `sm90_xmma_fprop` | convolution | 1.0 | 3.000 | 60.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `bn_fw_kernel` | batch norm | 0.5 | 0.500 | 10.0 % |"), std::string::npos) << md;
  EXPECT_EQ(md.find("some"), std::string::npos) << md;  // beyond the top 3
  EXPECT_NE(KernelProfileMarkdown(kernels, "x", 2, 4).find("`some/kernel`"), std::string::npos);  // no stray column
}

// Operators on two threads, nested as the profiler records them: a kernel is put down to the outermost
// operator around the one that launched it, on that one's thread.
TEST(KernelProfileTest, LaunchersAreTheOutermostOperatorAndTheLaunchingOne) {
  const KernelLaunchers launchers({
      {"aten::copy_", 1, 150, 180, 3},
      {"aten::contiguous", 1, 100, 200, 1},
      {"aten::to", 1, 120, 190, 2},
      {"aten::conv2d", 1, 200, 300, 4},  // starts as the last one ends: not inside it
      {"autograd::engine::evaluate_function: CatBackward0", 2, 110, 400, 5},
      {"aten::slice", 2, 120, 130, 6},
  });
  EXPECT_EQ(launchers.Of(3), "aten::contiguous > aten::copy_");
  EXPECT_EQ(launchers.Of(2), "aten::contiguous > aten::to");
  EXPECT_EQ(launchers.Of(1), "aten::contiguous");
  EXPECT_EQ(launchers.Of(4), "aten::conv2d");
  EXPECT_EQ(launchers.Of(6), "autograd::engine::evaluate_function: CatBackward0 > aten::slice");  // its own thread's
  EXPECT_EQ(launchers.Of(99), "");
}

TEST(KernelProfileTest, MarkdownSaysWhichOperatorsLaunchedTheTime) {
  std::vector<KernelTime> kernels;
  AddKernelTime("direct_copy_kernel", 0.003, &kernels, "aten::contiguous > aten::copy_");
  AddKernelTime("direct_copy_kernel", 0.001, &kernels, "aten::cat");
  AddKernelTime("direct_copy_kernel", 0.002, &kernels, "aten::contiguous > aten::copy_");
  AddKernelTime("sm90_xmma_fprop", 0.006, &kernels, "aten::conv2d");
  ASSERT_EQ(kernels[0].launchers.size(), 2u);
  const std::string md = KernelProfileMarkdown(kernels, "CUDA kernels", 1, 5);
  // The top kernels' most frequent launcher; each launcher's share of its kernels' time by calls.
  EXPECT_NE(md.find("| `direct_copy_kernel` | copy | 3.0 | 6.000 | 50.0 % | aten::contiguous > aten::copy_ (+1 more) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| aten::conv2d | 6.000 | 50.0 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| aten::contiguous > aten::copy_ | 4.000 | 33.3 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| aten::cat | 2.000 | 16.7 % |"), std::string::npos) << md;
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
  o.parts = false;
  o.profile_steps = 1;  // and so is the profile
  EXPECT_TRUE(BenchTraining(o, &r).IsInvalidArgument());
  o = Tiny();
  o.variants.cuda_graph = "on";  // a capture needs CUDA
  const ffr::Status s = BenchTraining(o, &r);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--cuda-graph"), std::string::npos) << s.message();
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
