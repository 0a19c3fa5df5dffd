#include "ffyolo/modules.h"

#include "ffyolo/module_shapes.h"
#include "ffyolo/sync_batch_norm.h"

#include <torch/nn/functional/upsampling.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

#include <cmath>

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

torch::nn::AnyModule MakeActivation(const ActivationConfig& config) {
  switch (config.kind) {
    case ActivationConfig::Kind::kReLU:
      return torch::nn::AnyModule(torch::nn::ReLU());
    case ActivationConfig::Kind::kLeakyReLU:
      return torch::nn::AnyModule(
          torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(config.negative_slope)));
    case ActivationConfig::Kind::kSiLU:
      break;
  }
  return torch::nn::AnyModule(torch::nn::SiLU());
}

// ---- Conv ----

ConvImpl::ConvImpl(const ConvArgs& args, const torch::nn::AnyModule& act) : args_(args) {
  conv = register_module("conv", torch::nn::Conv2d(Conv2dOptionsOf(args, /*bias=*/false)));
  bn = register_module("bn", torch::nn::BatchNorm2d(args.c2));
  act_ = args.act ? act : torch::nn::AnyModule(torch::nn::Identity());
  register_module("act", act_.ptr());
}

torch::Tensor ConvImpl::forward(const torch::Tensor& x) {
  if (fused()) return act_.forward(conv->forward(x));
  if (sync_bn_ && is_training()) return act_.forward(SyncBatchNorm2d(conv->forward(x), *bn, *sync_bn_));
  return act_.forward(bn->forward(conv->forward(x)));
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

// ---- Bottleneck ----

BottleneckImpl::BottleneckImpl(const BottleneckArgs& args, const torch::nn::AnyModule& act)
    : add_(args.shortcut && args.c1 == args.c2) {
  const BottleneckLayers layers = LayersOf(args);
  cv1 = register_module("cv1", Conv(layers.cv1, act));
  cv2 = register_module("cv2", Conv(layers.cv2, act));
}

torch::Tensor BottleneckImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = cv2->forward(cv1->forward(x));
  return add_ ? x + y : y;
}

FeatureShape BottleneckImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  return cv2->CountOps({cv1->CountOps(inputs, counts)}, counts);
}

// ---- C3 ----

C3Impl::C3Impl(const C3Args& args, const torch::nn::AnyModule& act) {
  const C3Layers layers = LayersOf(args);
  cv1 = register_module("cv1", Conv(layers.cv1, act));
  cv2 = register_module("cv2", Conv(layers.cv2, act));
  cv3 = register_module("cv3", Conv(layers.cv3, act));
  m = register_module("m", torch::nn::Sequential());
  for (int64_t i = 0; i < args.n; ++i) m->push_back(Bottleneck(layers.m, act));
}

torch::Tensor C3Impl::forward(const torch::Tensor& x) {
  return cv3->forward(torch::cat({m->forward(cv1->forward(x)), cv2->forward(x)}, 1));
}

FeatureShape C3Impl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  FeatureShape inner = cv1->CountOps(inputs, counts);
  for (size_t i = 0; i < m->size(); ++i) inner = m->at<BottleneckImpl>(i).CountOps({inner}, counts);
  cv2->CountOps(inputs, counts);
  return cv3->CountOps({inner}, counts);
}

// ---- SPPF ----

SPPFImpl::SPPFImpl(const SPPFArgs& args, const torch::nn::AnyModule& act) {
  const SPPFLayers layers = LayersOf(args);
  cv1 = register_module("cv1", Conv(layers.cv1, act));
  cv2 = register_module("cv2", Conv(layers.cv2, act));
  m = register_module("m", torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(args.k).stride(1).padding(args.k / 2)));
}

torch::Tensor SPPFImpl::forward(const torch::Tensor& x) {
  const torch::Tensor y0 = cv1->forward(x);
  const torch::Tensor y1 = m->forward(y0);
  const torch::Tensor y2 = m->forward(y1);
  return cv2->forward(torch::cat({y0, y1, y2, m->forward(y2)}, 1));
}

FeatureShape SPPFImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  return cv2->CountOps({cv1->CountOps(inputs, counts)}, counts);
}

// ---- Concat, Upsample, Repeat ----

torch::Tensor ConcatImpl::forward(const std::vector<torch::Tensor>& inputs) { return torch::cat(inputs, dim_); }

FeatureShape ConcatImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts*) const {
  FeatureShape out = inputs.at(0);
  out.c = 0;
  for (const FeatureShape& input : inputs) out.c += input.c;
  return out;
}

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

RepeatImpl::RepeatImpl(const std::vector<std::shared_ptr<torch::nn::Module>>& copies) {
  for (size_t i = 0; i < copies.size(); ++i) {
    auto* row = dynamic_cast<RowModule*>(copies[i].get());
    TORCH_CHECK(row != nullptr, "Repeat: copy ", i, " is not a row module");
    register_module(std::to_string(i), copies[i]);
    copies_.push_back(row);
  }
}

