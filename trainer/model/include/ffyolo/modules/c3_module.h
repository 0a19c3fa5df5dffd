// C3 as a LibTorch module (cv1, cv2, cv3, m.0, m.1, ...); its arguments and layers are c3.h.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/modules/c3.h"
#include "ffyolo/modules/conv_module.h"
#include "ffyolo/modules/row_module.h"

namespace ffyolo {

class C3Impl : public torch::nn::Module, public RowModule {
 public:
  C3Impl(const C3Args& args, const torch::nn::AnyModule& act);

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

  Conv cv1{nullptr}, cv2{nullptr}, cv3{nullptr};
  torch::nn::Sequential m{nullptr};  // of Bottlenecks
};
TORCH_MODULE(C3);

std::shared_ptr<torch::nn::Module> MakeModule(const C3Args& args, const torch::nn::AnyModule& act);

}  // namespace ffyolo
