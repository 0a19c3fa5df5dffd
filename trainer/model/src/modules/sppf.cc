#include "ffyolo/modules/sppf.h"

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, SPPFArgs* a) {
  FFR_RETURN_IF_ERROR(row.InOutChannels(*layer, &a->c1, &a->c2));
  FFR_RETURN_IF_ERROR(row.MaxArgs(2, "SPPF(c2, k)"));
  FFR_RETURN_IF_ERROR(row.IntArg(1, "k", &a->k));
  if (a->k < 1 || a->k % 2 == 0) return row.Error("SPPF needs an odd k");
  if (a->c1 < 2) return row.Error("SPPF needs at least 2 input channels");
  row.ConvFamilyText(layer, a->c1, a->c2, false);
  return ffr::Status::OK();
}

SPPFLayers LayersOf(const SPPFArgs& args) {
  const int64_t hidden = args.c1 / 2;
  return {PointwiseConv(args.c1, hidden), PointwiseConv(4 * hidden, args.c2)};
}

double Parameters(const SPPFArgs& a) {
  const SPPFLayers layers = LayersOf(a);
  return Parameters(layers.cv1) + Parameters(layers.cv2);
}

}  // namespace ffyolo
