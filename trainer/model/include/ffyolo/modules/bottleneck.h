// Bottleneck (models/common.py): cv2(cv1(x)), plus x when shortcut and
// c1 == c2. Its arguments, YAML parsing, layers and parameter count
// (torch-free); the LibTorch module is bottleneck_module.h.
#pragma once

#include <cstdint>

#include "ffr/status.h"
#include "ffyolo/modules/conv.h"

namespace ffyolo {

struct BottleneckArgs {
  static constexpr const char* kName = "Bottleneck";
  int64_t c1 = 0, c2 = 0;
  bool shortcut = true;
  int64_t g = 1;
  double e = 0.5;
};

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, BottleneckArgs* a);
// What Bottleneck and C3 take after c2, (shortcut, g, e), with their hidden width checked; `module`
// names the module in messages.
ffr::Status ParseShortcutArgs(const RowParser& row, const char* module, int64_t c2, bool* shortcut, int64_t* g,
                              double* e);

// cv1 (1x1 to int(c2 * e)), then cv2 (3x3 back to c2, in g groups).
struct BottleneckLayers {
  ConvArgs cv1, cv2;
};
BottleneckLayers LayersOf(const BottleneckArgs& args);

double Parameters(const BottleneckArgs& a);

// int(c2 * e), the hidden width of Bottleneck and C3: Python truncates the product toward zero.
int64_t HiddenWidth(int64_t c2, double e);
// The parser's check of it: whole groups of g, from 1 to kMaxChannels.
bool HiddenWidthOk(int64_t c2, int64_t g, double e);

}  // namespace ffyolo
