// The GPU path, asserted where a CUDA device is present (the GPU machine's
// scripts/gpu-run.sh) and skipped with a message elsewhere: the model on CUDA
// computes what it computes on the CPU, an AMP step, batches copied from pinned
// memory on a side stream equal the CPU path's, NCCL with one rank, an
// epoch of training on the GPU, and a loss that never makes the host wait.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ffyolo/batch_transfer.h"
#include "ffyolo/bn_silu.h"
#include "ffyolo/captured_step.h"
#include "ffyolo/ema.h"
#include "ffyolo/communicator.h"
#include "ffyolo/dataset.h"
#include "ffyolo/device.h"
#include "ffyolo/grad_scaler.h"
#include "ffyolo/gradient_sync.h"
#include "ffyolo/loss.h"
#include "ffyolo/loader.h"
#include "ffyolo/model.h"
#include "ffyolo/model_config.h"
#include "ffyolo/modules/upsample_module.h"
#include "ffyolo/torch_compat.h"
#include "ffyolo/step_state.h"
#include "ffyolo/train_step.h"
#include "ffyolo/trainer.h"
#include "testing/test_env.h"
#include "tiny_training.h"

namespace ffyolo {
namespace {

#define FFYOLO_REQUIRE_CUDA()                                                                              \
  if (CudaDeviceCount() == 0)                                                                              \
  GTEST_SKIP() << (BatchTransfer::CudaCompiled() ? "no CUDA device visible" : "a CPU-only LibTorch") \
               << "; the GPU path is tested on a GPU machine (scripts/gpu-run.sh)"

const torch::Device kGpu(torch::kCUDA, 0);

// Two yolov5n models with the same weights (BN statistics randomised too), one on the GPU.
void TwinModels(std::shared_ptr<YoloModel>* cpu, std::shared_ptr<YoloModel>* gpu) {
  torch::manual_seed(0);
  ASSERT_TRUE(BuildModel(ResolveModelYaml("yolov5n"), 3, cpu).ok());
  ASSERT_TRUE(BuildModel(ResolveModelYaml("yolov5n"), 3, gpu).ok());
  torch::NoGradGuard no_grad;
  const auto from = (*cpu)->named_buffers();
  for (auto& b : from)
    if (b.value().is_floating_point() && b.key().find("running") != std::string::npos)
      b.value().uniform_(0.5, 1.5);
  for (auto& p : (*gpu)->named_parameters()) p.value().copy_((*cpu)->named_parameters()[p.key()]);
  for (auto& b : (*gpu)->named_buffers()) b.value().copy_(from[b.key()]);
  (*gpu)->to(kGpu);
}

torch::Tensor RawLoss(const DetectOutput& out) {
  torch::Tensor loss = torch::zeros({}, out.raw[0].options().dtype(torch::kFloat));
  for (const torch::Tensor& r : out.raw) loss = loss + r.to(torch::kFloat).sigmoid().pow(2).mean();
  return loss;
}

// The largest absolute difference, for failure messages.
double MaxDifference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// cuDNN convolutions in TF32 (PyTorch's default on Ampere and later, and so the
// Trainer's and train.py's) round operands to 10 bits: off for the comparison.
class NoTf32 {
 public:
  NoTf32() : was_(at::globalContext().allowTF32CuDNN()) { at::globalContext().setAllowTF32CuDNN(false); }
  ~NoTf32() { at::globalContext().setAllowTF32CuDNN(was_); }

