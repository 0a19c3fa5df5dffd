// Detect as a LibTorch module (m.0, m.1, ... and the `anchors` buffer, as
// Ultralytics names them); its arguments are detect.h.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/modules/detect.h"
#include "ffyolo/modules/row_module.h"

namespace ffyolo {

// Detect's result: the raw per-level outputs, and in eval mode their decoding.
struct DetectOutput {
  std::vector<torch::Tensor> raw;  // per level (bs, na, ny, nx, no) logits
  torch::Tensor decoded;           // (bs, sum of na*ny*nx, no): xywh pixels, obj, classes; undefined in training
};

// Not a RowModule: it returns several outputs, and is the model's last row.
class DetectImpl : public torch::nn::Module {
 public:
  explicit DetectImpl(const DetectArgs& args);

  // Training mode: raw only. Eval mode: raw and decoded.
  DetectOutput forward(const std::vector<torch::Tensor>& inputs);
  // Sigmoid of every output, then xy = (2*sigmoid - 0.5 + cell) * stride and
  // wh = (2*sigmoid)^2 * anchor in pixels; levels concatenated P3, P4, P5.
  // Needs the strides.
  torch::Tensor Decode(const std::vector<torch::Tensor>& raw);
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const;

  // utils/autoanchor.py::check_anchor_order: reverses the anchor levels when
  // their mean area does not grow with the stride.
  void CheckAnchorOrder();

  int64_t nc() const { return nc_; }
  int64_t no() const { return no_; }  // outputs per anchor, nc + 5
  int64_t nl() const { return nl_; }  // levels
  int64_t na() const { return na_; }  // anchors per level
  // Pixels per cell of each level; a plain attribute, as in Ultralytics, so not in the state dict.
  const std::vector<double>& strides() const { return strides_; }
  void set_strides(std::vector<double> strides);

  // (nl, na, 2) anchor (w, h): pixels as constructed, grid units (divided by
  // the stride) once the model is built. The state dict's "anchors".
  torch::Tensor anchors;
  torch::nn::ModuleList m{nullptr};

 private:
  int64_t nc_, no_, nl_, na_;
  std::vector<double> strides_;
  std::vector<torch::Tensor> grids_;  // per level (1, na, ny, nx, 2) cell - 0.5, cached per size
};
TORCH_MODULE(Detect);

std::shared_ptr<torch::nn::Module> MakeModule(const DetectArgs& args, const torch::nn::AnyModule& act);

}  // namespace ffyolo
