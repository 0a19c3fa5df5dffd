// Conv as a LibTorch module, registered as Ultralytics names it (conv, bn,
// act) so that its weights load by name; its arguments are conv.h.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/modules/conv.h"
#include "ffyolo/modules/row_module.h"

namespace ffyolo {

class Communicator;

// Conv2d without bias + BatchNorm2d + activation (Identity when args.act is false).
class ConvImpl : public torch::nn::Module, public RowModule {
 public:
  ConvImpl(const ConvArgs& args, const torch::nn::AnyModule& act);

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

  // Folds bn into conv for evaluation and export (utils/torch_utils.py::
  // fuse_conv_and_bn): conv gets a bias and no gradients, bn is removed, and
  // forward becomes act(conv(x)).
  void Fuse();
  bool fused() const { return bn.is_empty(); }
  // In training, normalize with the statistics of the whole job's batch (--sync-bn); nullptr: this rank's.
  void SetSyncBatchNorm(Communicator* comm) { sync_bn_ = comm; }
  // In training, bn and a SiLU act as one fused function where it takes the input (bn_silu.h).
  void SetFusedBnSilu(bool on) { fused_bn_silu_ = on; }

  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};  // empty once fused

 private:
  ConvArgs args_;
  torch::nn::AnyModule act_;
  Communicator* sync_bn_ = nullptr;
  bool fused_bn_silu_ = false;
};
TORCH_MODULE(Conv);

// One copy of a model row's module, as every module makes it (modules.h).
std::shared_ptr<torch::nn::Module> MakeModule(const ConvArgs& args, const torch::nn::AnyModule& act);

}  // namespace ffyolo
