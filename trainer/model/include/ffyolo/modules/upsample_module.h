// nn.Upsample as a LibTorch module; its arguments are upsample.h.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/modules/row_module.h"
#include "ffyolo/modules/upsample.h"

namespace ffyolo {

class UpsampleImpl : public torch::nn::Module, public RowModule {
 public:
  explicit UpsampleImpl(const UpsampleArgs& args) : scale_factor_(args.scale_factor) {}

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

 private:
  double scale_factor_;
};
TORCH_MODULE(Upsample);

std::shared_ptr<torch::nn::Module> MakeModule(const UpsampleArgs& args, const torch::nn::AnyModule& act);

}  // namespace ffyolo
