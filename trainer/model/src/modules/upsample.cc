#include "ffyolo/modules/upsample.h"

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, UpsampleArgs* a) {
  FFR_RETURN_IF_ERROR(row.SingleInput(*layer));
  FFR_RETURN_IF_ERROR(row.MaxArgs(3, "nn.Upsample(size, scale_factor, mode)"));
  const YAML::Node& args = row.args();
  if (args.size() > 0 && !IsNone(args[0])) return row.Error("nn.Upsample: only size None is supported");
  if (args.size() < 2 || !ReadDouble(args[1], &a->scale_factor) || a->scale_factor <= 0)
    return row.Error("args[1] (scale_factor) must be a positive number");
  if (args.size() > 2 && args[2].Scalar() != "nearest")
    return ffr::Status::NotSupported(row.Message("nn.Upsample: only mode 'nearest' is supported"));
  layer->out_channels = row.Channels(layer->from[0]);
  layer->args_text = PyRepr(args);
  return ffr::Status::OK();
}

}  // namespace ffyolo
