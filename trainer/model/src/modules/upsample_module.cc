#include "ffyolo/modules/upsample_module.h"

#include <torch/nn/functional/upsampling.h>

#include <cmath>

namespace ffyolo {

torch::Tensor UpsampleImpl::forward(const torch::Tensor& x) {
  namespace F = torch::nn::functional;
  return F::interpolate(x, F::InterpolateFuncOptions()
                               .scale_factor(std::vector<double>{scale_factor_, scale_factor_})
                               .mode(torch::kNearest));
}

FeatureShape UpsampleImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  const FeatureShape& in = inputs.at(0);
  const FeatureShape out{in.c, static_cast<int64_t>(std::floor(static_cast<double>(in.h) * scale_factor_)),
                         static_cast<int64_t>(std::floor(static_cast<double>(in.w) * scale_factor_))};
  counts->upsample_elements += static_cast<double>(out.c * out.h * out.w);
  return out;
}

std::shared_ptr<torch::nn::Module> MakeModule(const UpsampleArgs& args, const torch::nn::AnyModule&) {
  return Upsample(args).ptr();
}

}  // namespace ffyolo
