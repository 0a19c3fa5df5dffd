// StepState: one process's training step as the Trainer makes it (the model and
// its EMA, the loss, SGD, the GradScaler, and TrainStep's parts over them), for
// the benchmarks and tests that time or check the step outside a Trainer.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>

#include <memory>
#include <string>

#include "ffr/status.h"
#include "ffyolo/hyp.h"
#include "ffyolo/train_step.h"

namespace torch::optim {
class Optimizer;
}

namespace ffyolo {

class YoloModel;
class ModelEma;
class GradScaler;
class ComputeLoss;

struct StepOptions {
  std::string model_yaml;  // a model YAML's path (ResolveConfig)
  int64_t nc = 80;
  Hyp hyp;                 // before ScaleLossGains
  int img_size = 640;
  c10::Device device = c10::kCPU;
  c10::MemoryFormat format = c10::MemoryFormat::Contiguous;
  bool amp = false;        // autocast and loss scaling (CUDA)
  bool sync_free_loss = false;
  bool fused_bn_silu = false;  // YoloModel::SetFusedBnSilu
};

struct StepState {
  std::shared_ptr<YoloModel> model, ema_model;
  std::unique_ptr<ModelEma> ema;
  std::unique_ptr<ComputeLoss> loss;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<GradScaler> scaler;
  TrainStepParts parts;  // over the above, one process

  StepState();
  ~StepState();
};

// Builds `options.model_yaml` twice (the model and its EMA) from the current torch
// seed's weights, on the device in the memory format, in training mode, with the
// Trainer's SGD and loss.
ffr::Status MakeStepState(const StepOptions& options, StepState* state);

}  // namespace ffyolo
