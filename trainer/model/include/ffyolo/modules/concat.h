// Concat (models/common.py): torch.cat of the row's inputs along the
// channels. Its arguments and YAML parsing (torch-free); the LibTorch module
// is concat_module.h.
#pragma once

#include <cstdint>

#include "ffr/status.h"

namespace ffyolo {

class RowParser;  // internal/ffyolo/row_parser.h
struct LayerConfig;

struct ConcatArgs {
  static constexpr const char* kName = "Concat";
  int64_t dim = 1;
};

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, ConcatArgs* a);

inline double Parameters(const ConcatArgs&) { return 0; }

}  // namespace ffyolo