torch::Tensor RepeatImpl::ForwardRow(const std::vector<torch::Tensor>& inputs) {
  std::vector<torch::Tensor> x = inputs;
  for (RowModule* copy : copies_) x = {copy->ForwardRow(x)};
  return x.at(0);
}

FeatureShape RepeatImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  std::vector<FeatureShape> x = inputs;
  for (const RowModule* copy : copies_) x = {copy->CountOps(x, counts)};
  return x.at(0);
}

// ---- Detect ----

DetectImpl::DetectImpl(const DetectArgs& args)
    : nc_(args.nc),
      no_(args.nc + 5),
      nl_(static_cast<int64_t>(args.anchors.size())),
      na_(static_cast<int64_t>(args.anchors.at(0).size() / 2)),
      grids_(args.anchors.size()) {
  std::vector<float> flat;
  for (const auto& level : args.anchors) flat.insert(flat.end(), level.begin(), level.end());
  anchors = register_buffer("anchors", torch::tensor(flat, torch::kFloat).view({nl_, na_, 2}));
  m = register_module("m", torch::nn::ModuleList());
  for (int64_t c : args.ch) m->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(c, no_ * na_, 1)));
}

DetectOutput DetectImpl::forward(const std::vector<torch::Tensor>& inputs) {
  TORCH_CHECK(static_cast<int64_t>(inputs.size()) == nl_, "Detect: expected ", nl_, " inputs, got ", inputs.size());
  DetectOutput out;
  for (int64_t i = 0; i < nl_; ++i) {
    const torch::Tensor y = m->at<torch::nn::Conv2dImpl>(static_cast<size_t>(i)).forward(inputs[i]);
    const int64_t bs = y.size(0), ny = y.size(2), nx = y.size(3);
    out.raw.push_back(y.view({bs, na_, no_, ny, nx}).permute({0, 1, 3, 4, 2}).contiguous());
  }
  if (!is_training()) out.decoded = Decode(out.raw);
  return out;
}

torch::Tensor DetectImpl::Decode(const std::vector<torch::Tensor>& raw) {
  TORCH_CHECK(static_cast<int64_t>(strides_.size()) == nl_, "Detect: strides are not set");
  std::vector<torch::Tensor> levels;
  for (int64_t i = 0; i < nl_; ++i) {
    const torch::Tensor& x = raw.at(static_cast<size_t>(i));
    const int64_t bs = x.size(0), ny = x.size(2), nx = x.size(3);
    torch::Tensor& grid = grids_[static_cast<size_t>(i)];
    if (!grid.defined() || grid.size(2) != ny || grid.size(3) != nx || grid.device() != anchors.device() ||
        grid.scalar_type() != anchors.scalar_type()) {
      const auto mesh = torch::meshgrid({torch::arange(ny, anchors.options()), torch::arange(nx, anchors.options())},
                                        "ij");
      grid = torch::stack({mesh[1], mesh[0]}, 2).expand({1, na_, ny, nx, 2}) - 0.5;
    }
    const torch::Tensor anchor_grid = (anchors[i] * strides_[static_cast<size_t>(i)]).view({1, na_, 1, 1, 2});
    const std::vector<torch::Tensor> parts = x.sigmoid().split_with_sizes({2, 2, nc_ + 1}, 4);
    const torch::Tensor xy = (parts[0] * 2 + grid) * strides_[static_cast<size_t>(i)];
    const torch::Tensor wh = (parts[1] * 2).pow(2) * anchor_grid;
    levels.push_back(torch::cat({xy, wh, parts[2]}, 4).view({bs, na_ * ny * nx, no_}));
  }
  return torch::cat(levels, 1);
}

FeatureShape DetectImpl::CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const {
  for (const FeatureShape& in : inputs) counts->conv_macs += static_cast<double>(no_ * na_ * in.h * in.w * in.c);
  return {no_ * na_, inputs.at(0).h, inputs.at(0).w};
}

void DetectImpl::CheckAnchorOrder() {
  torch::NoGradGuard no_grad;
  const torch::Tensor area = anchors.prod(-1).mean(-1).view(-1);
  const double da = (area[-1] - area[0]).item<double>();
  const double ds = strides_.back() - strides_.front();
  const auto sign = [](double v) { return (v > 0) - (v < 0); };
  if (da != 0 && sign(da) != sign(ds)) anchors.copy_(anchors.flip(0));
}

void DetectImpl::set_strides(std::vector<double> strides) {
  TORCH_CHECK(static_cast<int64_t>(strides.size()) == nl_, "Detect: ", nl_, " strides expected");
  strides_ = std::move(strides);
}

}  // namespace ffyolo