 private:
  bool was_;
};

TEST(CudaTest, ForwardAndBackwardEqualTheCpu) {
  FFYOLO_REQUIRE_CUDA();
  NoTf32 exact;
  std::shared_ptr<YoloModel> cpu, gpu;
  TwinModels(&cpu, &gpu);
  const torch::Tensor input = torch::rand({2, 3, 128, 128});
  const DetectOutput a = cpu->forward(input);
  const DetectOutput b = gpu->forward(input.to(kGpu));
  ASSERT_EQ(a.raw.size(), b.raw.size());
  for (size_t k = 0; k < a.raw.size(); ++k)
    EXPECT_TRUE(torch::allclose(b.raw[k].cpu(), a.raw[k], 1e-3, 1e-3))
        << "level " << k << ": differs by up to " << MaxDifference(b.raw[k].cpu(), a.raw[k]);
  RawLoss(a).backward();
  RawLoss(b).backward();
  const auto grads = gpu->named_parameters();
  for (const auto& p : cpu->named_parameters()) {
    const torch::Tensor g = grads[p.key()].grad().cpu();
    EXPECT_TRUE(torch::allclose(g, p.value().grad(), 1e-2, 1e-4 + 1e-2 * p.value().grad().abs().max().item<double>()))
        << p.key() << ": differs by up to " << MaxDifference(g, p.value().grad()) << " of "
        << p.value().grad().abs().max().item<double>();
  }
}

TEST(CudaTest, OneAmpStepIsFiniteAndCloseToFp32) {
  FFYOLO_REQUIRE_CUDA();
  std::shared_ptr<YoloModel> cpu, gpu;
  TwinModels(&cpu, &gpu);
  const torch::Tensor input = torch::rand({4, 3, 128, 128}, kGpu);
  const double fp32 = RawLoss(gpu->forward(input)).item<double>();
  torch::optim::SGD sgd(gpu->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  GradScaler scaler(true);
  compat::SetCudaAutocast(true);
  const DetectOutput out = gpu->forward(input);
  compat::SetCudaAutocast(false);
  EXPECT_EQ(out.raw[0].scalar_type(), torch::kHalf);
  const torch::Tensor loss = RawLoss(out);
  EXPECT_NEAR(loss.item<double>(), fp32, 1e-2 * fp32);
  const torch::Tensor before = gpu->parameters()[0].detach().clone();
  scaler.Scale(loss).backward();
  scaler.Unscale(sgd);
  EXPECT_TRUE(scaler.Step(sgd));
  scaler.Update();
  EXPECT_EQ(scaler.scale(), 65536.0);
  const torch::Tensor after = gpu->parameters()[0].detach();
  EXPECT_TRUE(torch::isfinite(after).all().item<bool>());
  EXPECT_FALSE(torch::equal(before, after));
}

TEST(CudaTest, PinnedSideStreamCopiesEqualTheCpuPath) {
  FFYOLO_REQUIRE_CUDA();
  std::unique_ptr<Dataset> dataset;
  ASSERT_TRUE(Dataset::Open(testing::TinyDataset(), &dataset).ok());
  LoaderOptions lo;
  lo.training = true;
  lo.img_size = 128;
  lo.batch_size = 8;
  lo.workers = 2;
  PinnedBatchAllocator pinned;  // outlives the loader that allocates from it
  std::unique_ptr<Loader> on_cpu, on_gpu;
  ASSERT_TRUE(Loader::Open(*dataset, lo, &on_cpu).ok());
  lo.allocator = &pinned;
  ASSERT_TRUE(Loader::Open(*dataset, lo, &on_gpu).ok());
  BatchTransfer a(on_cpu.get(), torch::kCPU), b(on_gpu.get(), kGpu);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    ffr::Status s = a.Start(epoch, 0);
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = b.Start(epoch, 0);
    ASSERT_TRUE(s.ok()) << s.ToString();
    int batches = 0;
    for (;; ++batches) {
      DeviceBatch x, y;
      ASSERT_TRUE(a.Next(&x).ok());
      ASSERT_TRUE(b.Next(&y).ok());
      ASSERT_EQ(x.host == nullptr, y.host == nullptr);
      if (!x.host) break;
      EXPECT_TRUE(y.images.is_cuda());
      // The same bytes: x / 255 rounds differently on the GPU (a multiplication by 1 / 255) than on the CPU.
      EXPECT_TRUE(torch::equal(x.images.mul(255).round(), y.images.cpu().mul(255).round()))
          << "epoch " << epoch << " batch " << batches << ": differs by up to " << MaxDifference(x.images, y.images.cpu());
      EXPECT_TRUE(torch::equal(x.targets, y.targets.cpu())) << "epoch " << epoch << " batch " << batches;
    }
    EXPECT_EQ(batches, 4);
  }
}

TEST(CudaTest, NcclAllReduceOfOneRank) {
  FFYOLO_REQUIRE_CUDA();
  DistEnv env;
  ASSERT_TRUE(PickFreePort(&env.master_port).ok());
  std::unique_ptr<Communicator> comm;
  const ffr::Status s = Communicator::Create(env, 0, std::chrono::seconds(60), &comm);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_STREQ(comm->backend(), "nccl");
  torch::Tensor t = torch::arange(1000, torch::TensorOptions().dtype(torch::kFloat).device(kGpu));
  comm->AllReduceSum(t);
  EXPECT_TRUE(torch::equal(t.cpu(), torch::arange(1000, torch::kFloat)));
  EXPECT_TRUE(comm->AnyRank(true));
}

class GpuMemory : public TrainObserver {
 public:
  double most = 0;
  void OnTrainBatchEnd(const TrainBatchEnd& b) override { most = std::max(most, b.gpu_mem_gb); }
};

TEST(CudaTest, AnEpochOnTheGpuReportsItsMemory) {
  FFYOLO_REQUIRE_CUDA();
  testing::ScratchDir dir("cuda_epoch");
  TrainOptions o = testing::TinyTrainOptions(dir / "runs", 1);
  o.device = "0";
  GpuMemory memory;
  TrainSummary summary;
  const ffr::Status s = Train(o, &memory, &summary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(summary.epochs_run, 1);
  EXPECT_GT(memory.most, 0.0);
  EXPECT_GE(summary.final_map50, 0.0);
}

// The sync-free loss with its backward runs with every host wait an error, and equals the CPU's.
// One process's training step on the GPU (yolov5n, 3 classes, AMP, the sync-free loss), from the same
// weights each time.
struct GpuTraining : StepState {
  explicit GpuTraining(bool channels_last, bool sync_free_loss = true, bool fused_bn_silu = false) {
    torch::manual_seed(0);
    StepOptions o;
    o.model_yaml = ResolveModelYaml("yolov5n");
    o.nc = 3;
    o.img_size = 128;
    o.device = kGpu;
    o.format = MemoryFormatOf(channels_last);
    o.amp = true;
    o.sync_free_loss = sync_free_loss;
    o.fused_bn_silu = fused_bn_silu;
    const ffr::Status s = MakeStepState(o, this);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
};

// Batch k of a fixed series: 8 images, 3 + 5k boxes (so that the capture's target capacity grows).
void SeriesBatch(int k, torch::Tensor* images, torch::Tensor* targets) {
  torch::manual_seed(100 + k);
  *images = torch::rand({8, 3, 128, 128}, kGpu).contiguous(torch::MemoryFormat::ChannelsLast);
  const int64_t n = 3 + 5 * k;
  const torch::Tensor wh = torch::rand({n, 2}) * 0.3 + 0.05;
  *targets = torch::cat({torch::randint(8, {n, 1}).to(torch::kFloat), torch::randint(3, {n, 1}).to(torch::kFloat),
                         wh / 2 + torch::rand({n, 2}) * (1 - wh), wh},
                        1)
                 .to(kGpu);
}

// Trains the series' 30 AMP steps eagerly, then captured, from the same weights, each way's parts given a
// GradientSync over `comm` (null: one process), and expects what the captured step trains to be the eager one's: the
// loss of each step within 1e-3 (cuDNN's kernels differ between eager and captured runs only in their order
// of summation), the weights and the EMA's at the end within AMP's noise, and no autograd graph kept alive
// by the captured loss. Returns the captures made (the targets' capacity regrows with new ones).
int ExpectCapturedStepsTrainAsEagerOnes(Communicator* comm) {
  at::globalContext().setBenchmarkCuDNN(true);
  constexpr int kSteps = 30;
  std::vector<double> losses[2];
  std::vector<torch::Tensor> weights[2];
  int captures = 0;
  for (int way = 0; way < 2; ++way) {
    GpuTraining t(/*channels_last=*/true);
    std::unique_ptr<GradientSync> sync;
    if (comm) {
      sync = std::make_unique<GradientSync>(comm, t.model->parameters());
      t.parts.gradient_sync = sync.get();
    }
    std::unique_ptr<CapturedStep> captured;
    if (way == 1) {
      const ffr::Status s = CapturedStep::Create(t.parts, &captured);
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok()) return 0;
    }
    for (int k = 0; k < kSteps; ++k) {
      torch::Tensor images, targets;
      SeriesBatch(k, &images, &targets);
      const LossOutput out = way == 1 ? captured->Step(images, targets) : TrainStep(t.parts, images, targets, true);
      losses[way].push_back(out.total.item<double>());
      if (way == 1) {
        EXPECT_FALSE(out.total.requires_grad()) << "step " << k;
      }
    }
    for (const torch::Tensor& p : t.model->parameters()) weights[way].push_back(p.detach().clone());
    for (const torch::Tensor& p : t.ema_model->parameters()) weights[way].push_back(p.detach().clone());
    if (captured) captures = captured->captures();
  }
  for (int k = 0; k < kSteps; ++k)
    EXPECT_NEAR(losses[1][k], losses[0][k], 1e-3 * std::abs(losses[0][k])) << "step " << k;
  for (size_t i = 0; i < weights[0].size(); ++i) {
    const double scale = weights[0][i].abs().max().item<double>() + 1e-6;
    EXPECT_LE(MaxDifference(weights[1][i], weights[0][i]), 1e-2 * scale) << "tensor " << i;
  }
  return captures;
}

// One process's captured step.
TEST(CudaTest, CapturedStepsTrainAsEagerSteps) {
  FFYOLO_REQUIRE_CUDA();
  EXPECT_GE(ExpectCapturedStepsTrainAsEagerOnes(nullptr), 2);  // 3 + 5 * 29 = 148 targets outgrow the first 64
}

// The captured step of a data-parallel rank: a job of one NCCL rank (one GPU is lent, and NCCL refuses two
// ranks on one device; the pip LibTorch there has no Gloo), GradientSync on both ways. The eager step
// all-reduces in the backward; the captured one after each replay, from the graph's own gradient tensors
// into the buckets and back, on the NCCL stream. The averaging over several ranks is DdpTest's
// ("after-backward", two Gloo ranks on the CPU); what neither proves is NCCL's transport between GPUs.
TEST(CudaTest, CapturedStepsOfARankTrainAsEagerOnes) {
  FFYOLO_REQUIRE_CUDA();
  DistEnv env;
  ASSERT_TRUE(PickFreePort(&env.master_port).ok());
  std::unique_ptr<Communicator> comm;
  const ffr::Status made = Communicator::Create(env, 0, std::chrono::seconds(60), &comm);
  ASSERT_TRUE(made.ok()) << made.ToString();
  ExpectCapturedStepsTrainAsEagerOnes(comm.get());
}

// The capture keeps no second copy of the step's memory beside its own pool: after captured steps the
// device reserves about what eager steps left reserved (the 2026-11-27 H200 run: 24.6 GB against 12.1,
// before the cache was emptied ahead of the capture). Batches of 32 at 320, so that activations outweigh
// the model, optimizer and library workspaces.
TEST(CudaTest, CapturedStepReservesAboutTheEagerStepsMemory) {
  FFYOLO_REQUIRE_CUDA();
  double reserved_gb[2];
  for (int way = 0; way < 2; ++way) {
    ReleaseCachedCudaMemory();
    GpuTraining t(/*channels_last=*/true);
    std::unique_ptr<CapturedStep> captured;
    if (way == 1) {
      ASSERT_TRUE(CapturedStep::Create(t.parts, &captured).ok());
    }
    torch::manual_seed(7);
    const torch::Tensor images = torch::rand({32, 3, 320, 320}, kGpu).contiguous(torch::MemoryFormat::ChannelsLast);
    const torch::Tensor targets = torch::tensor({0.f, 1.f, 0.5f, 0.5f, 0.2f, 0.3f}, kGpu).view({1, 6});
    for (int k = 0; k < 3; ++k) {
      const LossOutput out = way == 1 ? captured->Step(images, targets) : TrainStep(t.parts, images, targets, true);
      EXPECT_TRUE(std::isfinite(out.total.item<double>()));
    }
    reserved_gb[way] = BatchTransfer::MemoryReservedGb(kGpu);
  }
  EXPECT_LT(reserved_gb[1], 1.4 * reserved_gb[0]) << reserved_gb[1] << " GB reserved captured, " << reserved_gb[0]
                                                  << " GB eager";
}

// Every variant of issue #30's step starts where the eager NCHW step does: the first step's loss of each
// (channels-last, the sync-free loss, both, captured, fused BN+SiLU eager and captured) within AMP's noise of the NCHW eager one's, from
// the same weights and batch.
TEST(CudaTest, EveryVariantsFirstStepLossIsTheEagerNchwOnes) {
  FFYOLO_REQUIRE_CUDA();
  at::globalContext().setBenchmarkCuDNN(true);
  torch::Tensor images, targets;
  SeriesBatch(4, &images, &targets);
  struct Variant {
    const char* name;
    bool channels_last, sync_free, captured, fused_bn_silu;
  };
  double reference = 0;
  for (const Variant& v :
       {Variant{"NCHW eager", false, false, false, false}, Variant{"channels-last", true, false, false, false},
        Variant{"sync-free loss", false, true, false, false}, Variant{"both", true, true, false, false},
        Variant{"captured", true, true, true, false}, Variant{"fused BN+SiLU", true, false, false, true},
        Variant{"captured, fused BN+SiLU", true, true, true, true}}) {
    GpuTraining t(v.channels_last, v.sync_free, v.fused_bn_silu);
    std::unique_ptr<CapturedStep> captured;
    if (v.captured) {
      ASSERT_TRUE(CapturedStep::Create(t.parts, &captured).ok());
    }
    const torch::Tensor batch = images.contiguous(MemoryFormatOf(v.channels_last));
    const double loss = (captured ? captured->Step(batch, targets) : TrainStep(t.parts, batch, targets, true))
                            .total.item<double>();
    if (reference == 0) reference = loss;
    EXPECT_NEAR(loss, reference, 1e-3 * std::abs(reference)) << v.name;
  }
}

// The fused BN+SiLU kernels against BatchNorm2d then SiLU on the GPU, in half (AMP's case) and float,
// on shapes that take each kernel path: channels a multiple of 8 (16-byte vectors) or not, up to the
// widest (2048), 1x1 spatial, a mean far from 0; outputs, the three gradients and running statistics.
TEST(CudaTest, FusedBnSiluEqualsTheUnfusedOps) {
  FFYOLO_REQUIRE_CUDA();
  struct Shape {
    int64_t n, c, h, w;
    double offset;
  };
  for (torch::ScalarType type : {torch::kHalf, torch::kFloat})
    for (const Shape& s : {Shape{4, 3, 1, 1, 0}, Shape{8, 64, 40, 40, 0}, Shape{2, 2048, 3, 5, 0},
                           Shape{3, 1000, 2, 2, 0}, Shape{16, 32, 80, 80, 4}, Shape{2, 13, 7, 9, 0}}) {
      const std::string name = std::string(type == torch::kHalf ? "half " : "float ") + std::to_string(s.n) + "x" +
                               std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
      torch::Tensor got[7], want[7];
      for (int fused = 0; fused < 2; ++fused) {
        torch::manual_seed(11);
        torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(s.c).eps(1e-3).momentum(0.03));
        {
          torch::NoGradGuard no_grad;
          bn->weight.uniform_(0.5, 1.5);
          bn->bias.uniform_(-0.5, 0.5);
          bn->running_var.uniform_(0.5, 2);
        }
        bn->to(kGpu);
        const torch::Tensor x = (torch::randn({s.n, s.c, s.h, s.w}, kGpu) * 2 + s.offset)
                                    .to(type)
                                    .contiguous(torch::MemoryFormat::ChannelsLast)
                                    .requires_grad_(true);
        const torch::Tensor weights = torch::randn({s.n, s.c, s.h, s.w}, kGpu).to(type);
        ASSERT_TRUE(BnSiluTakes(x, *bn)) << name;
        const torch::Tensor y = fused == 1 ? BnSilu(x, *bn) : torch::silu(bn->forward(x));
        (y.to(torch::kFloat) * weights.to(torch::kFloat)).sum().backward();
        torch::Tensor* out = fused == 1 ? got : want;
        out[0] = y.detach();
        out[1] = x.grad();
        out[2] = bn->weight.grad();
        out[3] = bn->bias.grad();
        out[4] = bn->running_mean.clone();
        out[5] = bn->running_var.clone();
        out[6] = bn->num_batches_tracked.clone();
      }
      const char* what[] = {"y", "dx", "dweight", "dbias", "running_mean", "running_var"};
      const double tolerance = type == torch::kHalf ? 1e-2 : 1e-4;
      for (int i = 0; i < 6; ++i) {
        const double scale = want[i].to(torch::kDouble).abs().max().item<double>() + 1e-6;
        EXPECT_LT(MaxDifference(got[i], want[i]) / scale, tolerance) << name << ": " << what[i];
      }
      EXPECT_EQ(got[0].scalar_type(), type) << name;
      EXPECT_TRUE(got[0].is_contiguous(torch::MemoryFormat::ChannelsLast)) << name;
      EXPECT_EQ(got[6].item<int64_t>(), want[6].item<int64_t>()) << name;
    }
}

TEST(CudaTest, UpsampleKeepsItsInputsDtypeUnderAutocast) {
  FFYOLO_REQUIRE_CUDA();
  namespace F = torch::nn::functional;
  Upsample upsample(UpsampleArgs{2.0});
  const torch::Tensor x = torch::randn({4, 16, 5, 7}, kGpu)
                              .to(torch::kHalf)
                              .contiguous(torch::MemoryFormat::ChannelsLast)
                              .requires_grad_(true);
  compat::SetCudaAutocast(true);
  const torch::Tensor y = upsample->forward(x);
  compat::SetCudaAutocast(false);
  EXPECT_EQ(y.scalar_type(), torch::kHalf);  // autocast's float32 list would make it float
  // The float path autocast took: the same values, and the same gradient once rounded to half.
  const torch::Tensor x_float = x.detach().to(torch::kFloat).requires_grad_(true);
  const torch::Tensor y_float =
      F::interpolate(x_float, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}).mode(torch::kNearest));
  EXPECT_TRUE(torch::equal(y.to(torch::kFloat), y_float));
  const torch::Tensor dy = torch::randn(y.sizes(), kGpu).to(torch::kHalf);
  y.backward(dy);
  y_float.backward(dy.to(torch::kFloat));
  EXPECT_TRUE(torch::equal(x.grad(), x_float.grad().to(torch::kHalf)));
}

