// The update half of a training step: clip_grad_norm_ (ClipGradNorm) and
// ModelEMA.update (ModelEma::Update), each against its arithmetic.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ffyolo/config_path.h"
#include "ffyolo/ema.h"
#include "ffyolo/hyp.h"
#include "ffyolo/model.h"
#include "ffyolo/train_step.h"

namespace ffyolo {
namespace {

std::vector<torch::Tensor> StateCopy(const torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.named_parameters()) out.push_back(p.value().detach().clone());
  for (const auto& b : m.named_buffers()) out.push_back(b.value().clone());
  return out;
}

// Gradients of a known total norm (2-norm of all of them together).
std::vector<torch::Tensor> Parameters(double scale) {
  torch::manual_seed(1);
  std::vector<torch::Tensor> params;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{16, 3, 3, 3}, {16}, {7}, {2, 5}}) {
    torch::Tensor p = torch::zeros(shape, torch::requires_grad());
    p.mutable_grad() = torch::randn(shape) * scale;
    params.push_back(p);
  }
  params.push_back(torch::zeros({4}, torch::requires_grad()));  // no gradient: skipped
  return params;
}

std::vector<torch::Tensor> GradientCopies(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params)
    if (p.grad().defined()) out.push_back(p.grad().clone());
  return out;
}

double TotalNorm(const std::vector<torch::Tensor>& params) {
  double sum = 0;
  for (const torch::Tensor& p : params)
    if (p.grad().defined()) sum += p.grad().to(torch::kDouble).pow(2).sum().item<double>();
  return std::sqrt(sum);
}

TEST(ClipGradNormTest, ScalesAllGradientsTogetherDownToTheMaximum) {
  const std::vector<torch::Tensor> params = Parameters(5.0);
  const std::vector<torch::Tensor> before = GradientCopies(params);
  const double total = TotalNorm(params);
  ASSERT_GT(total, 10.0);
  ClipGradNorm(params, 10.0);
  EXPECT_NEAR(TotalNorm(params), 10.0, 1e-4);
  const double coef = 10.0 / (total + 1e-6);
  for (size_t i = 0; i < before.size(); ++i)  // one factor for all: the direction is kept
    EXPECT_TRUE(torch::allclose(params[i].grad(), before[i] * coef, 1e-5, 1e-7)) << "gradient " << i;
  EXPECT_FALSE(params.back().grad().defined());
}

TEST(ClipGradNormTest, LeavesGradientsUnderTheMaximum) {
  const std::vector<torch::Tensor> params = Parameters(0.1);
  ASSERT_LT(TotalNorm(params), 10.0);
  const std::vector<torch::Tensor> before = GradientCopies(params);
  ClipGradNorm(params, 10.0);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(torch::equal(params[i].grad(), before[i])) << "gradient " << i;
}

TEST(ModelEmaTest, UpdateAveragesEveryFloatingPointEntryAndLeavesTheCounts) {
  torch::manual_seed(0);
  std::shared_ptr<YoloModel> model, averaged;
  ASSERT_TRUE(BuildModel(ResolveConfig("yolov5n", "models"), 3, &model).ok());
  ASSERT_TRUE(BuildModel(ResolveConfig("yolov5n", "models"), 3, &averaged).ok());
  ModelEma ema(averaged, *model, /*updates=*/4);
  {
    torch::NoGradGuard no_grad;  // the model moves away from its average
    for (torch::Tensor p : model->parameters()) p.add_(torch::randn_like(p));
    for (torch::Tensor b : model->buffers())
      if (b.is_floating_point()) b.mul_(1.5);
      else b.add_(7);
  }
  const std::vector<torch::Tensor> before = StateCopy(*averaged), now = StateCopy(*model);
  ema.Update(*model);
  const double d = 0.9999 * (1 - std::exp(-5.0 / 2000));
  const std::vector<torch::Tensor> after = StateCopy(*averaged);
  ASSERT_EQ(after.size(), before.size());
  int averaged_entries = 0;
  for (size_t i = 0; i < after.size(); ++i) {
    if (!before[i].is_floating_point()) {
      EXPECT_TRUE(torch::equal(after[i], before[i])) << "entry " << i << " (num_batches_tracked) changed";
      continue;
    }
    ++averaged_entries;
    const torch::Tensor expected = before[i].to(torch::kDouble) * d + now[i].to(torch::kDouble) * (1 - d);
    EXPECT_TRUE(torch::allclose(after[i].to(torch::kDouble), expected, 1e-6, 1e-7)) << "entry " << i;
  }
  EXPECT_GT(averaged_entries, 100);
  EXPECT_EQ(ema.updates(), 5);
}

