#include "ffyolo/modules/concat_module.h"

namespace ffyolo {

torch::Tensor ConcatImpl::forward(const std::vector<torch::Tensor>& inputs) { return torch::cat(inputs, dim_); }

FeatureShape ConcatImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts*) const {
  FeatureShape out = inputs.at(0);
  out.c = 0;
  for (const FeatureShape& input : inputs) out.c += input.c;
  return out;
}

std::shared_ptr<torch::nn::Module> MakeModule(const ConcatArgs& args, const torch::nn::AnyModule&) {
  return Concat(args).ptr();
}

}  // namespace ffyolo
