// SPPF as a LibTorch module (cv1, cv2, m); its arguments and layers are sppf.h.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/modules/conv_module.h"
#include "ffyolo/modules/row_module.h"
#include "ffyolo/modules/sppf.h"

namespace ffyolo {

// Three chained k x k max-pools, equivalent to SPP(5, 9, 13) for k = 5.
class SPPFImpl : public torch::nn::Module, public RowModule {
 public:
  SPPFImpl(const SPPFArgs& args, const torch::nn::AnyModule& act);

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

  Conv cv1{nullptr}, cv2{nullptr};
  torch::nn::MaxPool2d m{nullptr};
};
TORCH_MODULE(SPPF);

std::shared_ptr<torch::nn::Module> MakeModule(const SPPFArgs& args, const torch::nn::AnyModule& act);

}  // namespace ffyolo
