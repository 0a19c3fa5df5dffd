// SPPF (models/common.py), spatial pyramid pooling, fast: cv1, three chained
// k x k max-pools, cv2 over their concatenation. Its arguments, YAML parsing,
// layers and parameter count (torch-free); the LibTorch module is
// sppf_module.h.
#pragma once

#include <cstdint>

#include "ffr/status.h"
#include "ffyolo/modules/conv.h"

namespace ffyolo {

struct SPPFArgs {
  static constexpr const char* kName = "SPPF";
  int64_t c1 = 0, c2 = 0, k = 5;
};

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, SPPFArgs* a);

// cv1 (1x1 to c1 / 2), then cv2 (1x1 from four times that to c2).
struct SPPFLayers {
  ConvArgs cv1, cv2;
};
SPPFLayers LayersOf(const SPPFArgs& args);

double Parameters(const SPPFArgs& a);

}  // namespace ffyolo
