// The fused BatchNorm+SiLU's host version (the formulas the CUDA kernels run, bn_silu_math.h)
// against BatchNorm2d followed by SiLU: outputs, gradients and running statistics, in double and
// in float; where Conv uses it, and where it declines.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ffyolo/bn_silu.h"
#include "ffyolo/modules/conv_module.h"

namespace ffyolo {
namespace {

struct Shape {
  int64_t n, c, h, w;
  double offset;  // added to x: a mean far from 0 against a small spread
};

std::string Name(const Shape& s) {
  return std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
}

// The two ways on one input: outputs, the gradients of a weighted sum of them, and the running statistics.
struct Outcome {
  torch::Tensor y, dx, dweight, dbias, running_mean, running_var, batches;
};

Outcome Run(const Shape& s, torch::ScalarType type, bool fused) {
  torch::manual_seed(7);
  torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(s.c).eps(1e-3).momentum(0.03));
  bn->to(type);
  {
    torch::NoGradGuard no_grad;
    bn->weight.uniform_(0.5, 1.5);
    bn->bias.uniform_(-0.5, 0.5);
    bn->running_mean.uniform_(-1, 1);
    bn->running_var.uniform_(0.5, 2);
  }
  bn->train();
  torch::Tensor x = (torch::randn({s.n, s.c, s.h, s.w}, torch::TensorOptions().dtype(type)) * 2 + s.offset)
                        .contiguous(torch::MemoryFormat::ChannelsLast)
                        .requires_grad_(true);
  const torch::Tensor weights = torch::randn({s.n, s.c, s.h, s.w}, x.options().requires_grad(false));
  EXPECT_TRUE(BnSiluTakes(x, *bn)) << Name(s);
  const torch::Tensor y = fused ? BnSilu(x, *bn) : torch::silu(bn->forward(x));
  (y * weights).sum().backward();
  return {y.detach(), x.grad(), bn->weight.grad(), bn->bias.grad(),
          bn->running_mean.clone(), bn->running_var.clone(), bn->num_batches_tracked.clone()};
}

// The largest difference relative to the largest magnitude of the reference.
double RelativeError(const torch::Tensor& got, const torch::Tensor& want) {
  const double scale = std::max(want.abs().max().item<double>(), 1e-30);
  return (got.to(torch::kDouble) - want.to(torch::kDouble)).abs().max().item<double>() / scale;
}

void ExpectSameOutcome(torch::ScalarType type, double tolerance) {
  for (const Shape& s : {Shape{2, 3, 5, 7, 0}, Shape{4, 16, 1, 1, 0}, Shape{2, 8, 4, 6, 0}, Shape{3, 5, 3, 3, 300},
                         Shape{1, 24, 2, 1, 0}}) {
    const Outcome fused = Run(s, type, true);
    const Outcome reference = Run(s, type, false);
    EXPECT_LT(RelativeError(fused.y, reference.y), tolerance) << Name(s);
    EXPECT_LT(RelativeError(fused.dx, reference.dx), tolerance) << Name(s);
    EXPECT_LT(RelativeError(fused.dweight, reference.dweight), tolerance) << Name(s);
    EXPECT_LT(RelativeError(fused.dbias, reference.dbias), tolerance) << Name(s);
    EXPECT_LT(RelativeError(fused.running_mean, reference.running_mean), tolerance) << Name(s);
    EXPECT_LT(RelativeError(fused.running_var, reference.running_var), tolerance) << Name(s);
    EXPECT_EQ(fused.batches.item<int64_t>(), reference.batches.item<int64_t>()) << Name(s);
    EXPECT_EQ(fused.y.scalar_type(), type);
    EXPECT_EQ(fused.dx.scalar_type(), type);
  }
}

TEST(BnSiluTest, TheHostVersionInDoubleIsBatchNormThenSilu) { ExpectSameOutcome(torch::kDouble, 1e-10); }

TEST(BnSiluTest, TheHostVersionInFloatIsBatchNormThenSilu) { ExpectSameOutcome(torch::kFloat, 2e-4); }

TEST(BnSiluTest, ANonChannelsLastInputGivesTheSameOutput) {
  torch::nn::BatchNorm2d bn(4);
  bn->to(torch::kDouble);
  const torch::Tensor x = torch::randn({2, 4, 3, 5}, torch::kDouble);
  const torch::Tensor fused = BnSilu(x, *bn);
  bn->running_mean.zero_();
  bn->running_var.fill_(1);
  EXPECT_LT(RelativeError(fused, torch::silu(bn->forward(x))), 1e-12);
}

TEST(BnSiluTest, DeclinesWhatItDoesNotCompute) {
  const torch::Tensor x = torch::randn({2, 4, 3, 3});
  EXPECT_TRUE(BnSiluTakes(x, *torch::nn::BatchNorm2d(4)));
  EXPECT_FALSE(BnSiluTakes(x, *torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(4).affine(false))));
  EXPECT_FALSE(BnSiluTakes(x, *torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(4).momentum(c10::nullopt))));
  EXPECT_FALSE(
      BnSiluTakes(x, *torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(4).track_running_stats(false))));
  EXPECT_FALSE(BnSiluTakes(torch::randn({1, 4, 1, 1}), *torch::nn::BatchNorm2d(4)));  // one value per channel
  EXPECT_FALSE(BnSiluTakes(x.to(torch::kDouble), *torch::nn::BatchNorm2d(4)));        // parameters of another type
  EXPECT_FALSE(BnSiluTakes(x.flatten(2), *torch::nn::BatchNorm2d(4)));                // not 4-D
}

// Conv in training takes the fused way when told to, in evaluation BatchNorm's running statistics.
TEST(BnSiluTest, ConvTrainsTheSameFusedOrNot) {
  const ConvArgs args{/*c1=*/3, /*c2=*/8, /*k=*/3, /*s=*/1};
  torch::Tensor grads[2], outputs[2], running[2], evaluated[2];
  for (int fused = 0; fused < 2; ++fused) {
    torch::manual_seed(3);
    Conv conv(args, torch::nn::AnyModule(torch::nn::SiLU()));
    conv->to(torch::kDouble);
    conv->SetFusedBnSilu(fused == 1);
    conv->train();
    const torch::Tensor x = torch::randn({2, 3, 9, 9}, torch::kDouble);
    outputs[fused] = conv->forward(x);
    outputs[fused].pow(2).sum().backward();
    grads[fused] = conv->conv->weight.grad().clone();
    running[fused] = conv->bn->running_var.clone();
    conv->eval();
    evaluated[fused] = conv->forward(x).detach();
  }
  EXPECT_LT(RelativeError(outputs[1].detach(), outputs[0].detach()), 1e-12);
  EXPECT_LT(RelativeError(grads[1], grads[0]), 1e-10);
  EXPECT_LT(RelativeError(running[1], running[0]), 1e-12);
  EXPECT_LT(RelativeError(evaluated[1], evaluated[0]), 1e-12);
}

}  // namespace
}  // namespace ffyolo
