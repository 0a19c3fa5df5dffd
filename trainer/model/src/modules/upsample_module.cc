#include "ffyolo/modules/upsample_module.h"

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/nn/functional/upsampling.h>

#include <cmath>

namespace ffyolo {

torch::Tensor UpsampleImpl::forward(const torch::Tensor& x) {
  namespace F = torch::nn::functional;
  // Nearest upsampling only moves values, so it runs in x's dtype, as under torch 1.13's autocast. Torch
  // 2.x's CUDA autocast lists it among its float32 ops: a half activation came out float, twice the bytes,
  // and so did the Concat after it, cast back to half by each convolution that reads it. The forward is
  // the same values; backward, the two convolutions' gradients now meet in half, as at every other Concat.
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
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
