// What every LibTorch module of a model row implements: its forward pass on
// the row's inputs and the work that pass does (the summary's GFLOPs).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace ffyolo {

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

}  // namespace ffyolo
