// The building blocks of YOLOv5 v7.0 (models/common.py, models/yolo.py::Detect)
// as torch::nn modules, one header each (modules/<module>_module.h), and what
// a model's rows share. Their registered names reproduce Ultralytics'
// state-dict keys (conv, bn, cv1, m.0, anchors, ...), so weights converted from
// Ultralytics checkpoints load by name.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/model_config.h"
#include "ffyolo/modules/bottleneck_module.h"
#include "ffyolo/modules/c3_module.h"
#include "ffyolo/modules/concat_module.h"
#include "ffyolo/modules/conv_module.h"
#include "ffyolo/modules/detect_module.h"
#include "ffyolo/modules/row_module.h"
#include "ffyolo/modules/sppf_module.h"
#include "ffyolo/modules/upsample_module.h"

namespace ffyolo {

// The activation every Conv of one model shares (Ultralytics' Conv.default_act):
// a single instance, so it counts once among the model's modules.
torch::nn::AnyModule MakeActivation(const ActivationConfig& config);

// One copy of a row's module: its alternative's MakeModule(args, act), which
// every module declares in its <module>_module.h with the same signature
// (those without a Conv ignore `act`), so a module without one does not compile.
std::shared_ptr<torch::nn::Module> MakeRowModule(const LayerArgs& args, const torch::nn::AnyModule& act);

// parse_model's nn.Sequential of n copies of a row module other than C3
// (children "0", "1", ...), applied one after the other.
class RepeatImpl : public torch::nn::Module, public RowModule {
 public:
  // Every copy must be a RowModule.
  explicit RepeatImpl(const std::vector<std::shared_ptr<torch::nn::Module>>& copies);

  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override;
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

 private:
  std::vector<RowModule*> copies_;  // owned as registered children
};
TORCH_MODULE(Repeat);

}  // namespace ffyolo
