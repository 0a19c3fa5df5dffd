// The layers each module of models/common.py and models/yolo.py::Detect makes
// from its arguments, decided in one place: modules.cc builds the torch
// modules from them and ParseModelConfig counts the parameters from them, so
// the size a YAML is checked against before anything is allocated is the size
// of the network that gets built. Torch-free.
#pragma once

#include "ffyolo/model_config.h"

namespace ffyolo {

// A 1x1, stride-1 Conv: the cv1, cv2 and cv3 of the blocks.
ConvArgs PointwiseConv(int64_t c1, int64_t c2);

// Bottleneck: cv1 (1x1 to int(c2 * e)), then cv2 (3x3 back to c2, in g groups).
struct BottleneckLayers {
  ConvArgs cv1, cv2;
};
BottleneckLayers LayersOf(const BottleneckArgs& args);

// C3: cv1 and cv2 (1x1 to int(c2 * e)), n Bottlenecks `m` of that width with
// e = 1.0 on cv1's output, and cv3 (1x1 from twice that width to c2).
struct C3Layers {
  ConvArgs cv1, cv2, cv3;
  BottleneckArgs m;
};
C3Layers LayersOf(const C3Args& args);

// SPPF: cv1 (1x1 to c1 / 2), three max pools, cv2 (1x1 from four times that to c2).
struct SPPFLayers {
  ConvArgs cv1, cv2;
};
SPPFLayers LayersOf(const SPPFArgs& args);

// Parameter elements of one module made from `args`, as model.parameters()
// counts them on a fresh (unfused) model: a Conv's weight plus its
// BatchNorm's weight and bias; Detect's 1x1 convs with bias, na * (nc + 5)
// outputs per level (its anchors are a buffer). Concat and nn.Upsample have
// none. A double, because a YAML can ask for more than int64 holds: it is
// exact below 2^53, far above any limit it is compared with.
double ParameterCount(const LayerArgs& args);

}  // namespace ffyolo
