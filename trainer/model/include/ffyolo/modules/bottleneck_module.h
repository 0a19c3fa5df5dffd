// Bottleneck as a LibTorch module (cv1, cv2); its arguments and layers are bottleneck.h.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/modules/bottleneck.h"
#include "ffyolo/modules/conv_module.h"
#include "ffyolo/modules/row_module.h"

namespace ffyolo {

class BottleneckImpl : public torch::nn::Module, public RowModule {
 public:
  BottleneckImpl(const BottleneckArgs& args, const torch::nn::AnyModule& act);

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

  Conv cv1{nullptr}, cv2{nullptr};

 private:
  bool add_;
};
TORCH_MODULE(Bottleneck);

std::shared_ptr<torch::nn::Module> MakeModule(const BottleneckArgs& args, const torch::nn::AnyModule& act);

}  // namespace ffyolo
