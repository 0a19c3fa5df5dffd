#include "ffyolo/modules/detect_module.h"

#include <torch/nn/modules/conv.h>
#include <torch/utils.h>

namespace ffyolo {

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
    // A view, not a copy: (bs, na, ny, nx, no) over the convolution's memory, whose layout in channels-last
    // is already (bs, ny, nx, na, no). Its consumers index it or copy it anyway.
    out.raw.push_back(y.view({bs, na_, no_, ny, nx}).permute({0, 1, 3, 4, 2}));
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

std::shared_ptr<torch::nn::Module> MakeModule(const DetectArgs& args, const torch::nn::AnyModule&) {
  return Detect(args).ptr();
}

}  // namespace ffyolo
