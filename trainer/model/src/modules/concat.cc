#include "ffyolo/modules/concat.h"

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, ConcatArgs* a) {
  FFR_RETURN_IF_ERROR(row.MaxArgs(1, "Concat(dimension)"));
  FFR_RETURN_IF_ERROR(row.IntArg(0, "dimension", &a->dim));
  if (a->dim != 1) return row.Error("Concat joins channels: dimension must be 1");
  layer->out_channels = 0;
  for (int f : layer->from) layer->out_channels += row.Channels(f);
  layer->args_text = PyRepr(row.args());
  return ffr::Status::OK();
}

}  // namespace ffyolo
