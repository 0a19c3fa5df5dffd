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

// torch::optim::SGD's arithmetic and state (SGDParamState momentum buffers,
// so checkpoints are the same), in a few multi-tensor kernels per group, as
// torch.optim.SGD's foreach path takes it on CUDA, instead of LibTorch's four
// kernels per parameter. The gradients are left as they are, as SGD leaves them.
class ForeachSgd : public torch::optim::SGD {
 public:
  using SGD::SGD;

  torch::Tensor step(LossClosure closure = nullptr) override {
    torch::NoGradGuard no_grad;
    torch::Tensor loss;
    if (closure) {
      at::AutoGradMode enable_grad(true);
      loss = closure();
    }
    for (auto& group : param_groups()) {
      const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
      std::vector<torch::Tensor> params, grads;
      for (const torch::Tensor& p : group.params())
        if (p.grad().defined()) params.push_back(p), grads.push_back(p.grad());
      if (params.empty()) continue;
      std::vector<torch::Tensor> steps = o.weight_decay() != 0 ? at::_foreach_add(grads, params, o.weight_decay())
                                                                : grads;
      if (o.momentum() != 0) {
        std::vector<torch::Tensor> buffers, existing, their_steps;
        for (size_t i = 0; i < params.size(); ++i) {
          const auto key = compat::OptimizerStateKey(params[i]);
          auto found = state().find(key);
          if (found == state().end()) {  // the first step: the buffer is the step itself
            auto param_state = std::make_unique<torch::optim::SGDParamState>();
            param_state->momentum_buffer(steps[i].clone().detach());
            buffers.push_back(param_state->momentum_buffer());
            state()[key] = std::move(param_state);
          } else {
            buffers.push_back(static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer());
            existing.push_back(buffers.back());
            their_steps.push_back(steps[i]);
          }
        }
        if (!existing.empty()) {
          at::_foreach_mul_(existing, o.momentum());
          at::_foreach_add_(existing, their_steps, 1 - o.dampening());
        }
        steps = o.nesterov() ? at::_foreach_add(steps, buffers, o.momentum()) : buffers;
      }
      at::_foreach_add_(params, steps, -o.lr());
    }
    return loss;
  }
};

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
    *optimizer = Make<ForeachSgd>(
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

namespace {

// The benchmark's per-part clock (TrainStepParts::after_part), when it is set.
void Done(const TrainStepParts& parts, const char* part) {
  if (parts.after_part) parts.after_part(part);
}

}  // namespace

LossOutput ForwardBackward(const TrainStepParts& parts, const at::Tensor& images, const at::Tensor& targets,
                           bool update) {
  if (parts.amp) compat::SetCudaAutocast(true);
  DetectOutput out = parts.model->forward(images);
  if (parts.amp) compat::SetCudaAutocast(false);
  Done(parts, "forward");
  LossOutput loss = (*parts.loss)(out.raw, targets);
  Done(parts, "loss");
  // The ranks' gradients are averaged: scaling by the world size keeps train.py's loss * WORLD_SIZE.
  const torch::Tensor total = parts.world > 1 ? loss.total * parts.world : loss.total;
  if (parts.gradient_sync) parts.gradient_sync->Prepare(update);  // accumulation steps do not communicate
  parts.scaler->Scale(parts.quad ? total * 4 : total).backward();
  if (parts.gradient_sync) parts.gradient_sync->Finish();
  Done(parts, "backward");
  return loss;
}

LossOutput TrainStep(const TrainStepParts& parts, const at::Tensor& images, const at::Tensor& targets, bool update) {
  LossOutput loss = ForwardBackward(parts, images, targets, update);
  if (update) {
    parts.scaler->Unscale(*parts.optimizer);
    ClipGradNorm(parts.model->parameters(), 10.0);
    Done(parts, "unscale+clip");
    parts.scaler->Step(*parts.optimizer);
    parts.scaler->Update();
    parts.optimizer->zero_grad();
    Done(parts, "step");
    parts.ema->Update(*parts.model);
    Done(parts, "ema");
  }
  return loss;
}

}  // namespace ffyolo
