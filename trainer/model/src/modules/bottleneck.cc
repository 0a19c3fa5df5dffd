#include "ffyolo/modules/bottleneck.h"

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, BottleneckArgs* a) {
  FFR_RETURN_IF_ERROR(row.InOutChannels(*layer, &a->c1, &a->c2));
  FFR_RETURN_IF_ERROR(row.MaxArgs(4, "Bottleneck(c2, shortcut, g, e)"));
  FFR_RETURN_IF_ERROR(row.BoolArg(1, "shortcut", &a->shortcut));
  FFR_RETURN_IF_ERROR(row.IntArg(2, "g", &a->g));
  FFR_RETURN_IF_ERROR(row.DoubleArg(3, "e", &a->e));
  if (!HiddenWidthOk(a->c2, a->g, a->e))
    return row.Error("Bottleneck needs g >= 1, e > 0 and int(c2*e) >= 1 divisible by g");
  row.ConvFamilyText(layer, a->c1, a->c2, false);
  return ffr::Status::OK();
}

BottleneckLayers LayersOf(const BottleneckArgs& args) {
  const int64_t hidden = HiddenWidth(args.c2, args.e);
  BottleneckLayers layers;
  layers.cv1 = PointwiseConv(args.c1, hidden);
  layers.cv2.c1 = hidden, layers.cv2.c2 = args.c2, layers.cv2.k = 3, layers.cv2.g = args.g;
  return layers;
}

double Parameters(const BottleneckArgs& a) {
  const BottleneckLayers layers = LayersOf(a);
  return Parameters(layers.cv1) + Parameters(layers.cv2);
}

int64_t HiddenWidth(int64_t c2, double e) { return static_cast<int64_t>(static_cast<double>(c2) * e); }

bool HiddenWidthOk(int64_t c2, int64_t g, double e) {
  const double hidden = static_cast<double>(c2) * e;
  return g >= 1 && e > 0 && hidden >= 1 && hidden <= static_cast<double>(kMaxChannels) &&
         static_cast<int64_t>(hidden) % g == 0;
}

}  // namespace ffyolo
