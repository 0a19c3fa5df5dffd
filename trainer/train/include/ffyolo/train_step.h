// TrainStep: one iteration of train.py's batch loop on a batch already on the
// device, shared by the Trainer and the training benchmark so that what is
// measured is what trains.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ffr/status.h"
#include "ffyolo/hyp.h"
#include "ffyolo/loss.h"

namespace torch::optim {
class Optimizer;
class OptimizerParamGroup;
}

namespace ffyolo {

class YoloModel;
class ModelEma;
class GradScaler;
class GradientSync;

// train.py's smart_optimizer(model, name, lr0, momentum, weight_decay) over
// SplitParameterGroups' three groups in its order (biases without decay, the
// other weights with `weight_decay`, BatchNorm weights without decay): SGD
// with momentum and Nesterov; Adam and AdamW with betas (momentum, 0.999),
// Adam's decay added to the gradient and AdamW's applied to the weights, as
// torch.optim's. `description` gets train.py's console line about it.
// InvalidArgument for another name.
ffr::Status MakeOptimizer(const YoloModel& model, const std::string& name, const Hyp& hyp, double weight_decay,
                          std::unique_ptr<torch::optim::Optimizer>* optimizer, std::string* description);

// Sets a parameter group's lr and momentum as train.py's warmup does: the
// momentum only where the group has that setting (SGD). Adam's beta1 keeps
// hyp momentum throughout, as v7.0's `if 'momentum' in x` leaves it.
void SetGroupLrMomentum(torch::optim::OptimizerParamGroup& group, double lr, double momentum);

struct TrainStepParts {
  YoloModel* model = nullptr;
  ComputeLoss* loss = nullptr;
  GradScaler* scaler = nullptr;
  torch::optim::Optimizer* optimizer = nullptr;
  ModelEma* ema = nullptr;
  GradientSync* gradient_sync = nullptr;  // null: one process
  bool amp = false;                       // autocast the forward pass (CUDA)
  int world = 1;                          // ranks whose gradients are averaged
  bool quad = false;                      // --quad: train.py's loss *= 4
  // After each part of the step ("forward", "loss", "backward", then with an
  // update "unscale+clip", "step", "ema"): the benchmark's per-part timing. Null: nothing.
  std::function<void(const char* part)> after_part;
};

// torch.nn.utils.clip_grad_norm_(parameters, max_norm): every gradient scaled
// by min(1, max_norm / (total 2-norm + 1e-6)), on the device, with no host sync.
// Multi-tensor kernels, as torch's on CUDA: a few launches, not two per parameter.
void ClipGradNorm(const std::vector<at::Tensor>& parameters, double max_norm);

// TrainStep's first half: forward (under autocast when amp), the loss in float
// and the scaled backward, the gradients all-reduced when `update`. What a
// captured step (captured_step.h) records, with the unscale and clipping.
LossOutput ForwardBackward(const TrainStepParts& parts, const at::Tensor& images, const at::Tensor& targets,
                           bool update);

// Forward (under autocast when amp), the loss in float, the scaled backward
// and, when `update`, the optimizer step as train.py takes it: unscale, clip
// the gradient norm to 10, step, update the scale, zero the gradients, update
// the EMA. Nothing waits for the GPU. Returns the batch's loss.
LossOutput TrainStep(const TrainStepParts& parts, const at::Tensor& images, const at::Tensor& targets, bool update);

}  // namespace ffyolo
