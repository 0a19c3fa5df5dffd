// Conv (models/common.py): Conv2d without bias, BatchNorm2d, the model's
// activation. Its arguments, YAML parsing and parameter count (torch-free);
// the LibTorch module is conv_module.h.
#pragma once

#include <cstdint>

#include "ffr/status.h"

namespace ffyolo {

class RowParser;  // internal/ffyolo/row_parser.h
struct LayerConfig;

// Channel counts are the scaled ones, as in every module's arguments.
struct ConvArgs {
  static constexpr const char* kName = "Conv";  // in a model YAML
  int64_t c1 = 0, c2 = 0;
  int64_t k = 1, s = 1;
  int64_t p = -1;  // -1: autopad, (d*(k-1)+1)/2
  int64_t g = 1, d = 1;
  bool act = true;  // false: Identity instead of the model's activation
};

// The row's arguments, out_channels and args_text.
ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, ConvArgs* a);

// Parameter elements, as model.parameters() counts them on a fresh (unfused)
// model: the conv's weight plus its BatchNorm's weight and bias. A double, as
// for every module, because a YAML can ask for more than int64 holds: it is
// exact below 2^53, far above any limit it is compared with.
double Parameters(const ConvArgs& a);

// A 1x1, stride-1 Conv: the cv1, cv2 and cv3 of the blocks.
ConvArgs PointwiseConv(int64_t c1, int64_t c2);

}  // namespace ffyolo
