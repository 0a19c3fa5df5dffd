// The building blocks of YOLOv5 v7.0 (models/common.py, models/yolo.py::Detect)
// as torch::nn modules. Their registered names reproduce Ultralytics'
// state-dict keys (conv, bn, cv1, m.0, anchors, ...), so weights converted from
// Ultralytics checkpoints load by name.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/any.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

#include "ffyolo/model_config.h"

namespace ffyolo {

class Communicator;

// Work of one forward pass, counted the way thop >= 0.1 counts it (the GFLOPs
// of Ultralytics' summary): conv multiply-accumulates without bias, 4 ops per
// BatchNorm element (normalize + affine), 1 per nearest-upsampled output
// element; pooling, activations and concatenation are free.
struct OpCounts {
  double conv_macs = 0, bn_elements = 0, upsample_elements = 0;

  // thop's total x2 (MACs to FLOPs), in G.
  double gflops() const { return 2e-9 * (conv_macs + 4 * bn_elements + upsample_elements); }
  double conv_gflops() const { return 2e-9 * conv_macs; }
};

// Channels, height and width of a feature map.
struct FeatureShape {
  int64_t c = 0, h = 0, w = 0;
};

// A row of the model: maps the outputs of its `from` layers to one output.
// Detect, which returns several, is the last row and is called directly.
class RowModule {
 public:
  virtual ~RowModule() = default;
  virtual torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) = 0;
  // Adds the work of a forward pass on inputs of these shapes; returns the output shape.
  virtual FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const = 0;
};

// The activation every Conv of one model shares (Ultralytics' Conv.default_act):
// a single instance, so it counts once among the model's modules.
torch::nn::AnyModule MakeActivation(const ActivationConfig& config);

// Conv2d without bias + BatchNorm2d + activation (Identity when args.act is false).
class ConvImpl : public torch::nn::Module, public RowModule {
 public:
  ConvImpl(const ConvArgs& args, const torch::nn::AnyModule& act);

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

  // Folds bn into conv for evaluation and export (utils/torch_utils.py::
  // fuse_conv_and_bn): conv gets a bias and no gradients, bn is removed, and
  // forward becomes act(conv(x)).
  void Fuse();
  bool fused() const { return bn.is_empty(); }
  // In training, normalize with the statistics of the whole job's batch (--sync-bn); nullptr: this rank's.
  void SetSyncBatchNorm(Communicator* comm) { sync_bn_ = comm; }

  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};  // empty once fused

 private:
  ConvArgs args_;
  torch::nn::AnyModule act_;
  Communicator* sync_bn_ = nullptr;
};
TORCH_MODULE(Conv);

// cv2(cv1(x)), plus x when shortcut and c1 == c2.
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

// CSP bottleneck with 3 convolutions: cv3(cat(m(cv1(x)), cv2(x))), m being n
// Bottlenecks of width c_ = int(c2*e).
class C3Impl : public torch::nn::Module, public RowModule {
 public:
  C3Impl(const C3Args& args, const torch::nn::AnyModule& act);

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

  Conv cv1{nullptr}, cv2{nullptr}, cv3{nullptr};
  torch::nn::Sequential m{nullptr};
};
TORCH_MODULE(C3);

// Spatial pyramid pooling, fast: three chained k x k max-pools, equivalent to SPP(5, 9, 13) for k = 5.
class SPPFImpl : public torch::nn::Module, public RowModule {
 public:
  SPPFImpl(const SPPFArgs& args, const torch::nn::AnyModule& act);

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

  Conv cv1{nullptr}, cv2{nullptr};
  torch::nn::MaxPool2d m{nullptr};
};
TORCH_MODULE(SPPF);

// torch.cat of the inputs along the channels.
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

// nn.Upsample(scale_factor, mode='nearest').
class UpsampleImpl : public torch::nn::Module, public RowModule {
 public:
  explicit UpsampleImpl(const UpsampleArgs& args) : scale_factor_(args.scale_factor) {}

  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override { return forward(inputs.at(0)); }
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

 private:
  double scale_factor_;
};
TORCH_MODULE(Upsample);

// parse_model's nn.Sequential of n copies of a row module other than C3
// (children "0", "1", ...), applied one after the other.
class RepeatImpl : public torch::nn::Module, public RowModule {
 public:
  // Every copy must be a RowModule.
  explicit RepeatImpl(const std::vector<std::shared_ptr<torch::nn::Module>>& copies);

  torch::Tensor ForwardRow(const std::vector<torch::Tensor>& inputs) override;
  FeatureShape CountOps(const std::vector<FeatureShape>& inputs, OpCounts* counts) const override;

 private:
  std::vector<RowModule*> copies_;  // owned as registered children
};
TORCH_MODULE(Repeat);

// Detect's result: the raw per-level outputs, and in eval mode their decoding.
struct DetectOutput {
  std::vector<torch::Tensor> raw;  // per level (bs, na, ny, nx, no) logits
  torch::Tensor decoded;           // (bs, sum of na*ny*nx, no): xywh pixels, obj, classes; undefined in training
};

// The detection head: one 1x1 conv (with bias) per level to na*(nc+5) channels.
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

}  // namespace ffyolo
