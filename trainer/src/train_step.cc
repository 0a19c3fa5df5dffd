#include "ffyolo/train_step.h"

#include <torch/torch.h>

#include <cstdio>
#include <vector>

#include "ffyolo/ema.h"
#include "ffyolo/grad_scaler.h"
#include "ffyolo/gradient_sync.h"
#include "ffyolo/model.h"
#include "ffyolo/torch_compat.h"

namespace ffyolo {

void ClipGradNorm(const std::vector<torch::Tensor>& parameters, double max_norm) {
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return;
  const torch::Tensor total = torch::stack(at::_foreach_norm(grads, 2)).norm(2);
  const torch::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  compat::ForeachMulInPlace(grads, coef);
}

namespace {

// The three groups of smart_optimizer, each with `options` and its own weight decay.
template <class Optimizer, class Options>
std::unique_ptr<torch::optim::Optimizer> Make(const ParameterGroups& groups, const Options& options,
                                              double weight_decay) {
  auto with_decay = [&](double wd) {
    auto o = std::make_unique<Options>(options);
    o->weight_decay(wd);
    return o;
  };
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  param_groups.emplace_back(groups.biases, with_decay(0.0));
  param_groups.emplace_back(groups.decayed_weights, with_decay(weight_decay));
  param_groups.emplace_back(groups.bn_weights, with_decay(0.0));
  return std::make_unique<Optimizer>(param_groups, options);
}

}  // namespace

ffr::Status MakeOptimizer(const YoloModel& model, const std::string& name, const Hyp& hyp, double weight_decay,
                          std::unique_ptr<torch::optim::Optimizer>* optimizer, std::string* description) {
  const ParameterGroups groups = SplitParameterGroups(model);
  const auto betas = std::make_tuple(hyp.momentum, 0.999);  // smart_optimizer: beta1 is the momentum
  if (name == "SGD")
    *optimizer = Make<torch::optim::SGD>(
        groups, torch::optim::SGDOptions(hyp.lr0).momentum(hyp.momentum).nesterov(true), weight_decay);
  else if (name == "Adam")
    *optimizer = Make<torch::optim::Adam>(groups, torch::optim::AdamOptions(hyp.lr0).betas(betas), weight_decay);
  else if (name == "AdamW")
    *optimizer = Make<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(hyp.lr0).betas(betas), weight_decay);
  else
    return ffr::Status::InvalidArgument("--optimizer " + name + ": expected SGD, Adam or AdamW");
  char line[192];
  std::snprintf(line, sizeof(line),
                "optimizer: %s(lr=%g) with parameter groups %zu weight(decay=0.0), %zu weight(decay=%g), %zu bias",
                name.c_str(), hyp.lr0, groups.bn_weights.size(), groups.decayed_weights.size(), weight_decay,
                groups.biases.size());
  *description = line;
  return ffr::Status::OK();
}

void SetGroupLrMomentum(torch::optim::OptimizerParamGroup& group, double lr, double momentum) {
  group.options().set_lr(lr);
  if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&group.options())) sgd->momentum(momentum);
}

LossOutput TrainStep(const TrainStepParts& parts, const at::Tensor& images, const at::Tensor& targets, bool update) {
  auto done = [&parts](const char* part) {
    if (parts.after_part) parts.after_part(part);
  };
  if (parts.amp) compat::SetCudaAutocast(true);
  DetectOutput out = parts.model->forward(images);
  if (parts.amp) compat::SetCudaAutocast(false);
  done("forward");
  LossOutput loss = (*parts.loss)(out.raw, targets);
  done("loss");
  // The ranks' gradients are averaged: scaling by the world size keeps train.py's loss * WORLD_SIZE.
  const torch::Tensor total = parts.world > 1 ? loss.total * parts.world : loss.total;
  if (parts.gradient_sync) parts.gradient_sync->Prepare(update);  // accumulation steps do not communicate
  parts.scaler->Scale(parts.quad ? total * 4 : total).backward();
  if (parts.gradient_sync) parts.gradient_sync->Finish();
  done("backward");
  if (update) {
    parts.scaler->Unscale(*parts.optimizer);
    ClipGradNorm(parts.model->parameters(), 10.0);
    done("unscale+clip");
    parts.scaler->Step(*parts.optimizer);
    parts.scaler->Update();
    parts.optimizer->zero_grad();
    done("step");
    parts.ema->Update(*parts.model);
    done("ema");
  }
  return loss;
}

}  // namespace ffyolo