// What a capture cannot hold is refused, saying why.
TEST(CudaTest, CapturedStepRefusesALossThatWaits) {
  FFYOLO_REQUIRE_CUDA();
  GpuTraining t(/*channels_last=*/true);
  ComputeLoss waiting(ScaleLossGains(Hyp{}, 3, 3, 128), 0.0, 3, t.model->detect().anchors);
  TrainStepParts parts = t.parts;
  parts.loss = &waiting;
  std::unique_ptr<CapturedStep> captured;
  const ffr::Status s = CapturedStep::Create(parts, &captured);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("--sync-free-loss"), std::string::npos) << s.message();
}

TEST(CudaTest, SyncFreeLossNeverWaitsForTheDevice) {
  FFYOLO_REQUIRE_CUDA();
  NoTf32 no_tf32;
  torch::manual_seed(5);
  const torch::Tensor anchors = torch::tensor({1.25f, 1.625f, 2.f, 3.75f, 4.125f, 2.875f}).view({1, 3, 2});
  const torch::Tensor cpu_prediction = torch::randn({4, 3, 16, 16, 8});
  const torch::Tensor xy = torch::rand({40, 2}), wh = torch::rand({40, 2}) * 0.3 + 0.02;
  const torch::Tensor targets =
      torch::cat({torch::randint(4, {40, 1}).to(torch::kFloat), torch::randint(3, {40, 1}).to(torch::kFloat), xy, wh}, 1);
  const ComputeLoss on_cpu(Hyp{}, 0.0, 3, anchors, /*sync_free=*/true);
  const LossOutput expected = on_cpu({cpu_prediction}, targets);

  const ComputeLoss on_gpu(Hyp{}, 0.0, 3, anchors.to(kGpu), /*sync_free=*/true);
  const torch::Tensor prediction = cpu_prediction.to(kGpu).requires_grad_();
  const torch::Tensor gpu_targets = targets.to(kGpu);
  torch::cuda::synchronize();
  LossOutput out;
  {
    CudaSyncsAreErrors no_waits;
    out = on_gpu({prediction}, gpu_targets);
    out.total.backward();
  }
  EXPECT_TRUE(torch::allclose(out.items.cpu(), expected.items, 1e-5, 1e-7))
      << out.items.cpu() << " on the GPU, " << expected.items << " on the CPU";
  EXPECT_TRUE(prediction.grad().isfinite().all().item<bool>());
}

}  // namespace
}  // namespace ffyolo
