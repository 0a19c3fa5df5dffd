// nn.Upsample(None, scale_factor, 'nearest'). Its arguments and YAML parsing
// (torch-free); the LibTorch module is upsample_module.h.
#pragma once

#include "ffr/status.h"

namespace ffyolo {

class RowParser;  // internal/ffyolo/row_parser.h
struct LayerConfig;

struct UpsampleArgs {  // mode 'nearest' is the only one supported
  static constexpr const char* kName = "nn.Upsample";
  double scale_factor = 2;
};

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, UpsampleArgs* a);

inline double Parameters(const UpsampleArgs&) { return 0; }

}  // namespace ffyolo