// MakeOptimizer's SGD (multi-tensor kernels) takes LibTorch's torch::optim::SGD
// steps over the same three groups: weight decay, the first step's momentum
// buffer and later ones, Nesterov, a learning rate and momentum per group
// (warm-up's), parameters without a gradient left alone, gradients unchanged.
TEST(SgdTest, MakeOptimizersSgdStepsAsLibTorchsSgd) {
  std::shared_ptr<YoloModel> model, reference_model;
  torch::manual_seed(0);
  ASSERT_TRUE(BuildModel(ResolveConfig("yolov5n", "models"), 3, &model).ok());
  torch::manual_seed(0);
  ASSERT_TRUE(BuildModel(ResolveConfig("yolov5n", "models"), 3, &reference_model).ok());
  Hyp hyp;
  std::unique_ptr<torch::optim::Optimizer> sgd;
  std::string description;
  ASSERT_TRUE(MakeOptimizer(*model, "SGD", hyp, hyp.weight_decay, &sgd, &description).ok());
  const ParameterGroups groups = SplitParameterGroups(*reference_model);
  std::vector<torch::optim::OptimizerParamGroup> reference_groups;
  for (const auto& [params, decay] : {std::pair{groups.biases, 0.0}, std::pair{groups.decayed_weights, hyp.weight_decay},
                                      std::pair{groups.bn_weights, 0.0}}) {
    auto options = std::make_unique<torch::optim::SGDOptions>(
        torch::optim::SGDOptions(hyp.lr0).momentum(hyp.momentum).nesterov(true).weight_decay(decay));
    reference_groups.emplace_back(params, std::move(options));
  }
  torch::optim::SGD reference(reference_groups, torch::optim::SGDOptions(hyp.lr0).momentum(hyp.momentum).nesterov(true));

  std::vector<torch::Tensor> params = model->parameters(), reference_params = reference_model->parameters();
  ASSERT_EQ(params.size(), reference_params.size());
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE(step);
    for (size_t g = 0; g < 3; ++g) {  // warm-up: another rate and momentum per group
      SetGroupLrMomentum(sgd->param_groups()[g], 0.1 / (g + 1 + step), 0.8 + 0.05 * step);
      SetGroupLrMomentum(reference.param_groups()[g], 0.1 / (g + 1 + step), 0.8 + 0.05 * step);
    }
    torch::manual_seed(10 + step);
    std::vector<torch::Tensor> grads;
    for (size_t i = 0; i < params.size(); ++i) {
      const bool without = i % 17 == 5 && step == 1;  // some skip a step
      grads.push_back(without ? torch::Tensor() : torch::randn_like(params[i]));
      params[i].mutable_grad() = without ? torch::Tensor() : grads[i].clone();
      reference_params[i].mutable_grad() = without ? torch::Tensor() : grads[i].clone();
    }
    sgd->step();
    reference.step();
    for (size_t i = 0; i < params.size(); ++i) {
      ASSERT_TRUE(torch::equal(params[i], reference_params[i])) << "parameter " << i;
      if (grads[i].defined()) {
        ASSERT_TRUE(torch::equal(params[i].grad(), grads[i])) << "gradient " << i;
      }
    }
  }
  ASSERT_EQ(sgd->state().size(), reference.state().size());
}

}  // namespace
}  // namespace ffyolo
