// Concat as a LibTorch module; its arguments are concat.h.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/modules/concat.h"
#include "ffyolo/modules/row_module.h"

namespace ffyolo {

class ConcatImpl : public torch::nn::Module, public RowModule {
 public:
  explicit ConcatImpl(const ConcatArgs& args) : dim_(args.dim) {}

  torch::Tensor forward(const std::vector<torch::Tensor>& inputs);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

 private:
  int64_t dim_;
};
TORCH_MODULE(Concat);

std::shared_ptr<torch::nn::Module> MakeModule(const ConcatArgs& args, const torch::nn::AnyModule& act);

}  // namespace ffyolo
