// C3 (models/common.py), the CSP bottleneck with 3 convolutions:
// cv3(cat(m(cv1(x)), cv2(x))), m being n Bottlenecks. Its arguments, YAML
// parsing, layers and parameter count (torch-free); the LibTorch module is
// c3_module.h.
#pragma once

#include <cstdint>

#include "ffr/status.h"
#include "ffyolo/modules/bottleneck.h"

namespace ffyolo {

struct C3Args {
  static constexpr const char* kName = "C3";
  int64_t c1 = 0, c2 = 0, n = 1;  // n: the row's repeats, which C3 takes itself
  bool shortcut = true;
  int64_t g = 1;
  double e = 0.5;
};

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, C3Args* a);

// cv1 and cv2 (1x1 to int(c2 * e)), n Bottlenecks `m` of that width with
// e = 1.0 on cv1's output, and cv3 (1x1 from twice that width to c2).
struct C3Layers {
  ConvArgs cv1, cv2, cv3;
  BottleneckArgs m;
};
C3Layers LayersOf(const C3Args& args);

double Parameters(const C3Args& a);

}  // namespace ffyolo
