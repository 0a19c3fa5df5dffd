#include "ffyolo/modules/conv_module.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>  // Identity
#include <torch/utils.h>

#include "ffyolo/bn_silu.h"
#include "ffyolo/sync_batch_norm.h"

namespace ffyolo {

namespace {

// models/common.py::autopad: "same" padding for odd kernels at stride 1.
int64_t AutoPad(const ConvArgs& args) {
  if (args.p >= 0) return args.p;
  return (args.d * (args.k - 1) + 1) / 2;
}

FeatureShape ConvOutputShape(const ConvArgs& args, FeatureShape in) {
  const int64_t effective_k = args.d * (args.k - 1) + 1;
  const int64_t p = AutoPad(args);
  return {args.c2, (in.h + 2 * p - effective_k) / args.s + 1, (in.w + 2 * p - effective_k) / args.s + 1};
}

torch::nn::Conv2dOptions Conv2dOptionsOf(const ConvArgs& args, bool bias) {
  return torch::nn::Conv2dOptions(args.c1, args.c2, args.k)
      .stride(args.s)
      .padding(torch::ExpandingArray<2>(AutoPad(args)))
      .dilation(args.d)
      .groups(args.g)
      .bias(bias);
}

}  // namespace

ConvImpl::ConvImpl(const ConvArgs& args, const torch::nn::AnyModule& act) : args_(args) {
  conv = register_module("conv", torch::nn::Conv2d(Conv2dOptionsOf(args, /*bias=*/false)));
  bn = register_module("bn", torch::nn::BatchNorm2d(args.c2));
  act_ = args.act ? act : torch::nn::AnyModule(torch::nn::Identity());
  register_module("act", act_.ptr());
}

torch::Tensor ConvImpl::forward(const torch::Tensor& x) {
  if (fused()) return act_.forward(conv->forward(x));
  if (sync_bn_ && is_training()) return act_.forward(SyncBatchNorm2d(conv->forward(x), *bn, *sync_bn_));
  const torch::Tensor y = conv->forward(x);
  if (fused_bn_silu_ && is_training() && act_.ptr()->as<torch::nn::SiLUImpl>() && BnSiluTakes(y, *bn))
    return BnSilu(y, *bn);
  return act_.forward(bn->forward(y));
}

FeatureShape ConvImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  const FeatureShape out = ConvOutputShape(args_, inputs.at(0));
  const double elements = static_cast<double>(out.c * out.h * out.w);
  counts->conv_macs += elements * static_cast<double>(args_.c1 / args_.g * args_.k * args_.k);
  if (!fused()) counts->bn_elements += elements;
  return out;
}

void ConvImpl::Fuse() {
  if (fused()) return;
  torch::NoGradGuard no_grad;
  torch::nn::Conv2d folded(Conv2dOptionsOf(args_, /*bias=*/true));
  folded->to(conv->weight.device(), conv->weight.scalar_type());
  const torch::Tensor std = torch::sqrt(bn->running_var + bn->options.eps());
  folded->weight.copy_(conv->weight * bn->weight.div(std).view({-1, 1, 1, 1}));
  folded->bias.copy_(bn->bias - bn->weight.mul(bn->running_mean).div(std));
  folded->weight.set_requires_grad(false);
  folded->bias.set_requires_grad(false);
  conv = replace_module("conv", folded);
  unregister_module("bn");
  bn = nullptr;
}

std::shared_ptr<torch::nn::Module> MakeModule(const ConvArgs& args, const torch::nn::AnyModule& act) {
  return Conv(args, act).ptr();
}

}  // namespace ffyolo
