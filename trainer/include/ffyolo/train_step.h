// TrainStep: one iteration of train.py's batch loop on a batch already on the
// device, shared by the Trainer and the training benchmark so that what is
// measured is what trains.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "ffyolo/hyp.h"
#include "ffyolo/loss.h"

namespace torch::optim {
class Optimizer;
}

namespace ffyolo {

class YoloModel;
class ModelEma;
class GradScaler;
class GradientSync;

// train.py's smart_optimizer with SGD: lr0, momentum, Nesterov, over
// SplitParameterGroups' three groups in its order (biases without decay, the
// other weights with `weight_decay`, BatchNorm weights without decay).
// `description` gets train.py's console line about it.
std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const YoloModel& model, const Hyp& hyp, double weight_decay,
                                                       std::string* description);

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
};

// Forward (under autocast when amp), the loss in float, the scaled backward
// and, when `update`, the optimizer step as train.py takes it: unscale, clip
// the gradient norm to 10, step, update the scale, zero the gradients, update
// the EMA. Nothing waits for the GPU. Returns the batch's loss.
LossOutput TrainStep(const TrainStepParts& parts, const at::Tensor& images, const at::Tensor& targets, bool update);

}  // namespace ffyolo
