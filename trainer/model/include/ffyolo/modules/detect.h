// Detect (models/yolo.py), the detection head: one 1x1 conv with bias per
// level to na * (nc + 5) outputs. Its arguments, YAML parsing and parameter
// count (torch-free); the LibTorch module is detect_module.h.
#pragma once

#include <cstdint>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

class RowParser;  // internal/ffyolo/row_parser.h
struct LayerConfig;

struct DetectArgs {
  static constexpr const char* kName = "Detect";
  int64_t nc = 80;
  std::vector<std::vector<double>> anchors;  // per level: w0, h0, w1, h1, ... in pixels
  std::vector<int64_t> ch;                   // input channels per level
};

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, DetectArgs* a);

// The convs' weights and biases; the anchors are a buffer.
double Parameters(const DetectArgs& a);

}  // namespace ffyolo
